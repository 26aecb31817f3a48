//! A client's streams: the URL beside its base URL, and the settings that authenticate,
//! trust and route a stream like the client's calls.

use core_http::HttpClient;
use core_http::config::{Auth, Secret};
use core_http::service::Origin;

use super::StreamConfig;

/// The URL of a WebSocket endpoint at `path` beside `client`'s base URL: the base with
/// `https` made `wss` (`http` made `ws`) and `path` appended (`https://host/x` and
/// `/stream` give `wss://host/x/stream`).
///
/// ```
/// let client = core_http::HttpClient::builder().base_url("https://api.example.com/x").build()?;
/// assert_eq!(core_streams::websocket_url(&client, "/stream"), "wss://api.example.com/x/stream");
/// # Ok::<(), core_http::Error>(())
/// ```
pub fn websocket_url(client: &HttpClient, path: &str) -> String {
    let base = client.base_url().trim_end_matches('/');
    let ws = if let Some(rest) = base.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = base.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        base.to_owned()
    };
    format!("{ws}{path}")
}

/// The settings of a stream at `url` authenticated like `client` (its Bearer key or
/// custom header; a key from its source or an OAuth token read again on every
/// connection), over the client's one TLS configuration (its roots, its certificate,
/// and its sessions, so a reconnect resumes one) and its proxy, with the same
/// `User-Agent`, under the same HTTPS rule (`wss://`, or `ws://` to loopback unless
/// insecure HTTP is allowed). Connecting and the handshake get the client's connect
/// timeout or its whole-call timeout, whichever is shorter.
///
/// # Errors
///
/// A configuration error for a URL the HTTPS rule refuses.
pub fn stream_config(client: &HttpClient, url: &str) -> core_http::Result<StreamConfig> {
    let parts = client.parts();
    let as_http = url
        .replacen("wss://", "https://", 1)
        .replacen("ws://", "http://", 1);
    Origin::parse(&as_http)?.check_secure(&as_http, parts.allow_insecure_http())?;
    let within = parts.connect_timeout().min(client.timeout());
    let mut config = StreamConfig::new(url)
        .header("user-agent", parts.user_agent())
        // The connection and its handshake fit in the connect timeout and in the
        // whole-call timeout, whichever is shorter.
        .connect_timeout(within);
    // The client's connection stack: its proxy (the environment's by default), its
    // TLS configuration and sessions, its credentials' stand-ins; as for its calls.
    config.dialer = Some(parts.dialer());
    config.redact = parts.redactor();
    config.observer = parts.observers();
    match parts.auth() {
        Auth::Bearer(key) => {
            config = config.auth(
                "authorization",
                Secret::new(format!("Bearer {}", key.expose())),
            );
        }
        Auth::Header { name, value } => config = config.auth(name.clone(), value.clone()),
        Auth::None => {}
        // Read again on every connection attempt: a rotated key, a refreshed token.
        _ => {
            config.redact = config.redact.tracking();
            let client = client.clone();
            config = config.auth_with("authorization", move || {
                match client.parts().auth_header(within) {
                    Ok(Some((_, value))) => Ok(value),
                    Ok(None) => Err("no credential".into()),
                    Err(e) => Err(format!("the credential could not be had: {e}")),
                }
            });
        }
    }
    Ok(config)
}
