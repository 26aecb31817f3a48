//! What an [`Error`] says of itself, whatever its variant: its status, its kind, its
//! request id, whether the server may have acted ([`Delivery`]), what to repeat it
//! with, whether a retry may mend it.

use std::fmt;

use super::{ApiError, Error, ErrorKind};

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
            Error::RateLimited { .. } => ErrorKind::RateLimited,
            Error::InvalidRequest(_) => ErrorKind::InvalidInput,
            Error::Config(_) => ErrorKind::Config,
            Error::Other(failure) => failure.kind(),
        }
    }

    /// The failure of a crate built on core-http this error carries
    /// ([`Error::Other`]), when it is a `T`: a stream's `WsError`, a webhook's
    /// `WebhookError`.
    ///
    /// ```
    /// let err = core_http::Error::InvalidRequest("qty must be positive".into());
    /// assert!(err.downcast_ref::<std::io::Error>().is_none());
    /// ```
    pub fn downcast_ref<T: std::error::Error + 'static>(&self) -> Option<&T> {
        match self {
            Error::Unsettled { source, .. } => source.downcast_ref(),
            Error::Other(failure) => {
                let failure: &(dyn std::error::Error + 'static) = failure.as_ref();
                failure.downcast_ref()
            }
            _ => None,
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
            | Error::RateLimited { .. }
            | Error::InvalidRequest(_)
            | Error::Config(_) => Delivery::NotSent,
            Error::Other(failure) => failure.delivery(),
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

    /// The error for a failed read of a streamed answer's body
    /// ([`StreamingResponse`](crate::transport::StreamingResponse), a download): a body that does
    /// not decode as its `Content-Encoding` says is [`Error::UnexpectedBody`] naming the
    /// encoding (the server's doing: repeating it will not mend it); anything else is
    /// [`Error::Io`], the answer cut short.
    ///
    /// ```
    /// let cut = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed early");
    /// let err = core_http::Error::body_read(200, cut);
    /// assert_eq!(err.kind(), core_http::ErrorKind::Connection);
    /// ```
    pub fn body_read(status: u16, source: std::io::Error) -> Self {
        match crate::wire::encoding_failure(&source) {
            Some(message) => Error::UnexpectedBody { status, message },
            None => Error::Io {
                delivery: Delivery::MayHaveBeenProcessed,
                source,
            },
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
