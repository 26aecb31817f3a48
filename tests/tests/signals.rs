//! A handled signal is not a disconnect. A command-line tool that handles Ctrl-C has a
//! signal handler installed; a signal landing while a thread waits on a socket (a read
//! with a receive timeout, the stream's wait for bytes, a REST call's read) makes that
//! wait fail with `Interrupted`, which the clients must treat as nothing at all.
//!
//! Against the sandbox, over real sockets: a trading stream with quotes flowing and
//! orders filling, then idle, while every thread of this process that reads (the test's
//! reader, the stream's own thread) gets `SIGUSR1` every 20 ms: no reconnect, no error,
//! every fill once, every REST call answered once.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use trading_client::Decimal;
use trading_client::orders::{Amount, OrderRequest, Side};
use trading_client::stream::Event;

/// The thread ids of this process whose name starts with `prefix`.
fn threads_named(prefix: &str) -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join("comm"))
                .is_ok_and(|c| c.trim().starts_with(prefix))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Sends `SIGUSR1` every 20 ms, until `stop`, to every thread that reads: those named
/// `signalled-*` (the stream's reader, the REST caller) and the streams' own threads.
/// Counts the rounds. (`kill` given a thread's id delivers to that thread when it can
/// take it.) A thread that ended between the listing and the `kill` is not an error.
fn signaller(stop: Arc<AtomicBool>, rounds: Arc<AtomicU64>) {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Acquire) {
            let mut tids = threads_named("signalled-");
            tids.extend(threads_named("core-http-strea"));
            if !tids.is_empty() {
                // The shell's own `kill`: no package needed beyond a shell.
                let status = std::process::Command::new("sh")
                    .arg("-c")
                    .arg(format!("kill -USR1 {}", tids.join(" ")))
                    .status()
                    .expect("sh runs");
                if status.success() {
                    rounds.fetch_add(1, Ordering::AcqRel);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

#[test]
fn signals_during_reads_writes_and_waits_are_no_disconnect_and_lose_nothing() {
    let handled = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGUSR1, handled.clone()).unwrap();

    // Real time, whatever the hour: a market that never closes, so orders fill.
    let sandbox = sandbox::Sandbox::builder()
        .market_hours(false)
        .start()
        .unwrap();
    sandbox
        .trading()
        .set_quote_interval(Duration::from_millis(5));
    let client = trading_client::Client::new(
        sandbox.service_url(sandbox::Service::Trading),
        sandbox.api_key(),
    )
    .unwrap();

    // The reader: its own thread, so that the signals reach it by name.
    let reader_client = client.clone();
    let reader = std::thread::Builder::new()
        .name("signalled-reader".into())
        .spawn(move || {
            let mut stream = reader_client.stream().unwrap();
            stream.subscribe_orders().unwrap();
            stream.subscribe_quotes(&["AAPL"]).unwrap();
            let mut quotes = 0u64;
            let mut fills = Vec::new();
            let mut errors = Vec::new();
            // Busy for 2 s, then nothing but orders for 1.5 s (the stream idle).
            let started = Instant::now();
            let mut unsubscribed = false;
            // A signal does not make a wait start again from the top.
            let mut longest = Duration::ZERO;
            while started.elapsed() < Duration::from_millis(3_500) {
                if !unsubscribed && started.elapsed() > Duration::from_secs(2) {
                    stream.unsubscribe_quotes(&["AAPL"]).unwrap();
                    unsubscribed = true;
                }
                let asked = Instant::now();
                let next = stream.next_timeout(Duration::from_millis(300));
                longest = longest.max(asked.elapsed());
                match next {
                    Some(Ok(Event::Quote(_))) => quotes += 1,
                    Some(Ok(Event::Fill(fill))) => fills.push(fill.execution_id),
                    Some(Ok(Event::Reconnected { .. })) => errors.push("reconnected".to_owned()),
                    Some(Ok(_)) | None => {}
                    Some(Err(e)) => errors.push(e.to_string()),
                }
            }
            let reconnects = stream.stats().reconnects;
            stream.close();
            (quotes, fills, errors, reconnects, longest)
        })
        .unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicU64::new(0));
    signaller(stop.clone(), rounds.clone());

    // Orders placed meanwhile through REST, one every 250 ms, busy and idle alike, on a
    // thread that is signalled too.
    let rest = client.clone();
    let placing = std::thread::Builder::new()
        .name("signalled-rest".into())
        .spawn(move || {
            let mut placed = Vec::new();
            for _ in 0..12 {
                std::thread::sleep(Duration::from_millis(250));
                let order = rest
                    .orders()
                    .place(&OrderRequest::market(
                        "AAPL",
                        Side::Buy,
                        Amount::Qty(Decimal::ONE),
                    ))
                    .expect("a REST call with signals landing is answered");
                placed.push(order.id);
            }
            placed
        })
        .unwrap();
    let placed = placing.join().unwrap();
    let (quotes, fills, errors, reconnects, longest) = reader.join().unwrap();
    stop.store(true, Ordering::Release);

    assert!(handled.load(Ordering::Acquire), "the handler ran");
    assert!(
        rounds.load(Ordering::Acquire) > 50,
        "signals were sent all along"
    );
    assert!(errors.is_empty(), "no error, no reconnect: {errors:?}");
    assert_eq!(reconnects, 0, "a signal is not a lost connection");
    assert!(
        longest < Duration::from_millis(300) + Duration::from_secs(1),
        "next_timeout(300 ms) kept to its time under signals: {longest:?}"
    );
    assert!(quotes > 100, "quotes flowed while signalled: {quotes}");
    let unique: HashSet<&String> = fills.iter().collect();
    assert_eq!(unique.len(), fills.len(), "no fill twice: {fills:?}");
    let orders = sandbox.trading().orders();
    assert_eq!(orders.len(), placed.len(), "each order placed once");
    assert!(
        fills.len() >= placed.len(),
        "every order's fill arrived: {} fills for {} orders",
        fills.len(),
        placed.len()
    );
}
