//! The request builder service crates use: method, path, query, body, idempotency key and
//! per-call overrides. Also [`RequestOptions`], the overrides users can apply to any call.

use std::fmt;
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::HttpClient;
use crate::error::{Error, Result};
use crate::response::{Response, StreamingResponse};

/// An HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// GET
    Get,
    /// POST
    Post,
    /// PUT
    Put,
    /// PATCH
    Patch,
    /// DELETE
    Delete,
    /// HEAD
    Head,
}

impl Method {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Head => "HEAD",
        }
    }

    /// `true` for replay-safe methods, whose repetition has no further effect (GET,
    /// HEAD, PUT, DELETE).
    pub fn is_replay_safe(self) -> bool {
        matches!(
            self,
            Method::Get | Method::Head | Method::Put | Method::Delete
        )
    }

    /// `true` for methods that ask the server to change something (all but GET and HEAD).
    pub fn is_action(self) -> bool {
        !matches!(self, Method::Get | Method::Head)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Per-call overrides. Apply them to one call through a service client's
/// `with_options(...)`, which returns a cheap copy of the client that uses them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestOptions {
    /// The whole-call timeout (all attempts and waits), instead of the client's.
    pub timeout: Option<Duration>,
    /// The connect timeout, instead of the client's.
    pub connect_timeout: Option<Duration>,
    /// The number of retries, instead of the client's.
    pub max_retries: Option<u32>,
    /// The `Idempotency-Key` to send on a POST (the same on every attempt). It makes a
    /// POST safe to retry only on a service that de-duplicates by it (see
    /// [`RequestOptions::idempotency_key`]).
    pub idempotency_key: Option<String>,
    /// Extra headers for the call.
    pub headers: Vec<(String, String)>,
}

impl RequestOptions {
    /// No overrides.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the whole-call timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the connect timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Sets the number of retries.
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = Some(retries);
        self
    }

    /// Sets the `Idempotency-Key` sent with a POST (the same key on every attempt).
    ///
    /// The key is always sent, but it changes what is retried only on a service that
    /// promises to de-duplicate requests by it (e-signature sends; the builder's
    /// `idempotency_keys(true)` for a server you know honours keys). Elsewhere a POST
    /// that may have reached the server is still never repeated, key or not: a key the
    /// server ignores would not stop a second post.
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// These options with `other`'s set values taking precedence.
    pub(crate) fn merged(&self, other: &RequestOptions) -> RequestOptions {
        let mut headers = self.headers.clone();
        headers.extend(other.headers.iter().cloned());
        RequestOptions {
            timeout: other.timeout.or(self.timeout),
            connect_timeout: other.connect_timeout.or(self.connect_timeout),
            max_retries: other.max_retries.or(self.max_retries),
            idempotency_key: other
                .idempotency_key
                .clone()
                .or_else(|| self.idempotency_key.clone()),
            headers,
        }
    }
}

/// A request body: bytes kept so that every attempt sends the same thing, or a stream
/// opened afresh for each attempt.
#[derive(Clone)]
pub(crate) struct Body {
    pub(crate) content_type: String,
    pub(crate) content: Content,
    /// The body carries credentials (a token request's client secret): it is never sent
    /// to another origin, whatever a redirect says.
    pub(crate) credentials: bool,
}

/// What a body holds.
#[derive(Clone)]
pub(crate) enum Content {
    Bytes(Vec<u8>),
    Stream { open: Arc<OpenBody>, length: u64 },
}

/// Opens a streamed body; called once per attempt.
pub type OpenBody = dyn Fn() -> std::io::Result<Box<dyn Read + Send>> + Send + Sync;

impl Body {
    fn len(&self) -> u64 {
        match &self.content {
            Content::Bytes(bytes) => bytes.len() as u64,
            Content::Stream { length, .. } => *length,
        }
    }

    fn bytes(content_type: &str, bytes: Vec<u8>) -> Body {
        Body {
            content_type: content_type.to_owned(),
            content: Content::Bytes(bytes),
            credentials: false,
        }
    }
}

/// A request under construction. Get one from [`HttpClient::request`] (or `get`, `post`,
/// ...), then finish it with [`send`](RequestBuilder::send),
/// [`send_json`](RequestBuilder::send_json) or [`send_streaming`](RequestBuilder::send_streaming).
#[must_use = "a request does nothing until it is sent"]
pub struct RequestBuilder<'a> {
    pub(crate) client: &'a HttpClient,
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) body: Option<Body>,
    pub(crate) options: RequestOptions,
    pub(crate) authenticated: bool,
    pub(crate) replay_safe: Option<bool>,
    pub(crate) error: Option<Error>,
}

impl<'a> RequestBuilder<'a> {
    pub(crate) fn new(client: &'a HttpClient, method: Method, path: &str) -> Self {
        RequestBuilder {
            client,
            method,
            path: path.to_owned(),
            query: Vec::new(),
            body: None,
            options: RequestOptions::default(),
            authenticated: true,
            replay_safe: None,
            error: None,
        }
    }

    /// Adds a query parameter (percent-encoded when sent).
    pub fn query(mut self, name: &str, value: impl ToString) -> Self {
        self.query.push((name.to_owned(), value.to_string()));
        self
    }

    /// Adds a query parameter when `value` is `Some`.
    pub fn query_opt(self, name: &str, value: Option<impl ToString>) -> Self {
        match value {
            Some(v) => self.query(name, v),
            None => self,
        }
    }

    /// Adds `limit` and `offset` (those set) for a page of a list whose pages hold at
    /// most `max` items. A limit outside `1..=max` makes the call fail with
    /// [`Error::InvalidRequest`] before anything is sent.
    pub fn page(mut self, params: &crate::PageParams, max: u32) -> Self {
        if let Err(e) = crate::check_page_size(params.limit, max) {
            self.error.get_or_insert(e);
        }
        self.query_opt("limit", params.limit)
            .query_opt("offset", params.offset)
    }

    /// Sets a JSON body (`Content-Type: application/json`).
    pub fn json<T: Serialize + ?Sized>(mut self, body: &T) -> Self {
        match serde_json::to_vec(body) {
            Ok(bytes) => self.body = Some(Body::bytes("application/json", bytes)),
            Err(e) => {
                self.error = Some(Error::InvalidRequest(format!(
                    "the body could not be serialized: {e}"
                )))
            }
        }
        self
    }

    /// Sets a form body (`application/x-www-form-urlencoded`).
    pub fn form(mut self, fields: &[(&str, &str)]) -> Self {
        let encoded = fields
            .iter()
            .map(|(k, v)| format!("{}={}", crate::url::encode(k), crate::url::encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.body = Some(Body::bytes(
            "application/x-www-form-urlencoded",
            encoded.into_bytes(),
        ));
        self
    }

    /// Sets a raw body with its content type.
    pub fn bytes(mut self, content_type: &str, bytes: Vec<u8>) -> Self {
        self.body = Some(Body::bytes(content_type, bytes));
        self
    }

    /// Sets a streamed body of exactly `length` bytes, sent with that `Content-Length`.
    /// `open` is called for each attempt (a retry or a 307/308 redirect sends the body
    /// again from the start), so the body is never held in memory as a whole. An attempt
    /// whose reader yields a different number of bytes fails with an I/O error instead
    /// of sending a wrong body; an error from `open` itself ends the call, unretried.
    pub fn body_stream(
        mut self,
        content_type: &str,
        length: u64,
        open: impl Fn() -> std::io::Result<Box<dyn Read + Send>> + Send + Sync + 'static,
    ) -> Self {
        self.body = Some(Body {
            content_type: content_type.to_owned(),
            content: Content::Stream {
                open: Arc::new(open),
                length,
            },
            credentials: false,
        });
        self
    }

    /// Adds a header for this call.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the `Idempotency-Key` (sent unchanged on every attempt). On a service that
    /// de-duplicates by it, a POST with a key is retried like a GET, because the server
    /// will not act on it twice; elsewhere it is sent and changes nothing.
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.options.idempotency_key = Some(key.into());
        self
    }

    /// Overrides the whole-call timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }

    /// Overrides the number of retries.
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.options.max_retries = Some(retries);
        self
    }

    /// Applies a set of overrides (set values win over earlier ones).
    pub fn options(mut self, options: &RequestOptions) -> Self {
        self.options = self.options.merged(options);
        self
    }

    /// Declares this request replay-safe: repeating it is safe even if the server acted
    /// on it (for example a POST that is a pure query, or that carries its own dedup id
    /// in the body).
    /// Defaults to safe for GET, HEAD, PUT and DELETE, and for a POST whose idempotency
    /// key the service honours; unsafe otherwise.
    pub fn replay_safe(mut self, safe: bool) -> Self {
        self.replay_safe = Some(safe);
        self
    }

    /// Sends without the client's credentials (e.g. a token request).
    pub fn unauthenticated(mut self) -> Self {
        self.authenticated = false;
        self
    }

    /// Sends the request, retrying as the policy allows, and returns the success response
    /// with its body read (up to the client's cap). Error statuses become [`Error::Api`].
    pub fn send(self) -> Result<Response> {
        crate::call::send_buffered(self)
    }

    /// Sends a request that removes something (a `DELETE`), ignoring the answer's body.
    ///
    /// One rule for every delete: a `404` that answers a *repeat* of the request, after
    /// an earlier attempt may have reached the server and been acted on (its answer was
    /// lost: a timeout, a reset, a 5xx), is success. The thing is gone, which is what
    /// was asked, and the earlier attempt most likely removed it. A `404` to the first
    /// attempt stays [`ErrorKind::NotFound`](crate::ErrorKind::NotFound): there was
    /// nothing to delete.
    ///
    /// ```no_run
    /// # let client = core_http::HttpClient::builder().base_url("https://api.example.com").build()?;
    /// client.delete("/v1/projects/proj_1").send_delete()?;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn send_delete(self) -> Result<()> {
        match self.send() {
            Ok(_) => Ok(()),
            Err(Error::Api(api)) if api.status == 404 && api.after_possible_delivery => {
                log::debug!(
                    "a repeated delete answered 404 after an earlier attempt may have done it: \
                     taken as done"
                );
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Sends the request and decodes the JSON body of the success response.
    pub fn send_json<T: DeserializeOwned>(self) -> Result<T> {
        self.send()?.json()
    }

    /// Sends the request and returns the success response with its body unread, for
    /// downloads. The timeout bounds the wait for the answer and each read of the body,
    /// not the whole transfer.
    pub fn send_streaming(self) -> Result<StreamingResponse> {
        crate::call::send_streaming(self)
    }
}

impl fmt::Debug for RequestBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestBuilder")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("query", &self.query)
            .field("body_len", &self.body.as_ref().map(|b| b.len()))
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_merge_prefers_later_values() {
        let base = RequestOptions::new()
            .timeout(Duration::from_secs(5))
            .header("a", "1");
        let call = RequestOptions::new().max_retries(0).header("b", "2");
        let merged = base.merged(&call);
        assert_eq!(merged.timeout, Some(Duration::from_secs(5)));
        assert_eq!(merged.max_retries, Some(0));
        assert_eq!(merged.headers.len(), 2);
        let again = merged.merged(&RequestOptions::new().timeout(Duration::from_secs(1)));
        assert_eq!(again.timeout, Some(Duration::from_secs(1)));
    }
}
