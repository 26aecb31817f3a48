//! An answer's headers: case-insensitive lookup, the request id and rate-limit figures,
//! and a `Debug` that never shows a credential.

use std::fmt;

use ureq::http::{HeaderMap, HeaderName, HeaderValue};

/// Response headers, with case-insensitive lookup.
///
/// They hold the answer's own header map as the connection read it (no copy per
/// header); a value that is not UTF-8 is kept with its bad bytes replaced (U+FFFD), and
/// a value carrying one of the client's credentials (a server echoing a key back) is
/// kept with it blanked out, so nothing read from here can show a secret.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Headers {
    map: HeaderMap,
}

impl Headers {
    /// Builds headers from name/value pairs. Names are stored in lower case. A pair that
    /// cannot be an HTTP header (a name with a space, a value with a line break) is
    /// left out.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(k.as_bytes()),
                HeaderValue::from_str(&v),
            ) {
                map.append(name, value);
            }
        }
        Headers { map }
    }

    /// An answer's headers as the connection read them, every value made readable as
    /// text (`from_utf8_lossy`) and with the client's credentials blanked out.
    pub(crate) fn from_map(mut map: HeaderMap, redact: &crate::redact::Redactor) -> Self {
        for value in map.values_mut() {
            let clean = match std::str::from_utf8(value.as_bytes()) {
                Ok(text) if !redact.finds(text) => continue,
                Ok(text) => redact.apply(text.to_owned()),
                Err(_) => redact.apply(String::from_utf8_lossy(value.as_bytes()).into_owned()),
            };
            // Made of what a valid value held (or U+FFFD and `***`), so valid; were it
            // not, the value is blanked whole rather than kept with a secret in it.
            *value = HeaderValue::from_str(&clean).unwrap_or(HeaderValue::from_static("***"));
        }
        Headers { map }
    }

    fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.map.iter().map(|(k, v)| (k.as_str(), text(v)))
    }

    /// The first value of a header, by case-insensitive name.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.map.get(name).map(text)
    }

    /// Every value of a header, by case-insensitive name.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.map.get_all(name).into_iter().map(text)
    }

    /// All headers, names in lower case, in the order received (the values of a name
    /// that came more than once together, at its first place).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs()
    }

    /// The request id the server gave (`x-request-id`, `request-id`, `x-amzn-requestid`
    /// or `x-correlation-id`).
    pub fn request_id(&self) -> Option<&str> {
        [
            "x-request-id",
            "request-id",
            "x-amzn-requestid",
            "x-correlation-id",
        ]
        .iter()
        .find_map(|n| self.get(n))
    }

    /// The rate-limit headers (`X-RateLimit-*` or `RateLimit-*`), when present.
    pub fn rate_limit(&self) -> Option<RateLimitInfo> {
        let num = |name: &str| -> Option<u64> {
            self.get(&format!("x-ratelimit-{name}"))
                .or_else(|| self.get(&format!("ratelimit-{name}")))
                .and_then(|v| v.trim().parse().ok())
        };
        let info = RateLimitInfo {
            limit: num("limit"),
            remaining: num("remaining"),
            reset: num("reset"),
        };
        (info != RateLimitInfo::default()).then_some(info)
    }

    /// The `Content-Length`, when given and valid.
    pub fn content_length(&self) -> Option<u64> {
        self.get("content-length")?.trim().parse().ok()
    }
}

/// A value as text: every value was made UTF-8 when the headers were built.
fn text(value: &HeaderValue) -> &str {
    std::str::from_utf8(value.as_bytes()).unwrap_or_default()
}

impl fmt::Debug for Headers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(
                self.pairs()
                    .map(|(k, v)| (k, crate::redact::redact_header(k, v))),
            )
            .finish()
    }
}

/// The rate-limit state a response reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimitInfo {
    /// Requests allowed in the window.
    pub limit: Option<u64>,
    /// Requests left in the window.
    pub remaining: Option<u64>,
    /// When the window resets, as the server gave it (seconds, or a Unix time).
    pub reset: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Redactor;

    #[test]
    fn an_answers_headers_are_text_with_the_clients_secrets_blanked() {
        let mut map = HeaderMap::new();
        map.insert("x-request-id", HeaderValue::from_static("req_1"));
        map.append(
            "x-echo",
            HeaderValue::from_static("key sk_live_secret_123 refused"),
        );
        map.append(
            "x-odd",
            HeaderValue::from_bytes(b"caf\xe9 \xff").expect("obs-text is a valid value"),
        );
        let redact = Redactor::new(["sk_live_secret_123".to_owned()]);
        let headers = Headers::from_map(map, &redact);
        assert_eq!(headers.request_id(), Some("req_1"));
        assert_eq!(headers.get("X-Echo"), Some("key *** refused"));
        assert_eq!(headers.get("x-odd"), Some("caf\u{fffd} \u{fffd}"));
        assert!(!format!("{headers:?}").contains("sk_live"));
        assert_eq!(headers.iter().count(), 3);
    }

    #[test]
    fn headers_lookup_is_case_insensitive_and_redacted_in_debug() {
        let h = Headers::from_pairs([
            ("X-Request-Id".to_string(), "req_1".to_string()),
            ("Set-Cookie".to_string(), "session=abc".to_string()),
            ("X-RateLimit-Remaining".to_string(), "9".to_string()),
        ]);
        assert_eq!(h.get("x-request-id"), Some("req_1"));
        assert_eq!(h.request_id(), Some("req_1"));
        assert_eq!(h.rate_limit().and_then(|r| r.remaining), Some(9));
        let dbg = format!("{h:?}");
        assert!(!dbg.contains("abc"), "{dbg}");
    }

    #[test]
    fn pairs_that_cannot_be_headers_are_left_out_and_repeats_are_kept() {
        let headers = Headers::from_pairs([
            ("Set-Thing".to_owned(), "a".to_owned()),
            ("bad name".to_owned(), "x".to_owned()),
            ("x-broken".to_owned(), "line\r\nbreak".to_owned()),
            ("set-thing".to_owned(), "b".to_owned()),
        ]);
        assert_eq!(headers.get_all("SET-THING").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(headers.get("set-thing"), Some("a"));
        assert_eq!(headers.get("bad name"), None);
        assert_eq!(headers.get("x-broken"), None);
        assert_eq!(
            headers.iter().collect::<Vec<_>>(),
            [("set-thing", "a"), ("set-thing", "b")]
        );
    }
}
