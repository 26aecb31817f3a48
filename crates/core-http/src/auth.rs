//! Authentication: API keys (Bearer or a custom header), OAuth 2.0 client credentials
//! with a cached token fetched by one clean request, the auth header each attempt
//! carries, and [`Secret`], which never prints its value.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::time::{Clock, Deadline};

/// A credential. `Debug` and `Display` print `***`; the value is reached only through
/// [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    ///
    /// ```
    /// let key = core_http::config::Secret::new("sk_live_123");
    /// assert!(!format!("{key:?} {key}").contains("sk_live"));
    /// ```
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The credential itself. Call this only where the value must be sent.
    ///
    /// ```
    /// let key = core_http::config::Secret::new("sk_live_123");
    /// assert_eq!(key.expose(), "sk_live_123");
    /// ```
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `true` when the credential is empty.
    ///
    /// ```
    /// assert!(core_http::config::Secret::new("").is_empty());
    /// ```
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

/// A credential that cannot be sent as it was given: a configuration error naming it
/// (`what`: where it came from) and what is wrong, never its value.
pub(crate) fn check_credential(what: &str, value: &str) -> crate::Result<()> {
    match crate::masks::header_value_problem(value.as_bytes()) {
        None => Ok(()),
        Some(problem) => Err(crate::Error::config(format!(
            "{what} {problem}: a credential is sent exactly as given or not at all{}",
            if problem.contains("line break") || problem.contains("whitespace") {
                " (a key read from a file keeps its newline: trim it)"
            } else {
                ""
            }
        ))),
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
    /// `Authorization: Bearer <key>`, the key read from its source for every request
    /// and every stream connection: [`Auth::bearer_from`].
    BearerFrom(KeySource),
}

impl Auth {
    /// What names the account a rate budget is spent for (hashed before it is used,
    /// never shown): the key, the header's key, or the OAuth client's id.
    pub(crate) fn identity(&self) -> String {
        match self {
            Auth::None => String::new(),
            Auth::Bearer(key) | Auth::Header { value: key, .. } => key.expose().to_owned(),
            Auth::OAuth2ClientCredentials(oauth) => oauth.client_id.clone(),
            Auth::BearerFrom(source) => (source.0)().expose().to_owned(),
        }
    }
}

/// Where a key that changes is read: [`Auth::bearer_from`]. Its `Debug` shows no key.
#[derive(Clone)]
pub struct KeySource(std::sync::Arc<dyn Fn() -> Secret + Send + Sync>);

impl KeySource {
    /// The key as it is now.
    pub(crate) fn read(&self) -> Secret {
        (self.0)()
    }
}

impl fmt::Debug for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeySource(***)")
    }
}

impl Auth {
    /// Bearer authentication with an API key.
    ///
    /// ```
    /// use core_http::config::Auth;
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .auth(Auth::bearer("sk_test")) // what `.api_key("sk_test")` does
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn bearer(key: impl Into<Secret>) -> Self {
        Auth::Bearer(key.into())
    }

    /// A custom header carrying the key.
    ///
    /// ```
    /// use core_http::config::Auth;
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .auth(Auth::header("x-api-key", "sk_test"))
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn header(name: impl Into<String>, value: impl Into<Secret>) -> Self {
        Auth::Header {
            name: name.into(),
            value: value.into(),
        }
    }

    /// OAuth 2.0 client credentials.
    ///
    /// ```
    /// use core_http::config::{Auth, OAuth2Config};
    /// let auth = Auth::oauth2(
    ///     OAuth2Config::new("https://auth.example.com/oauth/token", "my-client-id", "my-secret")
    ///         .with_scope("posts:write"),
    /// );
    /// let client = core_http::HttpClient::builder().base_url("https://api.example.com").auth(auth).build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn oauth2(config: OAuth2Config) -> Self {
        Auth::OAuth2ClientCredentials(config)
    }

    /// Bearer authentication with a key that changes (rotation): `read` gives the key
    /// as it is now, and is called for every request and every stream connection, so a
    /// rotated key is used from the next call or reconnect without rebuilding the
    /// client. An empty key fails the call before anything is sent.
    ///
    /// ```
    /// use core_http::config::{Auth, Secret};
    /// let auth = Auth::bearer_from(|| {
    ///     Secret::new(std::fs::read_to_string("/run/secrets/api_key").unwrap_or_default().trim())
    /// });
    /// let client = core_http::HttpClient::builder().base_url("https://api.example.com").auth(auth).build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn bearer_from(read: impl Fn() -> Secret + Send + Sync + 'static) -> Self {
        Auth::BearerFrom(KeySource(std::sync::Arc::new(read)))
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
    ///
    /// ```
    /// let config = core_http::config::OAuth2Config::new(
    ///     "https://auth.example.com/oauth/token",
    ///     "my-client-id",
    ///     std::env::var("CLIENT_SECRET").unwrap_or_default(),
    /// );
    /// assert_eq!(config.scope, None);
    /// ```
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
    ///
    /// ```
    /// let config = core_http::config::OAuth2Config::new("https://auth.example.com/token", "id", "secret")
    ///     .with_scope("documents:read documents:write");
    /// assert!(config.scope.is_some());
    /// ```
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
pub(crate) const TOKEN_REFRESH_MARGIN: Duration = Duration::from_secs(300);

/// A token endpoint's answer. Only `access_token` and `expires_in` are read; the answer
/// is never shown in an error, because it holds the token.
#[derive(Deserialize)]
pub(crate) struct TokenResponse {
    pub(crate) access_token: String,
    /// Seconds, as a JSON number or a numeric string (some providers send `"3599"`);
    /// anything else reads as "no lifetime given".
    #[serde(default, deserialize_with = "lifetime")]
    pub(crate) expires_in: Option<f64>,
}

fn lifetime<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(crate::de::Lenient::<f64>::deserialize(d)?.0)
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
            .and_then(|secs| {
                let lifetime = Duration::from_secs_f64(secs.min(1e9));
                // Refresh 5 minutes early, or half-way for tokens shorter than 10 minutes.
                let margin = TOKEN_REFRESH_MARGIN.min(lifetime / 2);
                now.checked_add(lifetime - margin)
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

/// The token cache shared by all clones of a client. One caller fetches while the others
/// wait (each no longer than its own call's deadline); the lock is never held across the
/// HTTP request.
#[derive(Default)]
pub(crate) struct TokenCache {
    state: Mutex<TokenState>,
    changed: Condvar,
}

#[derive(Default)]
struct TokenState {
    token: Option<CachedToken>,
    fetching: bool,
}

impl fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenCache(***)")
    }
}

/// Clears the "a fetch is under way" mark however the fetch ends, and wakes the waiters.
struct FetchGuard<'a> {
    cache: &'a TokenCache,
    token: Option<CachedToken>,
}

impl Drop for FetchGuard<'_> {
    fn drop(&mut self) {
        let mut state = self.cache.lock();
        state.fetching = false;
        if let Some(token) = self.token.take() {
            state.token = Some(token);
        }
        drop(state);
        self.cache.changed.notify_all();
    }
}

/// An authentication header: its name and value.
pub(crate) type AuthHeader<'a> = (Cow<'a, str>, Cow<'a, Secret>);

/// The `Authorization` value for a key or token: `Bearer <key>`.
pub(crate) fn bearer(key: &Secret) -> Secret {
    let mut value = String::with_capacity("Bearer ".len() + key.expose().len());
    value.push_str("Bearer ");
    value.push_str(key.expose());
    Secret::new(value)
}

impl TokenCache {
    fn lock(&self) -> MutexGuard<'_, TokenState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A fresh token: the cached one, one fetched by another thread meanwhile, or one
    /// fetched now with `fetch`. `stale` is a token the server just refused: it is
    /// dropped (unless another thread already replaced it).
    pub(crate) fn get(
        &self,
        clock: &dyn Clock,
        deadline: &Deadline,
        stale: Option<&Secret>,
        fetch: impl FnOnce() -> crate::Result<CachedToken>,
    ) -> crate::Result<Secret> {
        let mut state = self.lock();
        if let Some(stale) = stale
            && state.token.as_ref().is_some_and(|t| &t.token == stale)
        {
            state.token = None;
        }
        loop {
            if let Some(token) = &state.token
                && token.is_fresh(clock.now())
            {
                return Ok(token.token.clone());
            }
            if !state.fetching {
                break;
            }
            let now = clock.now();
            let left = deadline.remaining(now);
            if left.is_zero() {
                return Err(crate::Error::Timeout {
                    elapsed: deadline.elapsed(now),
                    delivery: crate::Delivery::NotSent,
                });
            }
            state = self
                .changed
                .wait_timeout(state, left)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        state.fetching = true;
        drop(state);
        let mut guard = FetchGuard {
            cache: self,
            token: None,
        };
        let token = fetch()?;
        let secret = token.token.clone();
        guard.token = Some(token);
        drop(guard);
        Ok(secret)
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
    fn expires_in_reads_a_number_or_a_numeric_string() {
        for (body, want) in [
            (r#"{"access_token":"t","expires_in":3599}"#, Some(3599.0)),
            (r#"{"access_token":"t","expires_in":"3599"}"#, Some(3599.0)),
            (r#"{"access_token":"t","expires_in":12.5}"#, Some(12.5)),
            (r#"{"access_token":"t","expires_in":"soon"}"#, None),
            (r#"{"access_token":"t","expires_in":null}"#, None),
            (r#"{"access_token":"t"}"#, None),
        ] {
            let r: TokenResponse = serde_json::from_str(body).unwrap();
            assert_eq!(r.expires_in, want, "{body}");
        }
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
