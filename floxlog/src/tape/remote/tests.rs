//! The byte source over an in-memory store: parts, listing, a changed or
//! missing object, and a tape read from a prefix as from its directory.

use super::fetch::{fetch_in, kind_in, list_in, Seen};
use super::runtime::state;
use super::Kind;
use crate::tape::read::{Request, Session};
use crate::tape::{OpenOptions, Tape};
use object_store::memory::InMemory;
use object_store::path::Path as Key;
use object_store::{ObjectStoreExt, PutPayload};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(super) fn put(store: &InMemory, k: &str, b: &[u8]) {
    let st = state().unwrap();
    st.block_on(store.put(&Key::from(k), PutPayload::from(b.to_vec())))
        .unwrap();
}

fn seen(store: &InMemory, k: &str) -> Seen {
    let st = state().unwrap();
    Seen::from(&st.block_on(store.head(&Key::from(k))).unwrap())
}

#[test]
fn objects_come_back_whole_in_parts_of_any_size() {
    let store = InMemory::new();
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
    put(&store, "p/seg.floxlog", &data);
    put(&store, "p/empty.floxlog", b"");
    let url = Path::new("s3://mem/p/seg.floxlog");
    let st = state().unwrap();
    let k = Key::from("p/seg.floxlog");
    for part in [1, 7, 999, 1000, 1001, 1 << 23] {
        let got = st
            .block_on(fetch_in(
                &store,
                url,
                &k,
                Some(seen(&store, "p/seg.floxlog")),
                part,
            ))
            .unwrap();
        assert_eq!(got, data, "part {part}");
        // Without a listing: a look first.
        let got = st.block_on(fetch_in(&store, url, &k, None, part)).unwrap();
        assert_eq!(got, data, "part {part}");
    }
    let e = Key::from("p/empty.floxlog");
    let got = st
        .block_on(fetch_in(
            &store,
            Path::new("s3://mem/p/empty.floxlog"),
            &e,
            None,
            7,
        ))
        .unwrap();
    assert!(got.is_empty());
}

#[test]
fn an_object_overwritten_after_listing_is_changed_list_again() {
    let store = InMemory::new();
    put(&store, "t/1.floxlog", &[1u8; 100]);
    let listed = seen(&store, "t/1.floxlog");
    // Same size, new bytes: only the ETag tells.
    put(&store, "t/1.floxlog", &[2u8; 100]);
    let url = Path::new("s3://mem/t/1.floxlog");
    let st = state().unwrap();
    let k = Key::from("t/1.floxlog");
    for part in [10, 1000] {
        let e = st
            .block_on(fetch_in(&store, url, &k, Some(listed.clone()), part))
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("s3://mem/t/1.floxlog: "), "{msg}");
        assert!(
            msg.contains("changed") && msg.contains("list again"),
            "{msg}"
        );
    }
    // A listing that saw another size, and no ETag (a store without them).
    let shorter = Seen {
        size: 50,
        e_tag: None,
    };
    let e = st
        .block_on(fetch_in(&store, url, &k, Some(shorter), 10))
        .unwrap_err();
    assert!(e.to_string().contains("list again"), "{e}");
}

#[test]
fn a_missing_object_or_prefix_names_the_url() {
    let store = InMemory::new();
    let st = state().unwrap();
    let url = Path::new("s3://mem/nope/1.floxlog");
    let k = Key::from("nope/1.floxlog");
    let e = st
        .block_on(fetch_in(&store, url, &k, None, 10))
        .unwrap_err();
    assert_eq!(e.exit_code(), 3);
    assert!(
        e.to_string().starts_with("s3://mem/nope/1.floxlog: "),
        "{e}"
    );
    // Listed, then deleted.
    put(&store, "gone/1.floxlog", b"abc");
    let listed = seen(&store, "gone/1.floxlog");
    st.block_on(store.delete(&Key::from("gone/1.floxlog")))
        .unwrap();
    let e = st
        .block_on(fetch_in(
            &store,
            Path::new("s3://mem/gone/1.floxlog"),
            &Key::from("gone/1.floxlog"),
            Some(listed),
            10,
        ))
        .unwrap_err();
    assert!(
        e.to_string().starts_with("s3://mem/gone/1.floxlog: "),
        "{e}"
    );
    let e = st
        .block_on(kind_in(
            &store,
            Path::new("s3://mem/nope"),
            &Key::from("nope"),
        ))
        .unwrap_err();
    assert!(e.to_string().contains("no such object"), "{e}");
}

#[test]
fn prefixes_list_one_level() {
    let store = InMemory::new();
    for k in [
        "a/1.floxlog",
        "a/2.floxlog",
        "a/sub/3.floxlog",
        "ab/4.floxlog",
    ] {
        put(&store, k, b"x");
    }
    let st = state().unwrap();
    let url = Path::new("s3://mem/a");
    assert_eq!(
        st.block_on(kind_in(&store, url, &Key::from("a"))).unwrap(),
        Kind::Prefix
    );
    let one = Path::new("s3://mem/a/1.floxlog");
    assert_eq!(
        st.block_on(kind_in(&store, one, &Key::from("a/1.floxlog")))
            .unwrap(),
        Kind::Object
    );
    let mut names: Vec<String> = st
        .block_on(list_in(&store, url, &Key::from("a")))
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    names.sort();
    assert_eq!(names, ["1.floxlog", "2.floxlog"]);
}

/// Every event of a tape, as debug strings, and the errors (opening, then
/// the segments' problems).
fn events(inputs: &[PathBuf]) -> (Vec<String>, Vec<String>) {
    let tape = Tape::open(inputs, OpenOptions::default()).unwrap();
    let mut s = Session::open(tape, Request::default());
    let mut errs: Vec<String> = s.open_errors().iter().map(|e| e.to_string()).collect();
    let mut v = Vec::new();
    // A damaged segment ends the read with its error, which is also among
    // the problems listed below.
    let _ = s.events(&mut |it| {
        v.push(format!("{:?}", it.event));
        Ok(())
    });
    errs.extend(s.problems().iter().map(|p| p.to_error().to_string()));
    (v, errs)
}

/// A multi-segment LZ4 tape at `dir`.
fn write_tape(dir: &Path) {
    let lz4 = floxlog_core::WriterConfig {
        compression: floxlog_core::Compression::Lz4,
        ..floxlog_core::WriterConfig::default()
    };
    write_events(dir, lz4, 40_000, 5_000, 7);
}

/// A tape at `dir` of `n` mixed events (seed `seed`) in segments written
/// with `segment`, of up to `max_segment_bytes`.
pub(super) fn write_events(
    dir: &Path,
    segment: floxlog_core::WriterConfig,
    max_segment_bytes: u64,
    n: u64,
    seed: u64,
) {
    let cfg = crate::tape::TapeWriterConfig {
        created_ns: Some(1),
        max_segment_bytes,
        segment,
        ..crate::tape::TapeWriterConfig::default()
    };
    let mut w = crate::tape::TapeWriter::create(dir, cfg).unwrap();
    for i in 0..n {
        w.append(&crate::synth::mixed_event(seed, i).as_event())
            .unwrap();
    }
    w.close().unwrap();
}

/// The files of tape directory `dir` put under `prefix` in `store`: how
/// many, and the path of the last segment file.
pub(super) fn upload_files(store: &InMemory, dir: &Path, prefix: &str) -> (usize, Option<PathBuf>) {
    let (mut n, mut seg) = (0, None);
    for f in std::fs::read_dir(dir).unwrap() {
        let f = f.unwrap();
        let name = f.file_name().to_string_lossy().into_owned();
        if f.file_type().unwrap().is_file() && !name.starts_with('.') {
            put(
                store,
                &format!("{prefix}{name}"),
                &std::fs::read(f.path()).unwrap(),
            );
            n += 1;
            if name.ends_with(".floxlog") {
                seg = Some(f.path());
            }
        }
    }
    (n, seg)
}

#[test]
fn a_tape_under_a_prefix_reads_as_its_directory() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tape");
    write_tape(&dir);
    let store = Arc::new(InMemory::new());
    let (n, _) = upload_files(&store, &dir, "t/");
    assert!(n >= 2, "{n} files");
    state().unwrap().set_store("memtape", store.clone());
    let local = events(std::slice::from_ref(&dir));
    let remote = events(&[PathBuf::from("s3://memtape/t")]);
    assert!(local.0.len() > 1000);
    assert_eq!(local, remote);
    let tape = Tape::open(&[PathBuf::from("s3://memtape/t/")], OpenOptions::default()).unwrap();
    let local_tape = Tape::open(&[dir], OpenOptions::default()).unwrap();
    assert_eq!(tape.file_bytes(), local_tape.file_bytes());
    assert!(tape.segments[0].path.starts_with("s3://memtape/t"));
    // One segment object alone, then a damaged copy: the error names the
    // URL and the offset.
    let first = tape.segments[0].path.clone();
    let one = events(std::slice::from_ref(&first));
    assert!(!one.0.is_empty() && one.1.is_empty());
    let mut bytes = st_get(&store, "t/", &tape.segments[0].name);
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    put(&store, "bad/x.floxlog", &bytes);
    let (_, errs) = events(&[PathBuf::from("s3://memtape/bad/x.floxlog")]);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("s3://memtape/bad/x.floxlog at byte "),
        "{errs:?}"
    );
}

fn st_get(store: &InMemory, prefix: &str, name: &str) -> Vec<u8> {
    let st = state().unwrap();
    st.block_on(async {
        store
            .get(&Key::from(format!("{prefix}{name}")))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap()
            .to_vec()
    })
}

#[test]
fn one_runtime_per_process() {
    // A second use in the same process reuses it (another pid would not:
    // see runtime.rs; a fork cannot be tested without forking the test
    // harness).
    assert!(Arc::ptr_eq(&state().unwrap(), &state().unwrap()));
}

#[cfg(unix)]
#[test]
fn a_forked_child_makes_its_own_runtime() {
    let parent = state().unwrap();
    let store = InMemory::new();
    put(&store, "f/1.floxlog", b"forked");
    let pid = super::runtime::fork_holding_locks();
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: a hang in the child ends it (SIGALRM) rather than the test run.
        unsafe { libc::alarm(60) };
        let ok = (|| {
            let st = state().ok()?;
            if Arc::ptr_eq(&st, &parent) {
                return None;
            }
            let url = Path::new("s3://mem/f/1.floxlog");
            let k = Key::from("f/1.floxlog");
            let got = st.block_on(fetch_in(&store, url, &k, None, 2)).ok()?;
            (got == b"forked").then_some(())
        })();
        // SAFETY: leaves the child without running the harness's exit.
        unsafe { libc::_exit(if ok.is_some() { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(r, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the child's status: {status}"
    );
}

#[test]
fn side_files_a_listed_prefix_lacks_cost_no_request() {
    let store = Arc::new(InMemory::new());
    put(&store, "s/1.floxlog", b"x");
    put(&store, "s/metadata.json", b"{}");
    state().unwrap().set_store("memside", store.clone());
    let dir = Path::new("s3://memside/s");
    assert_eq!(super::kind(dir).unwrap(), Kind::Prefix);
    // Put after the listing: a side file the listing did not see is absent.
    put(&store, "s/manifest.json", b"{}");
    assert_eq!(super::read_side(&dir.join("manifest.json")).unwrap(), None);
    assert_eq!(
        super::read_side(&dir.join("metadata.json"))
            .unwrap()
            .unwrap(),
        b"{}"
    );
    // An unlisted prefix: asked.
    let other = Path::new("s3://memside/s2/manifest.json");
    assert_eq!(super::read_side(other).unwrap(), None);
}

#[test]
fn requests_and_bytes_are_counted() {
    let store = InMemory::new();
    let data = vec![7u8; 1000];
    put(&store, "c/seg.floxlog", &data);
    let (url, k) = (
        Path::new("s3://mem/c/seg.floxlog"),
        Key::from("c/seg.floxlog"),
    );
    let listed = Some(seen(&store, "c/seg.floxlog"));
    let (r0, b0) = super::stats();
    let st = state().unwrap();
    st.block_on(fetch_in(&store, url, &k, listed, 100)).unwrap();
    let (r1, b1) = super::stats();
    // Other tests count at the same time: at least this one's ten parts.
    assert!(r1 - r0 >= 10 && b1 - b0 >= 1000, "{r0} {r1} {b0} {b1}");
}

#[test]
fn google_and_azure_take_the_librarys_own_option_names() {
    use super::store::check_options;
    let o = |k: &str| vec![(k.to_string(), "v".to_string())];
    check_options("gs://b", &o("google_service_account")).unwrap();
    check_options("az://c", &o("azure_storage_account_name")).unwrap();
    for (store, shown) in [("gs://b", "gs://b"), ("az://c", "az://c"), ("b", "s3://b")] {
        let e = check_options(store, &o("passwd")).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{shown}: storage_options: unknown key `passwd`")),
            "{e}"
        );
    }
}
