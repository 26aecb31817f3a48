//! A client's streams: the URL beside its base URL, and the settings that authenticate,
//! trust and route a stream like the client's calls.

use std::sync::Arc;

use super::StreamConfig;
use crate::{Result, auth::Secret};

impl crate::HttpClient {
    /// The URL of a WebSocket endpoint at `path` beside this client's base URL: the base
    /// with `https` made `wss` (`http` made `ws`) and `path` appended
    /// (`https://host/x` and `/stream` give `wss://host/x/stream`).
    pub fn websocket_url(&self, path: &str) -> String {
        let base = self.base_url().trim_end_matches('/');
        let ws = if let Some(rest) = base.strip_prefix("https://") {
            format!("wss://{rest}")
        } else if let Some(rest) = base.strip_prefix("http://") {
            format!("ws://{rest}")
        } else {
            base.to_owned()
        };
        format!("{ws}{path}")
    }

    /// The settings of a stream at `url` authenticated like this client (its Bearer key
    /// or custom header), over the client's one TLS configuration (its roots, its
    /// certificate, and its sessions, so a reconnect resumes one), with the same
    /// `User-Agent`, under the same HTTPS rule (`wss://`, or `ws://` to loopback unless
    /// insecure HTTP is allowed). Connecting and the handshake get the client's connect
    /// timeout or its whole-call timeout, whichever is shorter.
    pub fn stream_config(&self, url: &str) -> Result<StreamConfig> {
        let cfg = &self.inner.config;
        let as_http = url
            .replacen("wss://", "https://", 1)
            .replacen("ws://", "http://", 1);
        let origin = crate::url::Origin::parse(&as_http)?;
        origin.check_secure(&as_http, cfg.allow_insecure_http)?;
        let mut config = StreamConfig::new(url)
            .header("user-agent", cfg.user_agent.clone())
            // The connection and its handshake fit in the connect timeout and in the
            // whole-call timeout, whichever is shorter.
            .connect_timeout(cfg.connect_timeout.min(cfg.timeout));
        // The client's connection stack: its proxy (the environment's by default), its
        // TLS configuration and sessions, its credentials' masks; as for its calls.
        config.dialer = Some(Arc::clone(&self.inner.dialer));
        config.redact = cfg.redactor.clone();
        config.observer = cfg.observer.clone();
        match &cfg.auth {
            crate::auth::Auth::Bearer(key) => {
                config = config.auth(
                    "authorization",
                    Secret::new(format!("Bearer {}", key.expose())),
                );
            }
            crate::auth::Auth::Header { name, value } => {
                config = config.auth(name.clone(), value.clone())
            }
            // Read again on every connection attempt: a rotated key, a refreshed token.
            crate::auth::Auth::BearerFrom(source) => {
                config.redact = config.redact.tracking();
                let source = source.clone();
                config = config.auth_with("authorization", move || {
                    let key = source.read();
                    crate::auth::check_credential(
                        "the key its source (Auth::bearer_from) gave",
                        key.expose(),
                    )
                    .map_err(|e| e.to_string())?;
                    Ok(crate::auth::bearer(&key))
                });
            }
            crate::auth::Auth::OAuth2ClientCredentials(_) => {
                config.redact = config.redact.tracking();
                let client = self.clone();
                let within = config.connect_timeout;
                config = config.auth_with("authorization", move || {
                    let deadline =
                        crate::time::Deadline::after(client.inner.config.clock.now(), within);
                    match client.auth_header(None, &deadline) {
                        Ok(Some((_, value))) => Ok(value.into_owned()),
                        Ok(None) => Err("no token".into()),
                        Err(e) => Err(format!("the OAuth token could not be fetched: {e}")),
                    }
                });
            }
            crate::auth::Auth::None => {}
        }
        Ok(config)
    }
}
