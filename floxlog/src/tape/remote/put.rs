//! Writing a finished local directory (an export's dataset) as the objects
//! under a prefix: the same relative keys, the same bytes.
//!
//! An object store has no rename, so a directory cannot appear whole the
//! way a local rename makes it appear: objects become visible one by one
//! as they are uploaded. What this module promises instead:
//!
//! - each object is whole or absent (a put is atomic, and a multipart
//!   upload shows nothing until it is completed; a failed one is aborted
//!   so its parts do not linger, billed and invisible);
//! - a prefix that already holds objects is refused unless replacing
//!   ([`occupied`], one list call, before any work);
//! - a failed upload to a fresh prefix deletes what it uploaded (best
//!   effort), so the prefix is empty again as a failed local export leaves
//!   no directory; a failed replacement leaves a mix of old and new
//!   objects, which the error says;
//! - replacing deletes the objects under the prefix that are not part of
//!   the new dataset only after every new object is in place.
//!
//! Memory is bounded by [`PART_BYTES`] × ([`PARTS_IN_FLIGHT`] + 1) and a
//! read buffer of 1 MiB: files up to one part are put whole,
//! [`PARTS_IN_FLIGHT`] at a time; larger ones one at a time, as multipart
//! uploads of parts of [`PART_BYTES`] with [`PARTS_IN_FLIGHT`] in flight.

use super::store::error;
use super::url::split;
use super::{Uploaded, PARTS_IN_FLIGHT, PART_BYTES};
use crate::tape::error::TapeError;
use crate::tape::{Hint, Remedy};
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes read from a large file at a time, between waits for a free
/// part slot (a small buffer: the parts themselves are the memory bound).
const READ_BYTES: usize = 1 << 20;

/// One file to upload: its key relative to the prefix, its path, its size.
struct File {
    rel: String,
    path: PathBuf,
    size: u64,
}

/// The store and key of prefix `url`; the bucket's root is refused (a
/// dataset goes under a prefix, and replacing must never mean the whole
/// bucket).
fn resolve_prefix(url: &Path) -> Result<(Arc<dyn ObjectStore>, Key), TapeError> {
    let (bucket, k) = split(url)?;
    if k.is_empty() {
        return Err(TapeError::usage(format!(
            "{}: name a prefix under the bucket to write to (s3://bucket/prefix)",
            url.display()
        )));
    }
    let key = Key::parse(k)
        .map_err(|e| TapeError::usage(format!("{}: not an object key: {e}", url.display())))?;
    Ok((super::runtime::state()?.store(&bucket)?, key))
}

fn run<T: Send>(f: impl std::future::Future<Output = T> + Send) -> Result<T, TapeError> {
    Ok(super::runtime::state()?.block_on(f))
}

/// Whether any object lies under prefix `url` (one list call).
pub fn occupied(url: &Path) -> Result<bool, TapeError> {
    let (store, k) = resolve_prefix(url)?;
    run(occupied_in(store.as_ref(), url, &k))?
}

/// [`occupied`] in `store`.
pub async fn occupied_in(store: &dyn ObjectStore, url: &Path, k: &Key) -> Result<bool, TapeError> {
    match store.list(Some(k)).next().await {
        None => Ok(false),
        Some(Ok(_)) => Ok(true),
        Some(Err(e)) => Err(error(url, "listing the prefix", e)),
    }
}

/// The usage error for a prefix that holds objects, as local writers word
/// an output that exists.
pub fn exists(url: &Path) -> TapeError {
    TapeError::usage(format!(
        "{} already exists (objects lie under it)",
        url.display()
    ))
    .with_hint(Hint::new(
        "choose a new prefix, or {}",
        &[Remedy::Overwrite],
    ))
}

/// Uploads the files under `local` as the objects under prefix `url`, keys
/// relative to `local` (see the module docs). `replace`: objects already
/// under the prefix are allowed, and those not uploaded now are deleted at
/// the end; otherwise the caller has checked [`occupied`].
pub fn upload_dir(local: &Path, url: &Path, replace: bool) -> Result<Uploaded, TapeError> {
    let (store, k) = resolve_prefix(url)?;
    let files = walk(local)?;
    run(upload_in(
        store.as_ref(),
        &files,
        url,
        &k,
        replace,
        PART_BYTES,
    ))?
}

/// The files under `root`, by key relative to it, in key order.
fn walk(root: &Path) -> Result<Vec<File>, TapeError> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let io = |e| TapeError::io(&d, "listing the directory to upload", e);
        for ent in std::fs::read_dir(&d).map_err(io)? {
            let ent = ent.map_err(io)?;
            let path = ent.path();
            let ty = ent
                .file_type()
                .map_err(|e| TapeError::io(&path, "reading the type of", e))?;
            if ty.is_dir() {
                dirs.push(path);
                continue;
            }
            if !ty.is_file() {
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .ok()
                .and_then(|r| {
                    let parts: Option<Vec<&str>> =
                        r.components().map(|c| c.as_os_str().to_str()).collect();
                    parts.map(|p| p.join("/"))
                })
                .ok_or_else(|| {
                    TapeError::usage(format!(
                        "{}: not a UTF-8 name, no object key",
                        path.display()
                    ))
                })?;
            let size = ent
                .metadata()
                .map_err(|e| TapeError::io(&path, "reading the size of", e))?
                .len();
            out.push(File { rel, path, size });
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

fn object_key(url: &Path, k: &Key, rel: &str) -> Result<Key, TapeError> {
    Key::parse(format!("{}/{rel}", k.as_ref())).map_err(|e| {
        TapeError::usage(format!(
            "{}: not an object key: {e}",
            url.join(rel).display()
        ))
    })
}

/// [`upload_dir`] in `store`, with parts of `part` bytes.
async fn upload_in(
    store: &dyn ObjectStore,
    files: &[File],
    url: &Path,
    k: &Key,
    replace: bool,
    part: u64,
) -> Result<Uploaded, TapeError> {
    let part = part.max(1);
    let keys: Vec<Key> = files
        .iter()
        .map(|f| object_key(url, k, &f.rel))
        .collect::<Result<_, _>>()?;
    let mut done = Uploaded::default();
    let r = put_all(store, files, &keys, url, part, &mut done).await;
    if let Err(mut e) = r {
        if replace {
            e.message.push_str(
                "; the prefix now holds a mix of the old and the new objects: run again with the same options",
            );
        } else {
            // The prefix was empty: leave it so, as a failed local export
            // leaves no directory.
            match delete_keys(store, keys.clone()).await {
                Ok(_) => e.message.push_str("; the objects uploaded were deleted"),
                Err(d) => e.message.push_str(&format!(
                    "; deleting the objects uploaded failed too ({d}): delete the prefix by hand"
                )),
            }
        }
        return Err(e);
    }
    if replace {
        let new: HashSet<&Key> = keys.iter().collect();
        let stale: Vec<Key> = store
            .list(Some(k))
            .map_ok(|m| m.location)
            .try_filter(|l| std::future::ready(!new.contains(l)))
            .try_collect()
            .await
            .map_err(|e| error(url, "listing the prefix for objects to replace", e))?;
        done.deleted = delete_keys(store, stale)
            .await
            .map_err(|e| error(url, "deleting the objects of the old dataset", e))?;
    }
    Ok(done)
}

/// Every file: small ones whole, several at a time; large ones in parts.
async fn put_all(
    store: &dyn ObjectStore,
    files: &[File],
    keys: &[Key],
    url: &Path,
    part: u64,
    done: &mut Uploaded,
) -> Result<(), TapeError> {
    // Indices, not references: a closure over borrowed items makes a
    // future the compiler cannot prove `Send` for every lifetime.
    let (small, large): (Vec<usize>, Vec<usize>) =
        (0..files.len()).partition(|&i| files[i].size <= part);
    let mut puts = futures_util::stream::iter(small)
        .map(|i| put_whole(store, &files[i], &keys[i], url))
        .buffer_unordered(PARTS_IN_FLIGHT);
    while let Some(n) = puts.try_next().await? {
        done.objects += 1;
        done.bytes += n;
    }
    for i in large {
        let f = &files[i];
        done.bytes += put_parts(store, f, &keys[i], &url.join(&f.rel), part).await?;
        done.objects += 1;
    }
    Ok(())
}

/// `f` in one put to `key`; its size.
async fn put_whole(
    store: &dyn ObjectStore,
    f: &File,
    key: &Key,
    url: &Path,
) -> Result<u64, TapeError> {
    let b = std::fs::read(&f.path)
        .map_err(|e| TapeError::io(&f.path, "reading the file to upload", e))?;
    let n = b.len() as u64;
    store
        .put(key, PutPayload::from(b))
        .await
        .map_err(|e| error(&url.join(&f.rel), "uploading the object", e))?;
    Ok(n)
}

/// `f` as a multipart upload to `key` (named `at` in errors); aborted on
/// any failure.
async fn put_parts(
    store: &dyn ObjectStore,
    f: &File,
    key: &Key,
    at: &Path,
    part: u64,
) -> Result<u64, TapeError> {
    let up = store
        .put_multipart(key)
        .await
        .map_err(|e| error(at, "starting a multipart upload", e))?;
    let chunk = usize::try_from(part).unwrap_or(usize::MAX);
    let mut w = WriteMultipart::new_with_chunk_size(up, chunk);
    let mut sent = 0u64;
    let r = async {
        let mut file = std::fs::File::open(&f.path)
            .map_err(|e| TapeError::io(&f.path, "opening the file to upload", e))?;
        let mut buf = vec![0u8; chunk.min(READ_BYTES)];
        loop {
            let n = file
                .read(&mut buf)
                .map_err(|e| TapeError::io(&f.path, "reading the file to upload", e))?;
            if n == 0 {
                break;
            }
            w.wait_for_capacity(PARTS_IN_FLIGHT)
                .await
                .map_err(|e| error(at, "uploading a part", e))?;
            w.write(&buf[..n]);
            sent += n as u64;
        }
        Ok::<_, TapeError>(())
    }
    .await;
    if let Err(e) = r {
        let _ = w.abort().await;
        return Err(e);
    }
    if sent != f.size {
        // Changed while uploading: not the file the export finished.
        return Err(TapeError::input(
            Some(&f.path),
            format!(
                "the file changed while it was uploaded ({} bytes, then {sent})",
                f.size
            ),
        ));
    }
    w.finish()
        .await
        .map_err(|e| error(at, "completing the multipart upload", e))?;
    Ok(sent)
}

/// Deletes `keys` (absent ones are no error); returns how many.
async fn delete_keys(store: &dyn ObjectStore, keys: Vec<Key>) -> Result<u64, object_store::Error> {
    let n = keys.len() as u64;
    let s = futures_util::stream::iter(keys.into_iter().map(Ok)).boxed();
    store
        .delete_stream(s)
        .try_for_each(|_| std::future::ready(Ok(())))
        .await?;
    Ok(n)
}

#[cfg(test)]
pub(super) mod test_hooks {
    use super::*;

    /// [`upload_in`] with the files under `local` and parts of `part`.
    pub async fn upload_with_parts(
        store: &dyn ObjectStore,
        local: &Path,
        url: &Path,
        replace: bool,
        part: u64,
    ) -> Result<Uploaded, TapeError> {
        let (_, k) = split(url)?;
        let k = Key::parse(k).map_err(|e| TapeError::usage(e.to_string()))?;
        upload_in(store, &walk(local)?, url, &k, replace, part).await
    }
}
