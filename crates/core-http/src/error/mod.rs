//! The error types every service crate re-exports: the [`Error`] enum here, what it
//! says of itself in `facts.rs` (status, kind, delivery, what to repeat with), the
//! sentences its variants are written with in `text.rs`. The tolerant parser for
//! error bodies is `error_body.rs`.

use std::time::Duration;

pub use crate::api_error::{ApiError, ItemFailure};
pub(crate) use crate::error_body::{excerpt, parse_error_body};
pub use crate::kind::ErrorKind;
pub use facts::{CutShort, Delivery};
pub use text::rounded;
pub(crate) use text::timed_out_text;
use text::{UnsettledAdvice, WaitText, list_failures};

mod facts;
mod text;

/// Everything that can go wrong when calling a service.
///
/// Match on the variant for the broad class, or call the helpers
/// ([`Error::status`], [`Error::kind`], [`Error::delivery`]) which work across variants.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with a non-success status. The [`ApiError`] carries the status,
    /// the server's message and code, the request id and the answer's headers.
    #[error(transparent)]
    Api(#[from] Box<ApiError>),

    /// The call did not complete within its timeout (connect timeout or the whole-call
    /// timeout, whichever ran out first).
    #[error(
        "request timed out after {}; to allow longer, raise the client's timeout (the \
         builder's timeout(..), with_options(..) for one call, or <SERVICE>_TIMEOUT_SECS)",
        rounded(*elapsed)
    )]
    Timeout {
        /// Time spent on the call when it was given up.
        elapsed: Duration,
        /// [`Delivery::NotSent`] only when the time ran out before the request could be
        /// sent (while resolving or connecting).
        delivery: Delivery,
    },

    /// No connection could be made (refused, DNS failure, TLS handshake failure).
    #[error("could not connect: {message}")]
    Connect {
        /// What failed, in words.
        message: String,
        /// [`Delivery::NotSent`] when the server never saw the request;
        /// [`Delivery::MayHaveBeenProcessed`] only when this happened on a redirect,
        /// after the original request had reached the server.
        delivery: Delivery,
    },

    /// TLS with the server failed (its certificate, the protocol, a server answering in
    /// plain HTTP on a `https://` URL): the request was never sent, and a retry will not
    /// change it. [`ErrorKind::Connection`].
    #[error("TLS failed: {message}")]
    Tls {
        /// What failed, naming the host.
        message: String,
    },

    /// The proxy the client goes through ([`ClientBuilder::proxy`](crate::ClientBuilder::proxy),
    /// or `HTTPS_PROXY` and its kin) could not be reached, refused the tunnel, or did not
    /// answer in time. The request never reached the service. A proxy's 401, 403 and 407
    /// are never retried (a proxy may lock an account after failed logins).
    #[error("{message}")]
    Proxy {
        /// The proxy's `host:port` (never its credentials).
        proxy: String,
        /// The status the proxy answered, when it answered one.
        status: Option<u16>,
        /// What happened, naming the proxy, with a hint.
        message: String,
    },

    /// A file of the caller's could not be made, written or put in place (a download
    /// into a folder that does not exist, a full disk): a local failure with its path,
    /// [`ErrorKind::File`]. Nothing about the service: fix the path and call again.
    #[error("cannot {action} {}: {source}", path.display())]
    File {
        /// What was being done: `create`, `write`, `rename ... to`.
        action: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// Whether the request had been sent when it failed ([`Delivery::NotSent`] when
        /// the file could not be made before anything was asked).
        delivery: Delivery,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// The connection failed after it was established (reset, closed early, truncated body).
    #[error("I/O error: {source}")]
    Io {
        /// Whether the request may have reached the server.
        delivery: Delivery,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A read answered with a success status but the body was not what was expected.
    #[error(
        "could not decode the response (HTTP {status}): {source}; body starts with: {excerpt:?}"
    )]
    Decode {
        /// The HTTP status of the response.
        status: u16,
        /// The request id the server gave, if any.
        request_id: Option<String>,
        /// The first bytes of the body, for diagnosis (credentials blanked out).
        excerpt: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },

    /// An action (a POST, PUT, PATCH or DELETE) succeeded on the server, but its answer
    /// could not be decoded. The action happened: do not repeat it; look the result up
    /// instead, or read what the server said in `body`.
    #[error(
        "the request succeeded (HTTP {status}) but its answer could not be decoded: {source}; \
         the action was carried out, do not repeat it"
    )]
    UndecodableSuccess {
        /// The HTTP status of the response (2xx).
        status: u16,
        /// The request id the server gave, if any.
        request_id: Option<String>,
        /// The body as received (credentials blanked out).
        body: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },

    /// The server answered with a success status but the body is not what the call
    /// expects (for example a download that is not a PDF).
    #[error("unexpected response body (HTTP {status}): {message}")]
    UnexpectedBody {
        /// The HTTP status of the response.
        status: u16,
        /// What was wrong.
        message: String,
    },

    /// The response body was larger than the configured cap, so reading stopped. The
    /// server did answer: an action it was asked for may have happened.
    #[error("response body (HTTP {status}) exceeds the limit of {limit} bytes")]
    ResponseTooLarge {
        /// The HTTP status of the response.
        status: u16,
        /// The cap in bytes.
        limit: u64,
    },

    /// The server answered with a redirect the client refused to follow: to plain HTTP,
    /// to another origin with credentials in the body, in a loop, or too many of them.
    /// The server did see the request.
    #[error("refused to follow the redirect (HTTP {status}) to {location}: {reason}")]
    Redirect {
        /// The redirect's status.
        status: u16,
        /// Where it pointed (without its query).
        location: String,
        /// Why it was not followed.
        reason: String,
    },

    /// The call failed, and a lookup of the service's state found no trace of it (no
    /// order under its `client_order_id`). The first request may still reach the service
    /// (a slow server goes on after the client hung up), so sending it with a **new** id
    /// could do it twice: send it again only with the same id ([`Error::repeat_with`]),
    /// which the service carries out at most once.
    #[error(
        "no trace of it at the service: {reason}; the request that failed ({source}) may \
         still reach it, so send it again only with the same {id_name} {id:?}, which the \
         service carries out at most once"
    )]
    NotProcessed {
        /// What the lookup showed.
        reason: String,
        /// The name of the id the service de-duplicates by (`client_order_id`).
        id_name: &'static str,
        /// The id the failed request carried.
        id: String,
        /// The failure that made the outcome uncertain.
        #[source]
        source: Box<Error>,
    },

    /// An action that repeating could do twice failed in a way that leaves its outcome
    /// unknown (a timeout or a reset after it was sent, a 5xx), and nothing settled it:
    /// it may have been carried out. Made under an id the service de-duplicates by (an
    /// `Idempotency-Key`, a `client_order_id`), repeat it only with that id
    /// ([`Error::repeat_with`]): the service then carries it out once, or answers what
    /// it already did. Without one (a POST with no key), look at the service's state
    /// before repeating it. A read, or a request repeating cannot do twice (PUT,
    /// DELETE), is never wrapped: its failure is returned as it is. Everything else
    /// (status, kind, request id) is the failure's own.
    #[error("{source}; {}", UnsettledAdvice(repeat_with.as_ref()))]
    Unsettled {
        /// The id to repeat it with, when it was made under one: its name
        /// (`Idempotency-Key`, `client_order_id`) and value.
        repeat_with: Option<(&'static str, String)>,
        /// The failure.
        #[source]
        source: Box<Error>,
    },

    /// A list stopped short of its end: the items before this error were all delivered,
    /// those after it were not. `reason` says why (the page cap, or a server that handed
    /// back a page token or a page it had already given, which would loop forever).
    #[error("the list was cut short after {pages} pages: {reason}")]
    ListCutShort {
        /// How many pages were fetched.
        pages: u64,
        /// Why the list ended before its last page.
        reason: CutShort,
    },

    /// An action was answered with a record that is not the one asked for: the service
    /// already had a record under the caller's idempotency id (a trading
    /// `client_order_id`) for different work, and answered that one. Nothing new was
    /// done. [`ErrorKind::Conflict`].
    #[error(
        "{id_name} {id:?} is already in use for different work ({differs}): the service \
         answered that, and nothing new was placed"
    )]
    IdConflict {
        /// What the id is (`client_order_id`).
        id_name: &'static str,
        /// The id.
        id: String,
        /// How the record found differs from the one asked for.
        differs: String,
    },

    /// A bulk action (cancel every order, close every position) was carried out for some
    /// items and not for others ([`BulkOutcome::into_complete`](crate::BulkOutcome::into_complete)).
    /// [`ErrorKind::Incomplete`].
    #[error("{done} carried out, {} not: {}", failed.len(), list_failures(failed))]
    Partial {
        /// How many items were carried out.
        done: usize,
        /// Those that were not, with what the service said of each.
        failed: Vec<ItemFailure>,
    },

    /// A wait ended early: what was waited for reached a final state other than the one
    /// wanted (a document declined, an order canceled). [`ErrorKind::EndedOtherwise`].
    /// ([`WaitError::Ended`](crate::wait::WaitError::Ended) keeps the resource as read.)
    #[error("stopped waiting for {what}: it ended {state}")]
    WaitEnded {
        /// What was waited for.
        what: String,
        /// The state it ended in.
        state: String,
    },

    /// A wait's deadline passed before the state wanted. [`ErrorKind::Timeout`].
    #[error("{}", WaitText { what, state: state.as_deref(), waited: *waited, cause: cause.as_deref() })]
    WaitTimedOut {
        /// What was waited for.
        what: String,
        /// The state of the last reading, if one succeeded.
        state: Option<String>,
        /// How long the wait lasted.
        waited: std::time::Duration,
        /// The last reading's failure (a 502, a timeout), or the answer whose
        /// `Retry-After` reached past the deadline.
        #[source]
        cause: Option<Box<Error>>,
    },

    /// The request was not sent: the rate budget this client shares with other programs
    /// using its key ([`ClientBuilder::shared`](crate::ClientBuilder::shared)) has no turn
    /// for it within the call's time, because the service asked every program using the
    /// key to wait (a 429's `Retry-After`) or because their calls queue past it.
    /// [`ErrorKind::RateLimited`]: send it again after `retry_after`.
    #[error("{reason}: nothing was sent; try again in {}", rounded(*retry_after))]
    RateLimited {
        /// How long until a turn.
        retry_after: Duration,
        /// Why, in words.
        reason: String,
    },

    /// The request was refused before anything was sent, because an input broke a
    /// documented rule (for example a page size above the maximum).
    #[error("invalid request: {0}")]
    InvalidRequest(String),

    /// The client is misconfigured (missing base URL, bad environment variable, plain
    /// `http://` to a remote host, ...).
    #[error("configuration error: {0}")]
    Config(String),

    /// A failure of a crate built on core-http beside its calls: a stream's
    /// (`core-streams`' `WsError`) or a webhook delivery's (`core-webhooks`'
    /// `WebhookError`), with its own kind and delivery. [`Error::downcast_ref`] reaches
    /// it by its type.
    #[error("{0}")]
    Other(Box<dyn Failure>),
}

/// What a failure of a crate built on core-http says of itself, so that it can travel in
/// an [`Error`] ([`Error::Other`]): its kind and whether the peer may have acted.
pub trait Failure: std::error::Error + Send + Sync + 'static {
    /// What kind of failure it is.
    fn kind(&self) -> ErrorKind;
    /// Whether the peer may have acted on what was sent.
    fn delivery(&self) -> Delivery {
        Delivery::NotSent
    }
}

/// A specialized `Result` for service calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A timestamp the caller wrote that is not RFC 3339 (`timestamp::parse("..")?` in a
/// script) is a refusal before sending: [`Error::InvalidRequest`].
impl From<crate::timestamp::InvalidTimestamp> for Error {
    fn from(e: crate::timestamp::InvalidTimestamp) -> Self {
        Error::InvalidRequest(format!("not an RFC 3339 timestamp: {e}"))
    }
}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Error::Api(Box::new(e))
    }
}

#[cfg(test)]
mod tests;
