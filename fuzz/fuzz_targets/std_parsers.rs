//! The std layer's parsers over arbitrary bytes: flox's binary `.manifest`,
//! `manifest.json`, `metadata.json`, JSON-lines events and time arguments.
//! The first byte picks the parser. None may panic; what they accept must
//! hold up: manifest names are checked for confinement, and an event parsed
//! from JSON prints and parses back to itself.
#![no_main]

use floxlog::json::{event_from_line, event_from_value, event_to_value, PriceStyle};
use floxlog::tape::dir::is_plain_file_name;
use floxlog::tape::dir::{FloxManifest, Metadata};
use floxlog::time::parse_time;
use floxlog::tape::Manifest;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match pick % 5 {
        0 => {
            if let Ok(m) = FloxManifest::parse(rest, Path::new(".manifest")) {
                // What parses writes back to the bytes it came from, as far
                // as the parsed fields go.
                let again = FloxManifest::parse(&m.to_bytes(), Path::new(".manifest"));
                assert!(again.is_ok());
            }
        }
        1 => {
            if let Ok(m) = Manifest::parse(&text, Path::new("manifest.json")) {
                for s in &m.segments {
                    let _ = is_plain_file_name(&s.name);
                }
                let again = Manifest::parse(&m.to_text(), Path::new("manifest.json")).unwrap();
                assert_eq!(again, m);
            }
        }
        2 => {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
                let _ = Metadata(v).symbols();
            }
        }
        3 => {
            for line in text.lines() {
                let Ok(ev) = event_from_line(line) else {
                    continue;
                };
                for style in [PriceStyle::Raw, PriceStyle::Decimal] {
                    let printed = event_to_value(&ev.as_event(), style);
                    let back = event_from_value(&printed).expect("printed events parse");
                    assert_eq!(back, ev, "{style:?}");
                }
            }
        }
        _ => {
            let _ = parse_time(&text);
        }
    }
});
