//! The e-signature client: configuration (API key or OAuth 2.0 client credentials), the
//! plan's rate limit, and the documents handle.

use core_http::{
    Result,
    config::{Auth, OAuth2Config, RateLimit},
};

/// A client of the e-signature service. Cheap to clone; clones share the connection
/// pool, the OAuth token and the rate limiter.
///
/// Build it with [`Client::new`] (API key), [`Client::with_oauth`] (client
/// credentials), [`Client::builder`] or [`Client::from_env`] (`ESIGN_BASE_URL`, and
/// `ESIGN_API_KEY` or `ESIGN_CLIENT_ID` + `ESIGN_CLIENT_SECRET` + `ESIGN_TOKEN_URL`
/// (+ `ESIGN_SCOPE`), and `ESIGN_PLAN` = `business` or `enterprise`), then use
/// [`documents`](Client::documents).
#[derive(Clone, Debug)]
pub struct Client {
    http: core_http::HttpClient,
}

// Sends carry an Idempotency-Key that the service de-duplicates by (our documented
// choice, docs/esign.md), which makes a send safe to retry.
core_http::service_client!(
    Client,
    env_prefix = "ESIGN",
    plan = Plan,
    oauth = true,
    idempotency_keys = true,
);

impl Client {
    /// A client for `base_url` (with any version prefix inside it) authenticated by OAuth
    /// 2.0 client credentials: the token is requested from `token_url` on first use,
    /// cached, refreshed before it expires, and refreshed once on a 401.
    ///
    /// ```
    /// let client = esign_client::Client::with_oauth(
    ///     "https://api.example.com/v1",
    ///     "https://auth.example.com/oauth/token",
    ///     "my-client-id",
    ///     std::env::var("ESIGN_CLIENT_SECRET").unwrap_or_default(),
    /// )?;
    /// # let _ = client;
    /// # Ok::<(), esign_client::Error>(())
    /// ```
    pub fn with_oauth(
        base_url: impl Into<String>,
        token_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<core_http::config::Secret>,
    ) -> Result<Client> {
        Client::builder()
            .base_url(base_url)
            .auth(Auth::oauth2(OAuth2Config::new(
                token_url,
                client_id,
                client_secret,
            )))
            .build()
    }
}

core_http::service_plans! {
    /// The service's plans and their documented rate limits.
    ///
    /// ```
    /// let client = esign_client::Client::builder()
    ///     .base_url("https://api.example.com/v1")
    ///     .api_key("sk_live_...")
    ///     .rate_limit(esign_client::Plan::Business)
    ///     .build()?;
    /// # Ok::<(), esign_client::Error>(())
    /// ```
    pub enum Plan for "esign" {
        /// 10,000 requests per hour.
        Business = "business" => Some(RateLimit::per_hour(10_000)),
        /// Unlimited: no client-side limit.
        Enterprise = "enterprise" => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn from_env_takes_a_key_or_client_credentials_and_hides_both() {
        let key = |name: &str| match name {
            "ESIGN_API_KEY" => Some("sk_live_secret".to_owned()),
            "ESIGN_BASE_URL" => Some("https://api.example.com/v1".to_owned()),
            "ESIGN_PLAN" => Some("business".to_owned()),
            _ => None,
        };
        let client = Client::from_env_with(key).unwrap();
        let debug = format!("{client:?}");
        assert!(!debug.contains("sk_live_secret"), "{debug}");
        assert!(
            debug.contains("10000"),
            "the Business limit is set: {debug}"
        );

        let oauth = |name: &str| match name {
            "ESIGN_BASE_URL" => Some("https://api.example.com/v1".to_owned()),
            "ESIGN_CLIENT_ID" => Some("client_1".to_owned()),
            "ESIGN_CLIENT_SECRET" => Some("cs_very_secret".to_owned()),
            "ESIGN_TOKEN_URL" => Some("https://auth.example.com/token".to_owned()),
            _ => None,
        };
        let client = Client::from_env_with(oauth).unwrap();
        let debug = format!("{client:?}");
        assert!(!debug.contains("cs_very_secret"), "{debug}");

        let partial = Client::from_env_with(|n| match n {
            "ESIGN_CLIENT_ID" => Some("client_1".to_owned()),
            other => oauth(other).filter(|_| other == "ESIGN_BASE_URL"),
        })
        .unwrap_err();
        let text = partial.to_string();
        assert!(
            text.contains("ESIGN_CLIENT_SECRET") && text.contains("ESIGN_TOKEN_URL"),
            "{text}"
        );
        assert!("BUSINESS".parse::<Plan>().is_ok());
        assert_eq!(Plan::Enterprise.rate_limit(), None);
    }
}
