//! What a server said when it refused: [`ApiError`] (an error answer: status, kind,
//! code, message, request id, headers) and [`ItemFailure`] (one item a bulk action could
//! not carry out), each built from what the caller read, credentials blanked out.

use std::fmt;
use std::time::Duration;

use crate::error_body::{BODY_EXCERPT_BYTES, excerpt, parse_error_body};
use crate::headers::Headers;
use crate::kind::ErrorKind;
use crate::redact::Redactor;

/// One item a bulk action could not carry out, or whose outcome the answer does not say
/// in a form the client reads: its id (or symbol), and the status, code and message the
/// service gave for it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ItemFailure {
    /// The item's id, or its symbol, when the answer named it (`None` as well for what
    /// the answer holds beside its list and the client does not read).
    pub id: Option<String>,
    /// The status the service gave this item; `None` when the answer gave none the
    /// client reads (text, `null`, none at all): the item is not known to be done.
    pub status: Option<u16>,
    /// The service's code, when it gave one.
    pub code: Option<String>,
    /// The service's message, or what the client could not read.
    pub message: String,
}

impl ItemFailure {
    /// A failure from its parts: the item `id` was answered `status`.
    pub fn new(id: Option<String>, status: u16, code: Option<String>, message: String) -> Self {
        ItemFailure {
            id,
            status: Some(status),
            code,
            message,
        }
    }

    /// An item whose outcome the answer does not say in a form the client reads.
    pub(crate) fn unread(id: Option<String>, message: String) -> Self {
        ItemFailure {
            id,
            status: None,
            code: None,
            message,
        }
    }

    /// The kind of the status the service gave this item
    /// ([`ErrorKind::Decode`] when it gave none the client reads).
    pub fn kind(&self) -> ErrorKind {
        match self.status {
            Some(status) => ErrorKind::from_status(status, self.code.as_deref()),
            None => ErrorKind::Decode,
        }
    }
}

impl fmt::Display for ItemFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let item = self.id.as_deref().unwrap_or("an item");
        match self.status {
            Some(status) => write!(
                f,
                "{item} (HTTP {status}{}): {}",
                self.code
                    .as_deref()
                    .map(|c| format!(", {c}"))
                    .unwrap_or_default(),
                self.message
            ),
            None => write!(f, "{item} (no status it can read): {}", self.message),
        }
    }
}

/// An error answer from the server: status, class, code, message, request id and
/// headers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// The class of error, from the status and code.
    pub kind: ErrorKind,
    /// The server's machine-readable error code, when it gave one.
    pub code: Option<String>,
    /// The server's human-readable message (or the status text when the body had none).
    pub message: String,
    /// The request id from the response headers, for support requests.
    pub request_id: Option<String>,
    /// How long the server asked us to wait before trying again, when it said.
    pub retry_after: Option<Duration>,
    /// The start of the raw body (at most 512 bytes), for diagnosis.
    pub body: String,
    /// The answer's headers (credential headers show `***` in `Debug`).
    pub headers: Headers,
    /// `true` when something before this answer may have reached the server and been
    /// acted on: an earlier attempt (a timeout, a reset, a 5xx) or the original request,
    /// when this answers a hop after a redirect. The answer then says nothing of whether
    /// the request was carried out ([`Error::delivery`](crate::Error::delivery) is
    /// `MayHaveBeenProcessed`), and a `404` may mean the earlier attempt did the work: see
    /// [`RequestBuilder::send_delete`](crate::builder::RequestBuilder::send_delete).
    pub after_possible_delivery: bool,
}

impl ApiError {
    /// An error from a status, the response headers, the body (read whatever its
    /// shape: it never fails) and the wait the server asked for. `redact` blanks the
    /// client's credentials out of every text taken from the body.
    pub(crate) fn build(
        status: u16,
        headers: &Headers,
        body: &[u8],
        redact: &Redactor,
        retry_after: Option<Duration>,
    ) -> Self {
        let parsed = parse_error_body(status, headers.get("content-type"), body);
        let kind = ErrorKind::from_status(status, parsed.code.as_deref());
        ApiError {
            status,
            kind,
            code: parsed.code.map(|c| redact.apply(c)),
            message: redact.apply(parsed.message),
            request_id: headers.request_id().map(str::to_owned),
            retry_after,
            body: redact.apply(excerpt(body, BODY_EXCERPT_BYTES)),
            headers: headers.clone(),
            after_possible_delivery: false,
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {} {}: {}", self.status, self.kind, self.message)?;
        if let Some(code) = &self.code {
            write!(f, " (code: {code})")?;
        }
        if let Some(id) = &self.request_id {
            write!(f, " [request id: {id}]")?;
        }
        if let Some(wait) = self.retry_after {
            write!(f, " (retry after {}s)", wait.as_secs_f64())?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}
