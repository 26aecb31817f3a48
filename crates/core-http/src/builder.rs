//! The request builder service crates use (method, path, query, body, idempotency key
//! and per-call overrides), the client's methods that start one, and [`Raw`], the escape
//! hatch for calls a crate does not model. What it builds is sent by `call.rs`.

use std::fmt;
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::client::HttpClient;
use crate::error::{Error, Result};
use crate::method::Method;
use crate::request::{Body, Content, RequestOptions};
use crate::response::Response;

impl HttpClient {
    /// Starts a request. `path` is joined to the base URL (an absolute URL is used as is,
    /// and must pass the same HTTPS rule; the client's credentials are sent only to the
    /// base URL's origin).
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder<'_> {
        RequestBuilder::new(self, method, path)
    }

    /// Starts a GET.
    pub fn get(&self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::Get, path)
    }

    /// Starts a POST.
    pub fn post(&self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::Post, path)
    }

    /// Starts a PUT.
    pub fn put(&self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::Put, path)
    }

    /// Starts a PATCH.
    pub fn patch(&self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::Patch, path)
    }

    /// Starts a DELETE.
    pub fn delete(&self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::Delete, path)
    }

    /// Requests to endpoints a service crate does not model, with the same auth,
    /// retries and errors.
    pub fn raw(&self) -> Raw<'_> {
        Raw { client: self }
    }
}

/// A request under construction. Get one from [`HttpClient::request`] (or `get`, `post`,
/// ...), then finish it with [`send`](RequestBuilder::send),
/// [`send_json`](RequestBuilder::send_json) or [`send_streaming`](RequestBuilder::send_streaming).
#[must_use = "a request does nothing until it is sent"]
pub struct RequestBuilder<'a> {
    pub(crate) client: &'a HttpClient,
    pub(crate) method: Method,
    /// The URL, joined once: the base URL and the path (or the path itself when it is
    /// an absolute URL), then each query parameter as it is added.
    pub(crate) url: String,
    /// The path was an absolute URL.
    pub(crate) absolute: bool,
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
            url: crate::url::join(client.base_url(), path),
            absolute: crate::url::is_absolute(path),
            body: None,
            options: RequestOptions::default(),
            authenticated: true,
            replay_safe: None,
            error: None,
        }
    }

    /// Adds a query parameter (percent-encoded when sent).
    pub fn query(mut self, name: &str, value: impl ToString) -> Self {
        crate::url::push_query(&mut self.url, name, &value.to_string());
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
    pub fn page(mut self, params: &crate::pagination::PageParams, max: u32) -> Self {
        if let Err(e) = crate::pagination::check_page_size(params.limit, max) {
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
        let mut encoded = String::new();
        for (i, (k, v)) in fields.iter().enumerate() {
            if i > 0 {
                encoded.push('&');
            }
            crate::url::encode_into(&mut encoded, k);
            encoded.push('=');
            crate::url::encode_into(&mut encoded, v);
        }
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
}

impl fmt::Debug for RequestBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestBuilder")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("body_len", &self.body.as_ref().map(|b| b.len()))
            .finish_non_exhaustive()
    }
}

/// The escape hatch: call any path and decode the answer into `serde_json::Value` or any
/// type (or take it undecoded), keeping the client's auth, retries and error handling.
///
/// ```no_run
/// use core_http::transport::Method;
/// # let client = core_http::HttpClient::builder().base_url("https://a.io").build()?;
/// let value: serde_json::Value = client.raw().get("/v1/something/new", &[("limit", "5")])?;
/// let answer = client.raw().send(Method::Get, "/v1/health", &[], None)?;
/// println!("{} {:?}", answer.status(), answer.headers().get("content-type"));
/// # Ok::<(), core_http::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Raw<'a> {
    client: &'a HttpClient,
}

impl Raw<'_> {
    /// GET `path` with query parameters.
    pub fn get<T: DeserializeOwned>(&self, path: &str, query: &[(&str, &str)]) -> Result<T> {
        self.send(Method::Get, path, query, None)?.json()
    }

    /// POST a JSON body to `path`. Not retried after the server may have acted, unless
    /// it carries an idempotency key the service honours.
    pub fn post<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T> {
        self.client.post(path).json(body).send_json()
    }

    /// PUT a JSON body to `path`.
    pub fn put<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T> {
        self.client.put(path).json(body).send_json()
    }

    /// PATCH a JSON body to `path` (not retried after the server may have acted).
    pub fn patch<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T> {
        self.client.patch(path).json(body).send_json()
    }

    /// DELETE `path`. An empty answer decodes as `null` (use `()` or `Option<T>`).
    pub fn delete<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        self.client.delete(path).send_json()
    }

    /// HEAD `path`: the status and headers of the answer.
    pub fn head(&self, path: &str, query: &[(&str, &str)]) -> Result<Response> {
        self.send(Method::Head, path, query, None)
    }

    /// Any method, with query parameters and an optional JSON body; the answer comes back
    /// undecoded (status, headers, body bytes). Error statuses are still
    /// [`Error::Api`].
    pub fn send(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        json_body: Option<&serde_json::Value>,
    ) -> Result<Response> {
        let mut rb = self.client.request(method, path);
        for (k, v) in query {
            rb = rb.query(k, v);
        }
        if let Some(body) = json_body {
            rb = rb.json(body);
        }
        rb.send()
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
