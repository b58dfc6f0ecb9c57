use super::*;
use std::sync::atomic::Ordering;

/// With nobody waiting, a notify is one load: `seq` does not move (no
/// wake is sent).
#[test]
fn a_notify_with_no_sleeper_sends_no_wake() {
    let d = tempfile::tempdir().unwrap();
    let p = Page::create(d.path()).unwrap();
    let s = p.tailers();
    let before = s.seq.load(Ordering::Relaxed);
    for _ in 0..1000 {
        s.notify();
    }
    assert_eq!(s.seq.load(Ordering::Relaxed), before);
    // A sleeper's flag makes the next notify wake, and is cleared by it.
    s.prepare();
    s.notify();
    assert_eq!(s.seq.load(Ordering::Relaxed), before.wrapping_add(1));
    assert_eq!(s.waiting.load(Ordering::Relaxed), 0);
}

/// A sleeper on another mapping of the page (as another process has) is
/// woken by the waker's notify, not by its time running out (a minute).
#[cfg(target_os = "linux")]
#[test]
fn a_sleeper_is_woken_by_a_notify_on_another_mapping() {
    let d = tempfile::tempdir().unwrap();
    let waker = Page::create(d.path()).unwrap();
    let dir = d.path().to_path_buf();
    let h = std::thread::spawn(move || {
        let p = Page::open(&dir).expect("the page");
        let seen = p.tailers().prepare();
        p.tailers().sleep(seen, Duration::from_secs(60))
    });
    while waker.tailers().waiting.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    waker.tailers().notify();
    assert_eq!(h.join().unwrap(), Woke::Woken);
}

/// Only a made page opens; it is armed while its maker lives, and the
/// maker's drop disarms it and says the tape changed.
#[test]
fn the_page_is_armed_while_its_writer_lives() {
    let d = tempfile::tempdir().unwrap();
    assert!(Page::open(d.path()).is_none());
    std::fs::write(d.path().join(WAKE_FILE), vec![1u8; PAGE]).unwrap();
    assert!(Page::open(d.path()).is_none(), "not a page");
    let w = Page::create(d.path()).unwrap();
    let r = Page::open(d.path()).unwrap();
    assert!(r.tailers().armed());
    let g = r.tailers().gen();
    drop(w);
    assert!(!r.tailers().armed());
    assert_ne!(r.tailers().gen(), g);
    assert!(!d.path().join(WAKE_FILE).exists(), "removed by its maker");
    drop(r);
    // A page a killed writer left is taken over as it is.
    let left = Page::create(d.path()).unwrap();
    std::mem::forget(left);
    let again = Page::create(d.path()).unwrap();
    assert!(again.tailers().armed());
}
