//! `cargo xtask bench`'s "over a link": the clients as a user meets them, across testkit's
//! shaped link (a loopback relay adding a round trip and capping the rate each way), side
//! by side in one run:
//!
//! - minute bars through `history().iter_from(..)` (compressed, the next page fetched
//!   while the caller reads) against raw `ureq` + `serde_json` (no compression, a page at
//!   a time) and `reqwest::blocking` with gzip, and against the link's own limit (the
//!   compressed bytes over the rate, plus a round trip);
//! - 100 sequential calls on one client against 100 round trips;
//! - a cold first call over TLS (a local rustls server behind the link), and a reconnect
//!   (the session resumed), in round trips, against curl's;
//! - a 64 MiB download, against the link's limit; the quotes stream, for the record.
//!
//! Options: `--years N` (default 2), `--rounds N` (default 3), `--rtt-ms N` (40),
//! `--mbit N` (50), `--quick`, `--write <file>`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use testkit::bench::{flag, option};
use testkit::link::{Link, Shape};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use trading_client::markets::Timeframe;

mod pages;

use pages::{Pages, RawPage};
use service_clients_sandbox as sandbox;
use service_clients_testkit as testkit;

const END: &str = "2026-03-02T21:00:00Z";
pub(crate) const PAGE: u32 = 10_000;
const TARGET_OF_RAW: f64 = 0.3;
const TARGET_OF_REQWEST: f64 = 0.8;
const TARGET_OF_LIMIT: f64 = 1.25;
const TARGET_CALLS: f64 = 1.02;
const DOWNLOAD: usize = 64 << 20;

fn main() {
    let quick = flag("--quick");
    let years: i64 = option("--years").map_or(2, |s| s.parse().unwrap());
    let days = if quick { 10 } else { 365 * years };
    let rounds: usize =
        option("--rounds").map_or(if quick { 1 } else { 3 }, |s| s.parse().unwrap());
    let rtt = Duration::from_millis(option("--rtt-ms").map_or(40, |s| s.parse().unwrap()));
    let mbit: u64 = option("--mbit").map_or(50, |s| s.parse().unwrap());
    let shape = Shape::new(rtt, mbit * 1_000_000);

    let end = OffsetDateTime::parse(END, &Rfc3339).unwrap();
    let sandbox = sandbox::Sandbox::builder()
        .frozen_at(end)
        .market_hours(false)
        .start()
        .unwrap();
    let (link, base) = behind(&sandbox, shape);
    let key = sandbox.api_key().to_owned();
    let start = end - time::Duration::days(days);
    println!("over a link of {shape}: {days} days of minute bars, {rounds} rounds");

    // The pages made once, as the sandbox makes and compresses them, then served from
    // memory: the sandbox's generating the bars (about a second for two years) is not
    // the link's nor the clients' time.
    let pages = Pages::record(&sandbox.trading().url(), &key, (start, end));
    let served = pages.serve();
    let page_link = Link::start(served, shape);
    let page_base = format!("{}/trading", page_link.url());
    let bars = bars_section(&page_link, &page_base, &key, (start, end), rounds, &pages);
    let calls = calls_section(&link, &base, &key, &sandbox.trading().url());
    let tls = tls_section(shape);
    let download = download_section(shape);
    let quotes = quotes_section(shape);
    let report = format!(
        "## Over a link\n\nRelease build, one run, every side through testkit's shaped link: a \
relay on loopback that delays each direction by half of a **{} ms** round trip and carries \
**{mbit} Mbit/s** each way (userspace; a new connection pays its round trip to open). The \
sandbox runs in the benchmark's process, its clock frozen at {END}.\n\n{bars}\n{calls}\n{tls}\n{download}\n{quotes}",
        rtt.as_millis()
    );
    println!("\n{report}");
    if let Some(path) = option("--write") {
        std::fs::write(&path, report).unwrap();
        println!("written to {path}");
    }
}

pub(crate) type Range = (OffsetDateTime, OffsetDateTime);

/// A link of `shape` in front of `sandbox`, and the trading base URL through it.
fn behind(sandbox: &sandbox::Sandbox, shape: Shape) -> (Link, String) {
    let target: SocketAddr = sandbox.url().trim_start_matches("http://").parse().unwrap();
    let link = Link::start(target, shape);
    let base = sandbox.trading().url().replace(sandbox.url(), &link.url());
    (link, base)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "**missed**" }
}

fn bars_section(
    link: &Link,
    base: &str,
    key: &str,
    range: Range,
    rounds: usize,
    pages: &Pages,
) -> String {
    let client = trading_client::Client::new(base, key).unwrap();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .accept_encoding("")
        .build()
        .into();
    let reqwest = reqwest::blocking::Client::builder()
        .gzip(true)
        .timeout(Duration::from_secs(600))
        .build()
        .unwrap();
    let names = [
        "`history().iter_from(..)`",
        "raw `ureq` + `serde_json`",
        "`reqwest` blocking, gzip",
    ];
    let mut times: [Vec<Duration>; 3] = Default::default();
    let mut bytes = [0u64; 3];
    let mut connections = [0usize; 3];
    let mut count = [0u64; 3];
    for round in 0..=rounds {
        for side in 0..3 {
            let before = link.bytes().1;
            let opened = link.connections();
            let started = Instant::now();
            let (n, sum) = match side {
                0 => ours(&client, range),
                1 => raw(base, key, range, |url, auth| {
                    let mut r = agent.get(url).header("authorization", auth).call().unwrap();
                    r.body_mut()
                        .with_config()
                        .limit(u64::MAX)
                        .read_to_vec()
                        .unwrap()
                }),
                _ => raw(base, key, range, |url, auth| {
                    reqwest
                        .get(url)
                        .header("authorization", auth)
                        .send()
                        .unwrap()
                        .bytes()
                        .unwrap()
                        .to_vec()
                }),
            };
            let took = started.elapsed();
            println!(
                "round {round}: {:<28} {n} bars (close sum {sum:.0}) in {:.2} s, {:.1} MB down, {} connections",
                names[side],
                took.as_secs_f64(),
                (link.bytes().1 - before) as f64 / 1e6,
                link.connections() - opened
            );
            if round > 0 {
                times[side].push(took);
            }
            bytes[side] = link.bytes().1 - before;
            connections[side] = link.connections() - opened;
            count[side] = n;
        }
    }
    assert!(
        count.iter().all(|&c| c == count[0]),
        "every side read every bar: {count:?}"
    );
    let rounds_run = times[0].len();
    let [ours_t, raw_t, req_t] = times.map(median);
    let shape = link.shape();
    let limit = shape.transfer(bytes[0]) + shape.rtt;
    // A page's token is in the page before it: however early the next page is asked
    // for, every page costs a round trip after the one before it arrived.
    let chain = shape.transfer(bytes[0]) + shape.rtt * pages.bodies.len() as u32;
    let (of_raw, of_req, of_limit) = (
        ours_t.as_secs_f64() / raw_t.as_secs_f64(),
        ours_t.as_secs_f64() / req_t.as_secs_f64(),
        ours_t.as_secs_f64() / limit.as_secs_f64(),
    );
    let row = |i: usize, t: Duration| {
        format!(
            "| {} | {:.2} s | {:.1} MB | {} | {:.0} |\n",
            names[i],
            t.as_secs_f64(),
            bytes[i] as f64 / 1e6,
            connections[i],
            count[0] as f64 / t.as_secs_f64()
        )
    };
    format!(
        "### Minute bars\n\n{} one-minute bars of AAPL ({:.0} days; a shorter span than the loopback \
section's twenty years, whose 200 MB uncompressed would take over half a minute a pass on this link), \
pages of {PAGE}, the median of {} rounds per side after a warm-up round. Every side decodes every \
bar. The client asks for `gzip, br` (the sandbox answers brotli) and fetches the next page while the caller reads; raw \
`ureq` asks for no compression and one page at a time; `reqwest` asks for gzip, one page at a time.\n\n\
| side | median time | bytes down | new connections | bars per second |\n|---|---|---|---|---|\n{}{}{}\n\
The pages are made once before the passes, compressed as the sandbox compresses them \
(tower-http's defaults: brotli at quality 4, gzip at level 6; {:.1} MB uncompressed, {:.1} MB \
in brotli, {:.1} MB in gzip) and served from memory behind the link, so the time is the \
link's and the clients' (the sandbox takes about a second to make two years' bars). \
The link's limit for the client's bytes: {:.2} s ({:.1} MB at the rate, plus a round trip). \
A page-token list cannot reach it: each page's token comes in the page before it, so \
each of the {} pages costs a round trip after the one before it arrived, however early it \
is asked for: {:.2} s with the bytes (client / that: {:.2}).\n\n\
- client / raw `ureq`: **{of_raw:.2}** (target at most {TARGET_OF_RAW}: {})\n\
- client / `reqwest` gzip: **{of_req:.2}** (target at most {TARGET_OF_REQWEST}: {})\n\
- client / the link's limit: **{of_limit:.2}** (target at most {TARGET_OF_LIMIT}: {})\n",
        count[0],
        (range.1 - range.0).whole_days(),
        rounds_run,
        row(0, ours_t),
        row(1, raw_t),
        row(2, req_t),
        pages.sizes().0 as f64 / 1e6,
        pages.sizes().1 as f64 / 1e6,
        pages.sizes().2 as f64 / 1e6,
        limit.as_secs_f64(),
        bytes[0] as f64 / 1e6,
        pages.bodies.len(),
        chain.as_secs_f64(),
        ours_t.as_secs_f64() / chain.as_secs_f64(),
        verdict(of_raw <= TARGET_OF_RAW),
        verdict(of_req <= TARGET_OF_REQWEST),
        verdict(of_limit <= TARGET_OF_LIMIT),
    )
}

#[inline(never)]
fn ours(client: &trading_client::Client, (start, end): Range) -> (u64, f64) {
    let query = trading_client::history::ListBars::new("AAPL", Timeframe::Minute)
        .start(start)
        .end(end)
        .limit(PAGE);
    let (mut n, mut sum) = (0u64, trading_client::Decimal::ZERO);
    for bar in client.history().iter_from(&query) {
        n += 1;
        sum += bar.unwrap().c;
    }
    (n, sum.to_string().parse().unwrap())
}

/// A page at a time through `get(url, authorization)`, decoded by `serde_json`.
fn raw(
    base: &str,
    key: &str,
    (start, end): Range,
    mut get: impl FnMut(&str, &str) -> Vec<u8>,
) -> (u64, f64) {
    let (start, end) = (
        start.format(&Rfc3339).unwrap(),
        end.format(&Rfc3339).unwrap(),
    );
    let auth = format!("Bearer {key}");
    let (mut token, mut n, mut sum) = (None::<String>, 0u64, 0.0);
    loop {
        let mut url = format!(
            "{base}/v1/history?symbol=AAPL&timeframe=1Min&start={start}&end={end}&limit={PAGE}"
        );
        if let Some(t) = &token {
            url.push_str(&format!("&page_token={t}"));
        }
        let page: RawPage = serde_json::from_slice(&get(&url, &auth)).unwrap();
        for bar in &page.bars {
            n += 1;
            sum += bar.c;
        }
        match page.next_page_token {
            Some(t) if !t.is_empty() => token = Some(t),
            _ => return (n, sum),
        }
    }
}

fn calls_section(link: &Link, base: &str, key: &str, direct: &str) -> String {
    let plain = trading_client::Client::new(direct, key).unwrap();
    plain.clock().get().unwrap();
    let started = Instant::now();
    for _ in 0..100 {
        plain.clock().get().unwrap();
    }
    let loopback = started.elapsed() / 100;
    let client = trading_client::Client::new(base, key).unwrap();
    client.clock().get().unwrap();
    let opened = link.connections();
    let started = Instant::now();
    for _ in 0..100 {
        client.clock().get().unwrap();
    }
    let took = started.elapsed();
    let more = link.connections() - opened;
    let ratio = took.as_secs_f64() / (link.shape().rtt * 100).as_secs_f64();
    format!(
        "### 100 sequential calls\n\n`clock().get()` 100 times on one client, after one call that \
opened its connection: {:.2} s against 100 round trips' {:.2} s: **{ratio:.3}** (target at most \
{TARGET_CALLS}: {}); {more} new connections. The same call on loopback, without the link, \
takes {:.2} ms (the sandbox's answer and the client).\n",
        took.as_secs_f64(),
        (link.shape().rtt * 100).as_secs_f64(),
        verdict(ratio <= TARGET_CALLS && more == 0),
        loopback.as_secs_f64() * 1e3,
    )
}

/// A TLS server for 127.0.0.1 that answers `{}` to each request and closes.
fn tls_server() -> (SocketAddr, String) {
    let (root, config) = service_clients_testkit::tls::local_root_and_server();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || {
                let conn = rustls::ServerConnection::new(config).unwrap();
                let mut tls = BufReader::new(rustls::StreamOwned::new(conn, stream));
                let mut line = String::new();
                loop {
                    line.clear();
                    match tls.read_line(&mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) if line == "\r\n" => break,
                        Ok(_) => {}
                    }
                }
                let tls = tls.get_mut();
                let _ = tls.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
                );
                let _ = tls.flush();
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    (addr, root)
}

fn tls_section(shape: Shape) -> String {
    let (addr, ca) = tls_server();
    let link = Link::start(addr, shape);
    let url = format!("https://{}", link.addr());
    let rtts = |d: Duration| d.as_secs_f64() / shape.rtt.as_secs_f64();
    let client = core_http::HttpClient::builder()
        .base_url(&url)
        .root_certificates_pem(ca.as_bytes())
        .unwrap()
        .build()
        .unwrap();
    let started = Instant::now();
    let _: serde_json::Value = client.raw().get("/v1/x", &[]).unwrap();
    let cold = started.elapsed();
    // The server closed: the next call opens a new connection, resuming the session.
    let started = Instant::now();
    let _: serde_json::Value = client.raw().get("/v1/x", &[]).unwrap();
    let resumed = started.elapsed();
    let dir = std::env::temp_dir().join(format!("link-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, &ca).unwrap();
    let curl = std::process::Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{time_total}", "--cacert"])
        .arg(&ca_file)
        .arg(format!("{url}/v1/x"))
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    let curl = match curl {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<f64>()
            .map(|s| {
                format!(
                    "{:.0} ms, {:.1} round trips",
                    s * 1e3,
                    s / shape.rtt.as_secs_f64()
                )
            })
            .unwrap_or_else(|_| "unreadable".into()),
        Ok(out) => format!("failed: {}", String::from_utf8_lossy(&out.stderr).trim()),
        Err(e) => format!("not run ({e})"),
    };
    format!(
        "### A cold call over TLS\n\nA local rustls server (TLS 1.3) behind the link, answering each request \
and closing. The client's first call: {:.0} ms, **{:.1} round trips** (TCP, TLS 1.3's one, the \
request); curl's first call: {curl}. The client's next call on a new connection resumes the \
session from its one TLS configuration's cache (calls and streams alike): {:.0} ms, **{:.1} round \
trips**. Under TLS 1.3 a resumed handshake still takes its round trip (the client sends no 0-RTT \
early data, which a server may replay): resumption saves the certificate's checks, not a round \
trip. Under TLS 1.2 it saves one (two round trips to one).\n",
        cold.as_secs_f64() * 1e3,
        rtts(cold),
        resumed.as_secs_f64() * 1e3,
        rtts(resumed),
    )
}

fn download_section(shape: Shape) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut body = b"%PDF-1.7\n".to_vec();
        body.resize(DOWNLOAD - 6, b'x');
        body.extend_from_slice(b"%%EOF\n");
        for mut stream in listener.incoming().flatten() {
            let mut head = [0u8; 4096];
            let _ = stream.read(&mut head);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    let link = Link::start(addr, shape);
    let client = esign_client::Client::new(link.url(), "sk_bench").unwrap();
    let started = Instant::now();
    let done = client
        .documents()
        .download_to("doc_1", &mut std::io::sink())
        .unwrap();
    let took = started.elapsed();
    let limit = shape.transfer(done.bytes) + shape.rtt * 2;
    format!(
        "### A download, for the record\n\nA {} MiB PDF (uncompressed: PDFs are) through \
`documents().download_to(..)` from a local server behind the link: {:.2} s against the link's \
{:.2} s (the bytes at the rate, plus opening the connection and the request's round trip): \
{:.3}. (The loopback section's 1 GiB would take three minutes on this link.)\n",
        DOWNLOAD >> 20,
        took.as_secs_f64(),
        limit.as_secs_f64(),
        took.as_secs_f64() / limit.as_secs_f64(),
    )
}

/// The quotes stream from a running sandbox behind the link: how long to the first
/// quote, in round trips, and how many arrive.
fn quotes_section(shape: Shape) -> String {
    let sandbox = sandbox::Sandbox::builder()
        .market_hours(false)
        .start()
        .unwrap();
    let (link, base) = behind(&sandbox, shape);
    let client = trading_client::Client::new(&base, sandbox.api_key()).unwrap();
    let started = Instant::now();
    let mut stream = client.stream().unwrap();
    stream.subscribe_quotes(&["AAPL"]).unwrap();
    let mut first = None;
    let mut quotes = 0u64;
    let window = Duration::from_secs(5);
    while started.elapsed() < window + Duration::from_secs(2) {
        match stream.next_timeout(Duration::from_millis(200)) {
            Some(Ok(trading_client::stream::Event::Quote(_))) => {
                first.get_or_insert(started.elapsed());
                quotes += 1;
            }
            Some(Ok(_)) | None => {}
            Some(Err(e)) => panic!("{e}"),
        }
        if first.is_some_and(|f| started.elapsed() >= f + window) {
            break;
        }
    }
    let first = first.expect("a quote");
    format!(
        "### The quotes stream, for the record\n\n`stream()` and `subscribe_quotes([\"AAPL\"])` on a \
running sandbox behind the link: the first quote {:.0} ms after the call ({:.1} round trips: \
TCP, the upgrade, the subscription), then {quotes} quotes in {}s ({:.1} a second, the \
sandbox's pace) over {} connection.\n",
        first.as_secs_f64() * 1e3,
        first.as_secs_f64() / shape.rtt.as_secs_f64(),
        window.as_secs(),
        quotes as f64 / window.as_secs_f64(),
        link.connections(),
    )
}
