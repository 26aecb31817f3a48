//! HTTP proxies, one setting for REST calls and streams alike.
//!
//! By default a client reads its proxy from the environment as curl and ureq do:
//! `ALL_PROXY`, `HTTPS_PROXY`, `HTTP_PROXY` (the first set, upper or lower case), with
//! `NO_PROXY` naming the hosts reached directly. The builder overrides it
//! ([`ClientBuilder::proxy`](crate::ClientBuilder::proxy)) or turns proxies off
//! ([`ClientBuilder::no_proxy`](crate::ClientBuilder::no_proxy)). Calls and streams
//! both go through an HTTP `CONNECT` tunnel, then TLS to the service: the proxy sees
//! only the host and port. The proxy's credentials (`http://user:pass@proxy:3128`) go
//! only to the proxy, in `Proxy-Authorization`, and are blanked out of every text like
//! a key.

use std::fmt;

use crate::{Error, Result, Secret};

/// The variables a proxy is read from, in order.
const PROXY_VARS: [&str; 6] = [
    "ALL_PROXY",
    "all_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
];

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

/// A proxy to go through: where it is, its credentials, and the hosts it is not for.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ProxyRoute {
    host: String,
    port: u16,
    user: Option<String>,
    password: Option<Secret>,
    bypass: Vec<String>,
}

impl fmt::Debug for ProxyRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyRoute")
            .field("proxy", &format_args!("http://{}:{}", self.host, self.port))
            .field("credentials", &self.user.as_ref().map(|_| "***"))
            .field("bypass", &self.bypass)
            .finish()
    }
}

impl ProxyChoice {
    /// The proxy this choice leads to, reading the environment through `lookup`.
    pub(crate) fn resolve(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<ProxyRoute>> {
        match self {
            ProxyChoice::Off => Ok(None),
            ProxyChoice::Given { url, bypass } => {
                parse(url.expose(), "the proxy given to the builder").map(|mut route| {
                    route.bypass = bypass.clone();
                    Some(route)
                })
            }
            ProxyChoice::FromEnv => {
                for var in PROXY_VARS {
                    let Some(value) = lookup(var).filter(|v| !v.trim().is_empty()) else {
                        continue;
                    };
                    let mut route = parse(value.trim(), var)?;
                    route.bypass = ["NO_PROXY", "no_proxy"]
                        .iter()
                        .find_map(|v| lookup(v))
                        .map(|list| {
                            list.split(',')
                                .map(|h| h.trim().to_ascii_lowercase())
                                .filter(|h| !h.is_empty())
                                .collect()
                        })
                        .unwrap_or_default();
                    return Ok(Some(route));
                }
                Ok(None)
            }
        }
    }
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
    Ok(ProxyRoute {
        host: host.to_ascii_lowercase(),
        port,
        user,
        password,
        bypass: Vec::new(),
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
    /// Whether a connection to `host` goes through the proxy (`NO_PROXY` rules: `*`
    /// everything, `name` that host and its subdomains, `.name` or `*.name` only its
    /// subdomains).
    pub(crate) fn applies_to(&self, host: &str) -> bool {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        !self.bypass.iter().any(|rule| {
            let rule = rule.split(':').next().unwrap_or(rule);
            if rule == "*" {
                return true;
            }
            match rule.strip_prefix("*.").or_else(|| rule.strip_prefix('.')) {
                Some(domain) => host.ends_with(&format!(".{domain}")),
                None => host == rule || host.ends_with(&format!(".{rule}")),
            }
        })
    }

    /// The proxy's host.
    #[cfg_attr(not(feature = "ws"), allow(dead_code))]
    pub(crate) fn host(&self) -> &str {
        &self.host
    }

    /// The proxy's port.
    #[cfg_attr(not(feature = "ws"), allow(dead_code))]
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

    /// The same proxy for ureq, which tunnels every call through it with `CONNECT`.
    pub(crate) fn for_ureq(&self) -> Result<ureq::Proxy> {
        let mut b = ureq::Proxy::builder(ureq::ProxyProtocol::Http)
            .host(&self.host)
            .port(self.port);
        if let Some(user) = &self.user {
            b = b.username(user);
            if let Some(p) = &self.password {
                b = b.password(p.expose());
            }
        }
        for rule in &self.bypass {
            // ureq's rules: `name` exactly, `.name` its subdomains.
            b = b.no_proxy(rule);
            if !rule.starts_with('.') && !rule.starts_with('*') {
                b = b.no_proxy(&format!(".{rule}"));
            }
        }
        b.build()
            .map_err(|_| Error::config("the proxy could not be set up (its host is not valid)"))
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
    fn the_environment_is_read_in_order_with_its_bypass_list() {
        let route = ProxyChoice::FromEnv
            .resolve(env(&[
                ("HTTP_PROXY", "http://plain:1"),
                ("https_proxy", "http://u%40corp:p%3Ass@Proxy.corp:3128/"),
                ("NO_PROXY", "internal.corp, .svc ,localhost"),
            ]))
            .unwrap()
            .unwrap();
        assert_eq!(route.address(), "proxy.corp:3128");
        assert_eq!(route.user.as_deref(), Some("u@corp"));
        assert_eq!(route.password.as_ref().unwrap().expose(), "p:ss");
        assert_eq!(
            route.authorization().unwrap().expose(),
            format!("Basic {}", base64(b"u@corp:p:ss"))
        );
        assert!(route.applies_to("api.example.com"));
        assert!(!route.applies_to("internal.corp"));
        assert!(!route.applies_to("db.internal.corp"));
        assert!(!route.applies_to("a.svc"));
        assert!(route.applies_to("svc"));
        assert!(!route.applies_to("LOCALHOST"));
        // Credentials never show.
        let shown = format!("{route:?}");
        assert!(
            !shown.contains("p:ss") && !shown.contains("u@corp"),
            "{shown}"
        );
        assert!(ProxyChoice::FromEnv.resolve(env(&[])).unwrap().is_none());
        assert!(
            ProxyChoice::Off
                .resolve(env(&[("ALL_PROXY", "http://p:1")]))
                .unwrap()
                .is_none()
        );
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
