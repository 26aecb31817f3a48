//! What kind of failure an error is: the one classification every error of the crate
//! has, at the bottom of the crate (nothing here imports anything above it).

use std::fmt;

/// What kind of failure an [`Error`](crate::Error) is ([`Error::kind`](crate::Error::kind)): for an error status, the class
/// of the status and the server's code; for everything else, what went wrong on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// 400 or 422: the request was invalid.
    BadRequest,
    /// 401: the credentials are missing, wrong or expired.
    Unauthorized,
    /// 403: the credentials do not allow this.
    Forbidden,
    /// 404: no such resource.
    NotFound,
    /// 409 or 412: the resource is not in a state that allows this (412: a condition such
    /// as `If-Match` no longer holds); also an idempotency id that already names
    /// different work ([`Error::IdConflict`](crate::Error::IdConflict)).
    Conflict,
    /// 429: too many requests; slow down and try again.
    RateLimited,
    /// 429 whose code says a usage quota is exhausted: retrying will not help until the
    /// quota resets.
    QuotaExceeded,
    /// 5xx: the server failed.
    Server,
    /// Any other status.
    Other,
    /// Refused before anything was sent: an input broke a documented rule
    /// ([`Error::InvalidRequest`](crate::Error::InvalidRequest)).
    InvalidInput,
    /// The client is misconfigured ([`Error::Config`](crate::Error::Config)).
    Config,
    /// The call's (or the stream's) time ran out.
    Timeout,
    /// No connection could be made, or it failed on the way (refused, DNS, TLS, reset).
    Connection,
    /// The proxy between the client and the service failed or refused
    /// ([`Error::Proxy`](crate::Error::Proxy)).
    Proxy,
    /// The answer could not be read: not the expected shape, too large, or not what the
    /// call asked for.
    Decode,
    /// A redirect the client refused to follow.
    Redirect,
    /// The client looked the action up after a failure and found no trace of it
    /// ([`Error::NotProcessed`](crate::Error::NotProcessed)): the failed request may still
    /// arrive, so repeat it only with the same id
    /// ([`Error::repeat_with`](crate::Error::repeat_with)).
    NotProcessed,
    /// A list, a bulk action or a stream stopped short: some of what was asked for is
    /// missing ([`Error::ListCutShort`](crate::Error::ListCutShort), a stream's reader that fell behind).
    Incomplete,
    /// The service refused a request on a stream (a subscription), or reported an error
    /// there.
    Rejected,
    /// The stream was closed (by the server, for good, or by the caller).
    Closed,
    /// A webhook delivery failed verification.
    Webhook,
    /// A local file could not be made, written or put in place ([`Error::File`](crate::Error::File)).
    File,
    /// A wait ended early: what was waited for reached a final state other than the one
    /// wanted (a document declined, an order canceled or rejected, a post that failed).
    EndedOtherwise,
}

impl ErrorKind {
    /// The kind for a status and an optional server error code.
    pub fn from_status(status: u16, code: Option<&str>) -> Self {
        match status {
            400 | 422 => ErrorKind::BadRequest,
            401 => ErrorKind::Unauthorized,
            403 => ErrorKind::Forbidden,
            404 => ErrorKind::NotFound,
            409 | 412 => ErrorKind::Conflict,
            429 if code.is_some_and(is_quota_code) => ErrorKind::QuotaExceeded,
            429 => ErrorKind::RateLimited,
            500..=599 => ErrorKind::Server,
            _ => ErrorKind::Other,
        }
    }
}

fn is_quota_code(code: &str) -> bool {
    code.to_ascii_lowercase().contains("quota")
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ErrorKind::BadRequest => "bad request",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::Forbidden => "forbidden",
            ErrorKind::NotFound => "not found",
            ErrorKind::Conflict => "conflict",
            ErrorKind::RateLimited => "rate limited",
            ErrorKind::QuotaExceeded => "quota exceeded",
            ErrorKind::Server => "server error",
            ErrorKind::Other => "error",
            ErrorKind::InvalidInput => "invalid input",
            ErrorKind::Config => "configuration error",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connection => "connection failed",
            ErrorKind::Proxy => "proxy error",
            ErrorKind::Decode => "undecodable answer",
            ErrorKind::Redirect => "refused redirect",
            ErrorKind::NotProcessed => "not processed",
            ErrorKind::Incomplete => "incomplete",
            ErrorKind::File => "file error",
            ErrorKind::Rejected => "rejected",
            ErrorKind::Closed => "closed",
            ErrorKind::Webhook => "webhook verification failed",
            ErrorKind::EndedOtherwise => "ended otherwise",
        };
        f.write_str(s)
    }
}
