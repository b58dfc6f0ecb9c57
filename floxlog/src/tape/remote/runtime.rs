//! The async runtime and the stores it drives, made lazily, once per
//! process.
//!
//! Python workers fork (Dask, PySpark): a runtime made before a fork has
//! no threads in the child, and its I/O driver shares the parent's epoll
//! instance. So the state records the pid that made it; in another process
//! it is leaked, never used nor dropped (dropping would deregister the
//! parent's sockets), and a new one is made.

use crate::tape::error::TapeError;
use object_store::ObjectStore;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// One process's runtime and its stores by bucket.
pub struct State {
    pid: u32,
    runtime: tokio::runtime::Runtime,
    stores: Mutex<HashMap<String, Arc<dyn ObjectStore>>>,
}

static STATE: Mutex<Option<Arc<State>>> = Mutex::new(None);

/// This process's state, made on first use.
pub fn state() -> Result<Arc<State>, TapeError> {
    let mut g = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let pid = std::process::id();
    if let Some(s) = g.as_ref() {
        if s.pid == pid {
            return Ok(s.clone());
        }
        // Made before a fork: see the module docs.
        if let Some(old) = g.take() {
            std::mem::forget(old);
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("floxlog-object-store")
        .enable_all()
        .build()
        .map_err(|e| {
            TapeError::io(
                std::path::Path::new("<runtime>"),
                "starting the object-store runtime",
                e,
            )
        })?;
    let s = Arc::new(State {
        pid,
        runtime,
        stores: Mutex::new(HashMap::new()),
    });
    *g = Some(s.clone());
    Ok(s)
}

/// `fork(2)` with this module's locks (and the listing's) held, so that
/// the child never inherits one held by another thread (tests: a forked
/// child makes its own runtime).
#[cfg(all(test, unix))]
pub fn fork_holding_locks() -> i32 {
    let _state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let _seen = super::fetch::seen_lock();
    // SAFETY: the caller's child only runs Rust code that takes these
    // locks after they are released, and leaves by `_exit`.
    unsafe { libc::fork() }
}

impl State {
    /// Runs `f` to completion from synchronous code (on another thread when
    /// the caller is itself inside a runtime, where `block_on` would panic).
    pub fn block_on<F: std::future::Future + Send>(&self, f: F) -> F::Output
    where
        F::Output: Send,
    {
        if tokio::runtime::Handle::try_current().is_ok() {
            return std::thread::scope(|s| {
                let h = s.spawn(|| self.runtime.block_on(f));
                match h.join() {
                    Ok(v) => v,
                    Err(p) => std::panic::resume_unwind(p),
                }
            });
        }
        self.runtime.block_on(f)
    }

    /// The store of `bucket`, built from the environment on first use.
    pub fn store(&self, bucket: &str) -> Result<Arc<dyn ObjectStore>, TapeError> {
        let mut m = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(s) = m.get(bucket) {
            return Ok(s.clone());
        }
        let s = super::store::build(bucket)?;
        m.insert(bucket.to_string(), s.clone());
        Ok(s)
    }

    /// Forgets `bucket`'s store: the next use builds it again (its options
    /// changed).
    pub fn forget_store(&self, bucket: &str) {
        let mut m = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
        m.remove(bucket);
    }

    /// Puts `store` in place of `bucket`'s (tests: an in-memory store).
    #[cfg(test)]
    pub fn set_store(&self, bucket: &str, store: Arc<dyn ObjectStore>) {
        let mut m = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
        m.insert(bucket.to_string(), store);
    }
}
