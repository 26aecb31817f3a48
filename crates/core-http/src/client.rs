//! [`HttpClient`], the transport a service client wraps, and [`Raw`], its calls to
//! endpoints a service crate does not model.

use std::fmt;
use std::sync::Arc;

use crate::error::Result;
use crate::headers::Headers;
use crate::request::RequestOptions;
use crate::response::{LastResponse, WithResponse};
use crate::{auth, rate_limit, time, url};

/// The most a connection reads from its socket at a time (ureq's default is 128 KiB).
///
/// A body is read from the socket into this buffer, then copied into the caller's, so a
/// small one means many reads and, where a read ends inside the caller's chunk, the rest
/// moved to its front again. Downloading a 1 GiB file into memory-backed storage
/// (2026-11-28, the esign benchmark alone, 15 rounds each, two runs of each size taking
/// turns), the client's throughput against a plain socket reading 256 KiB at a time was
/// 0.766 and 0.770 with 128 KiB, 0.882 and 0.840 with 256 KiB, 0.937 to 0.967 in four
/// runs with 512 KiB. The cost is memory: ureq allocates and zeroes the buffer once per
/// connection, so each open connection holds 384 KiB more than with ureq's default (the
/// download's peak resident memory went from 6.0-6.2 to 6.2-6.6 MiB).
const INPUT_BUFFER: usize = 512 * 1024;

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
    pub(crate) config: crate::setup::settings::Config,
    /// The base URL's origin, parsed once: where the client's credentials may go.
    pub(crate) base_origin: Option<crate::url::Origin>,
    /// `Bearer <key>`, made once for a client with an API key.
    pub(crate) bearer: Option<crate::auth::Secret>,
    pub(crate) bucket: Option<crate::rate_limit::Pacer>,
    pub(crate) tokens: crate::auth::TokenCache,
    /// How the client connects, for its calls and its streams alike: its resolver, its
    /// proxies, its one TLS configuration (its roots and its certificate) and the masks
    /// of its credentials.
    pub(crate) dialer: Arc<crate::net::Dialer>,
}

impl HttpClient {
    pub(crate) fn from_config(mut config: crate::setup::settings::Config) -> Result<Self> {
        let agent_config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(config.user_agent.as_str())
            .https_only(false)
            .max_idle_connections_per_host(16)
            .input_buffer_size(INPUT_BUFFER)
            .timeout_connect(Some(time::bounded(config.connect_timeout)))
            // A call's budget: a first attempt with the whole of it runs on these
            // (`wire::run`); any other gets what is left of its own.
            .timeout_global(Some(time::bounded(config.timeout)))
            // No proxy for the agent (not even ureq's from the environment): the
            // connector goes through the client's own, for each call's host.
            .proxy(None)
            // What ureq's decoders read (the `compression` feature); "" asks for none.
            .accept_encoding(if cfg!(feature = "compression") && config.compression {
                "gzip, br"
            } else {
                ""
            })
            .build();
        let tls = config.roots.rustls_config(config.identity.as_ref())?;
        let dialer = Arc::new(crate::net::Dialer::new(config.proxies.clone(), tls));
        // Texts blank the credentials' stand-ins as they blank the credentials.
        config.redactor = config.redactor.clone().with_masks(dialer.masks.clone());
        let agent = ureq::Agent::with_parts(
            agent_config,
            crate::connector::Connect {
                dialer: dialer.clone(),
            },
            crate::connector::NoResolve,
        );
        let bucket = match config.rate_limit {
            Some(limit) => Some(rate_limit::Pacer::new(
                rate_limit::PaceSettings {
                    limit,
                    shared: config.shared.as_deref(),
                    when_unavailable: config.when_unavailable,
                    patience: config.timeout,
                    observer: config.observer.clone(),
                    clock: config.clock.clone(),
                    sleeper: config.sleeper.clone(),
                },
                &rate_limit::shared::Scope {
                    base_url: config.base_url.as_deref().unwrap_or_default(),
                    identity: &config.auth.identity(),
                    limit,
                    connect: dialer.clone(),
                    clock: config.clock.clone(),
                },
            )?),
            None => None,
        };
        Ok(HttpClient {
            inner: Arc::new(Inner {
                agent,
                base_origin: config
                    .base_url
                    .as_deref()
                    .and_then(|b| url::Origin::parse(b).ok()),
                // The key's stand-in: the key itself goes only to the socket.
                bearer: match &config.auth {
                    auth::Auth::Bearer(key) => Some(auth::bearer(&auth::Secret::new(
                        dialer.masks.own_header(key.expose()),
                    ))),
                    _ => None,
                },
                config,
                bucket,
                tokens: auth::TokenCache::default(),
                dialer,
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
        let recorder = Arc::new(LastResponse::default());
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
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("config", &self.inner.config)
            .field("defaults", &self.defaults)
            .finish()
    }
}
