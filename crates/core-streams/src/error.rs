//! Why a stream failed, or a request on it: [`WsError`].

/// Why a stream failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WsError {
    /// The upgrade was refused with 401 or 403: the credentials are wrong or do not allow
    /// streaming. The stream ends.
    #[error("the stream was refused with HTTP {status}: {message}")]
    Unauthorized {
        /// 401 or 403.
        status: u16,
        /// The server's message, when it gave one.
        message: String,
    },
    /// The upgrade was refused with another status.
    #[error("the stream upgrade was refused with HTTP {status}: {message}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The server's message, when it gave one.
        message: String,
    },
    /// The server closed the stream with a code that is not worth reconnecting after
    /// (policy or protocol). The stream ends.
    #[error("the server closed the stream with code {code}: {reason}")]
    Closed {
        /// The close code.
        code: u16,
        /// The reason the server gave.
        reason: String,
    },
    /// The server refused a subscription or reported an error; the stream goes on.
    #[error("the server reported: {0}")]
    Server(String),
    /// A message was larger than the limit. The stream ends.
    #[error("a message of {size} bytes exceeds the limit of {limit} bytes")]
    MessageTooLarge {
        /// The message's size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// No connection could be made (refused, DNS, TLS).
    #[error("could not connect the stream: {0}")]
    Connect(String),
    /// The connection or the handshake did not complete in time.
    #[error("the stream timed out: {0}")]
    Timeout(String),
    /// The connection failed.
    #[error("stream I/O error: {0}")]
    Io(String),
    /// The server broke the WebSocket protocol. The stream ends.
    #[error("the server broke the WebSocket protocol: {0}")]
    Protocol(String),
    /// The stream was closed by the caller.
    #[error("the stream is closed")]
    ClosedByCaller,
    /// The caller stopped reading and the lossless lane filled up: events after this
    /// point were lost. The stream drops the connection, waits until the caller has read
    /// half of what is queued, and reconnects; the service's recovery after the
    /// reconnect rebuilds what it can (see the service's docs).
    #[error(
        "the reader fell behind: {capacity} events were waiting; later events were lost \
         until the stream reconnects and recovers"
    )]
    FellBehind {
        /// The lossless lane's capacity.
        capacity: usize,
    },
    /// A request ([`Stream::request`](super::Stream::request)) was never written: the caller's time ran out while
    /// disconnected, or the stream ended. Safe to send again.
    #[error("not sent: {0}")]
    NotSent(String),
    /// A request was written and no answer came (the time ran out, or the connection
    /// was lost): the server may have acted on it. The stream never writes it again.
    #[error("sent, but not answered: {0}; it may have been acted on")]
    Unanswered(String),
    /// The proxy refused the tunnel to the service (407: it wants credentials, or
    /// refused those given; 403: not allowed), or answered something else than a
    /// tunnel. 407 and 403 end the stream; others are retried like a failed connection.
    #[error("{message}")]
    ProxyRefused {
        /// The proxy's status, when it answered one.
        status: Option<u16>,
        /// What happened, naming the proxy (never its credentials).
        message: String,
    },
    /// The server refused a request ([`Stream::request`](super::Stream::request)), with its code and reason.
    #[error("the server refused it ({code}): {message}")]
    Rejected {
        /// The server's code for the refusal.
        code: String,
        /// Its reason.
        message: String,
    },
    /// The server sent a message the service knows but could not read; the stream goes
    /// on.
    #[error("the server sent a message that could not be read: {0}")]
    Undecodable(String),
}

impl WsError {
    /// What kind of failure this is ([`Error::kind`](core_http::Error::kind) of a stream's
    /// error): a refused upgrade has the kind of its status.
    pub fn kind(&self) -> core_http::ErrorKind {
        use core_http::ErrorKind as K;
        match self {
            WsError::Unauthorized { status, .. } | WsError::Refused { status, .. } => {
                K::from_status(*status, None)
            }
            WsError::Closed { .. } | WsError::ClosedByCaller => K::Closed,
            WsError::Server(_) | WsError::Rejected { .. } => K::Rejected,
            WsError::MessageTooLarge { .. } | WsError::Protocol(_) | WsError::Undecodable(_) => {
                K::Decode
            }
            WsError::Connect(_) | WsError::Io(_) => K::Connection,
            WsError::Timeout(_) | WsError::Unanswered(_) => K::Timeout,
            WsError::FellBehind { .. } => K::Incomplete,
            WsError::NotSent(_) => K::NotProcessed,
            WsError::ProxyRefused { .. } => K::Proxy,
        }
    }
}

/// A stream's failure travels in a client's `Error` (`?` in a function returning one),
/// with its kind: [`Error::downcast_ref`](core_http::Error::downcast_ref) gets it back.
impl From<WsError> for core_http::Error {
    fn from(e: WsError) -> Self {
        core_http::Error::Other(Box::new(e))
    }
}

impl core_http::service::Failure for WsError {
    fn kind(&self) -> core_http::ErrorKind {
        WsError::kind(self)
    }

    /// A request written on the stream and not answered may have been carried out; one
    /// the server refused was answered; anything else never reached it.
    fn delivery(&self) -> core_http::Delivery {
        match self {
            WsError::Unanswered(_) => core_http::Delivery::MayHaveBeenProcessed,
            WsError::Rejected { .. } => core_http::Delivery::Processed,
            _ => core_http::Delivery::NotSent,
        }
    }
}
