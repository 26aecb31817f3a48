//! Responses: headers, metadata (request id, rate-limit headers), bounded JSON decoding,
//! and streaming bodies for downloads.

use std::fmt;
use std::io::{self, Read};

use std::ops::Range;

use serde::de::DeserializeOwned;

use crate::envelope::data_span;
use crate::error::{Error, Result, excerpt};
pub use crate::headers::{Headers, RateLimitInfo};
use crate::method::Method;
use crate::redact::Redactor;

impl crate::ApiError {
    /// Builds an error from a status, the response headers and the body, whatever shape
    /// the body has (a `Retry-After` read against the system clock). Never fails.
    ///
    /// ```
    /// let headers = core_http::transport::Headers::from_pairs([("retry-after".to_owned(), "3".to_owned())]);
    /// let err = core_http::ApiError::from_response(429, &headers, br#"{"message":"slow down"}"#);
    /// assert_eq!(err.message, "slow down");
    /// ```
    pub fn from_response(status: u16, headers: &Headers, body: &[u8]) -> Self {
        let now = std::time::SystemTime::now();
        Self::build(
            status,
            headers,
            body,
            &Redactor::default(),
            crate::retry::retry_after_for(status, headers, now),
        )
    }
}

/// A response whose body has been read into memory (up to the configured cap).
#[derive(Clone)]
pub struct Response {
    status: u16,
    headers: Headers,
    body: Vec<u8>,
    /// The method of the request, so that an action's undecodable answer is told apart
    /// from a read's.
    method: Method,
    redact: Redactor,
}

impl Response {
    pub(crate) fn new(
        status: u16,
        headers: Headers,
        body: Vec<u8>,
        method: Method,
        redact: Redactor,
    ) -> Self {
        Response {
            status,
            headers,
            body,
            method,
            redact,
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

    /// The rate-limit figures the server reported, if any.
    pub fn rate_limit(&self) -> Option<RateLimitInfo> {
        self.headers.rate_limit()
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
    ///
    /// A body that does not decode is [`Error::Decode`] for a read, and
    /// [`Error::UndecodableSuccess`] for an action (POST, PUT, PATCH, DELETE): the server
    /// carried it out, so the error must not invite a retry.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_slice(non_empty(&self.body)).map_err(|e| self.decode_error(e))
    }

    /// Decodes a body that may or may not be wrapped in a `{"data": ...}` envelope: the
    /// value under `data` when the body is an object with that key, else the whole body.
    /// A body that names `data` twice is a decode error (which one is meant is unknown).
    pub fn json_data<T: DeserializeOwned>(&self) -> Result<T> {
        self.in_envelope(|value| serde_json::from_slice::<T>(value))
    }

    /// Decodes a list that servers give in any of four shapes: `{"data": [...]}`,
    /// `[...]`, or a single item, bare or as `{"data": {...}}`. Anything else (a string,
    /// `null`, an envelope naming `data` twice) is a decode error, never an empty list.
    pub fn json_list<T: DeserializeOwned>(&self) -> Result<Vec<T>> {
        self.in_envelope(|value| {
            // An object is one item; anything else must be a list.
            if value.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
                serde_json::from_slice::<T>(value).map(|one| vec![one])
            } else {
                serde_json::from_slice::<Vec<T>>(value)
            }
        })
    }

    /// Decodes a page of an offset/limit list, `{"data": [...], "meta": {...}}`, as a
    /// [`Page`](crate::pagination::Page): a body that is not an object, or has no `data`,
    /// is a decode error; a missing or `null` `meta` reads as `None`; a member given twice
    /// is an error.
    pub fn json_page<T: DeserializeOwned>(&self) -> Result<crate::pagination::Page<T>> {
        // serde's derived reader would also take a list of the two members.
        if self.body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            let unexpected = serde::de::Unexpected::Other("something other than an object");
            return Err(self.decode_error(serde::de::Error::invalid_type(
                unexpected,
                &"a page: an object with `data`",
            )));
        }
        self.json()
    }

    /// Decodes with `decode` the value under `data` when the body is an object with that
    /// key (found by serde_json, every other value skipped unread), else the whole
    /// body.
    ///
    /// The envelope is not a type decoded around each model: a program builds serde's
    /// reader for each of its models, not once more for each model in an envelope.
    fn in_envelope<T>(&self, decode: impl Fn(&[u8]) -> serde_json::Result<T>) -> Result<T> {
        let (value, span) = self.data_value()?;
        decode(value).map_err(|e| match span {
            None => self.decode_error(e),
            Some(span) => self.error_in_place(span, &|bytes| decode(bytes).err()),
        })
    }

    /// The bytes to decode: the value under `data` when the body is an envelope (with its
    /// place in the body), else the whole body.
    fn data_value(&self) -> Result<(&[u8], Option<Range<usize>>)> {
        let body = non_empty(&self.body);
        match data_span(body) {
            Ok(Some(span)) => Ok((&body[span.clone()], Some(span))),
            Ok(None) => Ok((body, None)),
            Err(e) => Err(self.decode_error(e)),
        }
    }

    /// The error of a value at `span` that did not decode, from `decode` run again on
    /// the body with everything around the value blanked (lines kept), so that it names
    /// its line and column in the whole body.
    #[cold]
    fn error_in_place(
        &self,
        span: Range<usize>,
        decode: &dyn Fn(&[u8]) -> Option<serde_json::Error>,
    ) -> Error {
        let blanked: Vec<u8> = non_empty(&self.body)
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                if span.contains(&i) || b == b'\n' {
                    b
                } else {
                    b' '
                }
            })
            .collect();
        // Not expected (the same value decoded the same way): the error without its
        // place rather than none.
        let error =
            decode(&blanked).unwrap_or_else(|| serde::de::Error::custom("the value under `data`"));
        self.decode_error(error)
    }

    /// `text` (taken from the body) with the client's credentials blanked out.
    pub(crate) fn redact(&self, text: String) -> String {
        self.redact.apply(text)
    }

    /// The error for a body that did not decode.
    pub(crate) fn decode_error(&self, source: serde_json::Error) -> Error {
        let request_id = self.request_id().map(str::to_owned);
        // serde's message quotes the value it could not use, which is the server's text.
        let shown = source.to_string();
        let source = match self.redact.apply(shown.clone()) {
            clean if clean != shown => serde::de::Error::custom(clean),
            _ => source,
        };
        if self.method.is_action() {
            Error::UndecodableSuccess {
                status: self.status,
                request_id,
                body: self
                    .redact
                    .apply(String::from_utf8_lossy(&self.body).into_owned()),
                source,
            }
        } else {
            Error::Decode {
                status: self.status,
                request_id,
                excerpt: self.redact.apply(excerpt(&self.body, 200)),
                source,
            }
        }
    }
}

/// An empty (or all-whitespace) body reads as `null`.
fn non_empty(body: &[u8]) -> &[u8] {
    if body.iter().all(u8::is_ascii_whitespace) {
        b"null"
    } else {
        body
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

/// A value with the metadata of the answer it came from: the status, the headers, the
/// request id and the rate-limit figures. Get one for any call with a service client's
/// `with_response(|client| ...)`; for a call that made several requests (a list
/// iteration, a lookup after an ambiguous failure) it describes the last answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WithResponse<T> {
    /// The decoded value.
    pub value: T,
    /// The HTTP status of the answer.
    pub status: u16,
    /// The answer's headers.
    pub headers: Headers,
}

impl<T> WithResponse<T> {
    /// The request id the server gave, if any.
    pub fn request_id(&self) -> Option<&str> {
        self.headers.request_id()
    }

    /// The rate-limit figures the server reported, if any.
    pub fn rate_limit(&self) -> Option<RateLimitInfo> {
        self.headers.rate_limit()
    }

    /// The value alone.
    pub fn into_value(self) -> T {
        self.value
    }
}

/// Where a client records the metadata of its answers, for `with_response`.
#[derive(Debug, Default)]
pub(crate) struct LastResponse(std::sync::Mutex<Option<(u16, Headers)>>);

impl LastResponse {
    pub(crate) fn record(&self, status: u16, headers: &Headers) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some((status, headers.clone()));
        }
    }

    pub(crate) fn take(&self) -> Option<(u16, Headers)> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
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

    /// The request id the server gave, if any.
    pub fn request_id(&self) -> Option<&str> {
        self.headers.request_id()
    }

    /// Copies the rest of the body into `to` in chunks of up to 256 KiB (each filled by
    /// as many reads as it takes, so a file gets few, large writes: a `BufWriter` of that
    /// size or less passes them straight through instead of copying them again), calling
    /// `progress` with (bytes so far, `Content-Length`) after each, and returns the byte
    /// count. Memory use does not grow with the body's size.
    pub fn copy_to(
        &mut self,
        to: &mut dyn io::Write,
        mut progress: impl FnMut(u64, Option<u64>),
    ) -> io::Result<u64> {
        let total = self.content_length();
        let mut buf = vec![0u8; COPY_CHUNK];
        loop {
            let (mut filled, mut ended, mut failed) = (0, false, None);
            while filled < buf.len() {
                match self.read(&mut buf[filled..]) {
                    Ok(0) => {
                        ended = true;
                        break;
                    }
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            // What arrived before a failure is written too, as it was read.
            if filled > 0 {
                to.write_all(&buf[..filled])?;
                progress(self.read, total);
            }
            if let Some(e) = failed {
                return Err(e);
            }
            if ended {
                return Ok(self.read);
            }
        }
    }
}

/// The most [`StreamingResponse::copy_to`] holds of a body at a time.
const COPY_CHUNK: usize = 256 * 1024;

impl Read for StreamingResponse {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self
            .reader
            .read(buf)
            .map_err(crate::wire::unwrap_stream_error)?;
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
pub(crate) mod tests {
    use super::*;

    /// A 200 answer with `body`, whose redactor knows one key a server might echo.
    pub(crate) fn response(method: Method, body: &str) -> Response {
        Response::new(
            200,
            Headers::default(),
            body.as_bytes().to_vec(),
            method,
            Redactor::new(["sk_live_echoed_key".to_owned()]),
        )
    }

    #[test]
    fn empty_body_decodes_as_null() {
        let v: Option<u32> = response(Method::Delete, "").json().unwrap();
        assert_eq!(v, None);
        let err = response(Method::Get, "{oops").json::<u32>().unwrap_err();
        assert!(
            matches!(err, Error::Decode { status: 200, ref excerpt, .. } if excerpt == "{oops")
        );
    }

    #[test]
    fn an_action_that_does_not_decode_says_it_happened() {
        let err = response(Method::Post, r#"{"key":"sk_live_echoed_key"}"#)
            .json::<Vec<u32>>()
            .unwrap_err();
        assert!(err.action_succeeded(), "{err:?}");
        assert!(err.may_have_been_processed());
        match err {
            Error::UndecodableSuccess { status, body, .. } => {
                assert_eq!(status, 200);
                assert_eq!(body, r#"{"key":"***"}"#);
            }
            other => panic!("{other:?}"),
        }
    }
}
