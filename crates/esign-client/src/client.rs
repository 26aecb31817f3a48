//! The e-signature client: configuration (API key or OAuth 2.0 client credentials), the
//! plan's rate limit, and the documents handle.

use core_http::{Auth, ClientBuilder, Error, OAuth2Config, RateLimit, Result};

use crate::documents::Documents;

core_http::service_client! {
    /// A client of the e-signature service. Cheap to clone; clones share the connection
    /// pool, the OAuth token and the rate limiter.
    ///
    /// Build it with [`Client::new`] (API key), [`Client::with_oauth`] (client
    /// credentials), [`Client::builder`] or [`Client::from_env`], then use
    /// [`documents`](Client::documents).
    pub struct Client;
    env_prefix = "ESIGN";
}

impl Client {
    /// A client for `base_url` (with any version prefix inside it) authenticated by OAuth
    /// 2.0 client credentials: the token is requested from `token_url` on first use,
    /// cached, refreshed before it expires, and refreshed once on a 401.
    pub fn with_oauth(
        base_url: impl Into<String>,
        token_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<core_http::Secret>,
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

    /// As [`Client::from_env`], reading variables through `lookup`.
    ///
    /// - `ESIGN_BASE_URL` (required);
    /// - `ESIGN_API_KEY`, or else `ESIGN_CLIENT_ID` + `ESIGN_CLIENT_SECRET` +
    ///   `ESIGN_TOKEN_URL` (and optionally `ESIGN_SCOPE`) for OAuth 2.0 client
    ///   credentials;
    /// - optionally `ESIGN_PLAN` (`business` or `enterprise`), `ESIGN_MAX_RETRIES`,
    ///   `ESIGN_TIMEOUT_SECS`.
    pub fn from_env_with(lookup: impl Fn(&str) -> Option<String>) -> Result<Client> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let mut builder = ClientBuilder::<Client>::new().env_settings_with("ESIGN", &lookup)?;
        builder = match (
            var("ESIGN_API_KEY"),
            var("ESIGN_CLIENT_ID"),
            var("ESIGN_CLIENT_SECRET"),
            var("ESIGN_TOKEN_URL"),
        ) {
            (Some(key), ..) => builder.api_key(key.trim()),
            (None, Some(id), Some(secret), Some(url)) => {
                let mut config = OAuth2Config::new(url.trim(), id.trim(), secret.trim());
                if let Some(scope) = var("ESIGN_SCOPE") {
                    config = config.with_scope(scope.trim());
                }
                builder.auth(Auth::oauth2(config))
            }
            (None, id, secret, url) => {
                let missing: Vec<&str> = [
                    ("ESIGN_CLIENT_ID", id.is_none()),
                    ("ESIGN_CLIENT_SECRET", secret.is_none()),
                    ("ESIGN_TOKEN_URL", url.is_none()),
                ]
                .iter()
                .filter(|(_, m)| *m)
                .map(|(n, _)| *n)
                .collect();
                return Err(Error::Config(format!(
                    "set ESIGN_API_KEY, or ESIGN_CLIENT_ID, ESIGN_CLIENT_SECRET and ESIGN_TOKEN_URL for OAuth (missing: {})",
                    missing.join(", ")
                )));
            }
        };
        if let Some(plan) = var("ESIGN_PLAN") {
            builder = builder.rate_limit(plan.parse::<Plan>()?);
        }
        builder.build()
    }

    /// Documents: send, get, download.
    pub fn documents(&self) -> Documents<'_> {
        Documents::new(self)
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
