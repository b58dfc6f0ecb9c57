//! An S3 store from the environment, with bounded retries and timeouts,
//! and its errors in the tape layer's terms (the URL named).

use crate::tape::error::{TapeError, TapeErrorKind};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::{ClientConfigKey, ObjectStore, RetryConfig};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Retries of a failed request (the library's default of 10 makes a dead
/// endpoint take minutes).
const MAX_RETRIES: usize = 3;
/// No retry starts this long after the first try.
const RETRY_TIMEOUT: Duration = Duration::from_secs(10);
/// Connecting gives up after this.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// A request (an 8 MiB part at a slow 300 KB/s) gives up after this.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The store of `bucket`: credentials, region and endpoint from the AWS
/// environment variables and the library's chain (see docs/object-storage.md),
/// under the options given for it (`super::options`).
pub fn build(bucket: &str) -> Result<Arc<dyn ObjectStore>, TapeError> {
    // reqwest is built without a default crypto provider (ring, not
    // aws-lc: a smaller C build); without one installed `build` panics.
    // Err: one is installed already, which serves as well. Deprecated in
    // rustls 0.23.48 (ring has no post-quantum key exchange); aws-lc-rs,
    // which has, costs a large C and CMake build.
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
    let retry = RetryConfig {
        max_retries: MAX_RETRIES,
        retry_timeout: RETRY_TIMEOUT,
        ..RetryConfig::default()
    };
    // Set key by key: `with_client_options` would replace what the
    // environment set (AWS_ALLOW_HTTP among them).
    let client = |k| AmazonS3ConfigKey::Client(k);
    let secs = |d: Duration| format!("{}s", d.as_secs());
    let b = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .with_retry(retry)
        .with_config(
            client(ClientConfigKey::ConnectTimeout),
            secs(CONNECT_TIMEOUT),
        )
        .with_config(client(ClientConfigKey::Timeout), secs(REQUEST_TIMEOUT));
    let s = super::options::apply(b, bucket, &super::options::of(bucket))?
        .build()
        .map_err(|e| {
            TapeError::usage(format!("s3://{bucket}: configuring the store: {e}")).with_hint(
                "set AWS_REGION, AWS_ENDPOINT_URL (and AWS_ALLOW_HTTP=true for http://) and credentials",
            )
        })?;
    Ok(Arc::new(s))
}

/// `e`, met while `doing` something with `url`, as a tape error naming
/// the URL.
pub fn error(url: &Path, doing: &str, e: object_store::Error) -> TapeError {
    use object_store::Error as E;
    let (kind, hint) = match &e {
        E::NotFound { .. } => (
            std::io::ErrorKind::NotFound,
            "check the bucket and key (and AWS_ENDPOINT_URL)",
        ),
        E::Precondition { .. } | E::NotModified { .. } => return changed(url),
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => (
            std::io::ErrorKind::PermissionDenied,
            "check the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) and AWS_REGION",
        ),
        _ => (
            std::io::ErrorKind::Other,
            "check the endpoint (AWS_ENDPOINT_URL, AWS_ALLOW_HTTP), the network and the credentials",
        ),
    };
    TapeError {
        kind: TapeErrorKind::Io(kind),
        path: Some(url.to_path_buf()),
        offset: None,
        message: format!("{doing}: {}", chain(&e)),
        hint: Some(hint.into()),
    }
}

/// `e` and its sources, each once (the library's messages stop at a
/// "builder error" or "error sending request" whose cause is below).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

/// The object is not the one listed: never read half of each.
pub fn changed(url: &Path) -> TapeError {
    TapeError {
        kind: TapeErrorKind::Io(std::io::ErrorKind::Other),
        path: Some(url.to_path_buf()),
        offset: None,
        message: "the object changed after it was listed (another ETag or size); list again"
            .to_string(),
        hint: Some("open the tape again once its writer or uploader is done".into()),
    }
}
