//! What every answer of the sandbox keeps to, whatever route, extractor or failure made
//! it: the services' error shape, a connection that stays usable, and no dropped
//! connection.
//!
//! - **Error shape.** An error answer made outside the services' handlers (a path
//!   segment that is not UTF-8, a method the route does not have, a body over the limit,
//!   a WebSocket path asked without an upgrade) is rewritten as
//!   `{"error": {"code", "message"}}` with a code a client can match ([`code_for`]).
//! - **Keep-alive.** A request body the handler did not read is read to its end after
//!   the answer is made (a client reusing the connection at once finds it usable); one
//!   that cannot be read in time (over [`DRAIN_LIMIT`] bytes, or slower than
//!   [`DRAIN_TIMEOUT`]) gets `Connection: close` on the answer, honestly.
//! - **No dropped connection.** A handler that panics is answered `500 internal_error`
//!   instead of an empty reply; the fuzz test checks that none does.
//! - **Long URIs.** Over [`MAX_URI`] bytes: `414 uri_too_long` in the error shape.
//! - **Requests the HTTP parser refuses** before any route runs (an unreadable request
//!   line or header, a URI over 64 KB, headers over its buffer): [`Wire`] rewrites its
//!   bare answer into the error shape (`malformed_request`, `uri_too_long`,
//!   `headers_too_large`) with `Connection: close`.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use hyper::body::{Body as _, Frame, Incoming, SizeHint};

use crate::http::error;

/// The longest request URI the sandbox reads.
pub(crate) const MAX_URI: usize = 8 * 1024;

/// How much of a body nobody read the sandbox reads to keep the connection usable.
pub(crate) const DRAIN_LIMIT: u64 = 64 * 1024 * 1024;

/// How long it waits for that.
pub(crate) const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// A request body shared between the handler (which may read it, or not) and the server
/// (which reads what is left once the answer is made).
#[derive(Clone)]
pub(crate) struct SharedBody(Arc<Mutex<Option<Incoming>>>);

impl SharedBody {
    pub(crate) fn new(incoming: Incoming) -> Self {
        SharedBody(Arc::new(Mutex::new(Some(incoming))))
    }

    /// Reads what the handler left of the body; `false` when it could not be read to
    /// its end within the limits (the connection must then close).
    pub(crate) async fn drain(&self) -> bool {
        let mut read = 0u64;
        let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
            loop {
                let frame = std::future::poll_fn(|cx| self.poll_inner(cx)).await;
                match frame {
                    None => return true,
                    Some(Ok(frame)) => {
                        if let Some(data) = frame.data_ref() {
                            read += data.len() as u64;
                            if read > DRAIN_LIMIT {
                                return false;
                            }
                        }
                    }
                    Some(Err(_)) => return false,
                }
            }
        })
        .await;
        drained.unwrap_or(false)
    }

    fn poll_inner(&self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let mut guard = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match guard.as_mut() {
            None => Poll::Ready(None),
            Some(incoming) => {
                let polled = Pin::new(incoming).poll_frame(cx);
                if matches!(polled, Poll::Ready(None)) {
                    *guard = None;
                }
                polled
            }
        }
    }
}

impl hyper::body::Body for SharedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        self.poll_inner(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_none_or(Incoming::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), Incoming::size_hint)
    }
}

/// The code an error answer made outside the handlers gets, from its status (and, for a
/// 400, what the message says).
pub(crate) fn code_for(status: StatusCode, message: &str) -> &'static str {
    match status.as_u16() {
        400 if message.contains("URL") || message.contains("path") => "invalid_path",
        400 if message.to_ascii_lowercase().contains("upgrade")
            || message.contains("WebSocket")
            || message.contains("Sec-WebSocket") =>
        {
            "upgrade_required"
        }
        400 => "invalid_request",
        401 => "unauthorized",
        404 => "not_found",
        405 => "method_not_allowed",
        406 => "not_acceptable",
        408 => "request_timeout",
        411 => "length_required",
        413 => "payload_too_large",
        414 => "uri_too_long",
        415 => "unsupported_media_type",
        422 => "unprocessable",
        426 => "upgrade_required",
        431 => "headers_too_large",
        500..=599 => "internal_error",
        _ => "error",
    }
}

/// Rewrites an error answer that is not already JSON into the services' error shape.
pub(crate) async fn shape(response: Response, method: &str, path: &str) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if status.as_u16() < 400 || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let message = if text.is_empty() {
        match status {
            StatusCode::METHOD_NOT_ALLOWED => format!("{method} is not allowed on {path}"),
            _ => format!(
                "{} {}",
                status.as_u16(),
                status.canonical_reason().unwrap_or("error")
            ),
        }
    } else {
        text
    };
    let mut shaped = error(status, code_for(status, &message), message);
    // Headers the status needs (Allow on a 405, Retry-After) are kept.
    for name in [header::ALLOW, header::RETRY_AFTER, header::WWW_AUTHENTICATE] {
        if let Some(value) = parts.headers.get(&name) {
            shaped.headers_mut().insert(name, value.clone());
        }
    }
    for (name, value) in &parts.headers {
        if name.as_str().starts_with("x-") {
            shaped.headers_mut().insert(name.clone(), value.clone());
        }
    }
    shaped
}

/// The answer to a handler that panicked: the connection stays, the client gets an
/// error it can read.
pub(crate) fn panicked() -> Response {
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal_error",
        "the sandbox failed on this request (a bug of the sandbox)",
    )
}

/// The answer to a URI over [`MAX_URI`] bytes.
pub(crate) fn uri_too_long(length: usize) -> Response {
    error(
        StatusCode::URI_TOO_LONG,
        "uri_too_long",
        format!("the request URI is {length} bytes; at most {MAX_URI}"),
    )
}

/// Marks an answer whose request body could not be read to its end: the connection
/// closes after it.
pub(crate) fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A request's body for the router, shared with the server.
pub(crate) fn body(shared: &SharedBody) -> Body {
    Body::new(shared.clone())
}

/// A connection's bytes, passed through, except the answers the HTTP parser makes on its
/// own before any route runs (a request line or header it cannot read, `400`; a URI over
/// 64 KB, `414`; headers over its buffer, `431`): those go out in the services' error
/// shape, with `Connection: close` (the parser closes the connection after them).
///
/// They are recognised by their head: a `400`, `414` or `431` with `content-length: 0`,
/// which no other answer has ([`shape`] gives every error answer a JSON body).
pub(crate) struct Wire<T> {
    inner: T,
    /// The replacement still to write, and how much of it has been.
    pending: Vec<u8>,
    written: usize,
}

impl<T> Wire<T> {
    pub(crate) fn new(inner: T) -> Self {
        Wire {
            inner,
            pending: Vec::new(),
            written: 0,
        }
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> Wire<T> {
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while self.written < self.pending.len() {
            let n = std::task::ready!(
                Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.written..])
            )?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Wire<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Wire<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        std::task::ready!(this.poll_pending(cx))?;
        if let Some(replacement) = parser_refusal(buf) {
            this.pending = replacement;
            // The parser's bytes count as written; the replacement goes out now or on the
            // flush that follows.
            if let Poll::Ready(Err(e)) = this.poll_pending(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The services' shape of an answer the HTTP parser made itself, if `head` is one.
fn parser_refusal(head: &[u8]) -> Option<Vec<u8>> {
    let (status, code, message) = if head.starts_with(b"HTTP/1.1 400 ") {
        (
            "400 Bad Request",
            "malformed_request",
            "the request line or a header could not be read as HTTP/1.1",
        )
    } else if head.starts_with(b"HTTP/1.1 414 ") {
        (
            "414 URI Too Long",
            "uri_too_long",
            "the request URI is over 65,534 bytes; at most 8192",
        )
    } else if head.starts_with(b"HTTP/1.1 431 ") {
        (
            "431 Request Header Fields Too Large",
            "headers_too_large",
            "the request's header fields are over what the sandbox reads",
        )
    } else {
        return None;
    };
    let text = std::str::from_utf8(head).ok()?.to_ascii_lowercase();
    if !text.ends_with("\r\n\r\n") || !text.contains("\r\ncontent-length: 0\r\n") {
        return None;
    }
    let body = serde_json::json!({"error": {"code": code, "message": message}}).to_string();
    Some(
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}
