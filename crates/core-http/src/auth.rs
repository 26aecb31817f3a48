//! Authentication: API keys (Bearer or a custom header), OAuth 2.0 client credentials with
//! a cached token, and [`Secret`], which never prints its value.

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;

/// A credential. `Debug` and `Display` print `***`; the value is reached only through
/// [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The credential itself. Call this only where the value must be sent.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `true` when the credential is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Secret(s)
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Self {
        Secret(s.to_owned())
    }
}

/// How requests are authenticated.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum Auth {
    /// No authentication header.
    #[default]
    None,
    /// `Authorization: Bearer <key>`.
    Bearer(Secret),
    /// A custom header carrying the key, e.g. `X-API-Key: <key>`.
    Header {
        /// The header name.
        name: String,
        /// The key.
        value: Secret,
    },
    /// OAuth 2.0 client credentials: a token is fetched from the token URL, cached,
    /// refreshed before it expires, and refreshed once after a 401.
    OAuth2ClientCredentials(OAuth2Config),
}

impl Auth {
    /// Bearer authentication with an API key.
    pub fn bearer(key: impl Into<Secret>) -> Self {
        Auth::Bearer(key.into())
    }

    /// A custom header carrying the key.
    pub fn header(name: impl Into<String>, value: impl Into<Secret>) -> Self {
        Auth::Header {
            name: name.into(),
            value: value.into(),
        }
    }

    /// OAuth 2.0 client credentials.
    pub fn oauth2(config: OAuth2Config) -> Self {
        Auth::OAuth2ClientCredentials(config)
    }
}

/// The settings of OAuth 2.0 client-credentials authentication.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuth2Config {
    /// The absolute URL of the token endpoint.
    pub token_url: String,
    /// The client id.
    pub client_id: String,
    /// The client secret.
    pub client_secret: Secret,
    /// The scope to ask for, if any.
    pub scope: Option<String>,
}

impl OAuth2Config {
    /// Settings for a token URL, client id and secret, with no scope.
    pub fn new(
        token_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<Secret>,
    ) -> Self {
        OAuth2Config {
            token_url: token_url.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            scope: None,
        }
    }

    /// The same settings asking for a scope.
    pub fn with_scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// The form body of a token request.
    pub(crate) fn token_form(&self) -> Vec<(&'static str, String)> {
        let mut form = vec![
            ("grant_type", "client_credentials".to_owned()),
            ("client_id", self.client_id.clone()),
            ("client_secret", self.client_secret.expose().to_owned()),
        ];
        if let Some(scope) = &self.scope {
            form.push(("scope", scope.clone()));
        }
        form
    }
}

/// How long before its expiry a token is refreshed.
pub const TOKEN_REFRESH_MARGIN: Duration = Duration::from_secs(300);

/// A token endpoint's answer.
#[derive(Deserialize)]
pub(crate) struct TokenResponse {
    pub(crate) access_token: String,
    #[serde(default)]
    pub(crate) expires_in: Option<f64>,
}

#[derive(Clone)]
pub(crate) struct CachedToken {
    pub(crate) token: Secret,
    /// When to fetch a new one (expiry minus the margin); `None` when the server gave no
    /// lifetime, in which case the token is used until a 401.
    pub(crate) refresh_at: Option<Instant>,
}

impl CachedToken {
    pub(crate) fn new(resp: TokenResponse, now: Instant) -> Self {
        let refresh_at = resp
            .expires_in
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|secs| {
                let lifetime = Duration::from_secs_f64(secs.min(1e9));
                // Refresh 5 minutes early, or half-way for tokens shorter than 10 minutes.
                let margin = TOKEN_REFRESH_MARGIN.min(lifetime / 2);
                now + (lifetime - margin)
            });
        CachedToken {
            token: Secret::new(resp.access_token),
            refresh_at,
        }
    }

    pub(crate) fn is_fresh(&self, now: Instant) -> bool {
        self.refresh_at.is_none_or(|at| now < at)
    }
}

/// The token cache shared by all clones of a client. Holding the lock while fetching
/// makes concurrent callers wait for one token request instead of each making their own.
#[derive(Default)]
pub(crate) struct TokenCache {
    pub(crate) slot: Mutex<Option<CachedToken>>,
}

impl fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenCache(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_never_prints() {
        let s = Secret::new("sk_live_very_secret");
        assert_eq!(format!("{s}"), "***");
        assert_eq!(format!("{s:?}"), "Secret(***)");
        let auth = Auth::bearer("sk_live_very_secret");
        assert!(!format!("{auth:?}").contains("very_secret"));
        let oauth = Auth::oauth2(OAuth2Config::new("https://t", "id", "cs_very_secret"));
        assert!(!format!("{oauth:?}").contains("very_secret"));
    }

    #[test]
    fn token_refresh_margin() {
        let now = Instant::now();
        let long = CachedToken::new(
            TokenResponse {
                access_token: "a".into(),
                expires_in: Some(3600.0),
            },
            now,
        );
        assert!(long.is_fresh(now + Duration::from_secs(3299)));
        assert!(!long.is_fresh(now + Duration::from_secs(3300)));
        let short = CachedToken::new(
            TokenResponse {
                access_token: "a".into(),
                expires_in: Some(60.0),
            },
            now,
        );
        assert!(short.is_fresh(now + Duration::from_secs(29)));
        assert!(!short.is_fresh(now + Duration::from_secs(30)));
        let forever = CachedToken::new(
            TokenResponse {
                access_token: "a".into(),
                expires_in: None,
            },
            now,
        );
        assert!(forever.is_fresh(now + Duration::from_secs(1_000_000)));
    }
}
