//! Client configuration: [`ClientBuilder`] (base URL, auth, retries, timeouts, rate limit,
//! headers) and reading it from environment variables.

mod env;
mod network;
pub(crate) mod settings;
#[cfg(test)]
mod tests;

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use crate::auth::{Auth, Secret};
use crate::client::HttpClient;
use crate::error::Result;
use crate::net::tls::RootCertificates;
use crate::rate_limit::RateLimit;
use crate::redact::Redactor;
use crate::retry::RetryPolicy;
use crate::service::ServiceClient;
use crate::time::{Clock, Sleeper, SystemClock, ThreadSleeper};
use env::{apply_env_settings, checked, env_config};
pub(crate) use settings::Config;

/// The default cap on a response body read into memory: 16 MiB.
pub const DEFAULT_MAX_BODY_SIZE: u64 = 16 * 1024 * 1024;
/// The default connect timeout: 10 s.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default whole-call timeout: 60 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

impl HttpClient {
    /// A builder for a bare client (service crates have their own `Client::builder()`).
    pub fn builder() -> ClientBuilder<HttpClient> {
        ClientBuilder::new()
    }
}

impl ServiceClient for HttpClient {
    const NAME: &'static str = "core-http";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const ENV_PREFIX: &'static str = "API";
    fn from_http_client(http: HttpClient) -> Self {
        http
    }
}

/// Builds a client: `HttpClient::builder()` of any client crate (`social_client`,
/// `esign_client`, ...), which re-exports this type and everything its setters take.
/// Every setter's doc says its default.
///
/// ```
/// use std::time::Duration;
/// use core_http::config::RetryPolicy;
/// use core_http::HttpClient;
///
/// let client = HttpClient::builder()
///     .base_url("https://api.example.com")
///     .api_key("sk_test_123")
///     .timeout(Duration::from_secs(30))
///     .retry_policy(RetryPolicy::default().with_max_retries(4))
///     .build()?;
/// # assert_eq!(client.base_url(), "https://api.example.com");
/// # Ok::<(), core_http::Error>(())
/// ```
pub struct ClientBuilder<C = HttpClient> {
    config: Config,
    _client: PhantomData<fn() -> C>,
}

/// The settings of a new builder for the client `name` at `version` (built here once,
/// not in every client crate).
fn defaults(name: &str, version: &str, honours_idempotency_keys: bool) -> Config {
    Config {
        base_url: None,
        auth: Auth::None,
        retry: RetryPolicy::default(),
        connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        timeout: DEFAULT_TIMEOUT,
        rate_limit: None,
        shared: None,
        when_unavailable: crate::rate_limit::WhenUnavailable::PaceAlone,
        headers: Vec::new(),
        user_agent: format!(
            "{name}/{version} (rust; core-http/{})",
            env!("CARGO_PKG_VERSION")
        ),
        allow_insecure_http: false,
        idempotency_keys: false,
        honours_idempotency_keys,
        max_body_size: DEFAULT_MAX_BODY_SIZE,
        compression: true,
        prefetch: true,
        max_redirects: 5,
        sleeper: Arc::new(ThreadSleeper),
        clock: Arc::new(SystemClock),
        roots: RootCertificates::default(),
        identity: None,
        proxy_choice: crate::proxy::ProxyChoice::default(),
        proxies: crate::proxy::Proxies::default(),
        observer: crate::observe::Observers(None),
        redactor: Redactor::default(),
    }
}

impl<C> fmt::Debug for ClientBuilder<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ClientBuilder").field(&self.config).finish()
    }
}

impl<C: ServiceClient> Default for ClientBuilder<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: ServiceClient> ClientBuilder<C> {
    /// A builder with the defaults and no base URL.
    ///
    /// ```
    /// let builder = core_http::ClientBuilder::<core_http::HttpClient>::new();
    /// assert!(builder.build().is_err()); // a base URL is required
    /// ```
    pub fn new() -> Self {
        ClientBuilder {
            config: defaults(C::NAME, C::VERSION, C::HONOURS_IDEMPOTENCY_KEYS),
            _client: PhantomData,
        }
    }

    /// A builder configured from the environment: `<PREFIX>_BASE_URL` (required),
    /// `<PREFIX>_API_KEY` (required, unless the service takes OAuth and
    /// `<PREFIX>_CLIENT_ID`, `<PREFIX>_CLIENT_SECRET` and `<PREFIX>_TOKEN_URL` are set,
    /// with `<PREFIX>_SCOPE` optional), and optionally `<PREFIX>_MAX_RETRIES` and
    /// `<PREFIX>_TIMEOUT_SECS` (a service client's `from_env` also reads
    /// `<PREFIX>_PLAN`, the plan it paces itself at, refused for a service that
    /// documents no plans: vision, worlds; and `<PREFIX>_RATE_BUDGET`, where the pace's
    /// budget is shared: [`shared`](Self::shared)). A missing or invalid value gives an
    /// [`Error::Config`](crate::Error::Config) naming the variable.
    ///
    /// ```no_run
    /// // Reads SOCIAL_BASE_URL, SOCIAL_API_KEY, SOCIAL_MAX_RETRIES and SOCIAL_TIMEOUT_SECS,
    /// // then lets the program change what it wants.
    /// let client = core_http::ClientBuilder::<core_http::HttpClient>::from_env("SOCIAL")?
    ///     .user_agent_suffix("nightly-report/1.0")
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn from_env(prefix: &str) -> Result<Self> {
        Self::from_env_with(prefix, |name| std::env::var(name).ok())
    }

    /// Like [`from_env`](Self::from_env), reading variables through `lookup` (for tests,
    /// or configuration kept elsewhere).
    ///
    /// ```
    /// use std::collections::HashMap;
    /// let settings = HashMap::from([
    ///     ("SOCIAL_BASE_URL", "https://api.example.com"),
    ///     ("SOCIAL_API_KEY", "sk_test"),
    /// ]);
    /// let client = core_http::ClientBuilder::<core_http::HttpClient>::from_env_with("SOCIAL", |name| {
    ///     settings.get(name).map(|v| v.to_string())
    /// })?
    /// .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn from_env_with(prefix: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        Ok(ClientBuilder {
            config: env_config(Self::new().config, prefix, C::OAUTH, &lookup)?,
            _client: PhantomData,
        })
    }

    /// Applies `<PREFIX>_BASE_URL` (required), `<PREFIX>_MAX_RETRIES` and
    /// `<PREFIX>_TIMEOUT_SECS` from `lookup`, leaving authentication to the caller.
    ///
    /// ```
    /// use core_http::{ClientBuilder, config::Auth};
    /// use core_http::HttpClient;
    /// let lookup = |name: &str| (name == "SOCIAL_BASE_URL").then(|| "https://api.example.com".to_owned());
    /// let client = ClientBuilder::<HttpClient>::new()
    ///     .env_settings_with("SOCIAL", &lookup)?
    ///     .auth(Auth::header("x-api-key", "sk_test"))
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn env_settings_with(
        mut self,
        prefix: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self> {
        apply_env_settings(&mut self.config, prefix, &lookup)?;
        Ok(self)
    }

    /// The service's base URL, e.g. `https://api.example.com` (a trailing `/` is dropped).
    /// Required: there is no default.
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("http://127.0.0.1:8080/") // a local sandbox: plain http to loopback is allowed
    ///     .api_key("sk_test")
    ///     .build()?;
    /// assert_eq!(client.base_url(), "http://127.0.0.1:8080");
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        let url = url.into();
        self.config.base_url = Some(url.trim_end_matches('/').to_owned());
        self
    }

    /// Authenticates with `Authorization: Bearer <key>`. Defaults to no authentication.
    ///
    /// ```
    /// let key = std::env::var("SOCIAL_API_KEY").unwrap_or_else(|_| "sk_test".into());
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key(key)
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn api_key(mut self, key: impl Into<Secret>) -> Self {
        self.config.auth = Auth::Bearer(key.into());
        self
    }

    /// Sets the authentication. Defaults to [`Auth::None`].
    ///
    /// ```
    /// use core_http::config::{Auth, OAuth2Config};
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .auth(Auth::oauth2(OAuth2Config::new(
    ///         "https://auth.example.com/oauth/token",
    ///         "my-client-id",
    ///         "my-client-secret",
    ///     )))
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn auth(mut self, auth: Auth) -> Self {
        self.config.auth = auth;
        self
    }

    /// Sets the retry policy. Defaults to [`RetryPolicy::default`] (2 retries).
    ///
    /// ```
    /// use std::time::Duration;
    /// use core_http::config::{Backoff, RetryPolicy};
    /// let policy = RetryPolicy::default()
    ///     .with_max_retries(5)
    ///     .with_backoff(Backoff::new(Duration::from_millis(200), Duration::from_secs(10), 0.5));
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .retry_policy(policy)
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.config.retry = policy;
        self
    }

    /// Sets the number of retries. Defaults to 2.
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .max_retries(0) // fail fast: the caller retries
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.config.retry.max_retries = retries;
        self
    }

    /// Sets the connect timeout. Defaults to 10 s.
    ///
    /// ```
    /// use std::time::Duration;
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .connect_timeout(Duration::from_secs(3))
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.config.connect_timeout = timeout;
        self
    }

    /// Sets the whole-call timeout: every attempt, wait and body read of one call fits in
    /// it. For streamed downloads it bounds the wait for the answer and each read. Defaults
    /// to 60 s.
    ///
    /// ```
    /// use std::time::Duration;
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .timeout(Duration::from_secs(15)) // retries and waits included
    ///     .build()?;
    /// assert_eq!(client.timeout(), Duration::from_secs(15));
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout = timeout;
        self
    }

    /// Paces requests with a client-side token bucket shared by all clones of the client,
    /// refilled 1 % slower than the rate, so that a request sent as a token comes back
    /// does not reach the server a moment before the server's own token. Defaults to no
    /// limit.
    ///
    /// ```
    /// use core_http::config::RateLimit;
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .rate_limit(RateLimit::per_minute(100).with_burst(150))
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn rate_limit(mut self, limit: impl Into<Option<RateLimit>>) -> Self {
        self.config.rate_limit = limit.into();
        self
    }

    /// Where the rate limit's budget is shared beyond this process: with every process
    /// of the machine using the same key, or of many machines through Redis
    /// (`core-budgets`' `Budget`, re-exported by each client as `config::Budget`, which
    /// `<SERVICE>_RATE_BUDGET` also sets). Without it (the default) the clones of the
    /// client share its bucket and each process paces alone; without a rate limit there
    /// is nothing to share. Whatever the store holds or answers, no call waits past its
    /// own time for it, nor past a minute for a turn ([`Error::RateLimited`](crate::Error::RateLimited)).
    pub fn shared(mut self, budget: impl crate::service::SharedBudget + 'static) -> Self {
        self.config.shared = Some(std::sync::Arc::new(budget));
        self
    }

    /// What a request does when the shared budget cannot be reached: pace alone and
    /// say so (the default), or wait for it within the call's time
    /// ([`WhenUnavailable`](crate::config::WhenUnavailable)).
    ///
    /// ```
    /// use core_http::config::{RateLimit, WhenUnavailable};
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .rate_limit(RateLimit::per_minute(100))
    ///     // with .shared(..): a budget kept in a file or on Redis
    ///     .when_unavailable(WhenUnavailable::Wait)
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn when_unavailable(mut self, choice: crate::rate_limit::WhenUnavailable) -> Self {
        self.config.when_unavailable = choice;
        self
    }

    /// Adds a header sent on every request. Defaults to none.
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .header("x-team", "growth")
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.config.headers.push((name.into(), value.into()));
        self
    }

    /// Appends a product token to the `User-Agent`, e.g. `my-tool/1.2`. Defaults to
    /// `<crate>/<version> (rust; core-http/<version>)` alone.
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .user_agent_suffix("nightly-report/1.2")
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn user_agent_suffix(mut self, suffix: &str) -> Self {
        self.config.user_agent = format!("{} {suffix}", self.config.user_agent);
        self
    }

    /// Declares that the server de-duplicates POSTs by their `Idempotency-Key`, and sends
    /// an automatic key (a random UUID, the same on every attempt) on each POST that has
    /// none: POSTs then become safe to retry. Turn it on only for a server you know
    /// honours the header. Defaults to `false` (or to what the service crate declares).
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .idempotency_keys(true) // only for a server known to honour the header
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn idempotency_keys(mut self, enabled: bool) -> Self {
        self.config.idempotency_keys = enabled;
        self.config.honours_idempotency_keys = enabled || C::HONOURS_IDEMPOTENCY_KEYS;
        self
    }

    /// Caps the size of a response body read into memory. Defaults to 16 MiB. The cap
    /// counts the bytes as decoded: a compressed answer that would expand past it is
    /// [`Error::ResponseTooLarge`](crate::Error::ResponseTooLarge) at the cap, whatever
    /// its size on the wire.
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .max_body_size(64 * 1024 * 1024)
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn max_body_size(mut self, bytes: u64) -> Self {
        self.config.max_body_size = bytes;
        self
    }

    /// Whether calls ask for compressed answers (`Accept-Encoding: gzip, br`). On by
    /// default when the crate is built with its `compression` feature (every client's
    /// default): JSON compresses several times over, which is most of a long list's
    /// time on a real link. What comes back compressed is decoded as it is read, and
    /// every cap counts the decoded bytes; an answer labelled with an encoding it does
    /// not decode as is an error naming the encoding
    /// ([`Error::UnexpectedBody`](crate::Error::UnexpectedBody) for a read), never
    /// retried. Off, no call asks; an answer compressed all the same is still decoded.
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .compression(false) // a link where CPU costs more than bytes
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn compression(mut self, enabled: bool) -> Self {
        self.config.compression = enabled;
        self
    }

    /// Whether lists fetch their next page while the caller reads the current one. On
    /// by default: a list of many pages then costs its transfer and not a round trip
    /// per page on top. At most one page ahead (memory stays at two pages); a page is
    /// fetched only once the caller has started on the one before it, never after the
    /// iterator is dropped, and through the same rate limiter and retries as any call.
    /// Each list can turn it off for itself
    /// ([`OffsetPaginator::prefetch`](crate::pagination::OffsetPaginator::prefetch),
    /// [`TokenPaginator::prefetch`](crate::pagination::TokenPaginator::prefetch)).
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .prefetch(false) // one request at a time, as the caller asks
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn prefetch(mut self, enabled: bool) -> Self {
        self.config.prefetch = enabled;
        self
    }

    /// Sets how many redirects are followed. Defaults to 5.
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .max_redirects(0) // a redirect is an error
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn max_redirects(mut self, redirects: u32) -> Self {
        self.config.max_redirects = redirects;
        self
    }

    /// Replaces the sleeper used between retries and by the rate limiter (tests use one
    /// that records instead of sleeping). Defaults to `std::thread::sleep`.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    /// use core_http::config::Sleeper;
    ///
    /// /// Records the waits instead of sleeping, so that a test runs at full speed.
    /// #[derive(Debug, Default)]
    /// struct Recorder(Mutex<Vec<Duration>>);
    /// impl Sleeper for Recorder {
    ///     fn sleep(&self, duration: Duration) {
    ///         self.0.lock().unwrap().push(duration);
    ///     }
    /// }
    ///
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .sleeper(Arc::new(Recorder::default()))
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn sleeper(mut self, sleeper: Arc<dyn Sleeper>) -> Self {
        self.config.sleeper = sleeper;
        self
    }

    /// Replaces the clock every deadline, the rate limiter and the OAuth token cache read.
    /// Defaults to the system's monotonic clock ([`SystemClock`](crate::config::SystemClock)).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Instant;
    /// use core_http::config::Clock;
    ///
    /// /// A clock that starts where the test wants (a real test would also move it).
    /// #[derive(Debug)]
    /// struct Fixed(Instant);
    /// impl Clock for Fixed {
    ///     fn now(&self) -> Instant {
    ///         self.0
    ///     }
    /// }
    ///
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .clock(Arc::new(Fixed(Instant::now())))
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.config.clock = clock;
        self
    }

    /// Installs an observer that sees every attempt of every call (method, path without
    /// query, attempt number, status or failure, retry delay, duration, request id,
    /// bytes) and every stream's connections, losses and reconnects: how to count
    /// calls, measure latency or export metrics without parsing logs. It never sees a
    /// credential.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use core_http::config::{Attempt, Observer};
    ///
    /// #[derive(Default)]
    /// struct Retries(AtomicU64);
    /// impl Observer for Retries {
    ///     fn attempt(&self, attempt: &Attempt) {
    ///         if attempt.number > 1 {
    ///             self.0.fetch_add(1, Ordering::Relaxed);
    ///         }
    ///     }
    /// }
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .observer(Retries::default())
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn observer(mut self, observer: impl crate::observe::Observer) -> Self {
        self.config.observer = crate::observe::Observers(Some(Arc::new(observer)));
        self
    }

    /// Checks the settings and builds the client.
    ///
    /// ```
    /// let missing_url = core_http::HttpClient::builder().api_key("sk_test").build();
    /// assert!(missing_url.is_err());
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn build(self) -> Result<C> {
        let config = checked(self.config, C::ENV_PREFIX)?;
        Ok(C::from_http_client(HttpClient::from_config(config)?))
    }
}
