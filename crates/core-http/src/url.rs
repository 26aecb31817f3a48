//! The little URL handling the transport needs: percent-encoding, origin checks for the
//! HTTPS rule and redirects, and joining paths onto a base URL.

use crate::error::{Error, Result};

/// Percent-encodes a query or form component, or an id put into a path (everything but
/// RFC 3986 unreserved characters).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => {
                out.push('%');
                out.push(
                    char::from_digit(u32::from(b >> 4), 16).map_or('0', |c| c.to_ascii_uppercase()),
                );
                out.push(
                    char::from_digit(u32::from(b & 0xF), 16)
                        .map_or('0', |c| c.to_ascii_uppercase()),
                );
            }
        }
    }
    out
}

/// Checks that `url` is an absolute `http://` or `https://` URL with a host, without
/// whitespace or embedded credentials: the rule for URLs sent as field values (an image
/// or a document to fetch). The error says what is wrong.
///
/// ```
/// use core_http::url::check_absolute_http;
/// assert!(check_absolute_http("https://example.com/cat.jpg").is_ok());
/// assert!(check_absolute_http("example.com/cat.jpg").is_err());
/// assert!(check_absolute_http("ftp://example.com/cat.jpg").is_err());
/// ```
pub fn check_absolute_http(url: &str) -> std::result::Result<(), String> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{url:?} contains whitespace or control characters"));
    }
    let origin = Origin::parse(url).map_err(|e| match e {
        Error::Config(message) => message,
        other => other.to_string(),
    })?;
    if !matches!(origin.scheme.as_str(), "http" | "https") {
        return Err(format!("{url:?} must be an http(s) URL"));
    }
    Ok(())
}

/// The scheme, host and port of a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    pub(crate) scheme: String,
    pub(crate) host: String,
    pub(crate) port: u16,
}

impl Origin {
    /// Parses the origin of an absolute `http` or `https` URL.
    pub(crate) fn parse(url: &str) -> Result<Origin> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| Error::config(format!("{url:?} is not an absolute URL")))?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "https" => 443,
            "http" => 80,
            _ => {
                return Err(Error::config(format!(
                    "{url:?} must start with https:// (or http:// for a local server)"
                )));
            }
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if authority.contains('@') {
            return Err(Error::config(
                "the URL must not contain credentials; use the client's auth settings",
            ));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| Error::config(format!("{url:?} has a malformed IPv6 host")))?;
            (
                format!("[{}]", h.to_ascii_lowercase()),
                after.strip_prefix(':'),
            )
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_ascii_lowercase(), Some(p)),
                None => (authority.to_ascii_lowercase(), None),
            }
        };
        if host.is_empty() {
            return Err(Error::config(format!("{url:?} has no host")));
        }
        let port = match port {
            Some(p) => p
                .parse()
                .map_err(|_| Error::config(format!("{url:?} has an invalid port")))?,
            None => default_port,
        };
        Ok(Origin { scheme, host, port })
    }

    /// `true` for `localhost`, 127.0.0.0/8 and `[::1]`.
    pub(crate) fn is_loopback(&self) -> bool {
        if self.host == "localhost" || self.host.ends_with(".localhost") || self.host == "[::1]" {
            return true;
        }
        let parts: Vec<&str> = self.host.split('.').collect();
        parts.len() == 4 && parts[0] == "127" && parts.iter().all(|p| p.parse::<u8>().is_ok())
    }

    /// Checks the HTTPS rule: `https`, or `http` to loopback, or `http` when allowed.
    pub(crate) fn check_secure(&self, url: &str, allow_insecure: bool) -> Result<()> {
        if self.scheme == "https" || self.is_loopback() || allow_insecure {
            Ok(())
        } else {
            Err(Error::config(format!(
                "refusing plain http:// to {}: use https://, or allow insecure HTTP explicitly \
                 (only loopback hosts are allowed by default); url: {}",
                self.host,
                strip_query(url)
            )))
        }
    }
}

/// The URL without its query string (query values are not logged or shown).
pub(crate) fn strip_query(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

/// Joins a path onto a base URL. An absolute `http(s)://` path is used as it is.
pub(crate) fn join(base: &str, path: &str, query: &[(String, String)]) -> String {
    let mut url = if path.starts_with("https://") || path.starts_with("http://") {
        path.to_owned()
    } else if path.is_empty() {
        base.to_owned()
    } else if path.starts_with('/') {
        format!("{base}{path}")
    } else {
        format!("{base}/{path}")
    };
    for (i, (k, v)) in query.iter().enumerate() {
        let sep = if i == 0 && !url.contains('?') {
            '?'
        } else {
            '&'
        };
        url.push(sep);
        url.push_str(&encode(k));
        url.push('=');
        url.push_str(&encode(v));
    }
    url
}

/// Resolves a `Location` header against the URL that was requested.
pub(crate) fn resolve(current: &str, location: &str) -> Option<String> {
    if location.starts_with("https://") || location.starts_with("http://") {
        return Some(location.to_owned());
    }
    let (scheme, rest) = current.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    if let Some(net) = location.strip_prefix("//") {
        return Some(format!("{scheme}://{net}"));
    }
    if location.starts_with('/') {
        return Some(format!("{scheme}://{authority}{location}"));
    }
    let path = strip_query(rest);
    let dir = path.rfind('/').map_or(authority, |i| &path[..i]);
    Some(format!("{scheme}://{dir}/{location}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_components() {
        assert_eq!(encode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
        assert_eq!(encode("AZaz09-._~"), "AZaz09-._~");
    }

    #[test]
    fn origins_and_loopback() {
        let o = Origin::parse("https://API.example.com/v1").unwrap();
        assert_eq!(
            (o.scheme.as_str(), o.host.as_str(), o.port),
            ("https", "api.example.com", 443)
        );
        for url in [
            "http://localhost:8080",
            "http://127.0.0.1:1",
            "http://127.10.0.3/x",
            "http://[::1]:9000/",
        ] {
            assert!(Origin::parse(url).unwrap().is_loopback(), "{url}");
        }
        for url in [
            "http://example.com",
            "http://127.0.0.1.evil.com",
            "http://10.0.0.1",
        ] {
            let o = Origin::parse(url).unwrap();
            assert!(!o.is_loopback(), "{url}");
            assert!(o.check_secure(url, false).is_err(), "{url}");
            assert!(o.check_secure(url, true).is_ok(), "{url}");
        }
        assert!(Origin::parse("ftp://x").is_err());
        assert!(Origin::parse("https://user:pw@x.com").is_err());
        assert!(Origin::parse("nope").is_err());
    }

    #[test]
    fn joins_and_resolves() {
        assert_eq!(
            join(
                "https://a.io",
                "/v1/posts",
                &[("limit".into(), "2".into()), ("q".into(), "a b".into())]
            ),
            "https://a.io/v1/posts?limit=2&q=a%20b"
        );
        assert_eq!(join("https://a.io/api", "x", &[]), "https://a.io/api/x");
        assert_eq!(
            join("https://a.io", "https://b.io/t", &[]),
            "https://b.io/t"
        );
        assert_eq!(
            resolve("http://a:1/v1/x?q", "/v2/y").as_deref(),
            Some("http://a:1/v2/y")
        );
        assert_eq!(
            resolve("http://a:1/v1/x", "y").as_deref(),
            Some("http://a:1/v1/y")
        );
        assert_eq!(
            resolve("http://a:1/v1/x", "//b:2/z").as_deref(),
            Some("http://b:2/z")
        );
        assert_eq!(
            resolve("http://a:1/v1/x", "https://c/z").as_deref(),
            Some("https://c/z")
        );
    }
}
