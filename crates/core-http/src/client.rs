//! [`HttpClient`], the transport a service client wraps, and [`Raw`], its calls to
//! endpoints a service crate does not model.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::*;

/// The transport a service client wraps: configuration, a connection pool, the token
/// cache and the rate limiter, shared by all clones (cloning is cheap).
#[derive(Clone)]
pub struct HttpClient {
    pub(crate) inner: Arc<Inner>,
    pub(crate) defaults: RequestOptions,
    /// Set on the copy `with_response` makes: where answers' metadata is recorded.
    pub(crate) last_response: Option<Arc<crate::response::LastResponse>>,
}

pub(crate) struct Inner {
    pub(crate) agent: ureq::Agent,
    pub(crate) config: crate::config::Config,
    /// The base URL's origin, parsed once: where the client's credentials may go.
    pub(crate) base_origin: Option<crate::url::Origin>,
    /// `Bearer <key>`, made once for a client with an API key.
    pub(crate) bearer: Option<crate::auth::Secret>,
    pub(crate) bucket: Option<crate::rate_limit::TokenBucket>,
    pub(crate) tokens: crate::auth::TokenCache,
}

impl HttpClient {
    /// A builder for a bare client (service crates have their own `HttpClient::builder()`).
    pub fn builder() -> ClientBuilder<HttpClient> {
        ClientBuilder::new()
    }

    pub(crate) fn from_config(config: config::Config) -> Result<Self> {
        let agent_config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(config.user_agent.as_str())
            .https_only(false)
            .max_idle_connections_per_host(16)
            .timeout_resolve(Some(time::bounded(config.connect_timeout)))
            .timeout_connect(Some(time::bounded(config.connect_timeout)))
            .tls_config(config.roots.ureq_config(config.identity.as_ref()))
            // No proxy for the agent (not even ureq's from the environment): each call is
            // given the one for its URL.
            .proxy(None)
            .build();
        let agent = ureq::Agent::with_parts(
            agent_config,
            crate::connector::chain(config.proxies.clone()),
            dns::CachingResolver::default(),
        );
        let bucket = config
            .rate_limit
            .map(|limit| rate_limit::TokenBucket::new(limit, config.clock.now()));
        Ok(HttpClient {
            inner: Arc::new(Inner {
                agent,
                base_origin: config
                    .base_url
                    .as_deref()
                    .and_then(|b| url::Origin::parse(b).ok()),
                bearer: match &config.auth {
                    auth::Auth::Bearer(key) => Some(auth::bearer(key)),
                    _ => None,
                },
                config,
                bucket,
                tokens: auth::TokenCache::default(),
            }),
            defaults: RequestOptions::default(),
            last_response: None,
        })
    }

    /// The base URL every path is joined to.
    pub fn base_url(&self) -> &str {
        self.inner.config.base_url.as_deref().unwrap_or_default()
    }

    /// The whole-call timeout this client's calls get: the one set by
    /// [`with_options`](Self::with_options), or the client's. A service crate that makes
    /// several calls for one operation splits it between them.
    pub fn timeout(&self) -> std::time::Duration {
        self.defaults.timeout.unwrap_or(self.inner.config.timeout)
    }

    /// A copy of this client (sharing its connections, token and rate limiter) whose calls
    /// use `options` on top of any set before.
    pub fn with_options(&self, options: &RequestOptions) -> HttpClient {
        HttpClient {
            inner: Arc::clone(&self.inner),
            defaults: self.defaults.merged(options),
            last_response: self.last_response.clone(),
        }
    }

    /// Runs `call` on a copy of this client that records its answers, and returns the
    /// value with the metadata of the last successful answer (status, headers, request
    /// id, rate-limit figures).
    ///
    /// ```no_run
    /// # let client = core_http::HttpClient::builder().base_url("https://a.io").build()?;
    /// let page = client.with_response(|c| c.get("/v1/posts").send_json::<serde_json::Value>())?;
    /// println!("{:?} {:?}", page.request_id(), page.rate_limit());
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn with_response<T>(
        &self,
        call: impl FnOnce(&HttpClient) -> Result<T>,
    ) -> Result<WithResponse<T>> {
        let recorder = Arc::new(response::LastResponse::default());
        let observed = HttpClient {
            inner: Arc::clone(&self.inner),
            defaults: self.defaults.clone(),
            last_response: Some(recorder.clone()),
        };
        let value = call(&observed)?;
        let (status, headers) = recorder.take().unwrap_or_default();
        Ok(WithResponse {
            value,
            status,
            headers,
        })
    }

    pub(crate) fn record_response(&self, status: u16, headers: &Headers) {
        if let Some(recorder) = &self.last_response {
            recorder.record(status, headers);
        }
    }

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

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("config", &self.inner.config)
            .field("defaults", &self.defaults)
            .finish()
    }
}

/// The escape hatch: call any path and decode the answer into `serde_json::Value` or any
/// type (or take it undecoded), keeping the client's auth, retries and error handling.
///
/// ```no_run
/// use core_http::Method;
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
