//! `cargo xtask bench`: quotes decoded per second from a local WebSocket server through
//! `client.stream()`, side by side with raw `tungstenite` + `serde_json` reading the same
//! frames.
//!
//! The server (a thread of this program, tungstenite on the server side) acknowledges the
//! subscription and then writes the same quote frames, encoded once beforehand, as fast
//! as the socket takes them: it costs next to nothing, so what is measured is the
//! reader. Each side's time runs from the acknowledgement to the last quote decoded.
//!
//! Options: `--quotes N` (default 200,000), `--rounds N` (default 9, after one uncounted
//! warm-up round), `--write <file>` to also write the results as a Markdown section.
//! `QUOTES_ONLY=0|1|2` runs one side alone (the client, raw into `Quote`, raw into
//! `f64`s), for a profiler.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::Write;
use std::net::TcpListener;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Deserialize;
use trading_client::{Client, Event};
use tungstenite::Message;

/// The throughput target: our quotes per second over the raw reader's.
const TARGET_RATIO: f64 = 0.9;

fn main() {
    let option = testkit::bench::option;
    // `--quick`: small, to see that the benchmark still runs.
    let quick = testkit::bench::flag("--quick");
    let quotes: usize =
        option("--quotes").map_or(if quick { 5_000 } else { 200_000 }, |s| s.parse().unwrap());
    let rounds: usize =
        option("--rounds").map_or(if quick { 1 } else { 9 }, |s| s.parse().unwrap());
    let write_to = option("--write");
    let frames: Vec<String> = (0..quotes).map(frame).collect();
    let encoded = std::sync::Arc::new(encode(&frames));

    const NAMES: [&str; 3] = ["client", "raw typed", "raw f64"];
    let mut times: [Vec<Duration>; 3] = Default::default();
    for round in 0..=rounds {
        // Each round starts with another side, so none is always first.
        for k in 0..3 {
            let side = (round + k) % 3;
            if std::env::var("QUOTES_ONLY").is_ok_and(|o| o != side.to_string()) {
                continue;
            }
            let (url, server) = serve(encoded.clone());
            let elapsed = match side {
                0 => ours_pass(&url, quotes),
                1 => raw_pass::<trading_client::Quote>(&url, quotes, |q| {
                    q.price > trading_client::Decimal::ZERO
                }),
                _ => raw_pass::<RawQuote>(&url, quotes, |q| q.price > 0.0),
            };
            server.join().unwrap();
            if round > 0 {
                times[side].push(elapsed);
            }
            println!(
                "round {}: {:<9} {:>10.0} quotes/s",
                if round == 0 {
                    "warm-up".to_owned()
                } else {
                    round.to_string()
                },
                NAMES[side],
                quotes as f64 / elapsed.as_secs_f64()
            );
        }
    }
    if std::env::var("QUOTES_ONLY").is_ok() {
        return;
    }
    let median = |side: &mut Vec<Duration>| {
        side.sort();
        side[side.len() / 2]
    };
    let [mut ours, mut typed, mut raw] = times;
    let (ours_t, typed_t, raw_t) = (median(&mut ours), median(&mut typed), median(&mut raw));
    let rate = |d: Duration| quotes as f64 / d.as_secs_f64();
    let ratio = rate(ours_t) / rate(typed_t);
    let f64_ratio = rate(ours_t) / rate(raw_t);
    let verdict = if ratio >= TARGET_RATIO {
        "met"
    } else {
        "**missed**"
    };
    let report = format!(
        "## trading-client: quotes decoded from a stream\n\n\
Release build, one run, {rounds} rounds per side (after a warm-up round; each round starts with another side) of \
{quotes} quote frames from a local tungstenite server thread, one quote object per Text \
frame, encoded once beforehand and written as fast as the socket takes them after the \
subscription is acknowledged. \
The client reads them through `stream()`: its connection thread (pings, timers, \
reconnects), the quote queue, the hand-over to the calling thread. The raw sides read \
the same frames with `tungstenite` on the calling thread and `serde_json`, into the \
same `Quote` (exact `Decimal` prices, an `OffsetDateTime`), or into `f64` prices and a \
`String` time.\n\n\
| side | median time | quotes per second |\n|---|---|---|\n\
| `stream()` | {:.3} s | {:.0} |\n\
| raw `tungstenite` + `serde_json` into `Quote` | {:.3} s | {:.0} |\n\
| raw `tungstenite` + `serde_json` into `f64`s | {:.3} s | {:.0} |\n\n\
Throughput ratio client / raw into the same `Quote`: **{ratio:.3}** (target at least \
{TARGET_RATIO}: {verdict}); against `f64`s, which skips exact decimals: {f64_ratio:.3}.\n",
        ours_t.as_secs_f64(),
        rate(ours_t),
        typed_t.as_secs_f64(),
        rate(typed_t),
        raw_t.as_secs_f64(),
        rate(raw_t),
    );
    println!("\n{report}");
    if let Some(path) = write_to {
        std::fs::write(&path, report).unwrap();
        println!("written to {path}");
    }
}

/// Quote `i`: a price that moves, as the sandbox sends it.
fn frame(i: usize) -> String {
    let cents = 18_700 + (i % 400) as u64;
    format!(
        r#"{{"type":"quote","symbol":"AAPL","price":{}.{:02},"bid":{}.{:02},"ask":{}.{:02},"bid_size":{},"ask_size":{},"timestamp":"2026-03-02T15:{:02}:{:02}Z"}}"#,
        cents / 100,
        cents % 100,
        (cents - 1) / 100,
        (cents - 1) % 100,
        (cents + 1) / 100,
        (cents + 1) % 100,
        100 + i % 900,
        200 + i % 700,
        (i / 60) % 60,
        i % 60
    )
}

/// Every frame, WebSocket-encoded once (unmasked Text frames, as a server sends them).
fn encode(frames: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in frames {
        out.push(0x81);
        match f.len() {
            n if n < 126 => out.push(n as u8),
            n if n <= u16::MAX as usize => {
                out.push(126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        out.extend_from_slice(f.as_bytes());
    }
    out
}

/// A server for one connection: reads the subscription, acknowledges it, then writes
/// every frame from memory (encoded once, so the server costs next to nothing and the
/// measurement is the reader's), then waits for the client to close.
fn serve(encoded: std::sync::Arc<Vec<u8>>) -> (String, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/stream", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (socket, _) = listener.accept().unwrap();
        socket.set_nodelay(true).unwrap();
        let mut ws = tungstenite::accept(socket).unwrap();
        loop {
            match ws.read().unwrap() {
                Message::Text(t) if t.as_str().contains("subscribe") => break,
                _ => continue,
            }
        }
        ws.send(Message::text(
            r#"{"type":"subscribed","channels":["quotes"],"symbols":["AAPL"]}"#,
        ))
        .unwrap();
        ws.get_mut().write_all(&encoded).unwrap();
        ws.get_mut().flush().unwrap();
        // Until the client closes (or drops) the connection.
        while ws.read().is_ok() {}
    });
    (url, handle)
}

fn ours_pass(url: &str, quotes: usize) -> Duration {
    let client = Client::new("http://127.0.0.1:9", "sk_bench")
        .unwrap()
        .with_stream_url(url);
    let mut stream = client
        .stream_with(|c| c.lossy_capacity(quotes + 16))
        .unwrap();
    stream.subscribe_quotes(&["AAPL"]).unwrap();
    let started = Instant::now();
    let mut n = 0;
    let mut sum = trading_client::Decimal::ZERO;
    while n < quotes {
        match stream.next_timeout(Duration::from_secs(10)) {
            Some(Ok(Event::Quote(q))) => {
                n += 1;
                sum += q.price;
            }
            Some(Ok(_)) => {}
            other => panic!("{other:?} after {n} quotes"),
        }
    }
    let elapsed = started.elapsed();
    assert_eq!(stream.stats().dropped, 0, "no quote dropped");
    assert!(sum > trading_client::Decimal::ZERO);
    stream.close();
    elapsed
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct RawQuote {
    symbol: String,
    price: f64,
    bid: f64,
    ask: f64,
    bid_size: u64,
    ask_size: u64,
    timestamp: String,
}

fn raw_pass<T: serde::de::DeserializeOwned>(
    url: &str,
    quotes: usize,
    check: impl Fn(&T) -> bool,
) -> Duration {
    let (mut ws, _) = tungstenite::connect(url).unwrap();
    ws.send(Message::text(
        r#"{"action":"subscribe","channels":["quotes"],"symbols":["AAPL"]}"#,
    ))
    .unwrap();
    // The acknowledgement.
    loop {
        if let Message::Text(t) = ws.read().unwrap()
            && t.as_str().contains("subscribed")
        {
            break;
        }
    }
    let started = Instant::now();
    let mut n = 0;
    let mut good = 0;
    while n < quotes {
        if let Message::Text(t) = ws.read().unwrap() {
            let q: T = serde_json::from_str(t.as_str()).unwrap();
            n += 1;
            good += usize::from(check(&q));
        }
    }
    let elapsed = started.elapsed();
    assert_eq!(good, quotes);
    let _ = ws.close(None);
    let _ = ws.flush();
    elapsed
}
