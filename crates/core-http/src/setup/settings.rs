//! The settings of a client, fixed when it is built: what every call and stream reads.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::auth::Auth;
use crate::net::tls::RootCertificates;
use crate::rate_limit::RateLimit;
use crate::redact::Redactor;
use crate::retry::RetryPolicy;
use crate::time::{Clock, Sleeper};

/// The settings of a client, fixed when it is built.
#[derive(Clone)]
pub(crate) struct Config {
    pub(crate) base_url: Option<String>,
    pub(crate) auth: Auth,
    pub(crate) retry: RetryPolicy,
    pub(crate) connect_timeout: Duration,
    pub(crate) timeout: Duration,
    pub(crate) rate_limit: Option<RateLimit>,
    /// Where the rate limit's budget is shared beyond the process (`None`: this
    /// process's clones of the client alone).
    pub(crate) shared: Option<Arc<dyn crate::rate_limit::shared::SharedBudget>>,
    /// What a request does when the shared budget cannot be reached.
    pub(crate) when_unavailable: crate::rate_limit::WhenUnavailable,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) user_agent: String,
    pub(crate) allow_insecure_http: bool,
    pub(crate) idempotency_keys: bool,
    pub(crate) honours_idempotency_keys: bool,
    pub(crate) max_body_size: u64,
    /// Whether calls ask for compressed answers.
    pub(crate) compression: bool,
    /// Whether lists fetch their next page while the caller reads the current one.
    pub(crate) prefetch: bool,
    pub(crate) max_redirects: u32,
    pub(crate) sleeper: Arc<dyn Sleeper>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) roots: RootCertificates,
    /// The client's certificate, for mutual TLS.
    pub(crate) identity: Option<crate::net::tls::Identity>,
    /// Which proxy, as the builder was told; and the one it leads to (set by `build`).
    pub(crate) proxy_choice: crate::proxy::ProxyChoice,
    pub(crate) proxies: crate::proxy::Proxies,
    /// Who sees every attempt and every stream's connections.
    pub(crate) observer: crate::observe::Observers,
    /// The credentials to blank out of texts built from answers (set by `build`).
    pub(crate) redactor: Redactor,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("base_url", &self.base_url)
            .field("auth", &self.auth)
            .field("retry", &self.retry)
            .field("connect_timeout", &self.connect_timeout)
            .field("timeout", &self.timeout)
            .field("rate_limit", &self.rate_limit)
            .field("shared", &self.shared)
            .field("when_unavailable", &self.when_unavailable)
            .field(
                "headers",
                &crate::redact::format_headers(
                    self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                ),
            )
            .field("user_agent", &self.user_agent)
            .field("allow_insecure_http", &self.allow_insecure_http)
            .field("idempotency_keys", &self.idempotency_keys)
            .field("honours_idempotency_keys", &self.honours_idempotency_keys)
            .field("max_body_size", &self.max_body_size)
            .field("compression", &self.compression)
            .field("prefetch", &self.prefetch)
            .field("roots", &self.roots)
            .field("identity", &self.identity)
            .field("proxies", &self.proxies)
            .field("observer", &self.observer)
            .finish_non_exhaustive()
    }
}
