//! An answer's headers: case-insensitive lookup, the request id and rate-limit figures,
//! and a `Debug` that never shows a credential.

use std::fmt;

/// Response headers, with case-insensitive lookup.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Headers {
    pairs: Vec<(String, String)>,
}

impl Headers {
    /// Builds headers from name/value pairs. Names are stored in lower case.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        Headers {
            pairs: pairs
                .into_iter()
                .map(|(mut k, v)| {
                    k.make_ascii_lowercase();
                    (k, v)
                })
                .collect(),
        }
    }

    /// Headers whose names are lower case already (as the `http` crate keeps them).
    pub(crate) fn from_lowercase_pairs(pairs: Vec<(String, String)>) -> Self {
        debug_assert!(
            pairs
                .iter()
                .all(|(k, _)| !k.bytes().any(|b| b.is_ascii_uppercase()))
        );
        Headers { pairs }
    }

    /// The first value of a header, by case-insensitive name.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a header, by case-insensitive name.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs
            .iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// All headers, names in lower case, in the order received.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))
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

impl fmt::Debug for Headers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(
                self.pairs
                    .iter()
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
