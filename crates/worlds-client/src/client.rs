//! The worlds client: configuration (Bearer by default, or a custom header; the realtime
//! URL) and the resource handles.

use std::sync::Arc;

use core_http::Result;

/// A client of the virtual worlds service. Cheap to clone; clones share the connection
/// pool.
///
/// Build it with [`Client::new`] (Bearer key), [`Client::builder`] (for a custom auth
/// header: `.auth(Auth::header("x-api-key", key))`) or [`Client::from_env`]
/// (`WORLDS_BASE_URL`, `WORLDS_API_KEY`, and optionally `WORLDS_STREAM_URL`; the service
/// shows no rate limits, so a `WORLDS_PLAN` that is set is a `Config` error), then reach
/// the resources: [`worlds`](Client::worlds), [`assets`](Client::assets), and the
/// [`stream`](Client::stream) channel.
#[derive(Clone, Debug)]
pub struct Client {
    http: core_http::HttpClient,
    settings: Settings,
}

core_http::service_client!(
    Client,
    env_prefix = "WORLDS",
    settings = settings,
    from_env_hook = Client::from_env_settings,
);

/// The client's own settings beside the transport's.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    inner: Arc<SettingsInner>,
}

#[derive(Debug, Clone, Default)]
struct SettingsInner {
    stream_url: Option<String>,
}

impl Client {
    /// The same client with its realtime channel at `url` instead of the one derived
    /// from the base URL (`https://host/x` gives `wss://host/x/ws/v1/realtime`).
    ///
    /// ```
    /// let client = worlds_client::Client::new("https://worlds.example.com", "key")?
    ///     .with_stream_url("wss://realtime.example.com/v1");
    /// assert_eq!(client.stream_url(), "wss://realtime.example.com/v1");
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn with_stream_url(mut self, url: impl Into<String>) -> Client {
        Arc::make_mut(&mut self.settings.inner).stream_url = Some(url.into());
        self
    }

    /// The realtime channel's URL: the one given, or the base URL with `https` made
    /// `wss` (`http` made `ws`) and `/ws/v1/realtime` added.
    ///
    /// ```
    /// let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// assert_eq!(client.stream_url(), "wss://worlds.example.com/ws/v1/realtime");
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn stream_url(&self) -> String {
        if let Some(url) = &self.settings.inner.stream_url {
            return url.clone();
        }
        core_streams::websocket_url(&self.http, "/ws/v1/realtime")
    }

    fn from_env_settings(
        client: Client,
        lookup: &impl Fn(&str) -> Option<String>,
    ) -> Result<Client> {
        Ok(
            match lookup("WORLDS_STREAM_URL").filter(|v| !v.trim().is_empty()) {
                Some(url) => client.with_stream_url(url.trim()),
                None => client,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_stream_url_follows_the_base_url_unless_given() {
        let c = Client::new("https://worlds.example.com/", "k").unwrap();
        assert_eq!(c.stream_url(), "wss://worlds.example.com/ws/v1/realtime");
        let c = Client::new("http://127.0.0.1:8080/worlds", "k").unwrap();
        assert_eq!(c.stream_url(), "ws://127.0.0.1:8080/worlds/ws/v1/realtime");
        let c = c.with_stream_url("wss://rt.example.com/live");
        assert_eq!(c.stream_url(), "wss://rt.example.com/live");
        let env = |name: &str| match name {
            "WORLDS_BASE_URL" => Some("https://w.example.com".to_owned()),
            "WORLDS_API_KEY" => Some("k".to_owned()),
            "WORLDS_STREAM_URL" => Some("wss://rt.example.com/x".to_owned()),
            _ => None,
        };
        let c = Client::from_env_with(env).unwrap();
        assert_eq!(c.stream_url(), "wss://rt.example.com/x");
        // The service shows no limits: a plan asked for is refused, not ignored.
        let planned = Client::from_env_with(|name| match name {
            "WORLDS_PLAN" => Some("pro".to_owned()),
            other => env(other),
        })
        .unwrap_err();
        assert_eq!(planned.kind(), core_http::ErrorKind::Config);
        assert!(planned.to_string().contains("WORLDS_PLAN"), "{planned}");
    }
}
