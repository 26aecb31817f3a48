//! What a client does, for those who count it: an [`Observer`] installed on the builder
//! sees every attempt of every call and every connection of every stream, with the
//! figures a metrics system wants and never a credential or a query value.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;

/// One attempt of a call, as an [`Observer`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attempt {
    /// The method (`GET`, `POST`...).
    pub method: &'static str,
    /// The path, without the query (values there may be secrets) and without the host.
    pub path: String,
    /// 1 for the first attempt of the call, 2 for its first retry...
    pub number: u32,
    /// The status the server answered, when it answered.
    pub status: Option<u16>,
    /// What went wrong, when something did: `"status"` (an error status), `"timeout"`,
    /// `"connect"`, `"io"`, `"decode"`, `"too_large"`, `"redirect"` or `"other"`.
    pub failure: Option<&'static str>,
    /// `Some(delay)` when the client tries again after this delay; `None` when this was
    /// the call's last attempt.
    pub retry_in: Option<Duration>,
    /// How long the attempt took, from sending to the answer's head (or the failure).
    pub duration: Duration,
    /// The request id the server gave, if any.
    pub request_id: Option<String>,
    /// The answer's body size when it was read into memory.
    pub bytes: Option<u64>,
}

/// Something that happened to a stream, as an [`Observer`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// The first connection is up.
    Connected {
        /// The stream's URL without its query.
        url: String,
    },
    /// The connection was lost (it is being made again).
    Lost {
        /// Why, as the stream's logs say it.
        reason: String,
    },
    /// The connection is back, its subscriptions replayed.
    Reconnected {
        /// How long the stream was down.
        gap: Duration,
        /// The attempts it took.
        attempts: u32,
    },
    /// The caller stopped reading and the lossless lane filled: events were lost until
    /// the reconnect that follows, whose recovery rebuilds them where the service can.
    FellBehind {
        /// The lane's capacity.
        capacity: usize,
    },
    /// Events of the lossy lane (quotes, unknown message types) were dropped because
    /// the caller fell behind on it: `count` since the last report, `total` so far.
    Dropped {
        /// Dropped since the last report.
        count: u64,
        /// Dropped since the stream started.
        total: u64,
    },
    /// The stream ended for good (an error, or the caller closed it).
    Ended,
}

/// What happened to a shared rate budget ([`ClientBuilder::shared`](crate::ClientBuilder::shared)), as an
/// [`Observer`] sees it: said once when the budget goes out of reach, and once when the
/// client shares it again.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BudgetEvent {
    /// The shared budget could not be used: the client now paces alone (or waits, with
    /// [`WhenUnavailable::Wait`](crate::config::WhenUnavailable::Wait)) until it can.
    Lost {
        /// Where the budget is kept: `"machine"` or `"redis"`.
        store: &'static str,
        /// Why, as the warning says it (never a password or a key).
        reason: String,
    },
    /// The shared budget works again: the client shares it.
    Regained {
        /// Where the budget is kept: `"machine"` or `"redis"`.
        store: &'static str,
    },
}

/// Sees what a client does: [`ClientBuilder::observer`](crate::ClientBuilder::observer).
/// Every method has an empty default; implement those you need. They are called on the
/// thread that makes the call (or the stream's own thread), so keep them quick: count,
/// record a duration, send to a channel.
pub trait Observer: Send + Sync + 'static {
    /// After every attempt of every call.
    fn attempt(&self, attempt: &Attempt) {
        let _ = attempt;
    }

    /// When a stream connects, loses its connection, reconnects, falls behind or ends.
    fn stream(&self, event: &StreamEvent) {
        let _ = event;
    }

    /// When a shared rate budget goes out of reach, and when it works again.
    fn budget(&self, event: &BudgetEvent) {
        let _ = event;
    }
}

/// The observer a client was given, shared by its clones and its streams: what a crate
/// built on core-http tells of a stream's changes ([`Observers::stream`]).
#[derive(Clone, Default)]
pub struct Observers(pub(crate) Option<Arc<dyn Observer>>);

impl fmt::Debug for Observers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Some(..)" } else { "None" })
    }
}

impl Observers {
    /// `observer`, shared.
    pub fn new(observer: impl Observer) -> Self {
        Observers(Some(Arc::new(observer)))
    }

    /// Whether anyone looks (to spare work that only an observer needs).
    pub fn is_set(&self) -> bool {
        self.0.is_some() || cfg!(feature = "tracing")
    }

    /// Tells the observer (and, with the `tracing` feature, emits an event); the attempt
    /// is built only when someone looks.
    pub(crate) fn attempt(&self, attempt: impl FnOnce() -> Attempt) {
        #[cfg(feature = "tracing")]
        {
            let a = attempt();
            trace_attempt(&a);
            if let Some(o) = &self.0 {
                o.attempt(&a);
            }
        }
        #[cfg(not(feature = "tracing"))]
        if let Some(o) = &self.0 {
            o.attempt(&attempt());
        }
    }

    /// Tells the observer of a stream's change (and, with the `tracing` feature, emits an
    /// event).
    pub fn stream(&self, event: StreamEvent) {
        #[cfg(feature = "tracing")]
        tracing::info!(target: "core_http::stream", event = ?event, "stream");
        if let Some(o) = &self.0 {
            o.stream(&event);
        }
    }

    /// Tells the observer what happened to the shared budget (and, with the `tracing`
    /// feature, emits an event).
    pub(crate) fn budget(&self, event: BudgetEvent) {
        #[cfg(feature = "tracing")]
        tracing::warn!(target: "core_http::budget", event = ?event, "rate budget");
        if let Some(o) = &self.0 {
            o.budget(&event);
        }
    }
}

/// The span a call runs in (`tracing` feature): `call`, with its method and path.
#[cfg(feature = "tracing")]
pub(crate) fn call_span(method: &'static str, path: &str) -> tracing::span::EnteredSpan {
    tracing::info_span!(target: "core_http::call", "call", method, path).entered()
}

/// One event per attempt (`tracing` feature), with the fields an observer gets.
#[cfg(feature = "tracing")]
fn trace_attempt(a: &Attempt) {
    tracing::info!(
        target: "core_http::call",
        method = a.method,
        path = a.path.as_str(),
        attempt = a.number,
        status = a.status,
        failure = a.failure,
        retry_in_ms = a.retry_in.map(|d| d.as_millis() as u64),
        duration_ms = a.duration.as_secs_f64() * 1e3,
        request_id = a.request_id.as_deref(),
        bytes = a.bytes,
        "attempt"
    );
}

/// The path of a URL, without its scheme, host and query.
pub(crate) fn path_of(url: &str) -> &str {
    let url = crate::url::strip_query(url);
    url.split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]))
        .unwrap_or("/")
}

/// The word an [`Attempt`] uses for an error.
pub(crate) fn failure_word(error: &Error) -> &'static str {
    match error {
        Error::Api(_) => "status",
        Error::Timeout { .. } => "timeout",
        Error::Connect { .. } => "connect",
        Error::Io { .. } => "io",
        Error::Decode { .. } | Error::UndecodableSuccess { .. } | Error::UnexpectedBody { .. } => {
            "decode"
        }
        Error::ResponseTooLarge { .. } => "too_large",
        Error::Redirect { .. } => "redirect",
        _ => "other",
    }
}
