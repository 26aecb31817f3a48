//! A local, stateful, deterministic emulator of the services, for examples, tests and
//! the demo: no key, no network.
//!
//! ```
//! let sandbox = service_clients_sandbox::Sandbox::start()?;
//! println!("social service at {} with key {}", sandbox.social().url(), sandbox.api_key());
//! # assert!(sandbox.social().url().ends_with("/social"));
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! - Every service lives under its own prefix of one address (`/social`, `/projects`,
//!   `/vision`, `/esign`, `/trading`, `/worlds`), in its own folder; see [`Service`] and
//!   the handles ([`Sandbox::social`], [`Sandbox::esign`], ...).
//! - Requests need `Authorization: Bearer <key>` (for e-signature also an access token
//!   from `/esign/oauth/token`, client [`ESIGN_CLIENT_ID`] / [`ESIGN_CLIENT_SECRET`],
//!   valid [`TOKEN_LIFETIME_SECS`] sandbox seconds). [`DEFAULT_KEY`] is on each
//!   service's most generous plan; the other [`DEFAULT_KEYS`] select plans by name. Each
//!   key is a separate tenant. Limits are token buckets on the sandbox clock, answered
//!   with 429, `Retry-After` and `X-RateLimit-Limit/Remaining/Reset`.
//! - Every answer carries an `X-Request-Id`; errors are `{"error": {"code", "message"}}`.
//! - Control endpoints under `/_sandbox/` (no key): the clock, webhook receivers and
//!   deliveries, the event log, faults ([`Fault`]), open streams, reset, and each
//!   service's own; the crate README lists them as HTTP, with a curl line each. The same
//!   operations are methods of [`Sandbox`] and its handles for in-process use.
//! - Deterministic: ids come from a seeded generator; with
//!   [`SandboxBuilder::frozen_at`] the clock moves only when advanced, so recorded
//!   answers are identical run after run. By default the clock starts at the real time
//!   and runs with it, like a real service.
//! - Webhook deliveries are signed with the Standard Webhooks scheme by the sandbox's
//!   own code, posted by a background thread, and retried up to 6 attempts (250 ms
//!   doubling) until the receiver answers 2xx.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// Handlers return an early `Response` as their error; boxing it would only add noise.
#![allow(clippy::result_large_err)]

mod answer;
mod clock;
mod control;
mod delivery;
mod faults;
mod http;
mod ids;
mod index;
mod outbox;
mod plans;
mod registry;
mod server;
mod service;
mod services;
mod sessions;
mod signing;
mod state;
mod streams;
mod webhooks;

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use axum::Router;
use time::OffsetDateTime;
use tokio::sync::oneshot;

pub use faults::{Fault, FaultAction};
pub use plans::{DEFAULT_KEY, DEFAULT_KEYS};
pub use service::Service;
pub use services::esign::{
    AUTO_SIGN_AFTER_SECS, ESIGN_CLIENT_ID, ESIGN_CLIENT_SECRET, Esign, MAX_DOCUMENT_BYTES,
    TOKEN_LIFETIME_SECS,
};
pub use services::projects::{ENVIRONMENTS, Projects};
pub use services::social::{PLATFORMS, POST_LIMITS, Social};
pub use services::trading::Trading;
pub use services::vision::{FACE_ATTRIBUTES, MODELS, TAXONOMIES, Vision};
pub use services::worlds::Worlds;
pub use webhooks::{Delivery, DeliveryStatus, EventRecord, MAX_ATTEMPTS, WebhookReceiver};

use state::{Settings, Shared};

/// How a sandbox starts. Defaults: 127.0.0.1, port 0 (any free port), seed 1, a running
/// clock starting now, the [`DEFAULT_KEYS`], e-signature signers who sign on their own
/// [`AUTO_SIGN_AFTER_SECS`] after a document is sent.
#[derive(Debug, Clone)]
pub struct SandboxBuilder {
    host: std::net::IpAddr,
    port: u16,
    sign_after: Duration,
    market_hours: bool,
    seed: u64,
    start: Option<OffsetDateTime>,
    running: bool,
    keys: Vec<(String, String)>,
}

impl Default for SandboxBuilder {
    fn default() -> Self {
        SandboxBuilder {
            host: std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
            port: 0,
            sign_after: Duration::from_secs(AUTO_SIGN_AFTER_SECS.unsigned_abs()),
            market_hours: true,
            seed: 1,
            start: None,
            running: true,
            keys: DEFAULT_KEYS
                .iter()
                .map(|(k, p)| ((*k).to_owned(), (*p).to_owned()))
                .collect(),
        }
    }
}

impl SandboxBuilder {
    /// The address to listen on. Defaults to 127.0.0.1, this machine only. Another
    /// address (`0.0.0.0` in a container or as a CI service) lets anyone who reaches it
    /// in: the sandbox's keys are public and it has no real security.
    pub fn host(mut self, host: std::net::IpAddr) -> Self {
        self.host = host;
        self
    }

    /// How long after a document is sent its signers sign on their own, in turn
    /// (sandbox time). Defaults to a day ([`AUTO_SIGN_AFTER_SECS`]); zero signs for them
    /// at the next reading, as a script's example wants.
    pub fn sign_after(mut self, after: Duration) -> Self {
        self.sign_after = after;
        self
    }

    /// Whether trading's paper market keeps its calendar: orders fill (and stops
    /// trigger) only while it is open, weekdays 14:30-21:00 UTC less holidays, as the
    /// service's do; an order marked `extended_hours` fills at any hour. Defaults to
    /// `true`. `false` gives a market that never closes, for a demo or a test that
    /// wants fills whatever the hour its clock shows.
    pub fn market_hours(mut self, keep: bool) -> Self {
        self.market_hours = keep;
        self
    }

    /// The port to listen on. Defaults to 0: any free port.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The seed of the id generator. Defaults to 1.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Stops the clock at `start`: it then moves only when advanced. Defaults to a
    /// clock that starts at the real time and runs.
    pub fn frozen_at(mut self, start: OffsetDateTime) -> Self {
        self.start = Some(start);
        self.running = false;
        self
    }

    /// Adds (or replaces) an API key on the named plan (`starter`, `pro`, ...; a name a
    /// service does not know gets its most generous plan). Defaults to [`DEFAULT_KEYS`].
    pub fn key(mut self, key: impl Into<String>, plan: impl Into<String>) -> Self {
        let key = key.into();
        self.keys.retain(|(k, _)| *k != key);
        self.keys.push((key, plan.into()));
        self
    }

    /// Binds the port and starts serving on a background thread.
    pub fn start(self) -> std::io::Result<Sandbox> {
        let listener = TcpListener::bind((self.host, self.port)).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "cannot listen on {}: {e}",
                    SocketAddr::new(self.host, self.port)
                ),
            )
        })?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let start = self.start.unwrap_or_else(|| {
            let now = OffsetDateTime::now_utc();
            now.replace_nanosecond(0).unwrap_or(now)
        });
        let settings = Settings {
            seed: self.seed,
            start,
            running: self.running,
            keys: self.keys,
            sign_after_secs: i64::try_from(self.sign_after.as_secs()).unwrap_or(i64::MAX),
            root: format!("http://{addr}"),
            market_hours: self.market_hours,
        };
        let (worker_tx, worker_rx) = std::sync::mpsc::channel();
        let shared = Arc::new(Shared::new(settings, worker_tx, services::tick));
        delivery::spawn_worker(worker_rx, Arc::downgrade(&shared))?;

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("sandbox")
            .enable_all()
            .build()?;
        let app = app(shared.clone());
        let panics = Arc::new(AtomicU64::new(0));
        let counted = panics.clone();
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let ticking = shared.clone();
        let running = self.running;
        let thread = std::thread::Builder::new()
            .name("sandbox-server".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    if running {
                        tokio::spawn(async move {
                            let mut every = tokio::time::interval(Duration::from_millis(250));
                            loop {
                                every.tick().await;
                                ticking.with_world(|_| ());
                            }
                        });
                    }
                    server::serve(listener, app, counted, shutdown_rx).await;
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            })?;
        Ok(Sandbox {
            addr,
            root: format!("http://{addr}"),
            shared,
            panics,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        })
    }
}

fn app(shared: Arc<Shared>) -> Router {
    let mut gated = Router::new();
    let mut public = Router::new();
    for service in Service::ALL {
        let prefix = format!("/{}", service.prefix());
        gated = gated.nest(&prefix, crate::services::def(service).router());
        public = public.nest(&prefix, crate::services::def(service).public_router());
    }
    let gated = gated
        .fallback(server::not_found)
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            server::gate,
        ));
    Router::new()
        .route("/", axum::routing::get(index_route))
        .nest(
            "/_sandbox",
            control::router().merge(control::service_routers()),
        )
        .merge(public)
        .merge(gated)
        .layer(server::compression())
        .with_state(shared)
}

/// `GET /`: the services, their base URLs and plans ([`index::index`]).
async fn index_route(
    axum::extract::State(shared): axum::extract::State<Arc<Shared>>,
) -> axum::response::Response {
    let answer = shared.with_world(|w| {
        index::index(
            &w.settings.root,
            &w.settings.keys,
            w.settings.sign_after_secs,
        )
    });
    http::json(axum::http::StatusCode::OK, &answer)
}

/// A running sandbox. Dropping it stops the server and the webhook worker.
pub struct Sandbox {
    addr: SocketAddr,
    root: String,
    shared: Arc<Shared>,
    panics: Arc<AtomicU64>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("url", &self.root)
            .finish_non_exhaustive()
    }
}

impl Sandbox {
    /// Starts a sandbox with the defaults of [`SandboxBuilder`].
    pub fn start() -> std::io::Result<Sandbox> {
        SandboxBuilder::default().start()
    }

    /// A builder to choose the port, seed, clock and keys.
    pub fn builder() -> SandboxBuilder {
        SandboxBuilder::default()
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The root URL, e.g. `http://127.0.0.1:41234` (control endpoints are under
    /// `/_sandbox`).
    pub fn url(&self) -> &str {
        &self.root
    }

    /// The base URL a service's client should use.
    pub fn service_url(&self, service: Service) -> String {
        format!("{}/{}", self.root, service.prefix())
    }

    /// What the program prints when it starts: each service's base URL and plans, and
    /// the `export` lines that point a client at it.
    pub fn banner(&self) -> String {
        self.shared.with_world(|w| {
            index::banner(
                &w.settings.root,
                &w.settings.keys,
                w.settings.sign_after_secs,
            )
        })
    }

    /// One line on how to try `service` against this sandbox.
    pub fn hint(&self, service: Service) -> String {
        let base = self.service_url(service);
        let env = service.prefix().to_ascii_uppercase();
        format!(
            "{env}_BASE_URL={base} {env}_API_KEY={} {}",
            self.api_key(),
            crate::services::def(service).hint()
        )
    }

    /// Closes every open stream (WebSocket) connection, or those of one service, without
    /// a close frame, as a network failure would; returns how many were closed.
    pub fn drop_streams(&self, service: Option<Service>) -> usize {
        self.shared.streams.drop_all(service)
    }

    /// How many stream connections are open (of one service, when given).
    pub fn open_streams(&self, service: Option<Service>) -> usize {
        self.shared.streams.count(service)
    }

    /// How many requests made a handler panic (each was answered `500 internal_error`,
    /// the connection kept): 0 in a sandbox without bugs, which the fuzz test checks.
    pub fn panics(&self) -> u64 {
        self.panics.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The default API key, on every service's most generous plan.
    pub fn api_key(&self) -> &'static str {
        DEFAULT_KEY
    }

    /// The sandbox clock's current time.
    pub fn now(&self) -> OffsetDateTime {
        self.shared.with_world(|w| w.now())
    }

    /// Moves the clock forward (scheduled posts due by then publish at once) and returns
    /// the new time. The clock never passes 9899-12-31 23:59:59 UTC (so every date the
    /// services compute from it stays within years 0001-9999): a move past that leaves
    /// it where it is.
    pub fn advance(&self, by: Duration) -> OffsetDateTime {
        self.shared.with_world(|w| {
            w.clock.advance(by);
            w.now()
        })
    }

    /// Registers a webhook receiver for every event, with a generated secret.
    pub fn add_webhook(&self, url: &str) -> WebhookReceiver {
        control::register(&self.shared, url.to_owned(), None, Vec::new())
    }

    /// Registers a webhook receiver with a given secret for the given event types (all
    /// when empty).
    pub fn add_webhook_with(&self, url: &str, secret: &str, events: &[&str]) -> WebhookReceiver {
        control::register(
            &self.shared,
            url.to_owned(),
            Some(secret.to_owned()),
            events.iter().map(|e| (*e).to_owned()).collect(),
        )
    }

    /// Injects a fault.
    pub fn inject(&self, fault: Fault) {
        self.shared.with_world(|w| w.faults.add(fault));
    }

    /// Every event emitted so far.
    pub fn events(&self) -> Vec<EventRecord> {
        self.shared.with_world(|w| w.events.clone())
    }

    /// Every webhook delivery so far, with where it stands.
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.shared.with_world(|w| w.deliveries.clone())
    }

    /// Waits until no delivery is pending (or `timeout` passes) and returns them all.
    pub fn wait_for_deliveries(&self, timeout: Duration) -> Vec<Delivery> {
        let deadline = Instant::now() + timeout;
        loop {
            let deliveries = self.deliveries();
            let pending = deliveries
                .iter()
                .any(|d| d.status == DeliveryStatus::Pending);
            if !pending || Instant::now() >= deadline {
                return deliveries;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Forgets all state, as if freshly started.
    pub fn reset(&self) {
        self.shared.with_world(|w| w.reset());
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        self.shared.shutdown_worker();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
