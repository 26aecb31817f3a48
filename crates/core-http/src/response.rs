//! Responses: headers, metadata (request id, rate-limit headers), bounded JSON decoding,
//! and streaming bodies for downloads.

use std::fmt;
use std::io::{self, Read};

use std::ops::Range;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde::de::IgnoredAny;

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
            if value.iter().find(|b| !b.is_ascii_whitespace()) == Some(&OPEN) {
                serde_json::from_slice::<T>(value).map(|one| vec![one])
            } else {
                serde_json::from_slice::<Vec<T>>(value)
            }
        })
    }

    /// Decodes a page of an offset/limit list, `{"data": [...], "meta": {...}}`, in one
    /// pass: the same answers as decoding a [`Page`](crate::pagination::Page), but by a
    /// reader written for pages (its figures read by [`PageMeta`](crate::pagination::PageMeta)'s
    /// own), smaller than the one serde derives, which every program builds once per
    /// model. A body that is not an object, or has no `data`, is a decode error; a
    /// missing or `null` `meta` reads as `None`; a member given twice is an error.
    pub fn json_page<T: DeserializeOwned>(&self) -> Result<crate::pagination::Page<T>> {
        serde_json::from_slice::<PageOf<T>>(&self.body)
            .map(|page| page.0)
            .map_err(|e| self.decode_error(e))
    }

    /// Decodes with `decode` the value under `data` when the body is an object with that
    /// key (found by a first pass that skips every other value unread), else the whole
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

/// The byte that opens a JSON object (a name, so that no brace stands alone in a function).
const OPEN: u8 = b'{';

/// An empty (or all-whitespace) body reads as `null`.
fn non_empty(body: &[u8]) -> &[u8] {
    if body.iter().all(u8::is_ascii_whitespace) {
        b"null"
    } else {
        body
    }
}

/// Where the value under a top-level `data` member of a JSON object is in `body`; `None`
/// when the body is not an object, has no such member or has it `null`. The whole body
/// is read, every member's name and value by serde_json itself (every value skipped
/// unread: no `serde_json::Value` is built), so a body that is not JSON, or names `data`
/// twice, is an error here.
///
/// The one difference from decoding the body in one piece: a value may be nested 128
/// deep inside the envelope, where the envelope's own level would count against that.
fn data_span(body: &[u8]) -> serde_json::Result<Option<Range<usize>>> {
    let at = skip_ws(body, 0);
    if body.get(at) != Some(&OPEN) {
        return Ok(None);
    }
    match data_member(body, at + 1) {
        Ok(span) => Ok(span.filter(|span| &body[span.clone()] != b"null")),
        Err(Malformed::Twice) => Err(serde::de::Error::duplicate_field("data")),
        // serde_json says what is wrong, and where.
        Err(Malformed::Syntax) => match serde_json::from_slice::<IgnoredAny>(body) {
            Err(e) => Err(e),
            Ok(_) => Err(serde::de::Error::custom(
                "an envelope that could not be read",
            )),
        },
    }
}

/// Why an object's members could not be read.
enum Malformed {
    /// Not JSON (serde_json reads the whole body again to say where).
    Syntax,
    /// `data` given twice.
    Twice,
}

/// The members of the object that starts before `at`, to its end and the end of `body`:
/// where the value of `data` is.
fn data_member(body: &[u8], mut at: usize) -> std::result::Result<Option<Range<usize>>, Malformed> {
    let mut data = None;
    at = skip_ws(body, at);
    if body.get(at) == Some(&b'}') {
        at += 1;
    } else {
        loop {
            at = skip_ws(body, at);
            if body.get(at) != Some(&b'"') {
                return Err(Malformed::Syntax);
            }
            let (name, end) = one::<Name>(body, at)?;
            at = skip_ws(body, end);
            if body.get(at) != Some(&b':') {
                return Err(Malformed::Syntax);
            }
            let start = skip_ws(body, at + 1);
            let (IgnoredAny, end) = one::<IgnoredAny>(body, start)?;
            if let Name::Data = name {
                if data.is_some() {
                    return Err(Malformed::Twice);
                }
                data = Some(start..end);
            }
            at = skip_ws(body, end);
            match body.get(at) {
                Some(b',') => at += 1,
                Some(b'}') => {
                    at += 1;
                    break;
                }
                _ => return Err(Malformed::Syntax),
            }
        }
    }
    if skip_ws(body, at) == body.len() {
        Ok(data)
    } else {
        Err(Malformed::Syntax)
    }
}

/// One JSON value at `at`, read by serde_json, and where it ends.
fn one<'de, T: Deserialize<'de>>(
    body: &'de [u8],
    at: usize,
) -> std::result::Result<(T, usize), Malformed> {
    let rest = body.get(at..).ok_or(Malformed::Syntax)?;
    let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<T>();
    match values.next() {
        Some(Ok(value)) => Ok((value, at + values.byte_offset())),
        _ => Err(Malformed::Syntax),
    }
}

/// Past JSON's whitespace from `at`.
fn skip_ws(body: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = body.get(at) {
        at += 1;
    }
    at
}

/// A member's name (a JSON string, escapes and all), as far as envelopes care.
enum Name {
    Data,
    Meta,
    Other,
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Name;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Name, E> {
                Ok(match v {
                    "data" => Name::Data,
                    "meta" => Name::Meta,
                    _ => Name::Other,
                })
            }
        }
        d.deserialize_str(Visitor)
    }
}

/// A page, decoded by [`Response::json_page`].
struct PageOf<T>(crate::pagination::Page<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for PageOf<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = PageOf<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a page: an object with `data`")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<PageOf<T>, A::Error> {
                use serde::de::Error as _;
                let mut data: Option<Vec<T>> = None;
                let mut meta = None;
                while let Some(name) = map.next_key::<Name>()? {
                    match name {
                        Name::Data if data.is_some() => {
                            return Err(A::Error::duplicate_field("data"));
                        }
                        Name::Data => data = Some(map.next_value()?),
                        Name::Meta if meta.is_some() => {
                            return Err(A::Error::duplicate_field("meta"));
                        }
                        Name::Meta => {
                            meta = Some(map.next_value::<Option<crate::pagination::PageMeta>>()?)
                        }
                        Name::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let data = data.ok_or_else(|| A::Error::missing_field("data"))?;
                Ok(PageOf(crate::pagination::Page {
                    data,
                    meta: meta.flatten(),
                }))
            }
        }
        d.deserialize_map(Visitor(std::marker::PhantomData))
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
mod tests {
    use super::*;

    fn response(method: Method, body: &str) -> Response {
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

    #[test]
    fn envelopes_decode_without_an_intermediate_value() {
        let r = |b: &str| response(Method::Get, b);
        assert_eq!(
            r(r#"{"data":[1,2],"meta":{}}"#).json_list::<u32>().unwrap(),
            [1, 2]
        );
        assert_eq!(r("[3]").json_list::<u32>().unwrap(), [3]);
        #[derive(Debug, PartialEq, Deserialize)]
        struct Item {
            id: String,
        }
        let one = vec![Item { id: "a".into() }];
        assert_eq!(r(r#"{"id":"a"}"#).json_list::<Item>().unwrap(), one);
        assert_eq!(
            r(r#"{"data":{"id":"a"}}"#).json_list::<Item>().unwrap(),
            one
        );
        assert_eq!(
            r(r#"{"data":{"id":"a"},"x":[1]}"#)
                .json_data::<Item>()
                .unwrap(),
            one[0]
        );
        assert_eq!(r(r#"{"id":"a"}"#).json_data::<Item>().unwrap(), one[0]);
        assert!(r(r#"{"data":5}"#).json_data::<Item>().is_err());
    }

    /// The decode error's text (serde's message and place).
    fn why<T: std::fmt::Debug>(result: Result<T>) -> String {
        match result {
            Err(Error::Decode { source, .. }) => source.to_string(),
            other => panic!("expected a decode error, got {other:?}"),
        }
    }

    #[test]
    fn a_page_reads_its_items_and_figures_or_says_why_not() {
        use crate::pagination::Page;
        let r = |b: &str| response(Method::Get, b);
        let page = r(r#"{"meta":{"total":"3","limit":2},"data":[1,2],"x":{"data":0}}"#)
            .json_page::<u32>()
            .unwrap();
        assert_eq!(page.data, [1, 2]);
        assert_eq!(page.total(), Some(3));
        assert_eq!(page.meta.and_then(|m| m.limit), Some(2));
        for body in [r#"{"data":[]}"#, r#"{"data":[],"meta":null}"#] {
            assert_eq!(r(body).json_page::<u32>().unwrap(), Page::new(vec![], None));
        }
        // What a page decoded in one piece says, and where.
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Whole {
            data: Vec<u32>,
            meta: Option<crate::pagination::PageMeta>,
        }
        for body in [
            "{\"meta\": {},\n \"data\": [1, -2]}",
            "{\"data\": [1],\n \"meta\": {\"total\": 1.5}}",
        ] {
            let expected = serde_json::from_str::<Whole>(body).unwrap_err().to_string();
            assert!(expected.contains("line 2"), "{expected}");
            assert_eq!(why(r(body).json_page::<u32>()), expected);
        }
        // A page that says less than it seems is an error, never an empty page: the
        // same error, at the same place, as for the page decoded by serde's derive.
        for body in [
            r#"{"meta":{"total":9}}"#,
            r#"{"data":[1],"meta":{},"meta":{}}"#,
            r#"{"data":[1],"data":[]}"#,
            r#"{"data":[1],"meta":{"limit":2,"limit":2}}"#,
        ] {
            let expected = serde_json::from_str::<Whole>(body).unwrap_err().to_string();
            assert!(expected.contains(" at line 1 column "), "{expected}");
            assert_eq!(why(r(body).json_page::<u32>()), expected);
        }
        for body in [
            "",
            "[]",
            "[[1],null]",
            "null",
            r#"{"data":null}"#,
            r#"{"data":[1]"#,
        ] {
            assert!(r(body).json_page::<u32>().is_err(), "{body:?}");
        }
    }

    #[test]
    fn an_envelope_that_says_less_than_it_seems_is_an_error() {
        #[derive(Debug, PartialEq, Deserialize)]
        struct Item {
            id: String,
        }
        let r = |b: &str| response(Method::Get, b);
        // An error inside the envelope names its place in the whole body: the same
        // message as serde's for the body decoded in one piece.
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Whole {
            data: Vec<Item>,
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct WholeOne {
            data: Item,
        }
        let body = "{\n  \"meta\": {\"total\": 2},\n  \"data\": [\n    {\"id\": \"a\"},\n    {\"id\": 7}\n  ]\n}";
        let expected = serde_json::from_str::<Whole>(body).unwrap_err().to_string();
        assert_eq!(
            expected,
            "invalid type: integer `7`, expected a string at line 5 column 12"
        );
        assert_eq!(why(r(body).json_list::<Item>()), expected);
        let body = r#"{"x":"é","data":{"id":1}}"#;
        let expected = serde_json::from_str::<WholeOne>(body)
            .unwrap_err()
            .to_string();
        assert!(expected.ends_with("at line 1 column 24"), "{expected}");
        assert_eq!(why(r(body).json_data::<Item>()), expected);
        // `data` twice: which one is meant is unknown.
        assert_eq!(
            why(r(r#"{"data":[{"id":"a"}],"data":[]}"#).json_list::<Item>()),
            "duplicate field `data`"
        );
        // A body cut short, or followed by more, is not an answer.
        assert!(
            r(r#"{"data":[{"id":"a"}],"meta":{"#)
                .json_list::<Item>()
                .is_err()
        );
        assert!(
            r(r#"{"data":[{"id":"a"}]} {}"#)
                .json_list::<Item>()
                .is_err()
        );
        assert!(r(r#"{"data":[{"id":"a"}]"#).json_list::<Item>().is_err());
        // A list answer that is no list and no item.
        for body in [
            "",
            "null",
            "5",
            r#""a""#,
            r#"{"data":"a"}"#,
            r#"{"data":true}"#,
        ] {
            assert!(r(body).json_list::<Item>().is_err(), "{body:?}");
        }
        // `data: null` is no envelope: the object itself is read (here, it is no item).
        assert!(r(r#"{"data":null}"#).json_list::<Item>().is_err());
        assert_eq!(
            r(r#"{"data":null,"id":"b"}"#).json_list::<Item>().unwrap(),
            [Item { id: "b".into() }]
        );
    }
}
