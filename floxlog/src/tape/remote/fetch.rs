//! Listing prefixes and fetching objects by range requests, checked
//! against what the listing saw.

use super::store::{changed, error};
use super::url::split;
use super::{Entry, Kind, PARTS_IN_FLIGHT, PART_BYTES};
use crate::tape::error::TapeError;
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{GetOptions, GetRange, ObjectMeta, ObjectStore, ObjectStoreExt};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// What a listing saw of an object: reads check they get the same one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub size: u64,
    pub e_tag: Option<String>,
}

impl From<&ObjectMeta> for Seen {
    fn from(m: &ObjectMeta) -> Seen {
        Seen {
            size: m.size,
            e_tag: m.e_tag.clone(),
        }
    }
}

/// Requests sent (lists, heads, gets) and object bytes received by this
/// process: what a read costs in a store's terms (the benchmarks').
static REQUESTS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

fn count(requests: u64, bytes: u64) {
    REQUESTS.fetch_add(requests, Ordering::Relaxed);
    BYTES.fetch_add(bytes, Ordering::Relaxed);
}

/// `(requests, bytes)` this process has sent and received so far.
pub fn stats() -> (u64, u64) {
    (
        REQUESTS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    )
}

/// The objects listings (and looks) saw, by URL: the newest sighting wins.
static SEEN: Mutex<Option<HashMap<String, Seen>>> = Mutex::new(None);

fn remember(url: &str, s: Seen) {
    let mut g = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    g.get_or_insert_with(HashMap::new)
        .insert(url.to_string(), s);
}

/// The listing [`kind_in`] made of a prefix, for the [`list`] that follows
/// it when a tape is opened (one list call, not two); taken once, so a
/// later open lists again.
static LAST_LISTING: Mutex<Option<(String, Vec<Entry>)>> = Mutex::new(None);

fn keep_listing(url: &Path, entries: Vec<Entry>) {
    let mut g = LAST_LISTING.lock().unwrap_or_else(PoisonError::into_inner);
    *g = Some((prefix_key(url), entries));
}

fn take_listing(url: &Path) -> Option<Vec<Entry>> {
    let mut g = LAST_LISTING.lock().unwrap_or_else(PoisonError::into_inner);
    match g.take() {
        Some((k, v)) if k == prefix_key(url) => Some(v),
        _ => None,
    }
}

/// Prefixes listed whole, so that a side file they lack is known absent
/// without a request.
static LISTED: Mutex<Option<std::collections::HashSet<String>>> = Mutex::new(None);

fn prefix_key(url: &Path) -> String {
    url.to_string_lossy().trim_end_matches('/').to_string()
}

fn mark_listed(url: &Path) {
    let mut g = LISTED.lock().unwrap_or_else(PoisonError::into_inner);
    g.get_or_insert_with(Default::default)
        .insert(prefix_key(url));
}

fn was_listed(url: &Path) -> bool {
    let g = LISTED.lock().unwrap_or_else(PoisonError::into_inner);
    g.as_ref().is_some_and(|s| s.contains(&prefix_key(url)))
}

/// Forgets the objects seen under prefix `url` (a new listing replaces
/// them: one deleted since is missing, not remembered).
fn forget_under(url: &Path) {
    let p = format!("{}/", url.to_string_lossy().trim_end_matches('/'));
    let mut g = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(m) = g.as_mut() {
        m.retain(|k, _| !k.starts_with(&p));
    }
}

fn seen(url: &Path) -> Option<Seen> {
    let g = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    g.as_ref()?.get(url.to_str()?).cloned()
}

/// The listing's lock, held (see `runtime::fork_holding_locks`).
#[cfg(all(test, unix))]
pub fn seen_lock() -> std::sync::MutexGuard<'static, Option<HashMap<String, Seen>>> {
    SEEN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The size the last listing saw of `url`.
pub fn listed_size(url: &Path) -> Option<u64> {
    seen(url).map(|s| s.size)
}

fn key(url: &Path, k: &str) -> Result<Key, TapeError> {
    Key::parse(k)
        .map_err(|e| TapeError::usage(format!("{}: not an object key: {e}", url.display())))
}

/// A URL, its bucket's store and its key.
fn resolve(url: &Path) -> Result<(std::sync::Arc<dyn ObjectStore>, Key), TapeError> {
    let (bucket, k) = split(url)?;
    let st = super::runtime::state()?;
    Ok((st.store(&bucket)?, key(url, k)?))
}

fn run<T: Send>(f: impl std::future::Future<Output = T> + Send) -> Result<T, TapeError> {
    Ok(super::runtime::state()?.block_on(f))
}

/// Whether `url` is a prefix with objects under it or one object.
pub fn kind(url: &Path) -> Result<Kind, TapeError> {
    let (store, k) = resolve(url)?;
    run(kind_in(store.as_ref(), url, &k))?
}

/// The objects directly under prefix `url`.
pub fn list(url: &Path) -> Result<Vec<Entry>, TapeError> {
    if let Some(v) = take_listing(url) {
        return Ok(v);
    }
    let (store, k) = resolve(url)?;
    run(list_in(store.as_ref(), url, &k))?
}

/// The objects and prefixes directly under prefix `url`.
pub fn names(url: &Path) -> Result<Vec<(String, bool)>, TapeError> {
    let (store, k) = resolve(url)?;
    let prefix = (!k.as_ref().is_empty()).then_some(&k);
    count(1, 0);
    let l =
        run(store.list_with_delimiter(prefix))?.map_err(|e| error(url, "listing the prefix", e))?;
    let dirs = l.common_prefixes.iter().map(|p| (p, true));
    let objects = l.objects.iter().map(|o| (&o.location, false));
    Ok(dirs
        .chain(objects)
        .filter_map(|(p, dir)| Some((p.filename()?.to_string(), dir)))
        .collect())
}

/// A side file's bytes; `Ok(None)`: no such object.
pub fn read_side(url: &Path) -> std::io::Result<Option<Vec<u8>>> {
    // Not among its prefix's objects: absent (one request fewer per side
    // file a tape lacks).
    if seen(url).is_none() && url.parent().is_some_and(was_listed) {
        return Ok(None);
    }
    let r = resolve(url).and_then(|(store, k)| {
        let s = seen(url);
        run(fetch_in(store.as_ref(), url, &k, s, PART_BYTES))?
    });
    match r {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind == crate::tape::TapeErrorKind::Io(std::io::ErrorKind::NotFound) => {
            Ok(None)
        }
        Err(e) => Err(std::io::Error::other(e.message)),
    }
}

/// [`kind`] in `store`: a listing under `k/` first (tapes are prefixes),
/// then a look at the object `k`.
pub async fn kind_in(store: &dyn ObjectStore, url: &Path, k: &Key) -> Result<Kind, TapeError> {
    if k.as_ref().is_empty() {
        return Ok(Kind::Prefix);
    }
    count(1, 0);
    let l = store
        .list_with_delimiter(Some(k))
        .await
        .map_err(|e| error(url, "listing the prefix", e))?;
    if !l.objects.is_empty() || !l.common_prefixes.is_empty() {
        keep_listing(url, seen_all(url, &l.objects));
        return Ok(Kind::Prefix);
    }
    count(1, 0);
    let m = store.head(k).await.map_err(|e| {
        let mut t = error(url, "looking up the object", e);
        if t.kind == crate::tape::TapeErrorKind::Io(std::io::ErrorKind::NotFound) {
            t.message = "no such object, and no objects under it as a prefix".to_string();
        }
        t
    })?;
    remember(&url.to_string_lossy(), Seen::from(&m));
    Ok(Kind::Object)
}

/// The URL of a listed object: `url` (its prefix) and its name.
fn child(url: &Path, o: &ObjectMeta) -> String {
    let name = o.location.filename().unwrap_or_default();
    url.join(name).to_string_lossy().into_owned()
}

/// [`list`] in `store`.
pub async fn list_in(
    store: &dyn ObjectStore,
    url: &Path,
    k: &Key,
) -> Result<Vec<Entry>, TapeError> {
    let prefix = (!k.as_ref().is_empty()).then_some(k);
    count(1, 0);
    let l = store
        .list_with_delimiter(prefix)
        .await
        .map_err(|e| error(url, "listing the prefix", e))?;
    Ok(seen_all(url, &l.objects))
}

/// A prefix's listing remembered (what reads check against) and as entries.
fn seen_all(url: &Path, objects: &[ObjectMeta]) -> Vec<Entry> {
    forget_under(url);
    let mut v = Vec::with_capacity(objects.len());
    for o in objects {
        remember(&child(url, o), Seen::from(o));
        v.push(Entry {
            name: o.location.filename().unwrap_or_default().to_string(),
            size: o.size,
        });
    }
    mark_listed(url);
    v
}

/// What object `k` is now, if no listing saw it: one look.
async fn want_of(
    store: &dyn ObjectStore,
    url: &Path,
    k: &Key,
    listed: Option<Seen>,
) -> Result<Seen, TapeError> {
    match listed {
        Some(s) => Ok(s),
        None => {
            count(1, 0);
            let m = store.head(k).await;
            Ok(Seen::from(
                &m.map_err(|e| error(url, "looking up the object", e))?,
            ))
        }
    }
}

/// The bytes `range` of object `k` (named `url` in errors), as `want`
/// saw it, in parts of at most `part` bytes, [`PARTS_IN_FLIGHT`] at a
/// time, each conditional on its ETag: `put(offset, bytes)` for each part,
/// in order. A part of another object (ETag, size or length differ) is the
/// "changed; list again" error.
async fn get_parts(
    store: &dyn ObjectStore,
    url: &Path,
    k: &Key,
    want: &Seen,
    range: std::ops::Range<u64>,
    part: u64,
    put: &mut (dyn FnMut(u64, &[u8]) + Send),
) -> Result<(), TapeError> {
    let part = part.max(1);
    let step = usize::try_from(part).unwrap_or(usize::MAX);
    let end = range.end.min(want.size);
    let starts: Vec<_> = (range.start..end)
        .step_by(step)
        .map(|at| at..(at + part).min(end))
        .collect();
    let parts = futures_util::stream::iter(starts).map(|r| async move {
        let opts = GetOptions {
            if_match: want.e_tag.clone(),
            range: Some(GetRange::Bounded(r.clone())),
            ..GetOptions::default()
        };
        let doing = || format!("reading bytes {}..{}", r.start, r.end);
        count(1, 0);
        let got = store
            .get_opts(k, opts)
            .await
            .map_err(|e| error(url, &doing(), e))?;
        // Stores that ignore If-Match: the size and ETag tell too.
        let etag_differs = matches!((&want.e_tag, &got.meta.e_tag), (Some(a), Some(b)) if a != b);
        if got.meta.size != want.size || etag_differs {
            return Err(changed(url));
        }
        let b = got.bytes().await.map_err(|e| error(url, &doing(), e))?;
        count(0, b.len() as u64);
        if b.len() as u64 != r.end - r.start {
            return Err(changed(url).at(r.start + b.len() as u64));
        }
        Ok::<_, TapeError>((r.start, b))
    });
    let mut parts = parts.buffered(PARTS_IN_FLIGHT);
    while let Some((at, b)) = parts.try_next().await? {
        put(at, &b);
    }
    Ok(())
}

/// Object `k` (named `url` in errors) whole, in parts of `part` bytes,
/// checked against what `listed` saw (else a first look); see
/// [`get_parts`].
pub async fn fetch_in(
    store: &dyn ObjectStore,
    url: &Path,
    k: &Key,
    listed: Option<Seen>,
    part: u64,
) -> Result<Vec<u8>, TapeError> {
    let want = want_of(store, url, k, listed).await?;
    let len = usize::try_from(want.size).map_err(|_| too_big(url, want.size))?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(len)
        .map_err(|_| too_big(url, want.size))?;
    let mut put = |_: u64, b: &[u8]| buf.extend_from_slice(b);
    let all = 0..want.size;
    get_parts(store, url, k, &want, all, part, &mut put).await?;
    Ok(buf)
}

/// The size of object `url`: as the last listing saw it, else one look
/// (remembered, so the reads that follow check against it).
pub fn object_size(url: &Path) -> Result<u64, TapeError> {
    if let Some(s) = seen(url) {
        return Ok(s.size);
    }
    let (store, k) = resolve(url)?;
    let s = run(want_of(store.as_ref(), url, &k, None))??;
    let size = s.size;
    remember(&url.to_string_lossy(), s);
    Ok(size)
}

/// Copies the bytes `range` of object `url` (as [`object_size`] saw it)
/// into `out` at their offsets (`out` is as long as the object).
pub fn fetch_range(
    url: &Path,
    range: std::ops::Range<u64>,
    out: &mut [u8],
) -> Result<(), TapeError> {
    let (store, k) = resolve(url)?;
    let want = match seen(url) {
        Some(s) => s,
        None => run(want_of(store.as_ref(), url, &k, None))??,
    };
    if want.size != out.len() as u64 {
        return Err(changed(url));
    }
    let mut put = |at: u64, b: &[u8]| {
        // Parts lie in the object, which is `out`'s length (checked).
        let at = at as usize;
        if let Some(d) = out.get_mut(at..at + b.len()) {
            d.copy_from_slice(b);
        }
    };
    run(get_parts(
        store.as_ref(),
        url,
        &k,
        &want,
        range,
        PART_BYTES,
        &mut put,
    ))?
}

fn too_big(url: &Path, size: u64) -> TapeError {
    TapeError::input(
        Some(url),
        format!("the object has {size} bytes, more than this process can hold in memory"),
    )
}
