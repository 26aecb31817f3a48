//! The machine's budget as two holders of one file see it, and as a damaged file leaves
//! it.

use super::*;
use std::time::Instant;

fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("budget-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn store(dir: &Path, base: &str, key: &str, limit: RateLimit) -> MachineStore {
    MachineStore::open_in(dir, (base, key, limit)).unwrap()
}

fn take(horizon: Duration) -> Take {
    Take::new(horizon, LOCK_PATIENCE, Duration::from_secs(120))
}

#[test]
fn two_holders_of_one_budget_share_its_burst_then_its_pace() {
    let dir = dir("share");
    let limit = RateLimit::per_minute(600).with_burst(4);
    let a = store(&dir, "https://api.example.com", "sk_1", limit);
    let b = store(&dir, "https://api.example.com/", "sk_1", limit);
    assert_eq!(a.path(), b.path(), "one key, one budget");
    let waits: Vec<Duration> = (0..6)
        .map(|i| {
            match if i % 2 == 0 { &a } else { &b }
                .take(&take(Duration::from_secs(60)))
                .unwrap()
            {
                Turn::Go(wait) => wait,
                other => panic!("{other:?}"),
            }
        })
        .collect();
    // Three at once (the burst less the one kept in hand), then the others an interval
    // (100 ms, and 1 %) apart.
    assert!(
        waits[..3].iter().all(|w| *w < Duration::from_millis(20)),
        "{waits:?}"
    );
    assert!(waits[3] > Duration::from_millis(80), "{waits:?}");
    assert!(waits[4] > waits[3] + Duration::from_millis(80), "{waits:?}");
    assert!(waits[5] > waits[4] + Duration::from_millis(80), "{waits:?}");
    // Another key never shares it; its name says nothing of the key.
    let other = store(&dir, "https://api.example.com", "sk_2", limit);
    assert_ne!(other.path(), a.path());
    assert!(!a.path().to_string_lossy().contains("sk_1"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_retry_after_holds_every_holder_back_and_a_turn_past_the_horizon_is_not_taken() {
    let dir = dir("back-off");
    let limit = RateLimit::per_minute(6_000).with_burst(10);
    let a = store(&dir, "https://api.example.com", "sk", limit);
    let b = store(&dir, "https://api.example.com", "sk", limit);
    a.hold_back(Duration::from_secs(2), LOCK_PATIENCE).unwrap();
    match b.take(&take(Duration::from_secs(60))).unwrap() {
        Turn::Go(wait) => assert!(wait > Duration::from_millis(1_900), "{wait:?}"),
        other => panic!("{other:?}"),
    }
    match b.take(&take(Duration::from_secs(1))).unwrap() {
        Turn::Held(wait) => assert!(wait > Duration::from_millis(1_900), "{wait:?}"),
        other => panic!("{other:?}"),
    }
    // A pause longer than a day is kept as a day, and nothing overflows.
    a.hold_back(Duration::MAX, LOCK_PATIENCE).unwrap();
    match b.take(&take(Duration::from_secs(1))).unwrap() {
        Turn::Held(wait) => assert!(wait <= LONGEST_HOLD, "{wait:?}"),
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_file_starts_a_full_budget_and_says_why() {
    let dir = dir("damaged");
    let limit = RateLimit::per_minute(60);
    let budget = store(&dir, "https://api.example.com", "sk", limit);
    let now = nanos(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap(),
    );
    let file = |tat: u64, blocked: u64| {
        let mut b = tat.to_le_bytes().to_vec();
        b.extend_from_slice(&blocked.to_le_bytes());
        b
    };
    let hour = 3_600 * 1_000_000_000u64;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        // The 421 years of random bytes seen once (a next turn far past any clock).
        (
            "random bytes",
            vec![
                0x3d, 0x91, 0x5e, 0x07, 0xc2, 0x8a, 0x44, 0xf3, 0x19, 0xb0, 0x6e, 0x2d, 0x73, 0x05,
                0xe8, 0x5a,
            ],
        ),
        ("text", b"budget: 5/minute".to_vec()),
        ("an hour ahead", file(now + hour, 0)),
        ("ten years ahead", file(now + 87_600 * hour, 0)),
        ("the largest next turn", file(u64::MAX, 0)),
        ("the largest Retry-After", file(0, u64::MAX)),
        ("too long", vec![0; 40]),
        ("too short", vec![1, 2, 3]),
    ];
    for (what, bytes) in cases {
        std::fs::write(budget.path(), &bytes).unwrap();
        let started = Instant::now();
        match budget.take(&take(Duration::from_secs(60))).unwrap() {
            Turn::Damaged(why) => assert!(!why.is_empty(), "{what}"),
            other => panic!("{what}: {other:?}"),
        }
        assert!(started.elapsed() < Duration::from_millis(100), "{what}");
        assert_eq!(std::fs::read(budget.path()).unwrap().len(), 16, "{what}");
        // Started afresh: a full budget.
        assert!(
            matches!(budget.take(&take(Duration::from_secs(60))).unwrap(), Turn::Go(w) if w.is_zero()),
            "{what}"
        );
        // A Retry-After on a damaged file neither panics nor keeps the damage.
        std::fs::write(budget.path(), &bytes).unwrap();
        budget
            .hold_back(Duration::from_secs(1), LOCK_PATIENCE)
            .unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_fifo_where_the_file_should_be_is_refused_at_once() {
    let dir = dir("fifo");
    let budget = store(
        &dir,
        "https://api.example.com",
        "sk",
        RateLimit::per_minute(60),
    );
    let made = std::process::Command::new("mkfifo")
        .arg(budget.path())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: no mkfifo");
        return;
    }
    let started = Instant::now();
    let err = budget.take(&take(Duration::from_secs(60))).unwrap_err();
    assert!(err.0.contains("not a plain file"), "{}", err.0);
    assert!(started.elapsed() < Duration::from_millis(100));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_shared_step_takes_microseconds() {
    let dir = dir("cost");
    let budget = store(
        &dir,
        "https://api.example.com",
        "sk",
        RateLimit::per_minute(u32::MAX),
    );
    let started = Instant::now();
    for _ in 0..1_000 {
        budget.take(&take(Duration::from_secs(60))).unwrap();
    }
    let each = started.elapsed() / 1_000;
    eprintln!("one shared step (open, lock, read, write, unlock): {each:?}");
    assert!(each < Duration::from_millis(2), "{each:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_lock_held_too_long_is_given_up_in_time_and_its_release_is_seen() {
    let dir = dir("held");
    let budget = store(
        &dir,
        "https://api.example.com",
        "sk",
        RateLimit::per_minute(60),
    );
    budget.take(&take(Duration::from_secs(60))).unwrap();
    // Another holder (a process stopped with the lock; its death releases it).
    let holder = File::open(budget.path()).unwrap();
    holder.lock().unwrap();
    let started = Instant::now();
    let err = budget.take(&take(Duration::from_secs(60))).unwrap_err();
    assert!(
        started.elapsed() < LOCK_PATIENCE * 2,
        "{:?}",
        started.elapsed()
    );
    assert!(err.0.contains("stayed locked"), "{}", err.0);
    // A call with less time left than the patience waits only that long.
    let started = Instant::now();
    let short = Take::new(
        Duration::from_millis(20),
        Duration::from_millis(20),
        Duration::from_secs(120),
    );
    let err = budget.take(&short).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(120),
        "{:?}",
        started.elapsed()
    );
    assert!(err.0.contains("stayed locked for 20ms"), "{}", err.0);
    drop(holder);
    assert!(budget.take(&take(Duration::from_secs(60))).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unwritable_folder_is_reported() {
    let file = std::env::temp_dir().join(format!("budget-not-a-dir-{}", std::process::id()));
    std::fs::write(&file, b"x").unwrap();
    let err = MachineStore::open_in(
        &file.join("budgets"),
        ("https://a", "k", RateLimit::per_minute(1)),
    )
    .unwrap_err();
    assert!(err.0.contains("cannot make"), "{}", err.0);
    let _ = std::fs::remove_file(&file);
}
