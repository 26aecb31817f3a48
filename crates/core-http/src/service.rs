//! For crates built on core-http (the service clients): what a service crate tells
//! core-http about itself, and the small helpers every crate uses the same way. Users of
//! a client crate do not need any of it.

use crate::client::HttpClient;
pub use crate::error::{Failure, rounded};
pub use crate::error_body::{ParsedErrorBody, parse_error_body};
pub use crate::observe::Observers;
pub use crate::pagination::check_page_size;
pub use crate::random::{unit_f64, uuid_v4};
pub use crate::rate_limit::shared::{
    BudgetStore, LONGEST_HOLD, LONGEST_QUEUE, Opening, Scope, SharedBudget, Take, Turn, Unavailable,
};
pub use crate::redact::Redactor;
pub use crate::time::{FOREVER, now};
pub use crate::url::{Origin, check_absolute_http, path_segment, strip_query};

/// What a service crate tells core-http about itself, so that one builder serves every
/// service: `core_http::HttpClient::builder()` is a `ClientBuilder<core_http::HttpClient>`.
pub trait ServiceClient: Sized {
    /// The crate name, for the `User-Agent` header.
    const NAME: &'static str;
    /// The crate version, for the `User-Agent` header.
    const VERSION: &'static str;
    /// The environment variable prefix (`SOCIAL` reads `SOCIAL_API_KEY`, ...).
    const ENV_PREFIX: &'static str;
    /// Whether the service de-duplicates POSTs by their `Idempotency-Key` (as documented,
    /// or as this workspace chose for it): only then does a key make a POST safe to
    /// retry after it may have reached the server. Defaults to `false`.
    const HONOURS_IDEMPOTENCY_KEYS: bool = false;
    /// Whether the service takes OAuth 2.0 client credentials, so that `from_env` reads
    /// `<PREFIX>_CLIENT_ID`, `<PREFIX>_CLIENT_SECRET`, `<PREFIX>_TOKEN_URL` and
    /// `<PREFIX>_SCOPE` when no API key is set. Defaults to `false`.
    const OAUTH: bool = false;
    /// Wraps a configured transport into the service client.
    fn from_http_client(http: HttpClient) -> Self;
}

/// Checks that an answer is about what was asked for: `answered` (the id or symbol the
/// answer carries) is `asked`, exactly (compare symbols in one case). An answer that leaves it out
/// (`""`) cannot contradict the question. Otherwise an [`Error::UnexpectedBody`] naming
/// both: a server that answers for another resource is never read as this one's answer.
///
/// ```
/// use core_http::service::check_answered;
/// assert!(check_answered("order", "ord_1", "ord_1").is_ok());
/// assert!(check_answered("order", "ord_1", "").is_ok());
/// let err = check_answered("order", "ord_1", "ord_9").unwrap_err();
/// assert!(err.to_string().contains("asked for order ord_1, the service answered ord_9"));
/// ```
///
/// [`Error::UnexpectedBody`]: crate::Error::UnexpectedBody
pub fn check_answered(what: &str, asked: &str, answered: &str) -> crate::Result<()> {
    if answered.is_empty() || answered == asked {
        return Ok(());
    }
    Err(crate::Error::UnexpectedBody {
        status: 200,
        message: format!(
            "asked for {what} {asked}, the service answered {answered}: this answer is \
             about another {what}"
        ),
    })
}

/// What a crate built on core-http needs of a client to open a connection of its own
/// as the client's calls do (a stream): [`HttpClient::parts`].
#[derive(Debug, Clone, Copy)]
pub struct Parts<'a> {
    client: &'a HttpClient,
}

impl HttpClient {
    /// What a crate built on core-http needs of this client ([`Parts`]).
    pub fn parts(&self) -> Parts<'_> {
        Parts { client: self }
    }
}

impl<'a> Parts<'a> {
    /// The client's `User-Agent`.
    pub fn user_agent(&self) -> &'a str {
        &self.client.inner.config.user_agent
    }

    /// The client's connect timeout.
    pub fn connect_timeout(&self) -> std::time::Duration {
        self.client.inner.config.connect_timeout
    }

    /// Whether the client was told to allow plain HTTP to a remote host.
    pub fn allow_insecure_http(&self) -> bool {
        self.client.inner.config.allow_insecure_http
    }

    /// The client's connection stack: its resolver, proxies, TLS configuration and
    /// sessions, and its credentials' stand-ins.
    pub fn dialer(&self) -> std::sync::Arc<crate::net::Dialer> {
        std::sync::Arc::clone(&self.client.inner.dialer)
    }

    /// What blanks the client's credentials out of texts.
    pub fn redactor(&self) -> crate::redact::Redactor {
        self.client.inner.config.redactor.clone()
    }

    /// The client's observer.
    pub fn observers(&self) -> crate::observe::Observers {
        self.client.inner.config.observer.clone()
    }

    /// How the client authenticates.
    pub fn auth(&self) -> &'a crate::auth::Auth {
        &self.client.inner.config.auth
    }

    /// The auth header a connection made now carries (its name and value: a key, or
    /// an OAuth token from the client's cache, fetched within `within` when missing),
    /// its credential as a stand-in that the connection's socket swaps back; `None`
    /// without auth.
    ///
    /// # Errors
    ///
    /// A credential that cannot be sent, or a token that could not be fetched in time.
    pub fn auth_header(
        &self,
        within: std::time::Duration,
    ) -> crate::Result<Option<(String, crate::auth::Secret)>> {
        let deadline = crate::time::Deadline::after(self.client.inner.config.clock.now(), within);
        Ok(self
            .client
            .auth_header(None, &deadline)?
            .map(|(name, value)| (name.into_owned(), value.into_owned())))
    }
}
