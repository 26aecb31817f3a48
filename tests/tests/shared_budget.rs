//! One key, many programs: four processes with one trading key on the Free plan (200
//! requests a minute, a burst of 200), making 300 calls between them with retries off,
//! against the sandbox, whose limiter counts per key. Pacing alone, each spends the whole
//! budget and the account collects 429s; sharing the machine's budget, none is refused
//! and the whole run takes the plan's own time for the 100 calls past the burst.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use trading_client::{Client, Plan, config::Budget};

const PROCESSES: usize = 4;
const CALLS: usize = 75;
const CHILD: &str = "SHARED_BUDGET_CHILD";

/// In a child: `CALLS` calls, then `ok refused` on stdout.
fn child(spec: &str) {
    let mut parts = spec.split(' ');
    let (url, key, budget) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let client = Client::builder()
        .base_url(url)
        .api_key(key)
        .rate_limit(Plan::Free)
        .shared(budget.parse::<Budget>().unwrap())
        .max_retries(0)
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..CALLS {
        match client.clock().get() {
            Ok(_) => ok += 1,
            Err(e) if e.status() == Some(429) => refused += 1,
            Err(e) => panic!("{e}"),
        }
    }
    println!("{ok} {refused}");
}

/// Runs `PROCESSES` children at once with this key and budget; (calls answered,
/// refused, the whole run's time).
fn run(url: &str, key: &str, budget: &str, cache: &std::path::Path) -> (usize, usize, Duration) {
    let started = Instant::now();
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "four_processes_with_one_key_share_its_budget",
                    "--exact",
                    "--nocapture",
                ])
                .env(CHILD, format!("{url} {key} {budget}"))
                .env("XDG_CACHE_HOME", cache)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let (mut ok, mut refused) = (0, 0);
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.split(' ').count() == 2 && l.split(' ').all(|w| w.parse::<usize>().is_ok()))
            .unwrap_or_else(|| panic!("no count in {text}"));
        let mut words = line.split(' ').map(|w| w.parse::<usize>().unwrap());
        ok += words.next().unwrap();
        refused += words.next().unwrap();
    }
    (ok, refused, started.elapsed())
}

#[test]
fn four_processes_with_one_key_share_its_budget() {
    if let Ok(spec) = std::env::var(CHILD) {
        child(&spec);
        return;
    }
    let sandbox = sandbox::Sandbox::builder()
        .key("pk_alone", "free")
        .key("pk_shared", "free")
        .market_hours(false)
        .start()
        .unwrap();
    let cache = std::env::temp_dir().join(format!("shared-budget-{}", std::process::id()));
    let url = sandbox.trading().url();

    let (ok, refused, alone) = run(&url, "pk_alone", "process", &cache);
    eprintln!("pacing alone: {ok} answered, {refused} refused with 429 in {alone:.1?}");
    assert_eq!(ok + refused, PROCESSES * CALLS);
    assert!(
        refused >= 90,
        "each process spent the whole burst: {refused} refused"
    );

    let (ok, refused, shared) = run(&url, "pk_shared", "machine", &cache);
    // 300 calls, 200 of them the burst: the other 100 at 200 a minute take 30 s.
    let minimum = Duration::from_secs(30);
    eprintln!(
        "sharing the machine's budget: {ok} answered, {refused} refused in {shared:.1?} ({:.3} of the plan's minimum {minimum:?})",
        shared.as_secs_f64() / minimum.as_secs_f64()
    );
    assert_eq!((ok, refused), (PROCESSES * CALLS, 0));
    assert!(shared >= minimum.mul_f64(0.98), "{shared:?}");
    assert!(shared <= minimum.mul_f64(1.05), "{shared:?}");
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_budget_that_cannot_be_named_is_a_config_error_naming_its_variable() {
    let err = "redis://127.0.0.1:6379".parse::<Budget>().unwrap_err();
    assert!(err.to_string().contains("machine"), "{err}");
    let err = Client::from_env_with(|name| match name {
        "TRADING_BASE_URL" => Some("http://127.0.0.1:9/trading".into()),
        "TRADING_API_KEY" => Some("pk".into()),
        "TRADING_RATE_BUDGET" => Some("everywhere".into()),
        _ => None,
    })
    .unwrap_err();
    assert_eq!(err.kind(), core_http::ErrorKind::Config);
    assert!(err.to_string().contains("TRADING_RATE_BUDGET"), "{err}");
    assert!(!err.to_string().contains("pk"), "{err}");
}
