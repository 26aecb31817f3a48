//! The social client: configuration, the plan's rate limit, and the resource handles.

use std::str::FromStr;

use core_http::{
    ClientBuilder, Error, HttpClient, RateLimit, RequestOptions, Result, ServiceClient,
};

use crate::accounts::Accounts;
use crate::analytics::Analytics;
use crate::posts::Posts;
use crate::schedule::Schedule;

/// A client of the social publishing service. Cheap to clone; clones share the
/// connection pool and the rate limiter.
///
/// Build it with [`Client::new`], [`Client::builder`] or [`Client::from_env`], then
/// reach the resources: [`posts`](Client::posts), [`schedule`](Client::schedule),
/// [`analytics`](Client::analytics), [`accounts`](Client::accounts).
#[derive(Clone, Debug)]
pub struct Client {
    http: HttpClient,
}

impl ServiceClient for Client {
    const NAME: &'static str = env!("CARGO_PKG_NAME");
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const ENV_PREFIX: &'static str = "SOCIAL";

    fn from_http_client(http: HttpClient) -> Self {
        Client { http }
    }
}

impl Client {
    /// A client for `base_url` (e.g. `https://api.example.com`; paths start with `/v1`)
    /// authenticated with `api_key`, with every other setting at its default.
    pub fn new(
        base_url: impl Into<String>,
        api_key: impl Into<core_http::Secret>,
    ) -> Result<Client> {
        Client::builder()
            .base_url(base_url)
            .api_key(api_key)
            .build()
    }

    /// A builder for every setting (timeouts, retries, [`Plan`] rate limit, ...).
    pub fn builder() -> ClientBuilder<Client> {
        ClientBuilder::new()
    }

    /// A client from the environment: `SOCIAL_API_KEY` and `SOCIAL_BASE_URL` (required),
    /// `SOCIAL_PLAN` (`starter`, `pro` or `enterprise`: turns on that plan's rate limit),
    /// `SOCIAL_MAX_RETRIES`, `SOCIAL_TIMEOUT_SECS`.
    pub fn from_env() -> Result<Client> {
        Client::from_env_with(|name| std::env::var(name).ok())
    }

    /// As [`Client::from_env`], reading variables through `lookup` (for tests).
    pub fn from_env_with(lookup: impl Fn(&str) -> Option<String>) -> Result<Client> {
        let plan = lookup("SOCIAL_PLAN")
            .map(|p| p.parse::<Plan>())
            .transpose()?;
        let mut builder = ClientBuilder::<Client>::from_env_with(Self::ENV_PREFIX, &lookup)?;
        if let Some(plan) = plan {
            builder = builder.rate_limit(plan);
        }
        builder.build()
    }

    /// A copy of this client whose calls use these options (timeout, retries, extra
    /// headers); the pool and limiter stay shared.
    pub fn with_options(&self, options: &RequestOptions) -> Client {
        Client {
            http: self.http.with_options(options),
        }
    }

    /// Posts: create, list, iterate.
    pub fn posts(&self) -> Posts<'_> {
        Posts::new(self)
    }

    /// The publication schedule.
    pub fn schedule(&self) -> Schedule<'_> {
        Schedule::new(self)
    }

    /// Engagement analytics.
    pub fn analytics(&self) -> Analytics<'_> {
        Analytics::new(self)
    }

    /// Connected social media accounts.
    pub fn accounts(&self) -> Accounts<'_> {
        Accounts::new(self)
    }

    /// Typed requests to paths this crate does not model, with the same authentication,
    /// retries and errors: `client.raw().get::<serde_json::Value>("/v1/posts", &[])`.
    pub fn raw(&self) -> core_http::Raw<'_> {
        self.http.raw()
    }

    pub(crate) fn http(&self) -> &HttpClient {
        &self.http
    }
}

/// The service's plans and their documented rate limits. Passing one to
/// [`ClientBuilder::rate_limit`] makes the client pace itself under the limit instead of
/// running into 429s.
///
/// ```
/// let client = social_client::Client::builder()
///     .base_url("https://api.example.com")
///     .api_key("sk_live_...")
///     .rate_limit(social_client::Plan::Starter)
///     .build()?;
/// # Ok::<(), social_client::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Plan {
    /// 100 requests per minute.
    Starter,
    /// 1,000 requests per minute.
    Pro,
    /// 10,000 requests per minute.
    Enterprise,
}

impl Plan {
    /// The plan's limit in requests per minute.
    pub fn requests_per_minute(self) -> u32 {
        match self {
            Plan::Starter => 100,
            Plan::Pro => 1_000,
            Plan::Enterprise => 10_000,
        }
    }

    /// The plan's limit as a core-http rate limit (no burst above the per-minute count).
    pub fn rate_limit(self) -> RateLimit {
        RateLimit::per_minute(self.requests_per_minute())
    }
}

impl From<Plan> for Option<RateLimit> {
    fn from(plan: Plan) -> Self {
        Some(plan.rate_limit())
    }
}

impl FromStr for Plan {
    type Err = Error;

    fn from_str(s: &str) -> Result<Plan> {
        match s.trim().to_ascii_lowercase().as_str() {
            "starter" => Ok(Plan::Starter),
            "pro" => Ok(Plan::Pro),
            "enterprise" => Ok(Plan::Enterprise),
            other => Err(Error::Config(format!(
                "unknown social plan {other:?}: expected starter, pro or enterprise"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn _ensure_send_sync_clone() {
        fn check<T: Send + Sync + Clone>() {}
        check::<Client>();
    }

    #[test]
    fn plans_parse_and_carry_their_limits() {
        assert_eq!("Pro".parse::<Plan>().unwrap(), Plan::Pro);
        assert_eq!(Plan::Starter.requests_per_minute(), 100);
        assert_eq!(Plan::Enterprise.requests_per_minute(), 10_000);
        let err = "gold".parse::<Plan>().unwrap_err();
        assert!(err.to_string().contains("gold"), "{err}");
    }

    #[test]
    fn from_env_reads_the_plan_and_never_prints_the_key() {
        let env = |name: &str| match name {
            "SOCIAL_API_KEY" => Some("sk_live_secret".to_owned()),
            "SOCIAL_BASE_URL" => Some("https://api.example.com".to_owned()),
            "SOCIAL_PLAN" => Some("starter".to_owned()),
            _ => None,
        };
        let client = Client::from_env_with(env).unwrap();
        let debug = format!("{client:?}");
        assert!(!debug.contains("sk_live_secret"), "{debug}");
        assert!(
            debug.contains("100"),
            "the Starter limit should be configured: {debug}"
        );
        let missing = Client::from_env_with(|_| None).unwrap_err();
        assert!(missing.to_string().contains("SOCIAL_API_KEY"), "{missing}");
        let bad = Client::from_env_with(|n| {
            env(n).map(|v| if n == "SOCIAL_PLAN" { "gold".into() } else { v })
        });
        assert!(bad.is_err());
    }
}
