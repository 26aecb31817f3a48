//! Helpers shared by the end-to-end tests and the demo: a local webhook receiver and a
//! sleeper that moves the sandbox clock instead of waiting.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::sync::mpsc::{self, Receiver as Inbox};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use sandbox::{Sandbox, SandboxBuilder};
use time::OffsetDateTime;

/// The instant every end-to-end sandbox starts at, so that no test depends on the date
/// or the hour it runs at: 2026-03-02T09:00:00Z, or the RFC 3339 instant in
/// `E2E_SANDBOX_START` (`cargo xtask test` runs the suite a second time starting just
/// before midnight, where day-boundary mistakes show).
pub fn sandbox_start() -> OffsetDateTime {
    std::env::var("E2E_SANDBOX_START")
        .ok()
        .and_then(|s| {
            OffsetDateTime::parse(&s, &time::format_description::well_known::Rfc3339).ok()
        })
        .unwrap_or(time::macros::datetime!(2026-03-02 09:00 UTC))
}

/// A sandbox builder whose clock is frozen at [`sandbox_start`]: it moves only when a
/// test advances it.
pub fn sandbox_builder() -> SandboxBuilder {
    // The suite's clock starts at 09:00 UTC, and in its second run just before midnight,
    // when the market is closed: its trading tests want fills at those hours, so its
    // market never closes (the calendar's rule has tests of its own).
    Sandbox::builder()
        .frozen_at(sandbox_start())
        .market_hours(false)
}

/// A sandbox started at [`sandbox_start`], its clock frozen.
pub fn sandbox() -> anyhow::Result<Sandbox> {
    Ok(sandbox_builder().start()?)
}

/// One delivery a [`WebhookReceiver`] got.
#[derive(Debug, Clone)]
pub struct Delivered {
    /// The request headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub body: Vec<u8>,
}

/// A tiny HTTP server on 127.0.0.1 that records webhook deliveries. It answers 500 to the
/// first `fail_first` requests (to exercise the sender's retries), then 204.
pub struct WebhookReceiver {
    url: String,
    inbox: Inbox<Delivered>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl WebhookReceiver {
    /// Starts a receiver on a free port.
    pub fn start(fail_first: usize) -> anyhow::Result<WebhookReceiver> {
        let server = Arc::new(
            tiny_http::Server::http("127.0.0.1:0")
                .map_err(|e| anyhow::anyhow!("cannot listen: {e}"))?,
        );
        let port = server
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .ok_or_else(|| anyhow::anyhow!("the receiver has no IP address"))?;
        let (tx, inbox) = mpsc::channel();
        let serving = server.clone();
        let thread = std::thread::spawn(move || {
            let mut failures_left = fail_first;
            for mut request in serving.incoming_requests() {
                let mut body = Vec::new();
                let read = request.as_reader().read_to_end(&mut body);
                let status = if read.is_err() {
                    400
                } else if failures_left > 0 {
                    failures_left -= 1;
                    500
                } else {
                    let headers = request
                        .headers()
                        .iter()
                        .map(|h| {
                            (
                                h.field.as_str().as_str().to_ascii_lowercase(),
                                h.value.as_str().to_owned(),
                            )
                        })
                        .collect();
                    let _ = tx.send(Delivered { headers, body });
                    204
                };
                let _ = request.respond(tiny_http::Response::empty(status));
            }
        });
        Ok(WebhookReceiver {
            url: format!("http://127.0.0.1:{port}/webhooks"),
            inbox,
            server,
            thread: Some(thread),
        })
    }

    /// The URL to register with the sandbox.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The next accepted delivery, waiting up to `timeout`.
    pub fn next(&self, timeout: Duration) -> Option<Delivered> {
        self.inbox.recv_timeout(timeout).ok()
    }

    /// Every accepted delivery until none arrives for `quiet`.
    pub fn drain(&self, quiet: Duration) -> Vec<Delivered> {
        std::iter::from_fn(|| self.next(quiet)).collect()
    }
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A core-http sleeper that advances the sandbox clock instead of sleeping, and records
/// every wait: a client waiting out a 429 then costs no real time.
#[derive(Debug)]
pub struct SandboxSleeper {
    sandbox: Arc<Sandbox>,
    slept: Mutex<Vec<Duration>>,
}

impl SandboxSleeper {
    /// A sleeper for this sandbox.
    pub fn new(sandbox: Arc<Sandbox>) -> Arc<SandboxSleeper> {
        Arc::new(SandboxSleeper {
            sandbox,
            slept: Mutex::default(),
        })
    }

    /// The waits asked for so far.
    pub fn slept(&self) -> Vec<Duration> {
        self.slept.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl core_http::config::Sleeper for SandboxSleeper {
    fn sleep(&self, duration: Duration) {
        if let Ok(mut slept) = self.slept.lock() {
            slept.push(duration);
        }
        self.sandbox.advance(duration);
    }
}

/// A reproducible random sequence (splitmix64), for the soak and the sandbox's fuzzing:
/// the same seed gives the same run.
#[derive(Debug, Clone)]
pub struct SeededRng(pub u64);

impl SeededRng {
    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// An index into a list of `len` items.
    pub fn index(&mut self, len: usize) -> usize {
        usize::try_from(self.below(len as u64)).unwrap_or(0)
    }

    /// `true` `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One of `from` (which must not be empty).
    pub fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.index(from.len())]
    }

    /// A duration from `from` to `to` milliseconds.
    pub fn millis(&mut self, from: u64, to: u64) -> Duration {
        Duration::from_millis(from + self.below(to.saturating_sub(from)))
    }
}

pub mod fixtures;

/// A core-http clock that reads the sandbox clock, so a client-side rate limiter and
/// the sandbox's limits measure the same time.
#[derive(Debug)]
pub struct SandboxClock {
    sandbox: Arc<Sandbox>,
    base: std::time::Instant,
    start: time::OffsetDateTime,
}

impl SandboxClock {
    /// A clock following this sandbox's time from now on.
    pub fn new(sandbox: Arc<Sandbox>) -> Arc<SandboxClock> {
        let start = sandbox.now();
        Arc::new(SandboxClock {
            sandbox,
            base: std::time::Instant::now(),
            start,
        })
    }
}

impl core_http::config::Clock for SandboxClock {
    fn now(&self) -> std::time::Instant {
        let elapsed = self.sandbox.now() - self.start;
        self.base + Duration::try_from(elapsed).unwrap_or_default()
    }
}

/// A client builder for `service` with `key`, whose waits (backoff, `Retry-After`, the
/// client-side rate limit) advance the sandbox clock through a [`SandboxSleeper`] and
/// whose rate limiter reads a [`SandboxClock`]: limits are exercised without real waits.
pub fn sandbox_time_builder<C: core_http::service::ServiceClient>(
    sandbox: &Arc<Sandbox>,
    service: sandbox::Service,
    key: &str,
) -> (core_http::ClientBuilder<C>, Arc<SandboxSleeper>) {
    let sleeper = SandboxSleeper::new(sandbox.clone());
    let builder = core_http::ClientBuilder::<C>::new()
        .base_url(sandbox.service_url(service))
        .api_key(key)
        .sleeper(sleeper.clone())
        .clock(SandboxClock::new(sandbox.clone()));
    (builder, sleeper)
}

/// A social client for `key` on sandbox time (see [`sandbox_time_builder`]).
pub fn social_client_with_sleeper(
    sandbox: &Arc<Sandbox>,
    key: &str,
) -> anyhow::Result<(social_client::Client, Arc<SandboxSleeper>)> {
    let (builder, sleeper) = sandbox_time_builder(sandbox, sandbox::Service::Social, key);
    Ok((builder.build()?, sleeper))
}
