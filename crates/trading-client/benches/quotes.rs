//! `cargo xtask bench`: quotes decoded per second from a local WebSocket server through
//! `client.stream()`, side by side with raw `tungstenite` + `serde_json` reading the same
//! frames.
//!
//! The server (a thread of this program, tungstenite on the server side) acknowledges the
//! subscription and then writes the same quote frames, encoded once beforehand, as fast
//! as the socket takes them: it costs next to nothing, so what is measured is the
//! reader. Each side's time runs from the acknowledgement to the last quote decoded.
//!
//! Then the latency: a server writes quotes one every 200 µs, each stamped with the
//! wall time it is written; each side notes how long after that it holds the decoded
//! quote (median and p99, same clock, same process).
//!
//! The throughput verdict is on the middle of the rounds' own ratios (a round's sides run
//! back to back, on the same moment of the machine).
//!
//! Options: `--quotes N` (default 200,000), `--rounds N` (default 15, after one uncounted
//! warm-up round), `--write <file>` to also write the results as a Markdown section,
//! `--latency` to run the latency phase alone (`--rounds` of it).
//! `QUOTES_ONLY=0|1|2` runs one side alone (the client, raw into `Quote`, raw into
//! `f64`s), for a profiler.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::Write;
use std::net::TcpListener;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Deserialize;
use trading_client::{Client, stream::Event};
use tungstenite::Message;

/// The throughput target: our quotes per second over the raw reader's.
/// The envelope's floor (2026-12-06): at or above it, the simpler design stays.
const TARGET_RATIO: f64 = 0.75;

fn main() {
    let option = testkit::bench::option;
    // `--quick`: small, to see that the benchmark still runs.
    let quick = testkit::bench::flag("--quick");
    let quotes: usize =
        option("--quotes").map_or(if quick { 5_000 } else { 200_000 }, |s| s.parse().unwrap());
    let rounds: usize =
        option("--rounds").map_or(if quick { 1 } else { 15 }, |s| s.parse().unwrap());
    let write_to = option("--write");
    // `--latency`: the latency phase alone (to look at the tail without the
    // throughput rounds' minutes).
    if testkit::bench::flag("--latency") {
        println!("{}", latency_table(1_000, rounds));
        return;
    }
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
                1 => raw_pass::<trading_client::markets::Quote>(&url, quotes, |q| {
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
    // Each round's own ratio: the raw side's time (into the same `Quote`) over the
    // client's.
    let rounds_ratios = testkit::bench::paired(&times[0], &times[1]);
    let (ratio, low, high) = (rounds_ratios.middle, rounds_ratios.low, rounds_ratios.high);
    let [mut ours, mut typed, mut raw] = times;
    let (ours_t, typed_t, raw_t) = (median(&mut ours), median(&mut typed), median(&mut raw));
    let rate = |d: Duration| quotes as f64 / d.as_secs_f64();
    let of_medians = rate(ours_t) / rate(typed_t);
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
The client reads them through `stream()`: its connection's thread, the socket's one \
reader, decodes each frame and hands the quotes to the inbox a batch at a time; the \
caller takes them in `next_timeout`, then the session's bookkeeping (lanes, counters, \
timers, the fill de-duplication's handler). \
The raw sides read \
the same frames with `tungstenite` on the calling thread and `serde_json`, into the \
same `Quote` (exact `Decimal` prices, an `OffsetDateTime`), or into `f64` prices and a \
`String` time.\n\n\
| side | median time | quotes per second |\n|---|---|---|\n\
| `stream()` | {:.3} s | {:.0} |\n\
| raw `tungstenite` + `serde_json` into `Quote` | {:.3} s | {:.0} |\n\
| raw `tungstenite` + `serde_json` into `f64`s | {:.3} s | {:.0} |\n\n\
Throughput ratio client / raw into the same `Quote`, the middle of the rounds' own ratios: \
**{ratio:.3}** (target at least {TARGET_RATIO}: {verdict}; the rounds' ratios ran from \
{low:.3} to {high:.3}, the ratio of the two medians above is {of_medians:.3}); against \
`f64`s, which skips exact decimals, the medians' ratio: {f64_ratio:.3}.\n\n\
Every quote is read by `serde` (2026-12-06: the one-pass reader that kept this side at \
0.9 of raw, and the JSON scanner under it, 1,011 lines, were deleted for the envelope's \
floor of 0.75; with them the ratio was 0.9 and more, without them 0.797 on 2026-12-01). \
Before 2026-12-01 the caller read the socket itself while it waited, handed to and from \
the connection's thread by a baton: 1.08 to 1.26 in the runs of that code.\n",
        ours_t.as_secs_f64(),
        rate(ours_t),
        typed_t.as_secs_f64(),
        rate(typed_t),
        raw_t.as_secs_f64(),
        rate(raw_t),
    );
    // Many short rounds, the sides taking turns: a busy moment of the machine (what its
    // p99 is made of) falls on both alike.
    let latency = latency_table(if quick { 200 } else { 1_000 }, if quick { 1 } else { 15 });
    let report = format!("{report}\n{latency}");
    println!("\n{report}");
    if let Some(path) = write_to {
        std::fs::write(&path, report).unwrap();
        println!("written to {path}");
    }
}

/// The latency phase: frames written one every [`PACE`], each stamped with the wall
/// time it is written at (in its `timestamp`); each side notes, as it holds the decoded
/// quote, how long ago that was. Both run in this process, on the same clock. Rounds go
/// in pairs, one of each side back to back (each pair starting with the other side); a
/// pair on which the hypervisor took a processor away ([`testkit::bench::steal_ticks`]
/// moved) is measured again, up to [`AGAIN_AT_MOST`] times `rounds` more pairs, and the
/// `rounds` pairs with the least steal are compared: the tails are the readers' and not
/// the host's. The verdict is on the middle of the pairs' own p99 differences.
fn latency_table(frames: usize, rounds: usize) -> String {
    // Every pair measured, with the steal time that fell on it, in the order measured.
    let mut pairs: Vec<(u64, [Vec<Duration>; 2])> = Vec::new();
    while pairs.iter().filter(|(stolen, _)| *stolen == 0).count() < rounds
        && pairs.len() < (1 + AGAIN_AT_MOST) * rounds
    {
        let before = testkit::bench::steal_ticks();
        let mut pair: [Vec<Duration>; 2] = Default::default();
        for k in 0..2 {
            let side = (pairs.len() + k) % 2;
            // The first frames of a connection (its reader and buffers still warming)
            // are read and not counted, on both sides.
            let (url, server) = serve_paced(WARM_UP + frames);
            let ages = if side == 0 {
                ours_latency(&url, WARM_UP + frames)
            } else {
                raw_latency(&url, WARM_UP + frames)
            };
            pair[side] = ages.into_iter().skip(WARM_UP).collect();
            server.join().unwrap();
        }
        let stolen = match (before, testkit::bench::steal_ticks()) {
            (Some(before), Some(after)) => after.saturating_sub(before),
            _ => 0,
        };
        pairs.push((stolen, pair));
    }
    // The `rounds` pairs with the least steal (the steal-free ones when there are
    // enough), never chosen by their latency.
    let measured = pairs.len();
    pairs.sort_by_key(|(stolen, _)| *stolen);
    pairs.truncate(rounds);
    let stolen_kept: u64 = pairs.iter().map(|(stolen, _)| stolen).sum();
    let again = measured - rounds;
    let pct = |v: &mut Vec<Duration>, p: f64| {
        v.sort();
        v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
    };
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    // Each pair's own p99s, the client's less raw's, pair by pair as kept (the least
    // steal first, then in the order measured).
    let differences = testkit::bench::Paired::of(
        pairs
            .iter()
            .map(|(_, [o, r])| us(pct(&mut o.clone(), 0.99)) - us(pct(&mut r.clone(), 0.99)))
            .collect(),
    );
    let each_pair = differences
        .each
        .iter()
        .map(|d| format!("{d:+.0}"))
        .collect::<Vec<_>>()
        .join(", ");
    let pairs_middle = differences.middle;
    let (mut ours, mut raw) = (Vec::new(), Vec::new());
    for (_, [o, r]) in pairs {
        ours.extend(o);
        raw.extend(r);
    }
    let (om, op) = (pct(&mut ours, 0.5), pct(&mut ours, 0.99));
    let (rm, rp) = (pct(&mut raw, 0.5), pct(&mut raw, 0.99));
    let verdict = if pairs_middle <= LATENCY_FLOOR_US {
        "met"
    } else {
        "**missed**"
    };
    format!(
        "### Latency\n\n\
{rounds} pairs of rounds, one of each side back to back (each pair starting with the other \
side), of {frames} frames (after {WARM_UP} not counted) written at most one every {} µs, each \
stamped with the wall time it was written; the time is how long after that the \
caller held the decoded `Quote`. The writer sleeps between frames (2026-11-27; it spun \
before, taking one of the machine's two processors whole, and the reader of either side \
then lost the other for a scheduler tick, 4 ms, now and then: the p99 of both sides was \
that, 1.1 to 2.9 ms, and its difference noise). \
A pair during which the host took a processor away from this machine (its steal time, \
`/proc/stat`, moved) is measured again, up to {} times, and the {rounds} pairs with the least \
steal are the ones compared: {again} more were measured (2026-11-28: the \
p99 of both sides followed the host, not the readers; four runs of this phase alone had \
4, 3, 16 and 217 ticks of steal, and the client's p99 less raw's was +20, +10, +5 and \
+88 µs). Steal in the pairs kept: {stolen_kept} ticks of 10 ms. \
Each quote crosses from the connection's thread to the caller's, a thread woken that \
the raw side, reading on the caller's thread, does not need: on this machine a hand-off \
through a condition variable alone, one every 200 µs, takes a median 9 µs and a p99 of \
36 µs (2026-12-01). That crossing is the price of one reader per socket, and the floor \
below allows for it.\n\n\
| side | median | p99 |\n|---|---|---|\n\
| `stream()` | {:.1} µs | {:.1} µs |\n\
| raw `tungstenite` + `serde_json` into `Quote` | {:.1} µs | {:.1} µs |\n\n\
The client's p99 within {LATENCY_FLOOR_US} µs of the raw side's, the middle of the pairs' own \
p99s, the client's less raw's: **{pairs_middle:+.1} µs** ({verdict}; pair by pair: \
{each_pair}); of all the frames above: {:+.1} µs. The verdict is on the pairs' own tails, as \
the throughputs' are on the rounds' own ratios: a pair's two rounds run back to back, and a \
spell of the host that falls on one round moves the pooled p99 of that side by the whole of \
it.\n",
        PACE.as_micros(),
        AGAIN_AT_MOST * rounds,
        us(om),
        us(op),
        us(rm),
        us(rp),
        us(op) - us(rp),
    )
}

/// How many pairs of latency rounds may be measured again (times the rounds asked for)
/// because the host took a processor away during them; past that, the pairs with the
/// least steal are kept, and the report says how much steal time they carry.
const AGAIN_AT_MOST: usize = 3;

/// The frames of each latency round read before the counted ones.
const WARM_UP: usize = 100;

/// How far the client's p99 latency may be behind raw's, in µs (the floor: one reader
/// per socket costs a thread's wake-up the raw side does not pay).
const LATENCY_FLOOR_US: f64 = 100.0;

/// The pace of the latency phase.
const PACE: Duration = Duration::from_micros(200);

/// How long ago `q` was stamped.
fn age(q: &trading_client::markets::Quote) -> Duration {
    let stamped = q.timestamp.expect("stamped");
    let age = time::OffsetDateTime::now_utc() - stamped;
    Duration::try_from(age).unwrap_or_default()
}

fn ours_latency(url: &str, frames: usize) -> Vec<Duration> {
    let client = Client::new("http://127.0.0.1:9", "sk_bench")
        .unwrap()
        .with_stream_url(url);
    let mut stream = client.stream().unwrap();
    stream.subscribe_quotes(&["AAPL"]).unwrap();
    let mut ages = Vec::with_capacity(frames);
    while ages.len() < frames {
        match stream.next_timeout(Duration::from_secs(10)) {
            Some(Ok(Event::Quote(q))) => ages.push(age(&q)),
            Some(Ok(_)) => {}
            other => panic!("{other:?}"),
        }
    }
    stream.close();
    ages
}

fn raw_latency(url: &str, frames: usize) -> Vec<Duration> {
    let (mut ws, _) = tungstenite::connect(url).unwrap();
    ws.send(Message::text(
        r#"{"action":"subscribe","channels":["quotes"],"symbols":["AAPL"]}"#,
    ))
    .unwrap();
    let mut ages = Vec::with_capacity(frames);
    while ages.len() < frames {
        if let Message::Text(t) = ws.read().unwrap()
            && t.as_str().contains("\"quote\"")
        {
            let q: trading_client::markets::Quote = serde_json::from_str(t.as_str()).unwrap();
            ages.push(age(&q));
        }
    }
    let _ = ws.close(None);
    ages
}

/// A server that acknowledges the subscription, then writes `frames` quotes one every
/// [`PACE`] (a sleep between them: the pace is at least that), each stamped as it
/// is written.
fn serve_paced(frames: usize) -> (String, JoinHandle<()>) {
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
        let rfc3339 = time::format_description::well_known::Rfc3339;
        let mut next = Instant::now();
        for i in 0..frames {
            // A sleep, not a spin: on a machine of two processors a spinning writer
            // takes one whole, and the reader then loses the other to anything else for
            // a scheduler tick (4 ms) now and then, on both sides alike. The stamp is
            // taken as the frame is written, so a late wake-up does not count.
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            }
            next = next.max(now) + PACE;
            let stamp = time::OffsetDateTime::now_utc().format(&rfc3339).unwrap();
            let cents = 18_700 + (i % 400) as u64;
            let frame = format!(
                r#"{{"type":"quote","symbol":"AAPL","price":{}.{:02},"bid_size":100,"timestamp":"{stamp}"}}"#,
                cents / 100,
                cents % 100
            );
            ws.send(Message::text(frame)).unwrap();
        }
        while ws.read().is_ok() {}
    });
    (url, handle)
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
    frames
        .iter()
        .flat_map(|f| testkit::hostile_ws::frame(1, true, f.as_bytes()))
        .collect()
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

#[inline(never)]
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
    // The same check of each quote as the raw typed side's.
    let mut good = 0;
    while n < quotes {
        match stream.next_timeout(Duration::from_secs(10)) {
            Some(Ok(Event::Quote(q))) => {
                n += 1;
                good += usize::from(q.price > trading_client::Decimal::ZERO);
            }
            Some(Ok(_)) => {}
            other => panic!("{other:?} after {n} quotes"),
        }
    }
    let elapsed = started.elapsed();
    assert_eq!(stream.stats().dropped, 0, "no quote dropped");
    assert_eq!(good, quotes);
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

#[inline(never)]
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
