//! The error types every service crate re-exports (the tolerant parser for error bodies
//! is `error_body.rs`).

use std::fmt;
use std::time::Duration;

pub use crate::api_error::{ApiError, ItemFailure};
pub(crate) use crate::error_body::{excerpt, parse_error_body};
pub use crate::kind::ErrorKind;

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

    /// The request was refused before anything was sent, because an input broke a
    /// documented rule (for example a page size above the maximum).
    #[error("invalid request: {0}")]
    InvalidRequest(String),

    /// The client is misconfigured (missing base URL, bad environment variable, plain
    /// `http://` to a remote host, ...).
    #[error("configuration error: {0}")]
    Config(String),

    /// A WebSocket stream failed.
    #[cfg(feature = "ws")]
    #[error(transparent)]
    WebSocket(#[from] crate::ws::error::WsError),

    /// A webhook delivery failed verification or could not be parsed.
    #[cfg(feature = "webhook")]
    #[error(transparent)]
    Webhook(#[from] crate::webhook::error::WebhookError),
}

/// What an [`Error::Unsettled`] advises.
struct UnsettledAdvice<'a>(Option<&'a (&'static str, String)>);

impl fmt::Display for UnsettledAdvice<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some((name, id)) => write!(
                f,
                "it may have been carried out: to repeat it, send it with the same {name} \
                 {id:?} (the service carries out one request per {name})"
            ),
            None => f.write_str(
                "it may have been carried out: look at the service's state before repeating it",
            ),
        }
    }
}

/// What a wait that timed out says (as [`Error::WaitTimedOut`] and [`crate::wait::WaitError`]).
struct WaitText<'a> {
    what: &'a str,
    state: Option<&'a str>,
    waited: Duration,
    cause: Option<&'a Error>,
}

impl fmt::Display for WaitText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        timed_out_text(f, self.what, self.state, self.waited, self.cause)
    }
}

/// What a wait that timed out says: what it waited for, for how long, the state last
/// read, and its last failure (a pause asked for past the deadline named as such).
pub(crate) fn timed_out_text(
    f: &mut fmt::Formatter<'_>,
    what: &str,
    state: Option<&str>,
    waited: Duration,
    cause: Option<&Error>,
) -> fmt::Result {
    write!(
        f,
        "gave up waiting for {what} after {:.1} s",
        waited.as_secs_f64()
    )?;
    match state {
        Some(state) => write!(f, " (still {state})")?,
        None => write!(f, " (no reading succeeded)")?,
    }
    let Some(cause) = cause else {
        return Ok(());
    };
    match cause
        .api()
        .and_then(|a| a.retry_after.map(|after| (a.status, after)))
    {
        Some((status, after)) => write!(
            f,
            ": the service answered {status} and asked to wait {:.0} s, past the deadline",
            after.as_secs_f64().ceil()
        ),
        None => write!(f, "; the last reading failed: {cause}"),
    }
}

/// A duration as a person reads it: `1.0 s`, `30 s`, `250 ms`.
pub(crate) fn rounded(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 1.0 {
        format!("{} ms", d.as_millis())
    } else if secs < 10.0 {
        format!("{secs:.1} s")
    } else {
        format!("{secs:.0} s")
    }
}

/// Did the server act on a request that failed? The one answer to that question, kept on
/// every [`Error`] ([`Error::delivery`]); the retry policy decides with it, and so should
/// a caller about to repeat an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Delivery {
    /// The request provably never reached the server: refused before sending (invalid
    /// input, configuration), or no connection could be made (DNS failure, refused, TLS
    /// failure, connect timeout). Sending it again cannot do anything twice.
    NotSent,
    /// It may have reached the server and been acted on, and no answer says what
    /// happened: a timeout or reset after sending, a 408 or 5xx, an answer too large to
    /// read, a refused redirect. Repeat it only when it is replay-safe (a read, or a
    /// service that de-duplicates by key or client id), or after checking the server's
    /// state.
    MayHaveBeenProcessed,
    /// The server answered and the answer says what it did: an error status (it saw the
    /// request and refused it), or a success whose body could not be used.
    Processed,
}

fn list_failures(failed: &[ItemFailure]) -> String {
    let mut out = String::new();
    for (i, failure) in failed.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        let _ = std::fmt::Write::write_fmt(&mut out, format_args!("{failure}"));
    }
    out
}

/// Why a list ended before its last page ([`Error::ListCutShort`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CutShort {
    /// The iteration fetched the most pages it may (`max_pages`, 10,000 by default).
    PageCap,
    /// The server handed back a page token it had already given: following it would
    /// loop.
    RepeatedToken,
    /// The server sent the same page again (it ignored the offset): going on would loop.
    RepeatedPage,
}

impl fmt::Display for CutShort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CutShort::PageCap => {
                "it reached the most pages one iteration may fetch (raise it with max_pages)"
            }
            CutShort::RepeatedToken => {
                "the server handed back a page token it had already given, so the pages \
                 after it cannot be reached"
            }
            CutShort::RepeatedPage => {
                "the server sent the same page again (it ignored the offset), so the items \
                 after it cannot be reached"
            }
        })
    }
}

/// A specialized `Result` for service calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Unsettled { source, .. } => source.status(),
            Error::Api(e) => Some(e.status),
            Error::Decode { status, .. }
            | Error::UndecodableSuccess { status, .. }
            | Error::UnexpectedBody { status, .. }
            | Error::ResponseTooLarge { status, .. }
            | Error::Redirect { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// What kind of failure this is: every error has one, so a caller can match on kinds
    /// alone. An error status gives the kind of its status and code
    /// ([`ErrorKind::from_status`]); everything else has a kind of its own
    /// ([`ErrorKind::InvalidInput`] for a refusal before sending, [`ErrorKind::Timeout`],
    /// [`ErrorKind::Connection`], [`ErrorKind::Proxy`], [`ErrorKind::Decode`],
    /// [`ErrorKind::Incomplete`], ...). A stream's error has the kind of what happened to
    /// it (a 401 on its upgrade is [`ErrorKind::Unauthorized`]).
    ///
    /// ```
    /// use core_http::{Error, ErrorKind};
    /// let refused = Error::InvalidRequest("limit must be from 1 to 100, got 500".into());
    /// assert_eq!(refused.kind(), ErrorKind::InvalidInput);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Unsettled { source, .. } => source.kind(),
            Error::Api(e) => e.kind,
            Error::Timeout { .. } => ErrorKind::Timeout,
            Error::Connect { .. } | Error::Tls { .. } | Error::Io { .. } => ErrorKind::Connection,
            Error::File { .. } => ErrorKind::File,
            Error::Proxy { .. } => ErrorKind::Proxy,
            Error::Decode { .. }
            | Error::UndecodableSuccess { .. }
            | Error::UnexpectedBody { .. }
            | Error::ResponseTooLarge { .. } => ErrorKind::Decode,
            Error::Redirect { .. } => ErrorKind::Redirect,
            Error::NotProcessed { .. } => ErrorKind::NotProcessed,
            Error::ListCutShort { .. } | Error::Partial { .. } => ErrorKind::Incomplete,
            Error::IdConflict { .. } => ErrorKind::Conflict,
            Error::WaitEnded { .. } => ErrorKind::EndedOtherwise,
            Error::WaitTimedOut { .. } => ErrorKind::Timeout,
            Error::InvalidRequest(_) => ErrorKind::InvalidInput,
            Error::Config(_) => ErrorKind::Config,
            #[cfg(feature = "ws")]
            Error::WebSocket(e) => e.kind(),
            #[cfg(feature = "webhook")]
            Error::Webhook(e) => e.kind(),
        }
    }

    /// The API error, when the server answered with an error status.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Error::Unsettled { source, .. } => source.api(),
            Error::Api(e) => Some(e),
            _ => None,
        }
    }

    /// The request id the server gave, when there is one.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Error::Unsettled { source, .. } => source.request_id(),
            Error::Api(e) => e.request_id.as_deref(),
            Error::Decode { request_id, .. } | Error::UndecodableSuccess { request_id, .. } => {
                request_id.as_deref()
            }
            _ => None,
        }
    }

    /// Did the server act on the request? [`Delivery::NotSent`] when it provably never
    /// reached the server; [`Delivery::MayHaveBeenProcessed`] when it may have and no
    /// answer says what happened; [`Delivery::Processed`] when the server answered.
    ///
    /// ```
    /// use core_http::{Delivery, Error};
    /// let err = Error::InvalidRequest("qty must be positive".into());
    /// assert_eq!(err.delivery(), Delivery::NotSent); // safe to send again, once fixed
    /// ```
    pub fn delivery(&self) -> Delivery {
        match self {
            Error::Timeout { delivery, .. }
            | Error::Connect { delivery, .. }
            | Error::File { delivery, .. }
            | Error::Io { delivery, .. } => *delivery,
            // An answer to a repeat, or to a hop after a redirect, is not about what
            // reached the server before it.
            Error::Api(api)
                if api.after_possible_delivery || matches!(api.status, 408 | 500..=599) =>
            {
                Delivery::MayHaveBeenProcessed
            }
            Error::ResponseTooLarge { .. } | Error::Redirect { .. } | Error::Unsettled { .. } => {
                Delivery::MayHaveBeenProcessed
            }
            Error::Api(_)
            | Error::Decode { .. }
            | Error::UndecodableSuccess { .. }
            | Error::UnexpectedBody { .. }
            | Error::IdConflict { .. }
            | Error::Partial { .. }
            | Error::WaitEnded { .. }
            | Error::WaitTimedOut { .. } => Delivery::Processed,
            // No trace of it yet, but the failed request may still arrive.
            Error::NotProcessed { .. } => Delivery::MayHaveBeenProcessed,
            Error::ListCutShort { .. }
            | Error::Proxy { .. }
            | Error::Tls { .. }
            | Error::InvalidRequest(_)
            | Error::Config(_) => Delivery::NotSent,
            #[cfg(feature = "ws")]
            Error::WebSocket(crate::ws::error::WsError::Unanswered(_)) => {
                Delivery::MayHaveBeenProcessed
            }
            #[cfg(feature = "ws")]
            Error::WebSocket(crate::ws::error::WsError::Rejected { .. }) => Delivery::Processed,
            #[cfg(feature = "ws")]
            Error::WebSocket(_) => Delivery::NotSent,
            #[cfg(feature = "webhook")]
            Error::Webhook(_) => Delivery::NotSent,
        }
    }

    /// `true` when what the request asked for may have been carried out: it may have
    /// reached the server and no answer says what happened
    /// ([`Delivery::MayHaveBeenProcessed`]: a timeout or reset after sending, a 408 or
    /// 5xx, an answer too large to read, a refused redirect), or an answer says it was
    /// done although the call failed ([`action_succeeded`](Self::action_succeeded); a
    /// bulk action done for some items). `false` when it provably never reached the
    /// server, and when the server refused it (a 400, 401, 404 or 409 says nothing was
    /// done). Before repeating an action for which this is `true`, check the server's
    /// state (or repeat it with the same idempotency id, [`repeat_with`](Self::repeat_with)).
    ///
    /// ```
    /// use core_http::{Delivery, Error};
    /// let timeout = Error::Timeout { elapsed: std::time::Duration::from_secs(30), delivery: Delivery::MayHaveBeenProcessed };
    /// assert!(timeout.may_have_been_processed());
    /// assert!(!Error::InvalidRequest("qty must be positive".into()).may_have_been_processed());
    /// ```
    pub fn may_have_been_processed(&self) -> bool {
        match self.delivery() {
            Delivery::MayHaveBeenProcessed => true,
            Delivery::NotSent => false,
            Delivery::Processed => {
                self.action_succeeded() || matches!(self, Error::Partial { done, .. } if *done > 0)
            }
        }
    }

    /// `true` when the action the request asked for is known to have been carried out
    /// although the call failed ([`Error::UndecodableSuccess`]).
    pub fn action_succeeded(&self) -> bool {
        match self {
            Error::Unsettled { source, .. } => source.action_succeeded(),
            other => matches!(other, Error::UndecodableSuccess { .. }),
        }
    }

    /// The id to repeat a failed action with, when it was made under one the service
    /// de-duplicates by: its name (`Idempotency-Key`, `client_order_id`) and value
    /// ([`Error::Unsettled`], [`Error::NotProcessed`]). Sent again with it, the action is
    /// carried out once whatever became of the first request; with a new one, it may be
    /// carried out twice.
    ///
    /// ```
    /// use core_http::{Delivery, Error};
    /// let timeout = Error::Timeout { elapsed: std::time::Duration::from_secs(30), delivery: Delivery::MayHaveBeenProcessed };
    /// let err = Error::Unsettled { repeat_with: Some(("Idempotency-Key", "k-1".into())), source: Box::new(timeout) };
    /// assert_eq!(err.repeat_with(), Some(("Idempotency-Key", "k-1")));
    /// assert_eq!(err.kind(), core_http::ErrorKind::Timeout);
    /// ```
    pub fn repeat_with(&self) -> Option<(&'static str, &str)> {
        match self {
            Error::Unsettled {
                repeat_with: Some((id_name, id)),
                ..
            }
            | Error::NotProcessed { id_name, id, .. } => Some((id_name, id)),
            _ => None,
        }
    }

    /// Whether trying again may mend it (the retry policy's other question, beside
    /// [`delivery`](Self::delivery)): a time-out, a lost or refused connection, a proxy
    /// that may open the tunnel next time, a status that says "later" (408, 429, 500,
    /// 502, 503, 504). Never a TLS failure, a refusal of the request itself, a refused
    /// redirect, an answer that cannot be read, or a local failure before sending.
    pub(crate) fn transient(&self) -> bool {
        match self {
            Error::Timeout { .. } | Error::Connect { .. } => true,
            Error::Io { delivery, .. } => *delivery != Delivery::NotSent,
            Error::Proxy { status, .. } => !matches!(status, Some(401 | 403 | 405 | 407 | 501)),
            Error::Api(api) => matches!(api.status, 408 | 429 | 500 | 502 | 503 | 504),
            _ => false,
        }
    }

    pub(crate) fn config(msg: impl Into<String>) -> Self {
        Error::Config(msg.into())
    }

    /// This error as it reads when something before it may have reached the server and
    /// been acted on (the original request, on a redirect hop; an earlier attempt): the
    /// one place a failure learns that, so [`delivery`](Self::delivery) says it.
    pub(crate) fn after_delivery(self) -> Self {
        let delivery = Delivery::MayHaveBeenProcessed;
        match self {
            Error::Api(mut api) => {
                api.after_possible_delivery = true;
                Error::Api(api)
            }
            Error::Timeout { elapsed, .. } => Error::Timeout { elapsed, delivery },
            Error::Connect { message, .. } => Error::Connect { message, delivery },
            Error::Io { source, .. } => Error::Io { delivery, source },
            other => other,
        }
    }
}

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
mod tests {
    use super::*;

    fn check(body: &str, content_type: Option<&str>, code: Option<&str>, message: &str) {
        let parsed = parse_error_body(400, content_type, body.as_bytes());
        assert_eq!(parsed.code.as_deref(), code, "code for {body:?}");
        assert_eq!(parsed.message, message, "message for {body:?}");
    }

    #[test]
    fn every_error_body_convention() {
        check(
            r#"{"type":"https://e.x/probs/out-of-credit","title":"Out of credit","detail":"Balance is 30, cost is 50","status":403}"#,
            Some("application/problem+json"),
            Some("https://e.x/probs/out-of-credit"),
            "Balance is 30, cost is 50",
        );
        check(
            r#"{"type":"about:blank","title":"Not Found"}"#,
            None,
            None,
            "Not Found",
        );
        check(
            r#"{"error":{"code":"invalid_name","message":"name is required"}}"#,
            None,
            Some("invalid_name"),
            "name is required",
        );
        check(
            r#"{"error":"invalid_client","error_description":"bad secret"}"#,
            None,
            Some("invalid_client"),
            "bad secret",
        );
        check(r#"{"error":"boom"}"#, None, Some("boom"), "boom");
        check(
            r#"{"code":"E42","message":"nope"}"#,
            None,
            Some("E42"),
            "nope",
        );
        check(
            r#"{"errorCode":7,"message":"seven"}"#,
            None,
            Some("7"),
            "seven",
        );
        check(r#"{"message":"plain"}"#, None, None, "plain");
        check(
            "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
            Some("text/html"),
            None,
            "502 Bad Gateway",
        );
        check("<html><body>oops</body></html>", None, None, "Bad Request");
        check("", None, None, "Bad Request");
        check("   \n", None, None, "Bad Request");
        check("upstream went away", None, None, "upstream went away");
        check("[1,2,3]", None, None, "[1,2,3]");
        check(r#"{"unrelated":true}"#, None, None, r#"{"unrelated":true}"#);
    }

    #[test]
    fn error_body_values_of_every_shape() {
        // Numbers read as text, where text is read; escapes decoded.
        check(
            r#"{"error":{"code":404.5,"type":"x","message":"caf\u00e9 \"closed\""}}"#,
            None,
            Some("404.5"),
            "café \"closed\"",
        );
        // A nested object's own nested `error`, lists and unknown members are skipped;
        // its `type` stands in for a missing code, its code for a missing message.
        check(
            r#"{"error":{"type":"t","error":{"code":"deeper"},"x":[{"a":[1,{}]}],"detail":"d"}}"#,
            None,
            Some("t"),
            "d",
        );
        check(r#"{"error":{"code":"only"}}"#, None, Some("only"), "only");
        // `error` as a number, a list or null is no code: the other fields are read.
        check(r#"{"error":42,"message":"m"}"#, None, None, "m");
        check(
            r#"{"error":[1],"code":"c"}"#,
            None,
            Some("c"),
            "Bad Request",
        );
        check(r#"{"error":null,"message":"m"}"#, None, None, "m");
        // A text field holding an object, a list, a boolean or null reads as absent.
        check(
            r#"{"message":{"text":"no"},"code":["no"],"errorCode":true,"detail":null,"title":null,"error_description":{}}"#,
            None,
            None,
            r#"{"message":{"text":"no"},"code":["no"],"errorCode":true,"detail":null,"title":null,"error_description":{}}"#,
        );
        // A member given twice makes the body unreadable as JSON: shown as text.
        check(
            r#"{"message":"a","message":"b"}"#,
            None,
            None,
            r#"{"message":"a","message":"b"}"#,
        );
        check(
            r#"{"error":{"code":"a","code":"b"}}"#,
            None,
            None,
            r#"{"error":{"code":"a","code":"b"}}"#,
        );
        check(
            r#"{"message":null,"message":"b"}"#,
            None,
            None,
            r#"{"message":null,"message":"b"}"#,
        );
        // A `null` title is no title: not a problem document.
        check(r#"{"title":null,"message":"m"}"#, None, None, "m");
        // Truncated JSON is shown as text too.
        check(r#"{"message":"cut"#, None, None, r#"{"message":"cut"#);
    }

    #[test]
    fn quota_codes_are_not_rate_limits() {
        assert_eq!(
            ErrorKind::from_status(429, Some("quota_exceeded")),
            ErrorKind::QuotaExceeded
        );
        assert_eq!(
            ErrorKind::from_status(429, Some("insufficient_quota")),
            ErrorKind::QuotaExceeded
        );
        assert_eq!(
            ErrorKind::from_status(429, Some("rate_limited")),
            ErrorKind::RateLimited
        );
        assert_eq!(ErrorKind::from_status(429, None), ErrorKind::RateLimited);
        assert_eq!(ErrorKind::from_status(503, None), ErrorKind::Server);
        assert_eq!(ErrorKind::from_status(418, None), ErrorKind::Other);
    }

    #[test]
    fn excerpt_cuts_on_char_boundary() {
        let body = "é".repeat(300);
        let e = excerpt(body.as_bytes(), 201);
        assert!(e.ends_with('…'));
        assert!(!e.contains('\u{FFFD}'));
        assert_eq!(excerpt(b"short", 200), "short");
    }

    #[test]
    fn error_is_send_sync_static() {
        fn assert_bounds<T: Send + Sync + 'static + std::error::Error>() {}
        assert_bounds::<Error>();
    }
}
