//! A store (S3; Google and Azure untested) from the environment, with bounded retries and timeouts,
//! and its errors in the tape layer's terms (the URL named).

use crate::tape::error::{TapeError, TapeErrorKind};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::{ClientConfigKey, ObjectStore, RetryConfig};
use std::path::Path;
use std::str::FromStr;
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

/// The store named `name` (see `super::url::split`): for `s3://` a bucket,
/// with credentials, region and endpoint from the AWS environment
/// variables and the library's chain (see docs/object-storage.md); for
/// `gs://bucket` and `az://container`, the library's Google and Azure
/// stores from their environment variables (untested: no local server).
/// Under the options given for it (`super::options`).
pub fn build(name: &str) -> Result<Arc<dyn ObjectStore>, TapeError> {
    // reqwest is built without a default crypto provider (ring, not
    // aws-lc: a smaller C build); without one installed `build` panics.
    // Err: one is installed already, which serves as well. Deprecated in
    // rustls 0.23.48 (ring has no post-quantum key exchange); aws-lc-rs,
    // which has, costs a large C and CMake build.
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
    let options = super::options::of(name);
    let failed = |e: object_store::Error| {
        TapeError::usage(format!("{}: configuring the store: {e}", shown(name))).with_hint(
            "set AWS_REGION, AWS_ENDPOINT_URL (and AWS_ALLOW_HTTP=true for http://) and credentials",
        )
    };
    // Set key by key: `with_client_options` would replace what the
    // environment set (AWS_ALLOW_HTTP among them).
    let secs = |d: Duration| format!("{}s", d.as_secs());
    let timeouts = [
        (ClientConfigKey::ConnectTimeout, secs(CONNECT_TIMEOUT)),
        (ClientConfigKey::Timeout, secs(REQUEST_TIMEOUT)),
    ];
    if let Some(bucket) = name.strip_prefix("gs://") {
        let mut b = GoogleCloudStorageBuilder::from_env()
            .with_bucket_name(bucket)
            .with_retry(retry());
        for (k, v) in timeouts {
            b = b.with_config(GoogleConfigKey::Client(k), v);
        }
        for (k, v) in &options {
            b = b.with_config(other_key(name, k)?, v);
        }
        return Ok(Arc::new(b.build().map_err(failed)?));
    }
    if let Some(container) = name.strip_prefix("az://") {
        let mut b = MicrosoftAzureBuilder::from_env()
            .with_container_name(container)
            .with_retry(retry());
        for (k, v) in timeouts {
            b = b.with_config(AzureConfigKey::Client(k), v);
        }
        for (k, v) in &options {
            b = b.with_config(other_key(name, k)?, v);
        }
        return Ok(Arc::new(b.build().map_err(failed)?));
    }
    let mut b = AmazonS3Builder::from_env()
        .with_bucket_name(name)
        .with_retry(retry());
    for (k, v) in timeouts {
        b = b.with_config(AmazonS3ConfigKey::Client(k), v);
    }
    let s = super::options::apply(b, name, &options)?
        .build()
        .map_err(failed)?;
    Ok(Arc::new(s))
}

/// Checks `options` for the store named `name` (their names only).
pub fn check_options(name: &str, options: &[(String, String)]) -> Result<(), TapeError> {
    if name.starts_with("gs://") {
        for (k, _) in options {
            other_key::<GoogleConfigKey>(name, k)?;
        }
        return Ok(());
    }
    if name.starts_with("az://") {
        for (k, _) in options {
            other_key::<AzureConfigKey>(name, k)?;
        }
        return Ok(());
    }
    super::options::apply(AmazonS3Builder::new(), name, options).map(|_| ())
}

/// A Google or Azure store's option: the library's own names only
/// (`google_service_account`, `azure_storage_account_name`, ...).
fn other_key<K: FromStr>(name: &str, k: &str) -> Result<K, TapeError> {
    K::from_str(k).map_err(|_| {
        super::options::unknown(name, k, "the object_store crate's google_* / azure_* keys")
    })
}

fn retry() -> RetryConfig {
    RetryConfig {
        max_retries: MAX_RETRIES,
        retry_timeout: RETRY_TIMEOUT,
        ..RetryConfig::default()
    }
}

/// A store's name as a URL.
pub fn shown(name: &str) -> String {
    match name.contains("://") {
        true => name.to_string(),
        false => format!("s3://{name}"),
    }
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
