//! Responses: headers, metadata (request id, rate-limit headers), bounded JSON decoding,
//! and streaming bodies for downloads.

use std::fmt;
use std::io::{self, Read};

use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

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
                .map(|(k, v)| (k.to_ascii_lowercase(), v))
                .collect(),
        }
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
                    .map(|(k, v)| (k, crate::log::redact_header(k, v))),
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

/// A response whose body has been read into memory (up to the configured cap).
#[derive(Clone)]
pub struct Response {
    status: u16,
    headers: Headers,
    body: Vec<u8>,
}

impl Response {
    pub(crate) fn new(status: u16, headers: Headers, body: Vec<u8>) -> Self {
        Response {
            status,
            headers,
            body,
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The response headers.
    pub fn headers(&self) -> &Headers {
        &self.headers
    }

    /// The request id the server gave, if any.
    pub fn request_id(&self) -> Option<&str> {
        self.headers.request_id()
    }

    /// The body bytes.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// Takes the body bytes.
    pub fn into_body(self) -> Vec<u8> {
        self.body
    }

    /// Decodes the body as JSON. An empty body decodes as `null`, so `()` and `Option`
    /// targets accept a 204.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T> {
        decode_json(self.status, &self.body)
    }

    /// Decodes a body that may or may not be wrapped in a `{"data": ...}` envelope: the
    /// value under `data` when the body is an object with that key, else the whole body.
    pub fn json_data<T: DeserializeOwned>(&self) -> Result<T> {
        let value: serde_json::Value = self.json()?;
        let inner = unwrap_data(value);
        serde_json::from_value(inner).map_err(|e| Error::decode(self.status, &self.body, e))
    }

    /// Decodes a list that servers give in any of four shapes: `{"data": [...]}`,
    /// `[...]`, or a single item, bare or as `{"data": {...}}`.
    pub fn json_list<T: DeserializeOwned>(&self) -> Result<Vec<T>> {
        let value: serde_json::Value = self.json()?;
        let decode = |e| Error::decode(self.status, &self.body, e);
        match unwrap_data(value) {
            serde_json::Value::Array(items) => items
                .into_iter()
                .map(|item| serde_json::from_value(item).map_err(decode))
                .collect(),
            single => Ok(vec![serde_json::from_value(single).map_err(decode)?]),
        }
    }
}

fn unwrap_data(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(mut map) if map.contains_key("data") => {
            map.remove("data").unwrap_or_default()
        }
        other => other,
    }
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// Decodes JSON, treating an empty (or all-whitespace) body as `null`.
pub(crate) fn decode_json<T: DeserializeOwned>(status: u16, body: &[u8]) -> Result<T> {
    let trimmed = body.iter().all(u8::is_ascii_whitespace);
    let bytes: &[u8] = if trimmed { b"null" } else { body };
    serde_json::from_slice(bytes).map_err(|e| Error::decode(status, body, e))
}

/// A response whose body is read as a stream, for downloads.
///
/// Reading returns an error (never a silent short read) when the connection ends before
/// `Content-Length` bytes arrived.
pub struct StreamingResponse {
    status: u16,
    headers: Headers,
    reader: Box<dyn Read + Send>,
    read: u64,
}

impl StreamingResponse {
    pub(crate) fn new(status: u16, headers: Headers, reader: Box<dyn Read + Send>) -> Self {
        StreamingResponse {
            status,
            headers,
            reader,
            read: 0,
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The response headers.
    pub fn headers(&self) -> &Headers {
        &self.headers
    }

    /// The `Content-Length` the server announced, if any.
    pub fn content_length(&self) -> Option<u64> {
        self.headers.content_length()
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read
    }

    /// Copies the rest of the body into `to` in 64 KiB chunks, calling `progress` with
    /// (bytes so far, `Content-Length`) after each, and returns the byte count. Memory use
    /// does not grow with the body's size.
    pub fn copy_to(
        &mut self,
        to: &mut dyn io::Write,
        mut progress: impl FnMut(u64, Option<u64>),
    ) -> io::Result<u64> {
        let total = self.content_length();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = self.read(&mut buf)?;
            if n == 0 {
                return Ok(self.read);
            }
            to.write_all(&buf[..n])?;
            progress(self.read, total);
        }
    }
}

impl Read for StreamingResponse {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.reader.read(buf).map_err(crate::transport::unwrap_io)?;
        self.read += n as u64;
        if n == 0
            && !buf.is_empty()
            && let Some(expected) = self.content_length()
            && self.read < expected
        {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("connection closed after {} of {expected} bytes", self.read),
            ));
        }
        Ok(n)
    }
}

impl fmt::Debug for StreamingResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamingResponse")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("bytes_read", &self.read)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn empty_body_decodes_as_null() {
        let v: Option<u32> = decode_json(204, b"").unwrap();
        assert_eq!(v, None);
        let err = decode_json::<u32>(200, b"{oops").unwrap_err();
        assert!(
            matches!(err, Error::Decode { status: 200, ref excerpt, .. } if excerpt == "{oops")
        );
    }
}
