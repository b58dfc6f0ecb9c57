//! Per-bucket options of a store, given by a caller (Python's
//! `storage_options`) rather than the environment: fsspec's names or
//! object_store's own `aws_*` keys, over what the environment sets.
//!
//! Kept apart from the runtime, as plain data: a process forked after
//! options were given keeps them, and its new runtime builds its stores
//! with them.

use crate::tape::error::TapeError;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Mutex, PoisonError};

/// Options by bucket, in the order given.
pub type Options = Vec<(String, String)>;

static OPTIONS: Mutex<Option<HashMap<String, Options>>> = Mutex::new(None);

/// The options given for `bucket` (none: the environment alone).
pub fn of(bucket: &str) -> Options {
    let g = OPTIONS.lock().unwrap_or_else(PoisonError::into_inner);
    g.as_ref()
        .and_then(|m| m.get(bucket).cloned())
        .unwrap_or_default()
}

/// Sets `bucket`'s options; whether they differ from the ones before (a
/// store built with those must be built again).
pub fn set(bucket: &str, options: Options) -> bool {
    let mut g = OPTIONS.lock().unwrap_or_else(PoisonError::into_inner);
    let m = g.get_or_insert_with(HashMap::new);
    if m.get(bucket) == Some(&options) {
        return false;
    }
    m.insert(bucket.to_string(), options);
    true
}

/// The store's key for an option's name: fsspec's (`key`, `secret`,
/// `token`, `endpoint_url`, `region`, `anon`), else any name object_store
/// knows (`aws_access_key_id`, `aws_virtual_hosted_style_request`, ...).
fn key_of(name: &str) -> Option<AmazonS3ConfigKey> {
    let fsspec = match name {
        "key" | "access_key_id" => Some(AmazonS3ConfigKey::AccessKeyId),
        "secret" | "secret_access_key" => Some(AmazonS3ConfigKey::SecretAccessKey),
        "token" | "session_token" => Some(AmazonS3ConfigKey::Token),
        "endpoint_url" => Some(AmazonS3ConfigKey::Endpoint),
        "region" | "region_name" => Some(AmazonS3ConfigKey::Region),
        "anon" => Some(AmazonS3ConfigKey::SkipSignature),
        _ => None,
    };
    fsspec.or_else(|| AmazonS3ConfigKey::from_str(name).ok())
}

/// The error for an option `name` no store of this kind knows: the name,
/// never its value (a secret).
pub fn unknown(store: &str, name: &str, known: &str) -> TapeError {
    let shown = super::store::shown(store);
    TapeError::usage(format!("{shown}: storage_options: unknown key `{name}`"))
        .with_hint(format!("known: {known}"))
}

/// The keys an S3 store takes, for errors.
pub const S3_KEYS: &str =
    "key, secret, token, endpoint_url, region, anon, or object_store's aws_* keys";

/// `b` with `options` applied (an `http://` endpoint allows plain HTTP,
/// as fsspec does). Errors name the option, never its value (a secret).
pub fn apply(
    mut b: AmazonS3Builder,
    bucket: &str,
    options: &[(String, String)],
) -> Result<AmazonS3Builder, TapeError> {
    for (name, value) in options {
        let Some(k) = key_of(name) else {
            return Err(unknown(bucket, name, S3_KEYS));
        };
        if k == AmazonS3ConfigKey::Endpoint && value.starts_with("http://") {
            b = b.with_allow_http(true);
        }
        b = b.with_config(k, value);
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsspec_names_and_the_stores_own() {
        assert_eq!(key_of("key"), Some(AmazonS3ConfigKey::AccessKeyId));
        assert_eq!(key_of("endpoint_url"), Some(AmazonS3ConfigKey::Endpoint));
        assert_eq!(
            key_of("aws_secret_access_key"),
            Some(AmazonS3ConfigKey::SecretAccessKey)
        );
        assert_eq!(key_of("passwd"), None);
    }

    #[test]
    fn an_unknown_key_is_named_and_no_value_is_shown() {
        let opts = vec![
            ("secret".to_string(), "hunter2".to_string()),
            ("passwd".to_string(), "hunter3".to_string()),
        ];
        let e = apply(AmazonS3Builder::new(), "b", &opts).unwrap_err();
        let text = format!("{e} {:?}", e.hint);
        assert!(text.contains("`passwd`"), "{text}");
        assert!(!text.contains("hunter"), "{text}");
    }

    #[test]
    fn options_replace_the_ones_before() {
        let o = vec![("region".to_string(), "eu-west-1".to_string())];
        assert!(set("opts-test", o.clone()));
        assert!(!set("opts-test", o.clone()));
        assert_eq!(of("opts-test"), o);
        assert!(set("opts-test", Vec::new()));
        assert!(of("opts-test").is_empty());
    }
}
