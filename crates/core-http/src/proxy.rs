//! HTTP proxies, one setting for REST calls and streams alike.
//!
//! By default a client reads its proxies from the environment as curl does: for an
//! `https://` (or `wss://`) URL `HTTPS_PROXY`, for an `http://` (or `ws://`) URL
//! `HTTP_PROXY`, and `ALL_PROXY` for either when its own is not set (each in lower or
//! upper case, lower first); `NO_PROXY` names the hosts reached directly (`*` all of
//! them). A loopback host (`localhost`, `127.0.0.0/8`, `::1`) is never reached through a
//! proxy from the environment, so the local sandbox works in a shell with a company
//! proxy set; a proxy given to the builder
//! ([`ClientBuilder::proxy`](crate::ClientBuilder::proxy)) applies to every host but
//! those it is told to bypass, loopback included. The builder can also turn proxies off
//! ([`ClientBuilder::no_proxy`](crate::ClientBuilder::no_proxy)).
//!
//! Calls and streams both go through an HTTP `CONNECT` tunnel (`tunnel.rs`), then TLS
//! to the service: the proxy sees only the host and port. The whole tunnel fits in the
//! call's deadline. The proxy's credentials (`http://user:pass@proxy:3128`) go only to
//! the proxy, in `Proxy-Authorization`, and are blanked out of every text like a key. A
//! proxy's refusal (`401`, `403`, `407`) is never retried: proxies that lock an account
//! after failed logins exist.

use std::fmt;

use crate::{Error, Result, auth::Secret};

/// The variables a proxy for `https` URLs is read from, in order.
const HTTPS_VARS: [&str; 4] = ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"];
/// The variables a proxy for `http` URLs is read from, in order.
const HTTP_VARS: [&str; 4] = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];

/// What the builder was told.
#[derive(Clone, Debug, Default)]
pub(crate) enum ProxyChoice {
    /// From the environment (the default).
    #[default]
    FromEnv,
    /// Directly, whatever the environment says.
    Off,
    /// Through this proxy, whatever the environment says; these hosts directly.
    Given { url: Secret, bypass: Vec<String> },
}

/// A proxy to go through: where it is and its credentials.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ProxyRoute {
    host: String,
    port: u16,
    user: Option<String>,
    password: Option<Secret>,
}

impl fmt::Debug for ProxyRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyRoute")
            .field("proxy", &format_args!("http://{}", self.address()))
            .field("credentials", &self.user.as_ref().map(|_| "***"))
            .finish()
    }
}

/// The proxies of a client: one for `https`, one for `http` (often the same), the hosts
/// reached directly, and whether they were given (then loopback goes through them too).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Proxies {
    https: Option<ProxyRoute>,
    http: Option<ProxyRoute>,
    bypass: Vec<String>,
    given: bool,
}

impl ProxyChoice {
    /// The proxies this choice leads to, reading the environment through `lookup`.
    pub(crate) fn resolve(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<Proxies> {
        match self {
            ProxyChoice::Off => Ok(Proxies::default()),
            ProxyChoice::Given { url, bypass } => {
                let route = parse(url.expose(), "the proxy given to the builder")?;
                Ok(Proxies {
                    https: Some(route.clone()),
                    http: Some(route),
                    bypass: bypass.clone(),
                    given: true,
                })
            }
            ProxyChoice::FromEnv => {
                let read = |vars: &[&str]| -> Result<Option<ProxyRoute>> {
                    for var in vars {
                        if let Some(value) = lookup(var).filter(|v| !v.trim().is_empty()) {
                            return parse(value.trim(), var).map(Some);
                        }
                    }
                    Ok(None)
                };
                let https = read(&HTTPS_VARS)?;
                let http = read(&HTTP_VARS)?;
                let bypass = ["no_proxy", "NO_PROXY"]
                    .iter()
                    .find_map(|v| lookup(v))
                    .map(|list| {
                        list.split(',')
                            .map(|h| h.trim().to_ascii_lowercase())
                            .filter(|h| !h.is_empty())
                            .collect()
                    })
                    .unwrap_or_default();
                Ok(Proxies {
                    https,
                    http,
                    bypass,
                    given: false,
                })
            }
        }
    }
}

impl Proxies {
    /// The proxy a connection to `host` goes through: the `https` one for a secure
    /// connection (`https://`, `wss://`), the `http` one otherwise; none for a host in
    /// the bypass list, nor (unless the proxy was given to the builder) for loopback.
    pub(crate) fn route_for(&self, secure: bool, host: &str) -> Option<&ProxyRoute> {
        let route = if secure { &self.https } else { &self.http };
        let route = route.as_ref()?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        if !self.given && is_loopback(&host) {
            return None;
        }
        let bypassed = self.bypass.iter().any(|rule| {
            let rule = rule.split(':').next().unwrap_or(rule);
            if rule == "*" {
                return true;
            }
            match rule.strip_prefix("*.").or_else(|| rule.strip_prefix('.')) {
                Some(domain) => host.ends_with(&format!(".{domain}")),
                None => host == rule || host.ends_with(&format!(".{rule}")),
            }
        });
        (!bypassed).then_some(route)
    }

    /// The secrets the proxies hold, to blank out of texts.
    pub(crate) fn secrets(&self) -> Vec<String> {
        [&self.https, &self.http]
            .into_iter()
            .flatten()
            .flat_map(ProxyRoute::secrets)
            .collect()
    }
}

/// `localhost` (and its subdomains), `127.0.0.0/8`, `::1`.
fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Parses `http://[user[:password]@]host[:port]` (or `host:port`); `origin` names where
/// it came from in an error, which never shows the value (it may hold credentials).
fn parse(url: &str, origin: &str) -> Result<ProxyRoute> {
    let invalid = |why: &str| Error::config(format!("{origin} is not a usable proxy: {why}"));
    let rest = match url.split_once("://") {
        None => url,
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
        Some(_) => return Err(invalid("only http:// proxies (HTTP CONNECT) are supported")),
    };
    let rest = rest.trim_end_matches('/');
    if rest.contains('/') || rest.contains('?') {
        return Err(invalid("a proxy is a host and a port, with no path"));
    }
    let (credentials, hostport) = match rest.rsplit_once('@') {
        Some((c, h)) => (Some(c), h),
        None => (None, rest),
    };
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => {
            let port = p
                .parse::<u16>()
                .map_err(|_| invalid("the port is not a number"))?;
            (h, port)
        }
        _ => (hostport, 80),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("no host"));
    }
    let (user, password) = match credentials {
        None => (None, None),
        Some(c) => {
            let (u, p) = c.split_once(':').unwrap_or((c, ""));
            (
                Some(percent_decode(u)),
                Some(Secret::new(percent_decode(p))),
            )
        }
    };
    let host = host.to_ascii_lowercase();
    Ok(ProxyRoute {
        host,
        port,
        user,
        password,
    })
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl ProxyRoute {
    /// The proxy's host.
    pub(crate) fn host(&self) -> &str {
        &self.host
    }

    /// The proxy's port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The proxy's `host:port`.
    pub(crate) fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The `Proxy-Authorization` value, with credentials.
    pub(crate) fn authorization(&self) -> Option<Secret> {
        let user = self.user.as_ref()?;
        let password = self.password.as_ref().map(Secret::expose).unwrap_or("");
        Some(Secret::new(format!(
            "Basic {}",
            base64(format!("{user}:{password}").as_bytes())
        )))
    }

    /// The secrets it holds, to blank out of texts.
    pub(crate) fn secrets(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p) = self.password.as_ref().filter(|p| !p.is_empty()) {
            out.push(p.expose().to_owned());
        }
        if let Some(auth) = self.authorization() {
            out.push(auth.expose().trim_start_matches("Basic ").to_owned());
        }
        out
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn each_scheme_has_its_proxy_as_curl_reads_them() {
        let proxies = ProxyChoice::FromEnv
            .resolve(env(&[
                ("HTTP_PROXY", "http://plain:1"),
                ("https_proxy", "http://u%40corp:p%3Ass@Proxy.corp:3128/"),
                ("NO_PROXY", "internal.corp, .svc ,localhost"),
            ]))
            .unwrap();
        let secure = proxies.route_for(true, "api.example.com").unwrap();
        assert_eq!(secure.address(), "proxy.corp:3128");
        assert_eq!(secure.user.as_deref(), Some("u@corp"));
        assert_eq!(secure.password.as_ref().unwrap().expose(), "p:ss");
        assert_eq!(
            secure.authorization().unwrap().expose(),
            format!("Basic {}", base64(b"u@corp:p:ss"))
        );
        // HTTPS_PROXY is for https only; http has its own.
        assert_eq!(
            proxies
                .route_for(false, "api.example.com")
                .unwrap()
                .address(),
            "plain:1"
        );
        assert!(proxies.route_for(true, "internal.corp").is_none());
        assert!(proxies.route_for(true, "db.internal.corp").is_none());
        assert!(proxies.route_for(true, "a.svc").is_none());
        assert!(proxies.route_for(true, "svc").is_some());
        // Loopback is never proxied from the environment.
        for host in [
            "localhost",
            "127.0.0.1",
            "127.8.9.10",
            "::1",
            "[::1]",
            "a.localhost",
        ] {
            assert!(proxies.route_for(true, host).is_none(), "{host}");
            assert!(proxies.route_for(false, host).is_none(), "{host}");
        }
        // Credentials never show.
        let shown = format!("{proxies:?}");
        assert!(
            !shown.contains("p:ss") && !shown.contains("u@corp"),
            "{shown}"
        );
        // Only HTTPS_PROXY: http goes directly; ALL_PROXY serves both.
        let only = ProxyChoice::FromEnv
            .resolve(env(&[("HTTPS_PROXY", "http://p:1")]))
            .unwrap();
        assert!(only.route_for(false, "example.com").is_none());
        let all = ProxyChoice::FromEnv
            .resolve(env(&[
                ("ALL_PROXY", "http://all:2"),
                ("https_proxy", "http://s:3"),
            ]))
            .unwrap();
        assert_eq!(all.route_for(false, "x.com").unwrap().address(), "all:2");
        assert_eq!(all.route_for(true, "x.com").unwrap().address(), "s:3");
        let star = ProxyChoice::FromEnv
            .resolve(env(&[("ALL_PROXY", "http://all:2"), ("no_proxy", "*")]))
            .unwrap();
        assert!(star.route_for(true, "x.com").is_none());
        assert!(
            ProxyChoice::FromEnv
                .resolve(env(&[]))
                .unwrap()
                .route_for(true, "x.com")
                .is_none()
        );
        assert!(
            ProxyChoice::Off
                .resolve(env(&[("ALL_PROXY", "http://p:1")]))
                .unwrap()
                .route_for(true, "x.com")
                .is_none()
        );
        // A proxy given to the builder applies to loopback too, unless bypassed.
        let given = ProxyChoice::Given {
            url: Secret::new("http://p:1"),
            bypass: vec!["internal".into()],
        }
        .resolve(env(&[]))
        .unwrap();
        assert!(given.route_for(false, "127.0.0.1").is_some());
        assert!(given.route_for(true, "internal").is_none());
    }

    #[test]
    fn unusable_proxies_are_refused_without_showing_them() {
        for bad in [
            "socks5://u:secret@h:1",
            "https://u:secret@h:1",
            "http://u:secret@h:x",
            "http://u:secret@/",
        ] {
            let err = ProxyChoice::FromEnv
                .resolve(env(&[("HTTPS_PROXY", bad)]))
                .map(drop)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("HTTPS_PROXY") && !err.contains("secret"),
                "{err}"
            );
        }
        assert_eq!(parse("proxy:8080", "x").unwrap().address(), "proxy:8080");
        assert_eq!(
            parse("http://[::1]:3128", "x").unwrap().address(),
            "[::1]:3128"
        );
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(base64(b"a"), "YQ==");
    }
}
