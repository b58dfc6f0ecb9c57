//! A segment truncated by another program while it is read: the reader
//! gets an error naming the shrinking, the file and an offset, after the
//! events before it, all genuine; never `SIGBUS` (which would end this
//! test process), never an event that was not written.

mod common;
use common::mixed_segment;
use floxlog::core::{Compression, ReadOptions};
use floxlog::tape::merge::{OpenedTape, Order, ReadConfig};
use floxlog::tape::{OpenOptions, Tape};

/// What a read returned: event texts, then the errors (reader and
/// problems).
fn read_truncating(
    path: &std::path::Path,
    cfg: &ReadConfig,
    cut: u64,
) -> (Vec<(i64, String)>, Vec<String>) {
    let t = Tape::open(&[path.to_path_buf()], OpenOptions::default()).unwrap();
    let mut o = OpenedTape::open(t);
    let mut r = o.reader(cfg);
    let mut got = Vec::new();
    let mut errors = Vec::new();
    loop {
        match r.next_item() {
            Ok(Some(it)) => got.push((it.event.exchange_ts_ns(), format!("{:?}", it.event))),
            Ok(None) => break,
            Err(e) => {
                errors.push(e.to_string());
                break;
            }
        }
        if got.len() == 100 {
            // Another program cuts the file: here, this process, through
            // its own handle (the map is not told).
            let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            f.set_len(cut).unwrap();
        }
    }
    errors.extend(
        r.problems()
            .iter()
            .map(|p| format!("{} (tolerated: {})", p.to_error(), p.tolerated)),
    );
    (got, errors)
}

/// Every event of a segment, in file order (read from memory).
fn all_events(bytes: &[u8]) -> Vec<(i64, String)> {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("copy.floxlog");
    std::fs::write(&p, bytes).unwrap();
    let t = Tape::open(&[p], OpenOptions::default()).unwrap();
    let mut o = OpenedTape::open(t);
    let mut r = o.reader(&ReadConfig {
        order: Order::File,
        ..ReadConfig::default()
    });
    let mut v = Vec::new();
    while let Some(it) = r.next_item().unwrap() {
        v.push((it.event.exchange_ts_ns(), format!("{:?}", it.event)));
    }
    assert!(r.problems().is_empty());
    v
}

#[test]
fn a_segment_truncated_under_the_reader_is_an_error_after_genuine_events() {
    let d = tempfile::tempdir().unwrap();
    for z in [Compression::None, Compression::Lz4] {
        let bytes = mixed_segment(z, true, 11, 40_000);
        let file = all_events(&bytes);
        let mut time = file.clone();
        time.sort_by_key(|e| e.0);
        for order in [Order::File, Order::Time] {
            let all = if order == Order::File { &file } else { &time };
            for crc in [true, false] {
                for cut in [0, 64, bytes.len() as u64 / 3, bytes.len() as u64 - 5_000] {
                    let ctx = format!("{z:?} {order:?} crc {crc} cut at {cut}");
                    let p = d.path().join("seg.floxlog");
                    std::fs::write(&p, &bytes).unwrap();
                    let cfg = ReadConfig {
                        order,
                        read: ReadOptions {
                            verify_crc: crc,
                            ..ReadOptions::default()
                        },
                        ..ReadConfig::default()
                    };
                    let (got, errors) = read_truncating(&p, &cfg, cut);
                    assert!(
                        got.len() >= 100 && got.len() <= all.len(),
                        "{ctx}: {} events",
                        got.len()
                    );
                    assert_eq!(errors.len(), 1, "{ctx}: {errors:?}");
                    let e = &errors[0];
                    assert!(
                        e.contains("shrank")
                            && e.contains("seg.floxlog")
                            && !e.contains("tolerated: true"),
                        "{ctx}: {e}"
                    );
                    if crc {
                        // Checked events are genuine: a prefix of the events
                        // in the order asked for.
                        assert!(
                            got[..] == all[..got.len()],
                            "{ctx}: an event that was not written"
                        );
                    }
                }
            }
        }
    }
}
