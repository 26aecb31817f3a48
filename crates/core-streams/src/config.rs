//! A stream's settings: [`StreamConfig`] and its [`ReconnectPolicy`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use core_http::config::Backoff;
use core_http::config::Secret;
use core_http::service::Redactor;

/// Where the upgrade's auth header value comes from.
#[derive(Clone)]
pub(crate) enum AuthValue {
    /// Given once.
    Fixed(Secret),
    /// Read on every connection attempt.
    Read(Arc<dyn Fn() -> Result<Secret, String> + Send + Sync>),
}

/// When and how a stream reconnects.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReconnectPolicy {
    /// The delays between attempts. Defaults to [`Backoff::reconnect`] (1 s doubling to
    /// 30 s, full jitter).
    pub backoff: Backoff,
    /// How long a connection must stay up before the delays start over. Defaults to 60 s.
    pub healthy_after: Duration,
    /// The wait after an upgrade refused with 429 or 406. Defaults to 90 s.
    pub cooldown: Duration,
    /// Give up after this many attempts in a row (`None`: never). Defaults to `None`.
    pub max_attempts: Option<u32>,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            backoff: Backoff::reconnect(),
            healthy_after: Duration::from_secs(60),
            cooldown: Duration::from_secs(90),
            max_attempts: None,
        }
    }
}

/// The settings of one stream. Service crates make one from their client
/// (`HttpClient::stream_config`) and adjust it.
#[derive(Clone)]
pub struct StreamConfig {
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) auth: Option<(String, AuthValue)>,

    /// Who is told of connections, losses and reconnects (a client's observer).
    pub(crate) observer: core_http::service::Observers,
    /// How the stream connects: its client's connection stack (its resolver, proxies,
    /// TLS configuration and credential masks, the same as its calls'); without a
    /// client, Mozilla's roots and no proxy.
    pub(crate) dialer: Option<Arc<core_http::net::Dialer>>,
    pub(crate) connect_timeout: Duration,
    pub(crate) tick: Duration,
    pub(crate) ping_after: Duration,
    pub(crate) dead_after: Duration,
    pub(crate) ack_timeout: Duration,
    pub(crate) close_timeout: Duration,
    pub(crate) lossy_capacity: usize,
    pub(crate) lossless_capacity: usize,
    pub(crate) max_message_size: usize,
    pub(crate) max_write_buffer: usize,
    pub(crate) reconnect: ReconnectPolicy,
    pub(crate) stale_after: Vec<(String, Duration)>,
    pub(crate) redact: Redactor,
}

impl fmt::Debug for StreamConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamConfig")
            .field("url", &core_http::service::strip_query(&self.url))
            .field("auth", &self.auth.as_ref().map(|(name, _)| (name, "***")))
            .field("ping_after", &self.ping_after)
            .field("dead_after", &self.dead_after)
            .field("lossy_capacity", &self.lossy_capacity)
            .field("lossless_capacity", &self.lossless_capacity)
            .field("reconnect", &self.reconnect)
            .finish_non_exhaustive()
    }
}

impl StreamConfig {
    /// The defaults for `url` (`wss://`, or `ws://` to a loopback host), with no auth.
    pub fn new(url: impl Into<String>) -> Self {
        StreamConfig {
            url: url.into(),
            headers: Vec::new(),
            auth: None,
            observer: core_http::service::Observers::default(),
            dialer: None,
            connect_timeout: Duration::from_secs(10),
            tick: Duration::from_millis(200),
            ping_after: Duration::from_secs(20),
            dead_after: Duration::from_secs(60),
            ack_timeout: Duration::from_secs(10),
            close_timeout: Duration::from_secs(5),
            lossy_capacity: 10_000,
            lossless_capacity: 10_000,
            max_message_size: 16 * 1024 * 1024,
            max_write_buffer: 4 * 1024 * 1024,
            reconnect: ReconnectPolicy::default(),
            stale_after: Vec::new(),
            redact: Redactor::default(),
        }
    }

    /// The stream's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How the stream connects: its client's stack, else one of its own (Mozilla's
    /// roots, no proxy, no client certificate).
    pub(crate) fn dialer(&self) -> core_http::Result<Arc<core_http::net::Dialer>> {
        match &self.dialer {
            Some(dialer) => Ok(dialer.clone()),
            None => Ok(Arc::new(core_http::net::Dialer::standalone()?)),
        }
    }

    /// Sends `name: value` on the upgrade request (for example the `User-Agent`).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Tells `observer` of the stream's connections, losses, reconnects and drops (a
    /// client's [`stream_config`](crate::stream_config) has the client's).
    pub fn observer(mut self, observer: impl core_http::config::Observer) -> Self {
        self.observer = core_http::service::Observers::new(observer);
        self
    }

    /// Authenticates the upgrade with this header. Defaults to none.
    pub fn auth(mut self, name: impl Into<String>, value: Secret) -> Self {
        self.auth = Some((name.into(), AuthValue::Fixed(value)));
        self
    }

    /// Authenticates the upgrade with this header, its value read by `read` on every
    /// connection attempt: a key that rotates or a token that is refreshed is used as
    /// it is at each reconnect. An `Err` from `read` is a failed attempt (retried with
    /// the backoff); its text must hold no secret.
    pub fn auth_with(
        mut self,
        name: impl Into<String>,
        read: impl Fn() -> Result<Secret, String> + Send + Sync + 'static,
    ) -> Self {
        self.auth = Some((name.into(), AuthValue::Read(Arc::new(read))));
        self
    }

    /// The deadline of a whole connection attempt: name resolution, TCP, TLS and the
    /// upgrade, on the first connection and on every reconnect. Defaults to 10 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sends a Ping after this long without outbound traffic. Defaults to 20 s.
    pub fn ping_after(mut self, quiet: Duration) -> Self {
        self.ping_after = quiet;
        self
    }

    /// Declares the connection dead after this long without any inbound frame.
    /// Defaults to 60 s.
    pub fn dead_after(mut self, silence: Duration) -> Self {
        self.dead_after = silence;
        self
    }

    /// How long the server has to acknowledge the replayed subscriptions after a
    /// reconnect before the connection is dropped and tried again. Defaults to 10 s.
    pub fn ack_timeout(mut self, timeout: Duration) -> Self {
        self.ack_timeout = timeout;
        self
    }

    /// How many lossy events wait for the caller before the oldest are dropped.
    /// Defaults to 10,000. (The reader takes what is queued in one go whenever it has
    /// given out what it took before; taken events are no longer dropped, so at most
    /// twice this many wait in all.)
    pub fn lossy_capacity(mut self, capacity: usize) -> Self {
        self.lossy_capacity = capacity.max(1);
        self
    }

    /// How many lossless events may wait for the caller. Defaults to 10,000. When a
    /// caller that stopped reading lets more come, the stream gives
    /// [`WsError::FellBehind`](super::WsError::FellBehind), drops the connection, and reconnects once the caller has
    /// read half of them, so that the service's recovery rebuilds what was missed.
    pub fn lossless_capacity(mut self, capacity: usize) -> Self {
        self.lossless_capacity = capacity.max(2);
        self
    }

    /// How long [`Stream::close`](super::Stream::close) (and drop) may take: a close handshake is tried for
    /// most of it, then the socket is abandoned. Defaults to 5 s.
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// The largest message accepted. Defaults to 16 MiB.
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// When and how to reconnect. Defaults to [`ReconnectPolicy::default`].
    pub fn reconnect(mut self, policy: ReconnectPolicy) -> Self {
        self.reconnect = policy;
        self
    }

    /// Reconnects when `channel` has had no event for `after` (a socket that stays open
    /// but sends nothing). Defaults to no staleness timer.
    pub fn stale_after(mut self, channel: impl Into<String>, after: Duration) -> Self {
        self.stale_after.push((channel.into(), after));
        self
    }

    /// The longest a read on a fresh connection waits before the timers are looked at,
    /// and how often a stream whose reader fell behind looks whether it has caught up.
    /// Defaults to 200 ms. (A live stream does not wake on a tick: it waits for bytes
    /// until its next timer is due.)
    pub fn tick(mut self, tick: Duration) -> Self {
        self.tick = tick.max(Duration::from_millis(1));
        self
    }
}
