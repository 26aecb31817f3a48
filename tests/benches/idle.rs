//! `cargo xtask bench`: what an idle stream costs, against the sandbox, as a user's
//! program holds one: a trading stream with orders subscribed and a worlds channel with
//! one world joined, each read by a thread blocked in `next_timeout(..)` while nothing
//! arrives, beside the floor (raw `tungstenite` blocked in a read on the same service).
//!
//! For each: wake-ups a second (context switches, voluntary and not, of the reading
//! thread and the stream's own thread, from `/proc`), CPU (time on a CPU, from
//! `schedstat`) and threads; then how long `close()` of an idle stream takes, and how long
//! a program takes to end when it returns from `main` with a stream open (a child process
//! of this benchmark, timed from its last line to its exit).
//!
//! Linux only (it reads `/proc`). Options: `--quick` (a 2-second window, 3 closes),
//! `--write <file>` to also write the results as a Markdown section.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use worlds_client::worlds::NewWorld;

/// At most this many wake-ups a second for an idle stream.
const TARGET_WAKEUPS: f64 = 1.0;
/// Close and exit within this.
const TARGET_CLOSE: Duration = Duration::from_millis(10);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--exit-child") {
        return exit_child(&args[i + 1], &args[i + 2]);
    }
    let quick = testkit::bench::flag("--quick");
    let window = if quick {
        Duration::from_secs(2)
    } else {
        Duration::from_secs(20)
    };
    let closes = if quick { 3 } else { 15 };
    let write_to = testkit::bench::option("--write");
    let sandbox = sandbox::Sandbox::start().unwrap();
    let trading_url = sandbox.service_url(sandbox::Service::Trading);
    let worlds_url = sandbox.service_url(sandbox::Service::Worlds);
    let key = sandbox.api_key().to_owned();

    let raw = idle_raw(&sandbox.trading().stream_url(), &key, window);
    let trading = idle_trading(&trading_url, &key, window);
    let worlds = idle_worlds(&worlds_url, &key, window);

    let trading_close = median_max(
        (0..closes)
            .map(|_| close_time_trading(&trading_url, &key))
            .collect(),
    );
    let worlds_close = median_max(
        (0..closes)
            .map(|_| close_time_worlds(&worlds_url, &key))
            .collect(),
    );
    let exit = median_max((0..closes).map(|_| exit_time(&trading_url, &key)).collect());

    let row = |name: &str, m: &Idle| {
        format!(
            "| {name} | {:.2} | {:.3} % | {} |\n",
            m.wakeups_per_sec, m.cpu_percent, m.threads
        )
    };
    let met = |ok: bool| if ok { "met" } else { "**missed**" };
    let worst = trading.wakeups_per_sec.max(worlds.wakeups_per_sec);
    let slowest = trading_close.1.max(worlds_close.1).max(exit.0);
    let report = format!(
        "## Idle streams: wake-ups, CPU, close and exit\n\n\
Release build, one run, against the in-process sandbox. Each stream is read by a thread \
blocked in `next_timeout(..)` for a {:.0}-second window in which nothing arrives (after a \
second to settle); wake-ups are the context switches (voluntary and not) of the reading \
thread and the stream's own thread, from `/proc`, and CPU their time on a CPU \
(`schedstat`).\n\n\
| program | wake-ups a second | CPU | threads |\n|---|---|---|---|\n{}{}{}\n\
At most {TARGET_WAKEUPS} wake-up a second for an idle stream: {}.\n\n\
| closing | median | worst |\n|---|---|---|\n\
| `close()` of an idle trading stream ({closes} times) | {:.2} ms | {:.2} ms |\n\
| `close()` of an idle worlds channel ({closes} times) | {:.2} ms | {:.2} ms |\n\
| a program returning from `main` with a trading stream open ({closes} times; from its \
last line to its exit, process start-up excluded) | {:.2} ms | {:.2} ms |\n\n\
Close and exit under {} ms (median): {}.\n",
        window.as_secs_f64(),
        row("raw `tungstenite`, blocked in a read", &raw),
        row(
            "trading `stream()`, orders subscribed, in `next_timeout(..)`",
            &trading
        ),
        row(
            "worlds `stream()`, one world joined, in `next_timeout(..)`",
            &worlds
        ),
        met(worst <= TARGET_WAKEUPS),
        ms(trading_close.0),
        ms(trading_close.1),
        ms(worlds_close.0),
        ms(worlds_close.1),
        ms(exit.0),
        ms(exit.1),
        TARGET_CLOSE.as_millis(),
        met(slowest <= TARGET_CLOSE),
    );
    println!("\n{report}");
    if let Some(path) = write_to {
        std::fs::write(&path, report).unwrap();
        println!("written to {path}");
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// What one idle stream cost over the window.
struct Idle {
    wakeups_per_sec: f64,
    cpu_percent: f64,
    threads: usize,
}

/// A thread's context switches and time on a CPU (ns) so far.
fn thread_counters(tid: &str) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    let switches: u64 = status
        .lines()
        .filter(|l| l.contains("ctxt_switches"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum();
    let schedstat = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).unwrap();
    let cpu = schedstat
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    (switches, cpu)
}

/// The calling thread's id.
fn my_tid() -> String {
    std::fs::read_link("/proc/thread-self")
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The ids of this process's stream threads (named `core-http-stream`).
fn stream_tids() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join("comm"))
                .is_ok_and(|c| c.trim().starts_with("core-http-strea"))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Measures `threads` over `window` (after a second to settle).
fn measure(threads: &[String], window: Duration) -> Idle {
    std::thread::sleep(Duration::from_secs(1));
    let sum = |threads: &[String]| {
        threads
            .iter()
            .map(|t| thread_counters(t))
            .fold((0, 0), |(s, c), (s2, c2)| (s + s2, c + c2))
    };
    let (s0, c0) = sum(threads);
    let started = Instant::now();
    std::thread::sleep(window);
    let (s1, c1) = sum(threads);
    let secs = started.elapsed().as_secs_f64();
    Idle {
        wakeups_per_sec: (s1 - s0) as f64 / secs,
        cpu_percent: (c1 - c0) as f64 / 1e9 / secs * 100.0,
        threads: threads.len(),
    }
}

/// The floor: raw tungstenite on the trading stream, blocked in a read.
fn idle_raw(url: &str, key: &str, window: Duration) -> Idle {
    use tungstenite::client::IntoClientRequest;
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    let (mut socket, _) = tungstenite::connect(request).unwrap();
    let handle = match socket.get_ref() {
        tungstenite::stream::MaybeTlsStream::Plain(tcp) => tcp.try_clone().unwrap(),
        _ => unreachable!("the sandbox is plain HTTP"),
    };
    let (tid_tx, tid_rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        tid_tx.send(my_tid()).unwrap();
        while socket.read().is_ok() {}
    });
    let tid = tid_rx.recv().unwrap();
    let idle = measure(&[tid], window);
    let _ = handle.shutdown(std::net::Shutdown::Both);
    reader.join().unwrap();
    idle
}

fn trading_client(url: &str, key: &str) -> trading_client::Client {
    trading_client::Client::new(url, key).unwrap()
}

fn worlds_client(url: &str, key: &str) -> worlds_client::Client {
    worlds_client::Client::new(url, key).unwrap()
}

/// A trading stream, orders subscribed, read by a thread in `next_timeout`.
fn idle_trading(url: &str, key: &str, window: Duration) -> Idle {
    let mut stream = trading_client(url, key).stream().unwrap();
    stream.subscribe_orders().unwrap();
    idle_reader(window, move |wait| {
        while stream.next_timeout(wait).is_some() {}
        stream.close();
    })
}

/// A worlds channel, one world joined, read by a thread in `next_timeout`.
fn idle_worlds(url: &str, key: &str, window: Duration) -> Idle {
    let client = worlds_client(url, key);
    let world = client
        .worlds()
        .create(&NewWorld::new("Idle", "quiet"))
        .unwrap();
    let mut stream = client.stream().unwrap();
    stream.join(&world.id).unwrap();
    // The join's snapshot and the events it brings, read before the window.
    while stream.next_timeout(Duration::from_millis(300)).is_some() {}
    idle_reader(window, move |wait| {
        while stream.next_timeout(wait).is_some() {}
        stream.close();
    })
}

/// Runs `read` (given how long to wait) on a thread of its own and measures it and the
/// stream's thread over `window`.
fn idle_reader(window: Duration, read: impl FnOnce(Duration) + Send + 'static) -> Idle {
    let (tid_tx, tid_rx) = mpsc::channel();
    let wait = window + Duration::from_secs(2);
    let reader = std::thread::spawn(move || {
        tid_tx.send(my_tid()).unwrap();
        read(wait);
    });
    let mut threads = vec![tid_rx.recv().unwrap()];
    threads.extend(stream_tids());
    let idle = measure(&threads, window);
    reader.join().unwrap();
    idle
}

/// How long `close()` of a trading stream that has been idle for half a second takes.
fn close_time_trading(url: &str, key: &str) -> Duration {
    let mut stream = trading_client(url, key).stream().unwrap();
    stream.subscribe_orders().unwrap();
    let _ = stream.next_timeout(Duration::from_millis(500));
    let started = Instant::now();
    stream.close();
    started.elapsed()
}

/// How long `close()` of a worlds channel that has been idle for half a second takes.
fn close_time_worlds(url: &str, key: &str) -> Duration {
    let client = worlds_client(url, key);
    let world = client
        .worlds()
        .create(&NewWorld::new("Closing", "quiet"))
        .unwrap();
    let mut stream = client.stream().unwrap();
    stream.join(&world.id).unwrap();
    while stream.next_timeout(Duration::from_millis(500)).is_some() {}
    let started = Instant::now();
    stream.close();
    started.elapsed()
}

/// How long a program takes to end once it returns from `main` with a stream open:
/// this benchmark run again as a child, timed from its last line to its exit.
fn exit_time(url: &str, key: &str) -> Duration {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exit-child", url, key])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let started = Instant::now();
    assert_eq!(line.trim(), "returning", "the child did not get ready");
    assert!(child.wait().unwrap().success());
    started.elapsed()
}

/// The child: a trading stream, orders subscribed, idle for half a second, then `main`
/// returns with it open (its drop closes it).
fn exit_child(url: &str, key: &str) {
    let mut stream = trading_client(url, key).stream().unwrap();
    stream.subscribe_orders().unwrap();
    let _ = stream.next_timeout(Duration::from_millis(500));
    println!("returning");
    use std::io::Write;
    std::io::stdout().flush().unwrap();
}

/// The median and the worst of some times.
fn median_max(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    (times[times.len() / 2], *times.last().unwrap())
}
