//! The conformance kit's writer settings file (`encode --settings`):
//! `{"compression": "none"|"lz4", "create_index": bool, "index_interval":
//! N, "exchange_id": N, "max_segment_bytes": N, "profile": "reference"|
//! "spec", "created_ns": [N, ...]}`. Unknown fields are ignored.

use super::common::{CompressionArg, ProfileArg};
use floxlog::tape::writer::Clock;
use floxlog::tape::TapeError;
use serde_json::Value;
use std::path::Path;

/// Parsed settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Codec.
    pub compression: CompressionArg,
    /// Whether to write an index.
    pub create_index: bool,
    /// Index interval / events per LZ4 block.
    pub index_interval: u16,
    /// Segment header exchange tag.
    pub exchange_id: u8,
    /// Rotation threshold.
    pub max_segment_bytes: u64,
    /// Writer conventions.
    pub profile: ProfileArg,
    /// created_ns of segment i.
    pub created_ns: Vec<i64>,
}

impl Settings {
    /// Reads and checks the file at `path`; errors name it and the field.
    pub fn load(path: &Path) -> Result<Settings, TapeError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| TapeError::io(path, "reading the settings", e))?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| TapeError::input(Some(path), format!("invalid JSON: {e}")))?;
        Settings::from_value(&v).map_err(|m| TapeError::input(Some(path), m))
    }

    /// Checks a parsed settings object.
    pub fn from_value(v: &Value) -> Result<Settings, String> {
        let get = |k: &str| v.get(k).ok_or_else(|| format!("missing `{k}`"));
        let uint = |k: &str| -> Result<u64, String> {
            get(k)?
                .as_u64()
                .ok_or_else(|| format!("`{k}` is not an unsigned integer"))
        };
        if !v.is_object() {
            return Err("the settings are not a JSON object".into());
        }
        let compression = match get("compression")?.as_str() {
            Some("none") => CompressionArg::None,
            Some("lz4") => CompressionArg::Lz4,
            _ => return Err("`compression` is not \"none\" or \"lz4\"".into()),
        };
        let profile = match v.get("profile").map(Value::as_str) {
            None | Some(Some("reference")) => ProfileArg::Reference,
            Some(Some("spec")) => ProfileArg::Spec,
            _ => return Err("`profile` is not \"reference\" or \"spec\"".into()),
        };
        let index_interval = u16::try_from(uint("index_interval")?)
            .ok()
            .filter(|&n| n > 0)
            .ok_or("`index_interval` is not in 1..=65535 (what 1.0's index header holds)")?;
        let exchange_id = u8::try_from(uint("exchange_id")?)
            .map_err(|_| "`exchange_id` is not in 0..=255 (what the segment header holds)")?;
        let max_segment_bytes = uint("max_segment_bytes")?;
        if max_segment_bytes == 0 {
            return Err("`max_segment_bytes` is 0".into());
        }
        let created_ns = match v.get("created_ns") {
            None => Vec::new(),
            Some(c) => c
                .as_array()
                .ok_or("`created_ns` is not an array")?
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    n.as_i64()
                        .filter(|&n| n >= 0)
                        .ok_or_else(|| format!("`created_ns[{i}]` is not in 0..=i64::MAX"))
                })
                .collect::<Result<_, _>>()?,
        };
        Ok(Settings {
            compression,
            create_index: get("create_index")?
                .as_bool()
                .ok_or("`create_index` is not a bool")?,
            index_interval,
            exchange_id,
            max_segment_bytes,
            profile,
            created_ns,
        })
    }

    /// The clock that stamps segment i with `created_ns[i]`. Past the list
    /// (the writer made more segments than expected) it repeats the last
    /// value, which the tape writer turns into last + 1, + 2, ...; an empty
    /// list stamps the wall clock.
    pub fn clock(&self) -> Clock {
        let list = self.created_ns.clone();
        let mut i = 0usize;
        Box::new(move || {
            let v = list
                .get(i)
                .or(list.last())
                .copied()
                .unwrap_or_else(floxlog::tape::writer::now_ns);
            i += 1;
            v
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_protocol_settings_and_names_bad_fields() {
        let v = json!({"compression": "lz4", "create_index": true, "index_interval": 64,
            "exchange_id": 7, "max_segment_bytes": 4096, "profile": "reference",
            "created_ns": [5, 9], "extra": "ignored"});
        let s = Settings::from_value(&v).unwrap();
        assert_eq!(s.compression, CompressionArg::Lz4);
        assert_eq!((s.index_interval, s.exchange_id), (64, 7));
        assert_eq!(s.created_ns, [5, 9]);
        let mut c = s.clock();
        assert_eq!([c(), c(), c()], [5, 9, 9]);
        for (k, bad, msg) in [
            ("index_interval", json!(70000), "index_interval"),
            ("index_interval", json!(0), "index_interval"),
            ("exchange_id", json!(256), "exchange_id"),
            ("compression", json!("zstd"), "compression"),
            ("created_ns", json!([-1]), "created_ns[0]"),
        ] {
            let mut w = v.clone();
            w[k] = bad;
            let e = Settings::from_value(&w).unwrap_err();
            assert!(e.contains(msg), "{k}: {e}");
        }
        let mut w = v.clone();
        w.as_object_mut().unwrap().remove("create_index");
        assert_eq!(
            Settings::from_value(&w).unwrap_err(),
            "missing `create_index`"
        );
    }
}
