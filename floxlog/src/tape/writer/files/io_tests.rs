//! Unit tests of the I/O thread.

use super::*;

#[test]
fn queued_small_writes_merge_and_errors_stick() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("f");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let seg = Arc::new(SegIo::new(file, path.clone()));
    // In place: its directory entry is synced with its first fsync.
    seg.published.store(true, Ordering::Release);
    let io = IoThread::start(
        t.path(),
        Vec::new(),
        crate::tape::writer::files::finish::run,
        Default::default(),
    )
    .unwrap();
    let mut at = 0u64;
    for i in 0..200u64 {
        let bytes = [i as u8; 10];
        if !io.append_to_queued(&seg, at, &bytes, None, i + 1) {
            let mut buf = io.take_buffer().unwrap();
            buf.resize(4096, 0);
            buf[..10].copy_from_slice(&bytes);
            io.push_write(&seg, at, buf, 10, None, i + 1);
        }
        at += 10;
        if i % 50 == 49 {
            io.push_sync(&seg, false, true, i + 1);
        }
    }
    io.wait_idle().unwrap();
    assert_eq!(seg.written.load(Ordering::Acquire), 200);
    assert_eq!(seg.synced.load(Ordering::Acquire), 200);
    assert!(seg.dir_synced.load(Ordering::Acquire));
    let data = std::fs::read(&path).unwrap();
    assert_eq!(data.len(), 2000);
    for (i, c) in data.chunks(10).enumerate() {
        assert!(c.iter().all(|&b| b == i as u8));
    }
    assert!(io.failed().is_none());
    assert!(lock(&io.shared.state).in_flight == 0);

    // A write to a read-only descriptor fails; that error stays, and
    // later commands are dropped.
    let ro = Arc::new(SegIo::new(
        std::fs::File::open(&path).unwrap(),
        path.clone(),
    ));
    io.push_write(&ro, 0, vec![1; 8], 8, None, 1);
    io.push_write(&seg, 2000, vec![2; 8], 8, None, 201);
    let e = io.wait_idle().unwrap_err();
    assert!(e.message.starts_with("writing the segment"), "{e}");
    assert_eq!(e.path.as_deref(), Some(path.as_path()));
    assert!(io.failed().is_some());
    assert!(io.take_buffer().is_err());
    drop(io);
    assert_eq!(seg.written.load(Ordering::Acquire), 200);
    assert_eq!(std::fs::read(&path).unwrap().len(), 2000);
}
