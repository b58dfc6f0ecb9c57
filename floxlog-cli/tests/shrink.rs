//! `floxlog cat` of a segment another process truncates while it is read:
//! exit 1 with an error naming the shrinking and the file, never `SIGBUS`
//! (exit 135), and what it printed before is genuine.

use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn cat_of_a_segment_truncated_under_it_is_an_error_not_a_signal() {
    let d = tempfile::tempdir().unwrap();
    for (z, file_order) in [
        (floxlog::core::Compression::None, true),
        (floxlog::core::Compression::Lz4, true),
        (floxlog::core::Compression::None, false),
    ] {
        let seg = d.path().join("seg.floxlog");
        let mut w = floxlog::segment::vec_writer(floxlog::core::WriterConfig {
            compression: z,
            created_ns: 1,
            ..Default::default()
        })
        .unwrap();
        let n = 300_000u64;
        for i in 0..n {
            w.append(&floxlog::synth::mixed_event(5, i).as_event())
                .unwrap();
        }
        let bytes = floxlog::segment::finish_to_vec(w).unwrap();
        std::fs::write(&seg, &bytes).unwrap();
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("floxlog"));
        cmd.arg("cat");
        if file_order {
            cmd.arg("--file-order");
        }
        let mut child = cmd
            .arg(&seg)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        // cat blocks on the full pipe well before the end of the segment.
        let mut head = vec![0u8; 1 << 16];
        out.read_exact(&mut head).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&seg).unwrap();
        f.set_len(bytes.len() as u64 / 3).unwrap();
        let mut rest = Vec::new();
        out.read_to_end(&mut rest).unwrap();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        let ctx = format!("{z:?} file order {file_order}");
        assert_eq!(status.code(), Some(1), "{ctx}: {status:?} {err}");
        assert!(
            err.contains("shrank") && err.contains("seg.floxlog"),
            "{ctx}: {err}"
        );
        head.extend_from_slice(&rest);
        let lines = head
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count() as u64;
        assert!(lines > 0 && lines < n, "{ctx}: {lines} lines");
    }
}
