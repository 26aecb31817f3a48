//! The error types every service crate re-exports, and the tolerant parser for error bodies.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

use crate::response::Headers;

/// How many bytes of a body an error keeps (for `ApiError::body` and `Error::Decode` excerpts).
pub(crate) const BODY_EXCERPT_BYTES: usize = 512;

/// Everything that can go wrong when calling a service.
///
/// Match on the variant for the broad class, or call the helpers
/// ([`Error::status`], [`Error::kind`], [`Error::may_have_been_processed`]) which work
/// across variants.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with a non-success status. The [`ApiError`] carries the status,
    /// the server's message and code, and the request id.
    #[error(transparent)]
    Api(#[from] Box<ApiError>),

    /// The call did not complete within its timeout (connect timeout or the whole-call
    /// timeout, whichever ran out first).
    #[error("request timed out after {elapsed:?}{}", processed_note(*may_have_been_processed))]
    Timeout {
        /// Time spent on the call when it was given up.
        elapsed: Duration,
        /// `true` when the request may have reached the server before the timeout, so the
        /// server may have acted on it.
        may_have_been_processed: bool,
    },

    /// No connection could be made (refused, DNS failure, TLS handshake failure). The
    /// server never saw the request.
    #[error("could not connect: {message}")]
    Connect {
        /// What failed, in words.
        message: String,
    },

    /// The connection failed after it was established (reset, closed early, truncated body).
    #[error("I/O error: {source}{}", processed_note(*may_have_been_processed))]
    Io {
        /// `true` when the request may have reached the server.
        may_have_been_processed: bool,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// The server answered with a success status but the body was not what was expected.
    #[error(
        "could not decode the response (HTTP {status}): {source}; body starts with: {excerpt:?}"
    )]
    Decode {
        /// The HTTP status of the response.
        status: u16,
        /// The first bytes of the body, for diagnosis.
        excerpt: String,
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

    /// The response body was larger than the configured cap, so reading stopped.
    #[error("response body exceeds the limit of {limit} bytes")]
    ResponseTooLarge {
        /// The cap in bytes.
        limit: u64,
    },

    /// The request was refused before anything was sent, because an input broke a
    /// documented rule (for example a page size above the maximum).
    #[error("invalid request: {0}")]
    InvalidRequest(String),

    /// The client is misconfigured (missing base URL, bad environment variable, plain
    /// `http://` to a remote host, ...).
    #[error("configuration error: {0}")]
    Config(String),

    /// A webhook delivery failed verification or could not be parsed.
    #[cfg(feature = "webhook")]
    #[error(transparent)]
    Webhook(#[from] crate::webhook::WebhookError),
}

fn processed_note(may: bool) -> &'static str {
    if may {
        " (the server may have processed the request)"
    } else {
        ""
    }
}

/// A specialized `Result` for service calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Api(e) => Some(e.status),
            Error::Decode { status, .. } | Error::UnexpectedBody { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The [`ErrorKind`] of an API error, `None` for transport and local errors.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            Error::Api(e) => Some(e.kind),
            _ => None,
        }
    }

    /// The API error, when the server answered with an error status.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(e) => Some(e),
            _ => None,
        }
    }

    /// The request id the server gave, when there is one.
    pub fn request_id(&self) -> Option<&str> {
        self.api().and_then(|e| e.request_id.as_deref())
    }

    /// `true` when the server may have acted on the request even though the call failed:
    /// a timeout or connection reset after the request was sent, or a 500/502/504 answer.
    ///
    /// The client never repeats such a request on its own unless it carries an
    /// idempotency key; check the server's state, or repeat it with a key.
    pub fn may_have_been_processed(&self) -> bool {
        match self {
            Error::Timeout {
                may_have_been_processed,
                ..
            }
            | Error::Io {
                may_have_been_processed,
                ..
            } => *may_have_been_processed,
            Error::Api(e) => matches!(e.status, 500 | 502 | 504),
            Error::Decode { .. } | Error::UnexpectedBody { .. } => true,
            _ => false,
        }
    }

    pub(crate) fn config(msg: impl Into<String>) -> Self {
        Error::Config(msg.into())
    }

    pub(crate) fn decode(status: u16, body: &[u8], source: serde_json::Error) -> Self {
        Error::Decode {
            status,
            excerpt: excerpt(body, 200),
            source,
        }
    }
}

/// The broad class of an API error, derived from the status and the server's code.
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
    /// 409: the resource is not in a state that allows this.
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
}

impl ErrorKind {
    /// The kind for a status and an optional server error code.
    pub fn from_status(status: u16, code: Option<&str>) -> Self {
        match status {
            400 | 422 => ErrorKind::BadRequest,
            401 => ErrorKind::Unauthorized,
            403 => ErrorKind::Forbidden,
            404 => ErrorKind::NotFound,
            409 => ErrorKind::Conflict,
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
        };
        f.write_str(s)
    }
}

/// An error answer from the server: status, class, code, message and request id.
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
}

impl ApiError {
    /// Builds an error from a status, the response headers and the body, whatever shape
    /// the body has. Never fails.
    pub fn from_response(status: u16, headers: &Headers, body: &[u8]) -> Self {
        let parsed = parse_error_body(status, headers.get("content-type"), body);
        let kind = ErrorKind::from_status(status, parsed.code.as_deref());
        ApiError {
            status,
            kind,
            code: parsed.code,
            message: parsed.message,
            request_id: headers.request_id().map(str::to_owned),
            retry_after: crate::retry::retry_after_for(
                status,
                headers,
                std::time::SystemTime::now(),
            ),
            body: excerpt(body, BODY_EXCERPT_BYTES),
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

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Error::Api(Box::new(e))
    }
}

/// The code and message found in an error body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedErrorBody {
    pub(crate) code: Option<String>,
    pub(crate) message: String,
}

/// Reads an error body, trying in order: RFC 9457 problem+json; `{"error": {"code",
/// "message"}}`; `{"error": "...", "error_description"}`; `{"code"|"errorCode",
/// "message"}`; `{"message"}`; an HTML page's `<title>`; a text excerpt; the status text.
pub(crate) fn parse_error_body(
    status: u16,
    content_type: Option<&str>,
    body: &[u8],
) -> ParsedErrorBody {
    let fallback = || status_text(status).to_owned();
    if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(body) {
        let s = |v: Option<&Value>| v.and_then(value_text);
        let is_problem = content_type.is_some_and(|c| c.contains("problem+json"))
            || (map.contains_key("title") || map.contains_key("detail"))
                && !map.contains_key("error");
        if is_problem {
            let code = s(map.get("code"))
                .or_else(|| s(map.get("type")).filter(|t| t != "about:blank" && !t.is_empty()));
            let message = s(map.get("detail"))
                .or_else(|| s(map.get("title")))
                .unwrap_or_else(fallback);
            return ParsedErrorBody { code, message };
        }
        match map.get("error") {
            Some(Value::Object(inner)) => {
                let code = s(inner.get("code")).or_else(|| s(inner.get("type")));
                let message = s(inner.get("message"))
                    .or_else(|| s(inner.get("detail")))
                    .or_else(|| code.clone())
                    .unwrap_or_else(fallback);
                return ParsedErrorBody { code, message };
            }
            Some(Value::String(err)) => {
                let message = s(map.get("error_description"))
                    .or_else(|| s(map.get("message")))
                    .unwrap_or_else(|| err.clone());
                return ParsedErrorBody {
                    code: Some(err.clone()),
                    message,
                };
            }
            _ => {}
        }
        let code = s(map.get("code")).or_else(|| s(map.get("errorCode")));
        if let Some(message) = s(map.get("message")) {
            return ParsedErrorBody { code, message };
        }
        if code.is_some() {
            return ParsedErrorBody {
                code,
                message: fallback(),
            };
        }
    }
    let text = String::from_utf8_lossy(body);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return ParsedErrorBody {
            code: None,
            message: fallback(),
        };
    }
    if trimmed.starts_with('<') {
        let message = html_title(trimmed)
            .map(str::to_owned)
            .unwrap_or_else(fallback);
        return ParsedErrorBody {
            code: None,
            message,
        };
    }
    ParsedErrorBody {
        code: None,
        message: excerpt(trimmed.as_bytes(), 200),
    }
}

fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn html_title(html: &str) -> Option<&str> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title>")? + "<title>".len();
    let end = start + lower[start..].find("</title>")?;
    let title = html.get(start..end)?.trim();
    (!title.is_empty()).then_some(title)
}

/// The first `max` bytes of a body as text, cut on a character boundary.
pub(crate) fn excerpt(body: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(max)]);
    let mut s = text.into_owned();
    if body.len() > max {
        // Drop a replacement char produced by a multi-byte sequence cut in half.
        if s.ends_with('\u{FFFD}') {
            s.pop();
        }
        s.push('…');
    }
    s
}

/// The standard reason phrase for a status.
pub(crate) fn status_text(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unexpected status",
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
