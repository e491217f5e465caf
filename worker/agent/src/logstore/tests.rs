use super::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn on_disk(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
fn append_read_and_rotate_without_loss_or_duplication() {
    let dir = tempfile::tempdir().unwrap();
    let log = LogStore::create(dir.path().join("1"), 4096, 0, "test".into());
    let mut w = log.writer();
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no file before the first record"
    );
    for i in 0..1000u32 {
        let stream = if i % 3 == 0 { 2 } else { 1 };
        assert_eq!(
            w.append(stream, format!("line {i}\n").as_bytes()).unwrap(),
            u64::from(i) + 1
        );
    }
    // Rotation dropped the oldest records; what is kept is contiguous.
    let (all, first) = log.read_after(0, usize::MAX).unwrap();
    assert!(first > 1, "rotation kept everything: first={first}");
    assert_eq!(all.first().unwrap().seq, first);
    assert_eq!(all.last().unwrap().seq, 1000);
    for w in all.windows(2) {
        assert_eq!(w[0].seq + 1, w[1].seq);
    }
    // Paging from any point continues exactly after it.
    let mut cursor = first - 1;
    let mut seen = 0;
    loop {
        let (page, _) = log.read_after(cursor, 7).unwrap();
        if page.is_empty() {
            break;
        }
        assert_eq!(page[0].seq, cursor + 1);
        cursor = page.last().unwrap().seq;
        seen += page.len();
    }
    assert_eq!(seen, all.len());
    assert_eq!(
        String::from_utf8_lossy(&all.last().unwrap().data),
        "line 999\n"
    );
    let size = on_disk(dir.path());
    assert!(size < 2 * 4096 + 200, "{size} bytes kept");
    assert_eq!(
        size,
        log.lock().segments.iter().map(|s| s.bytes).sum::<u64>()
    );
    log.remove();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A follower that reads slowly gets every record, in order, while the
/// writer runs far ahead of two files; the disk holds at most two files
/// and the spill allowed, however far behind the follower is.
#[test]
fn a_slow_follower_gets_everything_within_the_spill() {
    const FILE: u64 = 4096;
    const SPILL: u64 = 3 * 4096;
    let dir = tempfile::tempdir().unwrap();
    let log = LogStore::create(dir.path().join("p"), FILE, SPILL, "test".into());
    let mut f = log.follow(0);
    let writer = {
        let mut w = log.writer();
        std::thread::spawn(move || {
            for i in 0..5000u32 {
                w.append(1, format!("{i:08}\n").as_bytes()).unwrap();
            }
        })
    };
    let mut got = Vec::new();
    let mut most = 0;
    let mut held_seen = false;
    while got.len() < 5000 {
        let page = f.read(16, usize::MAX).unwrap();
        got.extend(page);
        most = most.max(on_disk(dir.path()));
        held_seen |= log.held_back();
        std::thread::sleep(Duration::from_millis(1));
    }
    writer.join().unwrap();
    for (i, r) in got.iter().enumerate() {
        assert_eq!(r.seq, i as u64 + 1);
        assert_eq!(r.data, format!("{i:08}\n").as_bytes());
    }
    assert!(held_seen, "the writer never waited for the follower");
    // Two files, the spill, and a record past each file's size.
    assert!(most <= 2 * FILE + SPILL + 3 * 64, "{most} bytes on disk");
    drop(f);
    assert!(on_disk(dir.path()) <= 2 * FILE + 64);
}

/// A follower that reads nothing stops the writer at the bound; once it
/// goes, the writer runs on and the spilled files go.
#[test]
fn a_follower_that_stops_holds_the_writer_until_it_goes() {
    let dir = tempfile::tempdir().unwrap();
    let log = LogStore::create(dir.path().join("p"), 1024, 0, "test".into());
    let f = log.follow(0);
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (mut w, done) = (log.writer(), done.clone());
        std::thread::spawn(move || {
            for _ in 0..1000 {
                w.append(1, &[b'x'; 100]).unwrap();
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let t0 = Instant::now();
    while !log.held_back() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the writer never waited"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    let written = log.lock().next_seq - 1;
    assert!(!done.load(Ordering::SeqCst));
    // Two files of about 1 KiB: about 20 records of 121 bytes.
    assert!((10..40).contains(&written), "{written} records written");
    drop(f);
    writer.join().unwrap();
    assert!(done.load(Ordering::SeqCst));
    assert!(on_disk(dir.path()) <= 2 * 1024 + 2 * 121);
}

/// A segment the workload removes (or cuts short) is skipped by a
/// follower, which neither fails nor spins.
#[test]
fn a_segment_removed_under_a_follower_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let log = LogStore::create(dir.path().join("p"), 1024, 1 << 20, "test".into());
    let mut f = log.follow(0);
    let mut w = log.writer();
    for _ in 0..50 {
        w.append(1, &[b'y'; 100]).unwrap();
    }
    let first = log.lock().segments[0].path.clone();
    std::fs::remove_file(first).unwrap();
    let second = log.lock().segments[1].path.clone();
    std::fs::OpenOptions::new()
        .write(true)
        .open(second)
        .unwrap()
        .set_len(150)
        .unwrap();
    let mut got = Vec::new();
    loop {
        let page = f.read(7, usize::MAX).unwrap();
        if page.is_empty() {
            break;
        }
        got.extend(page);
    }
    assert_eq!(got.last().unwrap().seq, 50);
    for w in got.windows(2) {
        assert!(w[0].seq < w[1].seq);
    }
}
