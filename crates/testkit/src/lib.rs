//! Test support shared by the client crates (a dev-dependency only).
//!
//! A fixture file (`tests/fixtures/<name>.json`) holds one exchange: the request and the
//! server's answer. [`exchange`] serves the answer with mockito over a real socket, lets
//! the test make its call with a client pointed at it, and returns what the client sent
//! (normalised for a snapshot) and what it made of the answer, an error being reduced
//! to an [`ErrorSummary`]. Generated fixtures (recorded from the sandbox) must also be
//! what the client sends: the path and body are compared with the recording.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test support: a panic is a failure

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use core_http::{Error, ErrorKind};

pub mod arb;
pub mod connect_proxy;
pub mod doc;
pub mod hostile;
pub mod hostile_ws;
pub mod link;
pub mod logs;
pub mod tls;
use serde_json::{Value, json};

/// The API key the clients under test are built with; it must never reach a snapshot.
pub const FIXTURE_KEY: &str = "sk_test_fixture_key";

/// A service client for a fixture server at `url`: [`FIXTURE_KEY`] and no retries, so
/// one fixture answers one request. Pass it to [`exchange`] as
/// `testkit::client::<Client>`.
pub fn client<C: core_http::service::ServiceClient>(url: &str) -> C {
    core_http::ClientBuilder::<C>::new()
        .base_url(url)
        .api_key(FIXTURE_KEY)
        .max_retries(0)
        .build()
        .unwrap()
}

/// The webhook secret event fixtures are signed with.
pub const WEBHOOK_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// One fixture file.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// Recorded from the sandbox (it starts with `_generated`), not hand-written.
    pub generated: bool,
    /// `{"method", "path", "body"?, "headers"?}`.
    pub request: Value,
    /// `{"status", "headers"?, "body"}`.
    pub response: Value,
}

/// Loads `<dir>/<name>.json`, panicking with the path on any problem.
pub fn load(dir: &str, name: &str) -> Fixture {
    let path = format!("{dir}/{name}.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    Fixture {
        generated: value.get("_generated").is_some(),
        request: value["request"].clone(),
        response: value["response"].clone(),
    }
}

impl Fixture {
    /// The last segment of the recorded path (an id the test must ask for).
    pub fn path_id(&self) -> String {
        let path = self.request["path"].as_str().unwrap_or_default();
        let path = path.split('?').next().unwrap_or_default();
        path.rsplit('/').next().unwrap_or_default().to_owned()
    }
}

/// What an error looks like to a caller, for snapshots.
#[derive(Debug)]
#[allow(dead_code)] // read through Debug
pub struct ErrorSummary {
    display: String,
    kind: ErrorKind,
    status: Option<u16>,
    code: Option<String>,
    message: Option<String>,
    request_id: Option<String>,
    retry_after: Option<Duration>,
    may_have_been_processed: bool,
}

/// Reduces an error to what a caller can see of it.
pub fn summary(error: &Error) -> ErrorSummary {
    ErrorSummary {
        display: error.to_string(),
        kind: error.kind(),
        status: error.status(),
        code: error.api().and_then(|a| a.code.clone()),
        message: error.api().map(|a| a.message.clone()),
        request_id: error.request_id().map(str::to_owned),
        retry_after: error.api().and_then(|a| a.retry_after),
        may_have_been_processed: error.may_have_been_processed(),
    }
}

/// Serves fixture `name` from `dir`, builds a client for the mock server's URL with
/// `build`, makes `call`, and returns the request the client sent (method, path and
/// query, sorted headers with `authorization` and `user-agent` redacted, body) and the
/// decoded value or the error's summary. Panics unless exactly one request was made, if
/// the key leaked, or if a generated fixture's path or body differs from what was sent.
pub fn exchange<C, T>(
    dir: &str,
    name: &str,
    build: impl FnOnce(&str) -> C,
    call: impl FnOnce(&C) -> core_http::Result<T>,
) -> (Value, Result<T, ErrorSummary>) {
    let fixture = load(dir, name);
    let mut server = mockito::Server::new();
    let sent: Arc<Mutex<Option<Value>>> = Arc::default();
    let recorder = sent.clone();
    let response = &fixture.response;
    let mut mock = server
        .mock(
            fixture.request["method"].as_str().unwrap(),
            mockito::Matcher::Any,
        )
        .match_request(move |request| {
            let mut headers: Vec<(String, String)> = request
                .headers()
                .iter()
                .filter(|(name, _)| name.as_str() != "host")
                .map(|(name, value)| {
                    let value = match name.as_str() {
                        "authorization" => "[redacted]".to_owned(),
                        "user-agent" => "[user-agent]".to_owned(),
                        "idempotency-key" => "[idempotency-key]".to_owned(),
                        _ => value.to_str().unwrap_or("[binary]").to_owned(),
                    };
                    (name.as_str().to_owned(), value)
                })
                .collect();
            headers.sort();
            let body = request.utf8_lossy_body().unwrap_or_default().into_owned();
            let body = if body.is_empty() {
                Value::Null
            } else {
                serde_json::from_str(&body).unwrap_or(Value::String(body))
            };
            *recorder.lock().unwrap() = Some(json!({
                "method": request.method(),
                "path": request.path_and_query(),
                "headers": headers,
                "body": body,
            }));
            true
        })
        .with_status(response["status"].as_u64().unwrap() as usize);
    if let Some(headers) = response["headers"].as_object() {
        for (name, value) in headers {
            mock = mock.with_header(name, value.as_str().unwrap());
        }
    }
    mock = match &response["body"] {
        Value::Null => mock,
        Value::String(text) => mock.with_body(text),
        json => mock.with_body(json.to_string()),
    };
    let mock = mock.expect(1).create();

    let client = build(&server.url());
    let result = call(&client);
    mock.assert();

    let sent = sent
        .lock()
        .unwrap()
        .clone()
        .expect("the client sent a request");
    assert!(
        !sent.to_string().contains(FIXTURE_KEY),
        "the key leaked into the snapshot"
    );
    if fixture.generated {
        // The client must send what the sandbox was recorded answering.
        assert_eq!(sent["path"], fixture.request["path"], "{name}: path");
        if let Some(body) = fixture.request.get("body") {
            assert_eq!(&sent["body"], body, "{name}: body");
        }
    }
    (sent, result.map_err(|e| summary(&e)))
}

/// An event fixture's delivery, signed now with [`WEBHOOK_SECRET`]: the body, the three
/// Standard Webhooks headers, and the instant to verify at.
pub fn signed_delivery(dir: &str, name: &str) -> (String, Vec<(String, String)>, SystemTime) {
    let fixture = load(dir, name);
    let body = fixture.request["body"].to_string();
    let id = fixture.request["headers"]["webhook-id"]
        .as_str()
        .unwrap()
        .to_owned();
    let now = SystemTime::now();
    let ts = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let signature = core_webhooks::sign(WEBHOOK_SECRET, &id, ts, body.as_bytes()).unwrap();
    let headers = vec![
        ("webhook-id".to_owned(), id),
        ("webhook-timestamp".to_owned(), ts.to_string()),
        ("webhook-signature".to_owned(), signature),
    ];
    (body, headers, now)
}

/// Helpers shared by the benchmarks.
pub mod bench {
    use std::time::Duration;

    /// The value after `--name` on the command line, if given.
    pub fn option(name: &str) -> Option<String> {
        let args: Vec<String> = std::env::args().collect();
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    }

    /// Whether `--name` is on the command line.
    pub fn flag(name: &str) -> bool {
        std::env::args().any(|a| a == name)
    }

    /// Each round's own ratio of `theirs` over `ours` (the two sides' times, round by
    /// round, in the same order), as a benchmark judges them: a round's sides ran back to
    /// back, on the same moment of the machine. One round that a busy moment fell on
    /// moves the middle by at most one place, where it can move a side's own median (or
    /// a pooled tail) against the other side's by the whole of that moment.
    ///
    /// ```
    /// use std::time::Duration;
    /// let ms = |v: &[u64]| v.iter().map(|&m| Duration::from_millis(m)).collect::<Vec<_>>();
    /// // The client took 1, 2 and 1 s; the other side 1.25, 1.5 and 0.5 s.
    /// let rounds = service_clients_testkit::bench::paired(&ms(&[1000, 2000, 1000]), &ms(&[1250, 1500, 500]));
    /// assert_eq!(rounds.middle, 0.75);
    /// assert_eq!((rounds.low, rounds.high), (0.5, 1.25));
    /// assert_eq!(rounds.shown(), "1.25, 0.75, 0.50");
    /// ```
    ///
    /// Panics when there are no rounds.
    pub fn paired(ours: &[Duration], theirs: &[Duration]) -> Paired {
        Paired::of(
            ours.iter()
                .zip(theirs)
                .map(|(ours, theirs)| theirs.as_secs_f64() / ours.as_secs_f64())
                .collect(),
        )
    }

    /// The rounds' own figures: their ratios ([`paired`]), or any figure each round
    /// gives, such as a difference of two sides' p99s ([`Paired::of`]).
    #[derive(Debug, Clone)]
    pub struct Paired {
        /// The middle one (the upper of the two middle ones for an even count): the
        /// figure judged.
        pub middle: f64,
        /// The lowest.
        pub low: f64,
        /// The highest.
        pub high: f64,
        /// Each round's, in turn.
        pub each: Vec<f64>,
    }

    impl Paired {
        /// The rounds' own figures (a ratio, or a difference such as two sides' p99s),
        /// each round's in turn: their middle, lowest and highest.
        ///
        /// ```
        /// let rounds = service_clients_testkit::bench::Paired::of(vec![9.0, -3.0, 25.0, 4.0]);
        /// assert_eq!((rounds.middle, rounds.low, rounds.high), (9.0, -3.0, 25.0));
        /// ```
        ///
        /// Panics when there are no rounds.
        pub fn of(each: Vec<f64>) -> Paired {
            let mut sorted = each.clone();
            sorted.sort_by(f64::total_cmp);
            Paired {
                middle: sorted[sorted.len() / 2],
                low: sorted[0],
                high: sorted[sorted.len() - 1],
                each,
            }
        }

        /// Each round's figure, in turn, to two decimals.
        pub fn shown(&self) -> String {
            self.each
                .iter()
                .map(|r| format!("{r:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    /// The machine's steal time so far, in the kernel's ticks (1/100 s): how long the
    /// hypervisor ran something else while this machine's processors had work
    /// (`/proc/stat`, all processors together). `None` where there is no such file or
    /// it reads otherwise than expected.
    ///
    /// A measure whose rounds are a fraction of a second long (a latency tail) moves
    /// with these moments, which no code of ours causes or can avoid: a benchmark reads
    /// this before and after a round to know whether one fell on it.
    pub fn steal_ticks() -> Option<u64> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        steal_in(&stat)
    }

    /// The steal field of the first (`cpu`) line of a `/proc/stat` text: user, nice,
    /// system, idle, iowait, irq, softirq, then steal.
    ///
    /// ```
    /// let stat = "cpu  2001249 0 314629 2108851 21881 0 24603 69042 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
    /// assert_eq!(service_clients_testkit::bench::steal_in(stat), Some(69042));
    /// assert_eq!(service_clients_testkit::bench::steal_in("cpu  1 2 3\n"), None);
    /// assert_eq!(service_clients_testkit::bench::steal_in("intr 1 2 3 4 5 6 7 8 9\n"), None);
    /// ```
    pub fn steal_in(stat: &str) -> Option<u64> {
        let mut fields = stat.lines().next()?.split_whitespace();
        if fields.next()? != "cpu" {
            return None;
        }
        fields.nth(7)?.parse().ok()
    }

    /// Runs this program again with `args` (a server side measured apart from the
    /// client side), and returns it with the words of the first line it printed. It
    /// runs until its standard input closes (drop `child.stdin`, then wait).
    pub fn start_child(args: &[&str]) -> (std::process::Child, Vec<String>) {
        use std::io::BufRead as _;
        let exe = std::env::current_exe().expect("this program's path");
        let mut child = std::process::Command::new(exe)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the child starts");
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = std::io::BufReader::new(out).read_line(&mut line);
        }
        let words = line.split_whitespace().map(str::to_owned).collect();
        (child, words)
    }

    /// In the child of [`start_child`]: prints `line` for the parent, then waits until
    /// the parent closes its standard input.
    pub fn serve_until_stdin_closes(line: &str) {
        use std::io::{Read as _, Write as _};
        println!("{line}");
        let _ = std::io::stdout().flush();
        let mut rest = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut rest);
    }

    /// A memory figure of this process from `/proc/self/status` (`VmRSS`, `VmHWM`...), in
    /// MiB; 0 where there is no such file.
    pub fn memory_mib(field: &str) -> f64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(0.0, |kib| kib / 1024.0)
    }

    /// Resets this process's resident high-water mark (`VmHWM`) to its current resident
    /// size, so the next reading is the peak of what follows.
    pub fn reset_peak() {
        let _ = std::fs::write("/proc/self/clear_refs", "5");
    }
}

/// A WebSocket server replaying a recorded transcript.
pub mod ws {
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use serde_json::Value;

    /// Serves `frames` on one WebSocket connection: a frame `is_ack` says answers the
    /// client waits for the client's next message; every other frame follows at once.
    /// Returns the server's URL (`ws://127.0.0.1:port/stream`), and what the client sent:
    /// `"<path> auth=<authorization header>"` first, then its messages.
    pub fn replay(
        frames: Vec<Value>,
        is_ack: fn(&Value) -> bool,
    ) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a local port");
        let url = format!(
            "ws://{}/stream",
            listener.local_addr().expect("a local address")
        );
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let record = seen.clone();
        std::thread::spawn(move || {
            let Ok((socket, _)) = listener.accept() else {
                return;
            };
            let _ = socket.set_read_timeout(Some(Duration::from_secs(20)));
            let header = record.clone();
            #[allow(clippy::result_large_err)] // tungstenite's callback type
            let callback =
                move |request: &tungstenite::handshake::server::Request,
                      response: tungstenite::handshake::server::Response| {
                    let auth = request
                        .headers()
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_owned();
                    if let Ok(mut h) = header.lock() {
                        h.push(format!("{} auth={auth}", request.uri()));
                    }
                    Ok(response)
                };
            let Ok(mut ws) = tungstenite::accept_hdr(socket, callback) else {
                return;
            };
            let mut frames = frames.into_iter().peekable();
            loop {
                let message = match ws.read() {
                    Ok(tungstenite::Message::Text(t)) => t.as_str().to_owned(),
                    Ok(tungstenite::Message::Close(_)) | Err(_) => return,
                    Ok(_) => continue,
                };
                if let Ok(mut r) = record.lock() {
                    r.push(message);
                }
                // The acknowledgement, then everything up to the next one.
                let mut first = true;
                while let Some(frame) = frames.peek() {
                    if !first && is_ack(frame) {
                        break;
                    }
                    first = false;
                    let Some(frame) = frames.next() else { break };
                    if ws
                        .send(tungstenite::Message::text(frame.to_string()))
                        .is_err()
                    {
                        return;
                    }
                }
            }
        });
        (url, seen)
    }
}

/// Time a test moves itself: a client's clock and sleeper at once, so that a wait's
/// pauses take no real time (a sleep moves the clock on by as much) and a test can read
/// when, on that clock, each pause ended.
#[derive(Debug)]
pub struct FakeTime {
    start: std::time::Instant,
    moved: Mutex<Duration>,
}

impl FakeTime {
    /// A clock at the real now, moved only by sleeps.
    pub fn new() -> Arc<FakeTime> {
        Arc::new(FakeTime {
            start: std::time::Instant::now(),
            moved: Mutex::new(Duration::ZERO),
        })
    }

    /// How far the sleeps have moved the clock.
    pub fn elapsed(&self) -> Duration {
        *self.moved.lock().unwrap()
    }
}

impl core_http::config::Clock for FakeTime {
    fn now(&self) -> std::time::Instant {
        self.start + self.elapsed()
    }
}

impl core_http::config::Sleeper for FakeTime {
    fn sleep(&self, duration: Duration) {
        *self.moved.lock().unwrap() += duration;
    }
}
