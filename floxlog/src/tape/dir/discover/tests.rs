//! Tests of finding a tape's segments.
use super::*;

/// A writer of a new tape at `p`, created at time 1.
fn writer(p: &Path, cfg: crate::tape::TapeWriterConfig) -> crate::tape::TapeWriter {
    crate::tape::TapeWriter::create(
        p,
        crate::tape::TapeWriterConfig {
            created_ns: Some(1),
            ..cfg
        },
    )
    .unwrap()
}

#[test]
fn manifest_names_stay_inside_the_tape_directory() {
    for ok in ["trades-000000.bin", "1714.floxlog", "a..b.floxlog"] {
        assert!(is_plain_file_name(ok), "{ok}");
    }
    for bad in [
        "",
        ".",
        "..",
        "../x.floxlog",
        "/etc/passwd",
        "a/b.floxlog",
        "a\\b",
        "./x",
    ] {
        assert!(!is_plain_file_name(bad), "{bad}");
    }
}

#[test]
fn flox_segments_sort_by_their_number() {
    let mut v = vec![
        "1000.floxlog",
        "998.floxlog",
        "trades-000000.bin",
        "-5.floxlog",
    ];
    v.sort_by(|a, b| file_order(a).cmp(&file_order(b)));
    assert_eq!(
        v,
        [
            "-5.floxlog",
            "998.floxlog",
            "1000.floxlog",
            "trades-000000.bin"
        ]
    );
}

#[test]
fn symbol_ids_resolve_numbers_and_metadata_names() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t");
    let mut w = writer(&p, crate::tape::TapeWriterConfig::default());
    w.set_metadata(serde_json::json!({"symbols": [
        {"symbol_id": 7, "name": "BTCUSDT"},
        {"symbol_id": 9, "name": "ETHUSDT"},
    ]}));
    w.append(&crate::synth::mixed_event(1, 0).as_event())
        .unwrap();
    w.close().unwrap();
    let tape = Tape::open(std::slice::from_ref(&p), OpenOptions::default()).unwrap();
    assert_eq!(tape.symbol_ids::<&str>(&[]).unwrap(), None);
    assert_eq!(
        tape.symbol_ids(&[" ethusdt ", "3", "BTCUSDT", "9"])
            .unwrap(),
        Some(vec![3, 7, 9])
    );
    let e = tape.symbol_ids(&["SOLUSDT".to_string()]).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert_eq!(
        e.message,
        "unknown symbol `SOLUSDT`: give a numeric symbol_id or one of: BTCUSDT, ETHUSDT"
    );
    // Without metadata.json only numbers resolve.
    std::fs::remove_file(p.join("metadata.json")).unwrap();
    let tape = Tape::open(&[p], OpenOptions::default()).unwrap();
    assert_eq!(tape.symbol_ids(&["42"]).unwrap(), Some(vec![42]));
    let e = tape.symbol_ids(&["BTCUSDT"]).unwrap_err();
    assert!(
        e.message
            .ends_with("(the tape has no metadata.json with names)"),
        "{e}"
    );
}

#[test]
fn open_for_rewrite_ignores_the_manifest_and_checks_single_output() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t");
    let mut w = writer(
        &p,
        crate::tape::TapeWriterConfig {
            max_segment_bytes: 4096,
            ..Default::default()
        },
    );
    for i in 0..500 {
        w.append(&crate::synth::mixed_event(1, i).as_event())
            .unwrap();
    }
    w.close().unwrap();
    let tape = Tape::open_for_rewrite(std::slice::from_ref(&p), false).unwrap();
    assert!(tape.segments.len() > 1);
    assert!(tape.dirs[0].manifest.is_none());
    assert!(tape.segments.iter().all(|s| s.listed.is_none()));
    let e = Tape::open_for_rewrite(&[p], true).unwrap_err();
    assert_eq!(e.message, "--output needs exactly one input segment");
    let one = Tape::open_for_rewrite(&[tape.segments[0].path.clone()], true).unwrap();
    assert_eq!(one.segments.len(), 1);
}

#[test]
fn series_names() {
    assert_eq!(segment_series("1714.floxlog").as_deref(), Some("mixed"));
    assert_eq!(
        segment_series("trades-000000.bin").as_deref(),
        Some("trades")
    );
    assert_eq!(segment_series("book-000012.bin").as_deref(), Some("book"));
    assert_eq!(segment_series("book-12.bin"), None);
    assert_eq!(segment_series(".manifest"), None);
    assert_eq!(segment_series("manifest.json"), None);
    assert_eq!(segment_series("x.floxlog.damaged"), None);
}
