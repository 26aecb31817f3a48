//! The trading client: configuration (the environment, paper by default; the plan), and
//! the resource handles.

use std::sync::Arc;

use core_http::{Error, Result, config::RateLimit};

/// A client of the trading service. Cheap to clone; clones share the connection pool
/// and the rate limiter.
///
/// Build it with [`Client::new`] (paper trading), [`Client::live`] (real money, asked
/// for by name), [`Client::builder`] or [`Client::from_env`] (`TRADING_BASE_URL`,
/// `TRADING_API_KEY`, and optionally `TRADING_ENVIRONMENT` = `paper` or `live`,
/// `TRADING_STREAM_URL`, `TRADING_PLAN` = `free`, `pro` or `enterprise`), then reach the
/// resources: [`markets`](Client::markets), [`orders`](Client::orders),
/// [`account`](Client::account), [`history`](Client::history), [`news`](Client::news),
/// and the [`stream`](Client::stream).
#[derive(Clone, Debug)]
pub struct Client {
    http: core_http::HttpClient,
    settings: Settings,
}

// Orders carry a client_order_id the service de-duplicates by (our documented choice,
// docs/trading.md): the order POST is marked replay-safe where it is sent, not through
// Idempotency-Key handling.
core_http::service_client!(
    Client,
    env_prefix = "TRADING",
    plan = Plan,
    settings = settings,
    from_env_hook = Client::from_env_settings,
);

/// Which account the client trades for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Environment {
    /// Paper trading: simulated money. The default.
    #[default]
    Paper,
    /// Real money. Only ever chosen by name ([`Client::live`],
    /// [`Client::with_environment`], `TRADING_ENVIRONMENT=live`).
    Live,
}

impl Environment {
    /// `paper` or `live`.
    ///
    /// ```
    /// use trading_client::Environment;
    /// assert_eq!(Environment::Paper.as_str(), "paper");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Paper => "paper",
            Environment::Live => "live",
        }
    }
}

impl std::fmt::Display for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The client's own settings beside the transport's.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    inner: Arc<SettingsInner>,
}

#[derive(Debug, Clone, Default)]
struct SettingsInner {
    environment: Environment,
    stream_url: Option<String>,
    plan: Option<Plan>,
}

impl Client {
    /// A live-trading client (real money) for `base_url` with `api_key`.
    ///
    /// ```
    /// use trading_client::{Client, Environment};
    /// let key = std::env::var("TRADING_LIVE_KEY").unwrap_or_else(|_| "lk".into());
    /// let client = Client::live("https://api.example.com", key)?;
    /// assert_eq!(client.environment(), Environment::Live);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn live(
        base_url: impl Into<String>,
        api_key: impl Into<core_http::config::Secret>,
    ) -> Result<Client> {
        Ok(Client::new(base_url, api_key)?.with_environment(Environment::Live))
    }

    /// The same client for another environment. The base URL does not change: give the
    /// environment's own URL to the builder.
    ///
    /// ```
    /// use trading_client::{Client, Environment};
    /// let client = Client::new("https://live.example.com", "lk")?.with_environment(Environment::Live);
    /// assert_eq!(client.environment(), Environment::Live);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn with_environment(mut self, environment: Environment) -> Client {
        Arc::make_mut(&mut self.settings.inner).environment = environment;
        self
    }

    /// The same client streaming from `url` instead of the one derived from the base URL
    /// (`https://host/x` gives `wss://host/x/stream`).
    ///
    /// ```
    /// use trading_client::Client;
    /// let client = Client::new("https://paper.example.com", "pk")?
    ///     .with_stream_url("wss://stream.example.com/v1");
    /// assert_eq!(client.stream_url(), "wss://stream.example.com/v1");
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn with_stream_url(mut self, url: impl Into<String>) -> Client {
        Arc::make_mut(&mut self.settings.inner).stream_url = Some(url.into());
        self
    }

    /// Tells the client its plan, so that it refuses what the plan does not include
    /// (streaming on Free) before asking. The rate limit is set separately, with
    /// `builder().rate_limit(plan)`. Defaults to unknown: the server decides.
    ///
    /// ```
    /// use trading_client::{Client, Plan};
    /// let client = Client::builder()
    ///     .base_url("https://paper.example.com")
    ///     .api_key("pk")
    ///     .rate_limit(Plan::Free)
    ///     .build()?
    ///     .with_plan(Plan::Free);
    /// assert!(client.stream().is_err()); // streaming is a Pro feature: refused before connecting
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn with_plan(mut self, plan: Plan) -> Client {
        Arc::make_mut(&mut self.settings.inner).plan = Some(plan);
        self
    }

    /// The environment the client trades in.
    ///
    /// ```
    /// use trading_client::{Client, Environment};
    /// let client = Client::new("https://paper.example.com", "pk")?;
    /// assert_eq!(client.environment(), Environment::Paper);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn environment(&self) -> Environment {
        self.settings.inner.environment
    }

    /// The plan the client was told it is on, if any.
    ///
    /// ```
    /// use trading_client::{Client, Plan};
    /// let client = Client::new("https://paper.example.com", "pk")?;
    /// assert_eq!(client.plan(), None);
    /// assert_eq!(client.with_plan(Plan::Pro).plan(), Some(Plan::Pro));
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn plan(&self) -> Option<Plan> {
        self.settings.inner.plan
    }

    /// The stream's URL: the one given, or the base URL with `https` made `wss` (`http`
    /// made `ws`) and `/stream` added.
    ///
    /// ```
    /// let client = trading_client::Client::new("https://paper.example.com/v1", "pk")?;
    /// assert_eq!(client.stream_url(), "wss://paper.example.com/v1/stream");
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn stream_url(&self) -> String {
        if let Some(url) = &self.settings.inner.stream_url {
            return url.clone();
        }
        core_streams::websocket_url(&self.http, "/stream")
    }

    fn from_env_settings(
        client: Client,
        lookup: &impl Fn(&str) -> Option<String>,
    ) -> Result<Client> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let mut client = client;
        match var("TRADING_ENVIRONMENT").map(|e| e.trim().to_ascii_lowercase()) {
            None => {}
            Some(e) if e == "paper" => {}
            Some(e) if e == "live" => client = client.with_environment(Environment::Live),
            Some(other) => {
                return Err(Error::Config(format!(
                    "TRADING_ENVIRONMENT must be paper or live, got {other:?}"
                )));
            }
        }
        if let Some(url) = var("TRADING_STREAM_URL") {
            client = client.with_stream_url(url.trim());
        }
        if let Some(plan) = var("TRADING_PLAN") {
            client = client.with_plan(plan.parse()?);
        }
        Ok(client)
    }
}

core_http::service_plans! {
    /// The service's plans and their documented rate limits. Passing one to
    /// [`ClientBuilder::rate_limit`](crate::ClientBuilder::rate_limit) makes the client
    /// pace itself under the limit instead of running into 429s.
    ///
    /// ```
    /// let client = trading_client::Client::builder()
    ///     .base_url("https://paper.example.com")
    ///     .api_key("pk_...")
    ///     .rate_limit(trading_client::Plan::Free)
    ///     .build()?
    ///     .with_plan(trading_client::Plan::Free);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub enum Plan for "trading" {
        /// 200 requests a minute; real-time quotes and paper trading, no stream.
        Free = "free" => Some(RateLimit::per_minute(200)),
        /// 10,000 requests a minute; streaming and historical data.
        Pro = "pro" => Some(RateLimit::per_minute(10_000)),
        /// Unlimited.
        Enterprise = "enterprise" => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn paper_is_the_default_and_live_is_asked_for_by_name() {
        let paper = Client::new("https://paper.example.com", "pk_test").unwrap();
        assert_eq!(paper.environment(), Environment::Paper);
        assert_eq!(paper.stream_url(), "wss://paper.example.com/stream");
        let live = Client::live("https://api.example.com", "pk_live").unwrap();
        assert_eq!(live.environment(), Environment::Live);
        let local = Client::new("http://127.0.0.1:9/trading", "k")
            .unwrap()
            .with_stream_url("ws://127.0.0.1:9/other");
        assert_eq!(local.stream_url(), "ws://127.0.0.1:9/other");
        assert_eq!(local.clone().environment(), Environment::Paper);
    }

    #[test]
    fn from_env_reads_the_environment_stream_url_and_plan() {
        let env = |name: &str| match name {
            "TRADING_API_KEY" => Some("pk_secret_value".to_owned()),
            "TRADING_BASE_URL" => Some("https://api.example.com".to_owned()),
            "TRADING_ENVIRONMENT" => Some("live".to_owned()),
            "TRADING_PLAN" => Some("free".to_owned()),
            _ => None,
        };
        let client = Client::from_env_with(env).unwrap();
        assert_eq!(client.environment(), Environment::Live);
        assert_eq!(client.plan(), Some(Plan::Free));
        assert!(!format!("{client:?}").contains("pk_secret_value"));
        let bad = Client::from_env_with(|n| {
            env(n).map(|v| {
                if n == "TRADING_ENVIRONMENT" {
                    "prod".into()
                } else {
                    v
                }
            })
        })
        .unwrap_err();
        assert!(bad.to_string().contains("TRADING_ENVIRONMENT"), "{bad}");
    }
}
