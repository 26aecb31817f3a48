//! One key, many programs: four processes with one trading key on the Free plan (200
//! requests a minute, a burst of 200), making 300 calls between them with retries off,
//! against the sandbox, whose limiter counts per key. Pacing alone, each spends the whole
//! budget and the account collects 429s; sharing the machine's budget, none is refused
//! and the whole run takes the plan's own time for the 100 calls past the burst.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use testkit::hostile::{Act, Hostile};
use trading_client::config::{Budget, BudgetEvent, Observer, RateLimit, WhenUnavailable};
use trading_client::{Client, Plan};

const PROCESSES: usize = 4;
const CALLS: usize = 75;
const CHILD: &str = "SHARED_BUDGET_CHILD";

/// Prints the client's warnings on stderr, for the parent to count.
struct Warnings;

impl log::Log for Warnings {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::Level::Warn
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!("WARN {}", r.args());
        }
    }
    fn flush(&self) {}
}

/// In a child: `CALLS` calls (or calls for `seconds`, when given), then `ok refused` on
/// stdout.
fn child(spec: &str) {
    let _ = log::set_logger(&Warnings);
    log::set_max_level(log::LevelFilter::Warn);
    let mut parts = spec.split(' ');
    let (url, key, budget) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let seconds: Option<u64> = parts.next().map(|s| s.parse().unwrap());
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
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    let more = |n: usize| match seconds {
        Some(s) => started.elapsed() < Duration::from_secs(s),
        None => n < CALLS,
    };
    while more(ok + refused) {
        let call = Instant::now();
        match client.clock().get() {
            Ok(_) => ok += 1,
            Err(e) if e.status() == Some(429) => refused += 1,
            Err(e) => panic!("{e}"),
        }
        slowest = slowest.max(call.elapsed());
    }
    eprintln!("SLOWEST {}", slowest.as_millis());
    println!("{ok} {refused}");
}

/// What the children did: calls answered, refused, the whole run's time, and each
/// child's stderr.
struct Run {
    ok: usize,
    refused: usize,
    took: Duration,
    stderr: Vec<String>,
}

/// Starts `PROCESSES` children at once with this key and budget (and `seconds` of calls
/// each, when given), running `meanwhile` while they work.
fn run_with(
    url: &str,
    key: &str,
    budget: &str,
    seconds: Option<u64>,
    cache: &std::path::Path,
    meanwhile: impl FnOnce(),
) -> Run {
    let started = Instant::now();
    let spec = match seconds {
        Some(s) => format!("{url} {key} {budget} {s}"),
        None => format!("{url} {key} {budget}"),
    };
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "four_processes_with_one_key_share_its_budget",
                    "--exact",
                    "--nocapture",
                ])
                .env(CHILD, &spec)
                .env("XDG_CACHE_HOME", cache)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    meanwhile();
    let (mut ok, mut refused, mut stderr) = (0, 0, Vec::new());
    for child in children {
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.split(' ').count() == 2 && l.split(' ').all(|w| w.parse::<usize>().is_ok()))
            .unwrap_or_else(|| panic!("no count in {text}"));
        let mut words = line.split(' ').map(|w| w.parse::<usize>().unwrap());
        ok += words.next().unwrap();
        refused += words.next().unwrap();
        stderr.push(err);
    }
    Run {
        ok,
        refused,
        took: started.elapsed(),
        stderr,
    }
}

fn run(url: &str, key: &str, budget: &str, cache: &std::path::Path) -> (usize, usize, Duration) {
    let r = run_with(url, key, budget, None, cache, || {});
    (r.ok, r.refused, r.took)
}

/// A real `redis-server` on a free loopback port, stopped by its pid when dropped;
/// `None` (the test skipped, saying how to install it) on a machine without one, and a
/// failure under `CI=true`.
struct Redis {
    port: u16,
    child: std::process::Child,
}

impl Redis {
    fn start() -> Option<Redis> {
        Redis::start_with(&[])
    }

    /// [`Redis::start`] with more of `redis-server`'s arguments.
    fn start_with(extra: &[&str]) -> Option<Redis> {
        if redis_server().arg("--version").output().is_err() {
            assert!(
                std::env::var("CI").is_err(),
                "redis-server is missing: .ci/run installs it (apt-get install redis-server)"
            );
            eprintln!("skipped: no redis-server on this machine (apt-get install redis-server)");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Some(Redis::on(port, extra))
    }

    fn on(port: u16, extra: &[&str]) -> Redis {
        let child = redis_server()
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(extra)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "redis-server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Redis { port, child }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

/// `redis-server`, on its own clock as on another machine: a run at a faked date
/// (libfaketime, under which redis-server hangs) is not passed on to it.
fn redis_server() -> Command {
    let mut command = Command::new("redis-server");
    command.env_remove("LD_PRELOAD");
    command
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
        .key("pk_redis", "free")
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

    // The machine's budget and a real Redis's at once, each with its own key (the
    // sandbox counts per key): the processes mostly wait their turn.
    // 300 calls, 200 of them the burst: the other 100 at 200 a minute take 30 s.
    let minimum = Duration::from_secs(30);
    let redis = Redis::start();
    let (machine, through_redis) = std::thread::scope(|s| {
        let machine = s.spawn(|| run(&url, "pk_shared", "machine", &cache));
        let through_redis = redis
            .as_ref()
            .map(|redis| s.spawn(|| run(&url, "pk_redis", &redis.url(), &cache)));
        (
            machine.join().unwrap(),
            through_redis.map(|r| r.join().unwrap()),
        )
    });
    let mut runs = vec![("the machine's budget", machine)];
    runs.extend(through_redis.map(|r| ("Redis", r)));
    for (through, (ok, refused, took)) in runs {
        eprintln!(
            "sharing through {through}: {ok} answered, {refused} refused in {took:.1?} ({:.3} of the plan's minimum {minimum:?})",
            took.as_secs_f64() / minimum.as_secs_f64()
        );
        assert_eq!((ok, refused), (PROCESSES * CALLS, 0), "{through}");
        assert!(
            took >= minimum.mul_f64(0.98) && took <= minimum.mul_f64(1.05),
            "{through}: {took:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn with_redis_stopped_for_ten_seconds_the_processes_pace_alone_say_so_once_and_share_again() {
    let Some(redis) = Redis::start() else { return };
    let sandbox = sandbox::Sandbox::builder()
        .key("pk_outage", "free")
        .market_hours(false)
        .start()
        .unwrap();
    let cache = std::env::temp_dir().join(format!("shared-outage-{}", std::process::id()));
    let port = redis.port;
    let url = redis.url();
    let mut redis = Some(redis);
    let run = run_with(
        &sandbox.trading().url(),
        "pk_outage",
        &url,
        Some(20),
        &cache,
        || {
            std::thread::sleep(Duration::from_secs(3));
            drop(redis.take());
            std::thread::sleep(Duration::from_secs(10));
            redis = Some(Redis::on(port, &[]));
        },
    );
    eprintln!(
        "through an outage: {} answered, {} refused in {:.1?}",
        run.ok, run.refused, run.took
    );
    assert!(
        run.took < Duration::from_secs(25),
        "nothing hangs: {:?}",
        run.took
    );
    for err in &run.stderr {
        let said = |what: &str| {
            err.lines()
                .filter(|l| l.starts_with("WARN") && l.contains(what))
                .count()
        };
        assert_eq!(said("paces alone until it can"), 1, "{err}");
        assert_eq!(said("works again"), 1, "{err}");
        let slowest: u64 = err
            .lines()
            .find_map(|l| l.strip_prefix("SLOWEST "))
            .and_then(|v| v.parse().ok())
            .unwrap();
        // A call never waits on Redis past its step's bound (500 ms) and its pace.
        assert!(slowest < 2_000, "a call took {slowest} ms");
    }
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_redis_url_that_cannot_be_parsed_is_refused_at_build_without_its_password() {
    let err = Client::builder()
        .base_url("http://127.0.0.1:9/trading")
        .api_key("pk")
        .rate_limit(Plan::Free)
        .shared(Budget::redis("redis://:hunter2-secret@[::1"))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), core_http::ErrorKind::Config, "{err}");
    assert!(!err.to_string().contains("hunter2"), "{err}");
    assert!(!format!("{:?}", Budget::redis("redis://:hunter2-secret@host")).contains("hunter2"));
}

#[test]
fn a_budget_that_cannot_be_named_is_a_config_error_naming_its_variable() {
    assert_eq!(
        "redis://127.0.0.1:6379".parse::<Budget>().unwrap(),
        Budget::redis("redis://127.0.0.1:6379")
    );
    let err = "everywhere".parse::<Budget>().unwrap_err();
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

#[test]
fn a_shared_step_costs_little_beside_a_call() {
    let sandbox = sandbox::Sandbox::builder()
        .key("pk_cost", "pro")
        .market_hours(false)
        .start()
        .unwrap();
    let redis = Redis::start();
    // The machine's step is measured where its folder is the test's own (the unit
    // test in core-http: about 12 µs); here, a call paced alone against one through
    // Redis on loopback.
    let mut budgets = vec![("process", Budget::process())];
    if let Some(redis) = &redis {
        budgets.push(("redis", Budget::redis(redis.url())));
    }
    let per_call: Vec<(&str, Duration)> = budgets
        .into_iter()
        .map(|(name, budget)| {
            let client = Client::builder()
                .base_url(sandbox.trading().url())
                .api_key("pk_cost")
                .rate_limit(RateLimit::per_minute(6_000_000))
                .shared(budget)
                .build()
                .unwrap();
            client.clock().get().unwrap();
            let mut times: Vec<Duration> = (0..300)
                .map(|_| {
                    let started = Instant::now();
                    client.clock().get().unwrap();
                    started.elapsed()
                })
                .collect();
            times.sort();
            (name, times[150])
        })
        .collect();
    eprintln!("a call's median, by budget: {per_call:?}");
    let process = per_call[0].1;
    for (name, median) in &per_call[1..] {
        assert!(
            *median < process + Duration::from_millis(2),
            "{name}: {median:?} against {process:?}"
        );
    }
}

#[test]
fn waiting_for_a_redis_that_is_down_ends_within_the_calls_timeout_with_nothing_sent() {
    let server = Hostile::scripted(vec![Act::json(200, "{}")]);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = core_http::HttpClient::builder()
        .base_url(server.url())
        .api_key("pk_wait")
        .rate_limit(RateLimit::per_minute(200))
        .shared(Budget::redis(format!(
            "redis://:hunter2-secret@127.0.0.1:{closed}"
        )))
        .when_unavailable(WhenUnavailable::Wait)
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client
        .raw()
        .get::<serde_json::Value>("/v1/clock", &[])
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(err.kind(), core_http::ErrorKind::Timeout, "{err}");
    assert_eq!(err.delivery(), core_http::Delivery::NotSent, "{err}");
    assert!(!err.to_string().contains("hunter2"), "{err}");
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_millis(1_800),
        "{took:?}"
    );
    assert_eq!(
        server.count("GET"),
        0,
        "nothing went out while the budget was out of reach"
    );
}

/// What an observer is told of the shared budget.
#[derive(Clone, Default)]
struct Told(std::sync::Arc<std::sync::Mutex<Vec<BudgetEvent>>>);

impl Observer for Told {
    fn budget(&self, event: &BudgetEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

impl Told {
    fn events(&self) -> Vec<BudgetEvent> {
        self.0.lock().unwrap().clone()
    }
}

/// A client of `base` paced at `limit` through the Redis `redis` names, retries off,
/// its budget events told to the returned observer.
fn through_redis<C: core_http::service::ServiceClient>(
    (base, key): (&str, &str),
    redis: &str,
    limit: RateLimit,
    when: WhenUnavailable,
    timeout: Duration,
) -> (C, Told) {
    let told = Told::default();
    let client = core_http::ClientBuilder::<C>::new()
        .base_url(base)
        .api_key(key)
        .rate_limit(limit)
        .shared(Budget::redis(redis))
        .when_unavailable(when)
        .observer(told.clone())
        .max_retries(0)
        .timeout(timeout)
        .build()
        .unwrap();
    (client, told)
}

/// Every log record so far (of every crate, at every level) that holds `secret`.
fn logged(secret: &str) -> Vec<String> {
    testkit::logs::lines()
        .into_iter()
        .filter(|l| l.contains(secret))
        .collect()
}

#[test]
fn a_wrong_redis_password_is_paced_alone_said_once_and_never_shown_and_the_right_one_shares() {
    testkit::logs::install(testkit::logs::all_targets);
    let Some(redis) = Redis::start_with(&["--requirepass", "right-horse-battery"]) else {
        return;
    };
    let sandbox = sandbox::Sandbox::builder()
        .key("pk_pass", "free")
        .market_hours(false)
        .start()
        .unwrap();
    let base = sandbox.trading().url();
    let service = (base.as_str(), "pk_pass");
    let wrong = format!("redis://:hunter2-wrong@127.0.0.1:{}", redis.port);
    let (client, told) = through_redis::<Client>(
        service,
        &wrong,
        RateLimit::per_minute(6_000),
        WhenUnavailable::PaceAlone,
        Duration::from_secs(5),
    );
    let started = Instant::now();
    for _ in 0..5 {
        client.clock().get().unwrap();
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let events = told.events();
    let [BudgetEvent::Lost { store, reason }] = events.as_slice() else {
        panic!("said once: {events:?}");
    };
    assert_eq!(*store, "redis");
    eprintln!("a wrong password, told: {reason}");
    assert!(reason.contains("refused the password"), "{reason}");
    for secret in ["hunter2", "right-horse"] {
        assert!(!reason.contains(secret), "{reason}");
        assert!(!format!("{client:?}").contains(secret));
        assert_eq!(logged(secret), Vec::<String>::new());
    }

    // The right password: two clients of one key share a burst of 3 (2 at once, one
    // kept in hand), so the other's first call waits for the next turn, a second on.
    let right = format!("redis://:right-horse-battery@127.0.0.1:{}", redis.port);
    let limit = RateLimit::per_minute(60).with_burst(3);
    let sharing = || {
        let five = Duration::from_secs(5);
        through_redis::<Client>(service, &right, limit, WhenUnavailable::PaceAlone, five)
    };
    let ((a, told_a), (b, told_b)) = (sharing(), sharing());
    let started = Instant::now();
    a.clock().get().unwrap();
    a.clock().get().unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    b.clock().get().unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(told_a.events(), vec![]);
    assert_eq!(told_b.events(), vec![]);
    assert_eq!(logged("right-horse"), Vec::<String>::new());
}

#[test]
fn a_silent_a_resetting_a_slow_and_a_false_redis_never_hold_a_call_past_its_time_and_are_said_once()
{
    testkit::logs::install(testkit::logs::all_targets);
    let service = Hostile::scripted(vec![Act::json(200, "{}")]);
    // Accepts, reads nothing, answers nothing.
    let silent = Hostile::scripted(vec![Act::StallBeforeRead(Duration::from_secs(30))]);
    // Accepts and closes at once.
    let resetting = Hostile::scripted(vec![Act::CloseBeforeRead]);
    // Not Redis: an HTTP server, answering what it reads with an HTTP answer.
    let http = Hostile::scripted(vec![Act::json(200, "{}")]);
    let as_redis = |h: &Hostile| h.url().replace("http://", "redis://:hunter2-hostile@");
    let mut servers = vec![
        ("silent", as_redis(&silent)),
        ("resetting", as_redis(&resetting)),
        ("not", as_redis(&http)),
    ];
    // A real Redis two seconds of round trip away: every step outlasts its 500 ms.
    let redis = Redis::start();
    let slow = redis.as_ref().map(|r| {
        testkit::link::Link::start(
            ([127, 0, 0, 1], r.port).into(),
            testkit::link::Shape::new(Duration::from_secs(2), 100_000_000),
        )
    });
    if let Some(link) = &slow {
        servers.push(("slow", format!("redis://{}", link.addr())));
    }
    let client = |url: &str, when: WhenUnavailable, timeout: Duration| {
        let limit = RateLimit::per_minute(6_000);
        through_redis::<core_http::HttpClient>(
            (service.url(), "pk_hostile"),
            url,
            limit,
            when,
            timeout,
        )
    };
    let get = |c: &core_http::HttpClient| c.raw().get::<serde_json::Value>("/v1/clock", &[]);
    for (what, url) in servers {
        let (paced, told) = client(&url, WhenUnavailable::PaceAlone, Duration::from_secs(5));
        let started = Instant::now();
        let mut slowest = Duration::ZERO;
        for _ in 0..4 {
            let call = Instant::now();
            get(&paced).unwrap();
            slowest = slowest.max(call.elapsed());
        }
        let took = started.elapsed();
        eprintln!("a {what} Redis: 4 calls in {took:?}, the slowest {slowest:?}");
        // One step's bound (500 ms) and a call; the others skip Redis for a second.
        assert!(slowest < Duration::from_millis(900), "{what}: {slowest:?}");
        assert!(took < Duration::from_millis(1_500), "{what}: {took:?}");
        let events = told.events();
        assert!(
            matches!(
                events.as_slice(),
                [BudgetEvent::Lost { store: "redis", .. }]
            ),
            "{what}: {events:?}"
        );

        // Told to wait: the call ends in its own time, nothing sent.
        let (waiting, _) = client(&url, WhenUnavailable::Wait, Duration::from_secs(1));
        let before = service.count("GET");
        let started = Instant::now();
        let err = get(&waiting).unwrap_err();
        let took = started.elapsed();
        assert_eq!(err.kind(), core_http::ErrorKind::Timeout, "{what}: {err}");
        assert_eq!(
            err.delivery(),
            core_http::Delivery::NotSent,
            "{what}: {err}"
        );
        assert!(took < Duration::from_millis(1_300), "{what}: {took:?}");
        assert_eq!(service.count("GET"), before, "{what}: nothing went out");
    }
    assert_eq!(logged("hunter2"), Vec::<String>::new());
}

#[test]
fn an_unusable_cache_folder_is_said_once_and_refused_at_build_when_told_to_wait() {
    const UNUSABLE: &str = "SHARED_BUDGET_UNUSABLE";
    if std::env::var(UNUSABLE).is_err() {
        // In a child of its own, whose cache folder is under a plain file.
        let file = std::env::temp_dir().join(format!("not-a-folder-{}", std::process::id()));
        std::fs::write(&file, b"x").unwrap();
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "an_unusable_cache_folder_is_said_once_and_refused_at_build_when_told_to_wait",
                "--exact",
                "--nocapture",
            ])
            .env(UNUSABLE, "1")
            .env("XDG_CACHE_HOME", &file)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&file);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(err.contains("CHECKED"), "the child ran its checks: {err}");
        return;
    }
    let service = Hostile::scripted(vec![Act::json(200, "{}")]);
    let build = |when: WhenUnavailable, told: &Told| {
        core_http::HttpClient::builder()
            .base_url(service.url())
            .api_key("pk_unusable")
            .rate_limit(RateLimit::per_minute(6_000))
            .shared(Budget::machine())
            .when_unavailable(when)
            .observer(told.clone())
            .build()
    };
    let told = Told::default();
    let client = build(WhenUnavailable::PaceAlone, &told).unwrap();
    for _ in 0..3 {
        client
            .raw()
            .get::<serde_json::Value>("/v1/clock", &[])
            .unwrap();
    }
    let events = told.events();
    let [BudgetEvent::Lost { store, reason }] = events.as_slice() else {
        panic!("said once: {events:?}");
    };
    assert_eq!(*store, "machine");
    assert!(reason.contains("cannot make"), "{reason}");
    assert_eq!(service.count("GET"), 3);

    let err = build(WhenUnavailable::Wait, &Told::default()).unwrap_err();
    assert_eq!(err.kind(), core_http::ErrorKind::Config, "{err}");
    assert!(err.to_string().contains("told to wait"), "{err}");
    eprintln!("CHECKED");
}
