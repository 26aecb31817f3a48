//! A shared budget is a hint, never a trap: whatever its file holds or its Redis answers
//! (garbage, the far future, the largest integers, a negative or absurd wait, a
//! trickle, a flood), a call ends in its own time, nothing panics, nothing outlives the
//! step, and the client says so once. Over real sockets and files, through a client.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use core_budgets::Budget;
use core_http::config::{BudgetEvent, Observer, RateLimit};
use core_http::{ErrorKind, HttpClient};
use testkit::hostile::{Act, Hostile};

/// What an observer is told of the shared budget.
#[derive(Clone, Default)]
struct Told(Arc<Mutex<Vec<BudgetEvent>>>);

impl Observer for Told {
    fn budget(&self, event: &BudgetEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

impl Told {
    fn lost(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                BudgetEvent::Lost { reason, .. } => Some(reason.clone()),
                _ => None,
            })
            .collect()
    }
}

fn client(url: &str, budget: Budget, told: &Told) -> HttpClient {
    HttpClient::builder()
        .base_url(url)
        .api_key("sk_test_hostile_budget")
        .rate_limit(RateLimit::per_minute(600))
        .shared(budget)
        .observer(told.clone())
        .max_retries(0)
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

fn get(c: &HttpClient) -> core_http::Result<serde_json::Value> {
    c.raw().get("/v1/clock", &[])
}

/// Runs `test` in a child process whose cache folder is a new one of its own (the
/// machine's budget lives there), so that no test sees another's files.
fn in_child(test: &str) -> bool {
    const CHILD: &str = "CORE_BUDGETS_CHILD";
    if std::env::var(CHILD).is_ok() {
        return true;
    }
    let cache = std::env::temp_dir().join(format!("budgets-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture"])
        .env(CHILD, "1")
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&cache);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("CHECKED"), "the child ran its checks: {err}");
    false
}

/// The machine's budget files in this process's cache folder.
fn budget_files() -> Vec<std::path::PathBuf> {
    let dir = std::path::PathBuf::from(std::env::var_os("XDG_CACHE_HOME").unwrap())
        .join("service-clients/budgets");
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "budget"))
        .collect()
}

#[test]
fn whatever_the_machines_file_holds_a_call_goes_in_its_time_and_it_is_said_once() {
    if !in_child("whatever_the_machines_file_holds_a_call_goes_in_its_time_and_it_is_said_once") {
        return;
    }
    let service = Hostile::scripted(vec![Act::json(200, "{}")]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let state = |tat: u64, blocked: u64| {
        let mut b = tat.to_le_bytes().to_vec();
        b.extend_from_slice(&blocked.to_le_bytes());
        b
    };
    let hour = 3_600_000_000_000u64;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "16 random bytes",
            vec![
                0x3d, 0x91, 0x5e, 0x07, 0xc2, 0x8a, 0x44, 0xf3, 0x19, 0xb0, 0x6e, 0x2d, 0x73, 0x05,
                0xe8, 0x5a,
            ],
        ),
        ("text", b"paced: 10/minute".to_vec()),
        ("a wall clock stepped back an hour", state(now + hour, 0)),
        ("ten years ahead", state(now + 87_600 * hour, 0)),
        ("u64::MAX as the next turn", state(u64::MAX, 0)),
        ("u64::MAX as the Retry-After", state(0, u64::MAX)),
        ("a Retry-After of ten years", state(0, now + 87_600 * hour)),
    ];
    for (what, bytes) in cases {
        let told = Told::default();
        let c = client(service.url(), Budget::machine(), &told);
        get(&c).unwrap();
        let [file] = budget_files().try_into().unwrap();
        std::fs::write(&file, &bytes).unwrap();
        let started = Instant::now();
        for _ in 0..3 {
            get(&c).unwrap();
        }
        assert!(
            started.elapsed() < Duration::from_millis(500),
            "{what}: {:?}",
            started.elapsed()
        );
        let lost = told.lost();
        assert_eq!(lost.len(), 1, "{what}: said once: {lost:?}");
        assert!(
            lost[0].contains("cannot be true") || lost[0].contains("not 16"),
            "{what}: {lost:?}"
        );
        eprintln!("{what}: {}", lost[0]);
        std::fs::remove_file(&file).unwrap();
    }
    // A FIFO where the file should be blocks nothing.
    let told = Told::default();
    let c = client(service.url(), Budget::machine(), &told);
    get(&c).unwrap();
    let [file] = budget_files().try_into().unwrap();
    std::fs::remove_file(&file).unwrap();
    if Command::new("mkfifo")
        .arg(&file)
        .status()
        .is_ok_and(|s| s.success())
    {
        let started = Instant::now();
        get(&c).unwrap();
        assert!(started.elapsed() < Duration::from_millis(500));
        assert!(
            told.lost()[0].contains("not a plain file"),
            "{:?}",
            told.lost()
        );
    }
    eprintln!("CHECKED");
}

#[test]
fn a_shared_retry_after_longer_than_a_call_can_wait_ends_the_next_call_at_once() {
    if !in_child("a_shared_retry_after_longer_than_a_call_can_wait_ends_the_next_call_at_once") {
        return;
    }
    for retry_after in ["3600", "20000000000", "Fri, 31 Dec 9999 23:59:59 GMT"] {
        let service = Hostile::scripted(vec![
            Act::json_with(
                429,
                &[("retry-after", retry_after)],
                r#"{"error": {"code": "rate_limited", "message": "slow down"}}"#,
            ),
            Act::json(200, "{}"),
        ]);
        let told = Told::default();
        let (a, b) = (
            client(service.url(), Budget::machine(), &told),
            client(service.url(), Budget::machine(), &told),
        );
        let first = get(&a).unwrap_err();
        assert_eq!(first.status(), Some(429), "{retry_after}: {first}");
        // Every other program with the key is held back, and told at once, nothing sent.
        let started = Instant::now();
        let err = get(&b).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_millis(200),
            "{retry_after}"
        );
        assert_eq!(err.kind(), ErrorKind::RateLimited, "{retry_after}: {err}");
        assert_eq!(err.delivery(), core_http::Delivery::NotSent, "{err}");
        let core_http::Error::RateLimited {
            retry_after: wait, ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert!(
            *wait > Duration::from_secs(3_500) && *wait <= Duration::from_secs(86_400),
            "{retry_after}: {wait:?}"
        );
        eprintln!("{retry_after}: {err}");
        assert_eq!(service.count("GET"), 1, "{retry_after}: nothing more sent");
        std::fs::remove_file(&budget_files()[0]).unwrap();
    }
    eprintln!("CHECKED");
}

/// A fake Redis: every connection is answered by `answer`, given what it read.
fn fake_redis(answer: impl Fn(&mut TcpStream) + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("redis://{}", listener.local_addr().unwrap());
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let answer = answer.clone();
            std::thread::spawn(move || answer(&mut stream));
        }
    });
    url
}

/// Reads what a command sends (enough of it), then writes `bytes`, once per command.
fn answering(bytes: &'static [u8]) -> impl Fn(&mut TcpStream) + Send + Sync + 'static {
    move |s| {
        let mut buf = [0u8; 4096];
        while s.read(&mut buf).is_ok_and(|n| n > 0) {
            if s.write_all(bytes).is_err() {
                return;
            }
        }
    }
}

/// This process's threads.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// This process's resident memory, in MiB.
fn resident_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?.to_owned();
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

#[test]
fn whatever_a_redis_answers_a_call_goes_in_its_time_and_nothing_outlives_the_step() {
    let service = Hostile::scripted(vec![Act::json(200, "{}")]);
    let fakes: Vec<(&str, String)> = vec![
        (
            "a wait of 10^15 µs",
            fake_redis(answering(b"*2\r\n:0\r\n:1000000000000000\r\n")),
        ),
        (
            "a negative wait",
            fake_redis(answering(b"*2\r\n:0\r\n:-5\r\n")),
        ),
        ("a wrong type", fake_redis(answering(b"$5\r\nhello\r\n"))),
        (
            "an error",
            fake_redis(answering(b"-ERR unknown command 'EVAL'\r\n")),
        ),
        (
            "a trickle",
            fake_redis(|s| {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                for _ in 0..600 {
                    if s.write_all(b"*").is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }),
        ),
        (
            "a flood after a stalled bulk string",
            fake_redis(|s| {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let _ = s.write_all(b"*2\r\n$1000\r\nab");
                std::thread::sleep(Duration::from_millis(100));
                let chunk = vec![b'x'; 1024 * 1024];
                for _ in 0..128 {
                    if s.write_all(&chunk).is_err() {
                        return;
                    }
                }
            }),
        ),
    ];
    let threads_before = threads();
    let memory_before = resident_mib();
    for (what, url) in fakes {
        let told = Told::default();
        let c = client(service.url(), Budget::redis(url), &told);
        let started = Instant::now();
        let mut slowest = Duration::ZERO;
        for _ in 0..4 {
            let call = Instant::now();
            get(&c).unwrap();
            slowest = slowest.max(call.elapsed());
        }
        eprintln!(
            "{what}: 4 calls in {:?}, the slowest {slowest:?}; told {:?}",
            started.elapsed(),
            told.lost()
        );
        assert!(slowest < Duration::from_millis(800), "{what}: {slowest:?}");
        assert_eq!(told.lost().len(), 1, "{what}: said once: {:?}", told.lost());
        drop(c);
    }
    // No thread and no memory is left behind by the steps given up on.
    std::thread::sleep(Duration::from_millis(200));
    let grown = resident_mib() - memory_before;
    assert!(grown < 16.0, "memory grew by {grown:.1} MiB");
    // The fakes' own threads stay (one a connection at most); the client's are none.
    assert!(
        threads() <= threads_before + 12,
        "{} threads after, {threads_before} before",
        threads()
    );
}

#[test]
fn a_mistyped_or_quoted_budget_setting_never_shows_its_password() {
    for value in [
        "redis:/:hunter2@host:6379",
        "\"redis://:hunter2@host:6379\"",
        "'rediss://:hunter2@host'",
        "rediss//:hunter2@host",
        "machine:hunter2",
    ] {
        let err = Budget::from_setting("TRADING_RATE_BUDGET", value).unwrap_err();
        let text = format!("{err} {err:?}");
        assert!(!text.contains("hunter2"), "{value}: {text}");
        assert!(text.contains("TRADING_RATE_BUDGET"), "{text}");
    }
    // A URL read but unusable is refused at build, without its password either.
    for url in [
        "redis://:hunter2@",
        "redis://:hunter2@host:99999",
        "redis://:hunter2%zz@h",
    ] {
        let err = HttpClient::builder()
            .base_url("http://127.0.0.1:9")
            .api_key("sk")
            .rate_limit(RateLimit::per_minute(60))
            .shared(Budget::redis(url))
            .build()
            .unwrap_err();
        let text = format!("{err} {err:?}");
        assert_eq!(err.kind(), ErrorKind::Config, "{url}: {text}");
        assert!(!text.contains("hunter2"), "{url}: {text}");
    }
}
