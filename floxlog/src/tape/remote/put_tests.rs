//! Uploads into an in-memory store: keys and bytes as on disk, whole puts
//! and parts, an occupied prefix, replacing (stale objects go, neighbours
//! stay).

use super::put::test_hooks::upload_with_parts;
use super::runtime::state;
use object_store::memory::InMemory;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

fn put(store: &InMemory, k: &str, b: &[u8]) {
    let st = state().unwrap();
    st.block_on(store.put(&Key::from(k), PutPayload::from(b.to_vec())))
        .unwrap();
}

/// Every object under `prefix`: key, bytes.
fn objects(store: &InMemory, prefix: &str) -> BTreeMap<String, Vec<u8>> {
    let st = state().unwrap();
    st.block_on(async {
        let mut m = BTreeMap::new();
        let list: Vec<_> =
            futures_util::TryStreamExt::try_collect(store.list(Some(&Key::from(prefix))))
                .await
                .unwrap();
        for o in list {
            let b = store.get(&o.location).await.unwrap().bytes().await.unwrap();
            m.insert(o.location.to_string(), b.to_vec());
        }
        m
    })
}

/// A dataset-like tree: files of 0, 5, 30 and 1000 bytes, nested.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    for (rel, n) in [
        (
            "type=trade/date=2024-04-26/part-000000-0000-000.parquet",
            1000usize,
        ),
        (
            "type=trade/date=2024-04-27/part-000001-0000-000.parquet",
            30,
        ),
        (
            "type=book_delta/date=2024-04-26/part-000000-0000-001.parquet",
            5,
        ),
        ("type=book_delta/date=2024-04-26/empty.csv", 0),
    ] {
        let b: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, &b).unwrap();
        m.insert(rel.to_string(), b);
    }
    m
}

fn under(prefix: &str, m: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    m.iter()
        .map(|(k, v)| (format!("{prefix}/{k}"), v.clone()))
        .collect()
}

#[test]
fn a_directory_uploads_as_the_same_keys_and_bytes_in_any_part_size() {
    let d = tempfile::tempdir().unwrap();
    let want = tree(d.path());
    let st = state().unwrap();
    for part in [7, 1000, 1001, 1 << 23] {
        let store = InMemory::new();
        let url = Path::new("s3://mem/ds/x");
        let k = Key::from("ds/x");
        assert!(!st
            .block_on(super::put::occupied_in(&store, url, &k))
            .unwrap());
        let u = st
            .block_on(upload_with_parts(&store, d.path(), url, false, part))
            .unwrap();
        assert_eq!((u.objects, u.bytes, u.deleted), (4, 1035, 0), "part {part}");
        assert_eq!(objects(&store, "ds/x"), under("ds/x", &want), "part {part}");
        assert!(st
            .block_on(super::put::occupied_in(&store, url, &k))
            .unwrap());
        // A sibling whose name extends the prefix's is not under it.
        assert!(!st
            .block_on(super::put::occupied_in(
                &store,
                Path::new("s3://mem/ds/x2"),
                &Key::from("ds/x2")
            ))
            .unwrap());
    }
}

#[test]
fn replacing_deletes_only_the_stale_objects_under_the_prefix() {
    let d = tempfile::tempdir().unwrap();
    let want = tree(d.path());
    let store = InMemory::new();
    put(
        &store,
        "p/type=trade/date=2024-04-26/part-000000-0000-000.parquet",
        b"old",
    );
    put(
        &store,
        "p/type=trade/date=1999-01-01/part-000009-0000-000.parquet",
        b"stale",
    );
    put(&store, "p2/keep", b"neighbour");
    let st = state().unwrap();
    let u = st
        .block_on(upload_with_parts(
            &store,
            d.path(),
            Path::new("s3://mem/p"),
            true,
            16,
        ))
        .unwrap();
    assert_eq!((u.objects, u.deleted), (4, 1));
    assert_eq!(objects(&store, "p"), under("p", &want));
    assert_eq!(objects(&store, "p2").len(), 1);
}

#[test]
fn the_public_calls_use_the_buckets_store_and_refuse_its_root() {
    let d = tempfile::tempdir().unwrap();
    let want = tree(d.path());
    let store = Arc::new(InMemory::new());
    state()
        .unwrap()
        .set_store("memput", store.clone() as Arc<dyn ObjectStore>);
    let url = Path::new("s3://memput/exports/one/");
    assert!(!super::occupied(url).unwrap());
    let u = super::upload_dir(d.path(), url, false).unwrap();
    assert_eq!(u.objects, 4);
    assert_eq!(objects(&store, "exports/one"), under("exports/one", &want));
    assert!(super::occupied(url).unwrap());
    let e = super::exists(url);
    assert_eq!(e.exit_code(), 2);
    assert!(
        e.to_string()
            .starts_with("s3://memput/exports/one/ already exists"),
        "{e}"
    );
    for root in ["s3://memput", "s3://memput/"] {
        let e = super::upload_dir(d.path(), Path::new(root), true).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().contains("name a prefix under the bucket"),
            "{e}"
        );
    }
    // A missing local directory: an I/O error naming it, nothing uploaded.
    let gone = d.path().join("no-such-dir");
    let e = super::upload_dir(&gone, Path::new("s3://memput/exports/two"), false).unwrap_err();
    assert!(e.to_string().contains("no-such-dir"), "{e}");
    assert!(!super::occupied(Path::new("s3://memput/exports/two")).unwrap());
}

/// An in-memory store whose puts (whole or multipart) fail for keys
/// containing `fail`.
#[derive(Debug)]
struct Failing {
    inner: InMemory,
    fail: &'static str,
}

impl std::fmt::Display for Failing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Failing")
    }
}

fn refused(k: &Key) -> object_store::Error {
    object_store::Error::Generic {
        store: "Failing",
        source: format!("refused {k}").into(),
    }
}

#[async_trait::async_trait]
impl ObjectStore for Failing {
    async fn put_opts(
        &self,
        k: &Key,
        p: PutPayload,
        o: object_store::PutOptions,
    ) -> object_store::Result<object_store::PutResult> {
        if k.as_ref().contains(self.fail) {
            return Err(refused(k));
        }
        self.inner.put_opts(k, p, o).await
    }
    async fn put_multipart_opts(
        &self,
        k: &Key,
        o: object_store::PutMultipartOptions,
    ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
        if k.as_ref().contains(self.fail) {
            return Err(refused(k));
        }
        self.inner.put_multipart_opts(k, o).await
    }
    async fn get_opts(
        &self,
        k: &Key,
        o: object_store::GetOptions,
    ) -> object_store::Result<object_store::GetResult> {
        self.inner.get_opts(k, o).await
    }
    fn delete_stream(
        &self,
        l: futures_util::stream::BoxStream<'static, object_store::Result<Key>>,
    ) -> futures_util::stream::BoxStream<'static, object_store::Result<Key>> {
        self.inner.delete_stream(l)
    }
    fn list(
        &self,
        p: Option<&Key>,
    ) -> futures_util::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>>
    {
        self.inner.list(p)
    }
    async fn list_with_delimiter(
        &self,
        p: Option<&Key>,
    ) -> object_store::Result<object_store::ListResult> {
        self.inner.list_with_delimiter(p).await
    }
    async fn copy_opts(
        &self,
        a: &Key,
        b: &Key,
        o: object_store::CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(a, b, o).await
    }
}

#[test]
fn a_failed_upload_to_a_fresh_prefix_deletes_what_it_put() {
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    let st = state().unwrap();
    // A small file refused (the others put), then a large one (a
    // multipart upload) refused after every small one is in place.
    for (fail, part) in [
        ("type=trade/date=2024-04-27", 1 << 20),
        ("2024-04-26/part-000000-0000-000", 100),
    ] {
        let store = Failing {
            inner: InMemory::new(),
            fail,
        };
        let e = st
            .block_on(upload_with_parts(
                &store,
                d.path(),
                Path::new("s3://mem/f"),
                false,
                part,
            ))
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("s3://mem/f/type="), "{msg}");
        assert!(
            msg.contains("refused") && msg.contains("the objects uploaded were deleted"),
            "{msg}"
        );
        assert!(objects(&store.inner, "f").is_empty(), "{fail}");
    }
    // Replacing: the old objects are not the uploader's to delete; the
    // error says the prefix is a mix.
    let store = Failing {
        inner: InMemory::new(),
        fail: "2024-04-27",
    };
    put(&store.inner, "r/old", b"old");
    let e = st
        .block_on(upload_with_parts(
            &store,
            d.path(),
            Path::new("s3://mem/r"),
            true,
            1 << 20,
        ))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("a mix of the old and the new objects"),
        "{e}"
    );
    assert_eq!(
        objects(&store.inner, "r").get("r/old").map(Vec::as_slice),
        Some(&b"old"[..])
    );
}
