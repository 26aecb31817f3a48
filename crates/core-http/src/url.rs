//! The little URL handling the transport needs: percent-encoding, origin checks for the
//! HTTPS rule and redirects, and joining paths onto a base URL.

use crate::error::{Error, Result};

/// Percent-encodes a query or form component, or an id put into a path (everything but
/// RFC 3986 unreserved characters).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    encode_into(&mut out, s);
    out
}

/// Appends `s` percent-encoded as [`encode`] does.
pub(crate) fn encode_into(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => {
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xF)]));
            }
        }
    }
}

/// Checks that `url` is an absolute `http://` or `https://` URL with a host, without
/// whitespace or embedded credentials: the rule for URLs sent as field values (an image
/// or a document to fetch). The error says what is wrong.
///
/// ```
/// use core_http::service::check_absolute_http;
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
    if !matches!(origin.scheme, "http" | "https") {
        return Err(format!("{url:?} must be an http(s) URL"));
    }
    Ok(())
}

/// The scheme, host and port of a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: &'static str,
    /// The host, lower case (an IPv6 address in brackets).
    pub host: String,
    /// The port (the scheme's when the URL gives none).
    pub port: u16,
}

impl Origin {
    /// Whether `a` and `b` are the same origin (at once when they are one value, as the
    /// base URL's is for most calls).
    pub(crate) fn same(a: &Origin, b: &Origin) -> bool {
        std::ptr::eq(a, b) || a == b
    }

    /// Parses the origin of an absolute `http` or `https` URL.
    ///
    /// # Errors
    ///
    /// A configuration error naming what is wrong with the URL.
    pub fn parse(url: &str) -> Result<Origin> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| Error::config(format!("{url:?} is not an absolute URL")))?;
        let (scheme, default_port) = if scheme.eq_ignore_ascii_case("https") {
            ("https", 443)
        } else if scheme.eq_ignore_ascii_case("http") {
            ("http", 80)
        } else {
            return Err(Error::config(format!(
                "{url:?} must start with https:// (or http:// for a local server)"
            )));
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
    pub fn is_loopback(&self) -> bool {
        if self.host == "localhost" || self.host.ends_with(".localhost") || self.host == "[::1]" {
            return true;
        }
        // 127.x.y.z, counted without collecting the parts.
        let mut parts = 0;
        self.host.starts_with("127.")
            && self.host.split('.').all(|p| {
                parts += 1;
                p.parse::<u8>().is_ok()
            })
            && parts == 4
    }

    /// Checks the HTTPS rule: `https`, or `http` to loopback, or `http` when allowed.
    ///
    /// # Errors
    ///
    /// A configuration error for plain HTTP to another host, naming the way out.
    pub fn check_secure(&self, url: &str, allow_insecure: bool) -> Result<()> {
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
pub fn strip_query(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

/// Whether a request's path is an absolute `http(s)://` URL rather than a path under the
/// base URL.
pub(crate) fn is_absolute(path: &str) -> bool {
    path.starts_with("https://") || path.starts_with("http://")
}

/// Joins a path onto a base URL. An absolute `http(s)://` path is used as it is.
pub(crate) fn join(base: &str, path: &str) -> String {
    if is_absolute(path) {
        return path.to_owned();
    }
    let mut url = String::with_capacity(base.len() + 1 + path.len());
    url.push_str(base);
    if !path.is_empty() && !path.starts_with('/') {
        url.push('/');
    }
    url.push_str(path);
    url
}

/// Adds a query parameter to a URL, percent-encoded.
pub(crate) fn push_query(url: &mut String, name: &str, value: &str) {
    url.push(if url.contains('?') { '&' } else { '?' });
    encode_into(url, name);
    url.push('=');
    encode_into(url, value);
}

/// Resolves a `Location` header against the URL that was requested, as RFC 3986 §5.2
/// resolves a reference (`?page=2` keeps the current path, `../x` climbs, `//host/x`
/// keeps the scheme). The fragment is dropped; `None` when the reference is unusable.
pub(crate) fn resolve(current: &str, location: &str) -> Option<String> {
    let location = location.trim();
    if location
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return None;
    }
    let location = location.split('#').next().unwrap_or_default();
    let has_scheme = location.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    if has_scheme {
        // An absolute reference: only its dot segments are resolved.
        let Some((scheme, rest)) = location.split_once("://") else {
            return Some(location.to_owned());
        };
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path_and_query) = rest.split_at(authority_end);
        let (path, query) = match path_and_query.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path_and_query, None),
        };
        let path = if path.is_empty() {
            String::new()
        } else {
            remove_dot_segments(path)
        };
        return Some(match query {
            Some(q) => format!("{scheme}://{authority}{path}?{q}"),
            None => format!("{scheme}://{authority}{path}"),
        });
    }
    let current = current.split('#').next().unwrap_or_default();
    let (scheme, rest) = current.split_once("://")?;
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path_and_query) = rest.split_at(authority_end);
    let (base_path, _) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    if let Some(net) = location.strip_prefix("//") {
        return Some(format!("{scheme}://{net}"));
    }
    if location.is_empty() {
        return Some(format!("{scheme}://{authority}{path_and_query}"));
    }
    if location.starts_with('?') {
        let path = if base_path.is_empty() { "/" } else { base_path };
        return Some(format!("{scheme}://{authority}{path}{location}"));
    }
    let (ref_path, ref_query) = match location.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (location, None),
    };
    let merged = if ref_path.starts_with('/') {
        ref_path.to_owned()
    } else {
        match base_path.rfind('/') {
            Some(i) => format!("{}{ref_path}", &base_path[..=i]),
            None => format!("/{ref_path}"),
        }
    };
    let path = remove_dot_segments(&merged);
    Some(match ref_query {
        Some(q) => format!("{scheme}://{authority}{path}?{q}"),
        None => format!("{scheme}://{authority}{path}"),
    })
}

/// RFC 3986 §5.2.4 on an absolute path.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    let mut trailing_slash = false;
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "." => trailing_slash = i == last,
            ".." => {
                out.pop();
                trailing_slash = i == last;
            }
            s => {
                out.push(s);
                trailing_slash = false;
            }
        }
    }
    let mut joined = format!("/{}", out.join("/"));
    if trailing_slash && !joined.ends_with('/') {
        joined.push('/');
    }
    joined
}

/// An id as one path segment: percent-encoded, and refused when it is empty, blank,
/// `.` or `..` (which a server would read as another path), or holds control
/// characters. `what` names the id in the error (`"a post id"`).
pub fn path_segment(what: &str, id: &str) -> Result<String> {
    if id.trim().is_empty() {
        return Err(Error::InvalidRequest(format!("{what} is empty")));
    }
    if id == "." || id == ".." {
        return Err(Error::InvalidRequest(format!(
            "{what} {id:?} would change the path it is put in"
        )));
    }
    if id.chars().any(char::is_control) {
        return Err(Error::InvalidRequest(format!(
            "{what} {id:?} holds control characters"
        )));
    }
    Ok(encode(id))
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
            (o.scheme, o.host.as_str(), o.port),
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
        let mut url = join("https://a.io", "/v1/posts");
        push_query(&mut url, "limit", "2");
        push_query(&mut url, "q", "a b");
        assert_eq!(url, "https://a.io/v1/posts?limit=2&q=a%20b");
        let mut url = join("https://a.io", "/v1/x?fixed=1");
        push_query(&mut url, "q", "&");
        assert_eq!(url, "https://a.io/v1/x?fixed=1&q=%26");
        assert_eq!(join("https://a.io/api", "x"), "https://a.io/api/x");
        assert_eq!(join("https://a.io", "https://b.io/t"), "https://b.io/t");
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
        // RFC 3986 §5.4's examples, on the base http://a/b/c/d;p?q.
        let base = "http://a/b/c/d;p?q";
        for (reference, want) in [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q"),
            ("g#s", "http://a/b/c/g"),
            (";x", "http://a/b/c/;x"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"),
        ] {
            assert_eq!(
                resolve(base, reference).as_deref(),
                Some(want),
                "{reference:?}"
            );
        }
        assert_eq!(
            resolve("http://a:1/v1/projects?page=1", "?page=2").as_deref(),
            Some("http://a:1/v1/projects?page=2")
        );
        assert_eq!(resolve("http://a/x", "bad location"), None);
    }

    #[test]
    fn ids_become_one_safe_segment() {
        assert_eq!(path_segment("an id", "a/b?c").unwrap(), "a%2Fb%3Fc");
        for bad in ["", "  ", ".", "..", "a\nb"] {
            assert!(path_segment("an id", bad).is_err(), "{bad:?}");
        }
    }
}
