//! One attempt of a call: the request, and the redirects it meets, followed here rather
//! than by `ureq` so that credentials go only to the origin they were configured for and
//! every hop fits in what is left of the call's timeout.

use std::borrow::Cow;
use std::time::Duration;

use log::{debug, trace};

use crate::HttpClient;
use crate::auth::AuthHeader;
use crate::error::{ApiError, Error};
use crate::method::Method;
use crate::redact::{Redactor, is_sensitive_header};
use crate::request::{Body, Content};
use crate::response::{Headers, Response, StreamingResponse};
use crate::time::Deadline;
use crate::url::{self, Origin};
use crate::wire::{self, BodyError, ExactLength, Mode, Timeouts};

/// The most of an error answer's body that is read.
const ERROR_BODY_CAP: u64 = 1024 * 1024;

/// A successful answer.
pub(crate) enum Answer {
    Buffered(Response),
    Streaming(StreamingResponse),
}

/// Everything one logical call fixes before its first attempt.
pub(crate) struct Call<'a> {
    pub(crate) client: &'a HttpClient,
    pub(crate) method: Method,
    pub(crate) url: String,
    /// The origin of the call's own URL: per-call credential headers go only there.
    pub(crate) origin: Cow<'a, Origin>,
    /// The origin of the client's base URL: the client's credentials go only there.
    pub(crate) base_origin: Option<&'a Origin>,
    pub(crate) body: Option<Body>,
    /// Headers of this call (per-call options and the builder's own).
    pub(crate) headers: Vec<(String, String)>,
    /// Whether the client's extra headers are sent (not on the client's token requests).
    pub(crate) client_headers: bool,
    pub(crate) idempotency_key: Option<String>,
    pub(crate) connect_timeout: Duration,
    pub(crate) per_read_timeout: Duration,
    pub(crate) mode: Mode,
    pub(crate) deadline: Deadline,
    /// Follow no redirect to another origin at all (token requests).
    pub(crate) same_origin_only: bool,
    pub(crate) redact: Redactor,
}

impl Call<'_> {
    fn elapsed(&self) -> Duration {
        self.deadline.elapsed(self.client.inner.config.clock.now())
    }
}

/// Where an attempt stands: the hop it is on, and what the redirects so far changed.
struct Hop<'c> {
    /// Borrowed until a redirect gives another URL: a call without redirects copies none.
    url: Cow<'c, str>,
    method: Method,
    body: Option<&'c Body>,
    /// The URLs of the hops, kept only once there is a redirect.
    visited: Vec<String>,
    /// The redirects followed so far.
    count: u32,
}

/// A failure `hops` redirects in: after one, the original request has reached the
/// server (it answered with the redirect), which the error then says
/// ([`Error::delivery`], the one classifier of whether the server may have acted).
#[cold]
#[inline(never)]
fn fail(error: Error, hops: u32) -> Error {
    if hops == 0 {
        error
    } else {
        error.after_delivery()
    }
}

/// Runs one attempt: the request and the redirects it meets, in named steps for each
/// hop: [`prepare`] the request, [`send`] it, then follow a [`redirect`], [`receive`] a
/// success, or read an [`error_status`].
pub(crate) fn run(
    call: &Call<'_>,
    auth: Option<&AuthHeader<'_>>,
    retries: u32,
) -> Result<Answer, Error> {
    let cfg = &call.client.inner.config;
    let mut hop = Hop {
        url: Cow::Borrowed(&call.url),
        method: call.method,
        body: call.body.as_ref(),
        visited: Vec::new(),
        count: 0,
    };
    loop {
        let remaining = call.deadline.remaining(cfg.clock.now());
        if remaining.is_zero() {
            let error = Error::Timeout {
                elapsed: call.elapsed(),
                delivery: crate::Delivery::NotSent,
            };
            return Err(fail(error, hop.count));
        }
        // The call's own URL was parsed once already; only a redirect's needs it.
        let parsed;
        let origin = if hop.count == 0 {
            &*call.origin
        } else {
            parsed = Origin::parse(&hop.url).map_err(|e| fail(e, hop.count))?;
            &parsed
        };
        let request = prepare(call, &hop, origin, auth, retries);
        let response = send(call, &hop, origin, request, remaining)?;
        let (mut parts, body) = response.into_parts();
        let status = parts.status.as_u16();
        let body = crate::encoding::Incoming::new(body, &mut parts.headers);
        let headers = Headers::from_map(parts.headers, &call.redact);
        debug!(
            "<-- {status} {} {} in {:?}{}",
            hop.method,
            url::strip_query(&hop.url),
            call.elapsed(),
            headers
                .request_id()
                .map(|id| format!(" (request id {id})"))
                .unwrap_or_default()
        );
        if matches!(status, 301 | 302 | 303 | 307 | 308)
            && let Some(location) = headers.get("location")
        {
            redirect(call, &mut hop, origin, status, location)?;
            continue;
        }
        if (200..300).contains(&status) {
            return receive(call, status, headers, body, hop.count);
        }
        return Err(error_status(call, status, &headers, body, hop.count));
    }
}

/// The request of one hop: its headers, each credential only for its own origin.
fn prepare(
    call: &Call<'_>,
    hop: &Hop<'_>,
    origin: &Origin,
    auth: Option<&AuthHeader<'_>>,
    retries: u32,
) -> ureq::http::request::Builder {
    let cfg = &call.client.inner.config;
    // The client's credentials belong to its base URL's origin; a call's own
    // credential headers to the call's URL's origin.
    let client_credentials = call.base_origin.is_some_and(|b| Origin::same(b, origin));
    let call_credentials = Origin::same(origin, &call.origin);

    // The `User-Agent` is the agent's own (set once when the client was built).
    let mut builder = ureq::http::Request::builder()
        .method(hop.method.as_str())
        .uri(hop.url.as_ref());
    let client_headers: &[(String, String)] = if call.client_headers {
        &cfg.headers
    } else {
        &[]
    };
    if !client_headers
        .iter()
        .chain(call.headers.iter())
        .any(|(k, _)| k.eq_ignore_ascii_case("accept"))
    {
        builder = known_header(
            builder,
            ureq::http::header::ACCEPT,
            ureq::http::HeaderValue::from_static("application/json"),
        );
    }
    // What the trace line shows, gathered only when it is written.
    let tracing = log::log_enabled!(log::Level::Trace);
    let mut logged: Vec<(&str, &str)> = vec![];
    let mut log = |name, value| {
        if tracing {
            logged.push((name, value));
        }
    };
    if let Some(b) = hop.body {
        builder = header(builder, "content-type", &b.content_type);
    }
    if let Some(key) = &call.idempotency_key {
        builder = header(builder, "idempotency-key", key);
        log("idempotency-key", key);
    }
    let retry_count;
    if retries > 0 {
        retry_count = retries.to_string();
        builder = header(builder, "x-retry-count", &retry_count);
        log("x-retry-count", &retry_count);
    }
    // Credential headers only to their own origin.
    let own = client_headers.iter().map(|h| (h, client_credentials));
    for ((k, v), credentials) in own.chain(call.headers.iter().map(|h| (h, call_credentials))) {
        if !is_sensitive_header(k) {
            builder = header(builder, k, v);
            log(k, v);
        } else if credentials {
            // A credential goes out as its stand-in: the socket puts it back.
            builder = header(builder, k, &call.client.inner.dialer.masks.header(v));
            log(k, "***");
        }
    }
    if let (Some((name, value)), true) = (auth, client_credentials) {
        builder = auth_header(builder, name.as_ref(), value.expose());
        log(name, "***");
    }
    debug!(
        "--> {} {} (attempt {})",
        hop.method,
        url::strip_query(&hop.url),
        retries + 1
    );
    trace!("    headers: {}", crate::redact::format_headers(logged));
    builder
}

/// Sends one hop's request with its body, within what is left of the call's time.
fn send(
    call: &Call<'_>,
    hop: &Hop<'_>,
    origin: &Origin,
    builder: ureq::http::request::Builder,
    remaining: Duration,
) -> Result<ureq::http::Response<ureq::Body>, Error> {
    let cfg = &call.client.inner.config;
    let timeouts = Timeouts {
        connect: call.connect_timeout,
        remaining,
        per_read: call.per_read_timeout,
    };
    let agent = &call.client.inner.agent;
    // The proxy for this hop's URL, to name it when the connection fails.
    let route = cfg
        .proxies
        .route_for(origin.scheme == "https", &origin.host);
    let invalid =
        |e: ureq::http::Error| fail(Error::config(format!("invalid request: {e}")), hop.count);
    let sent = match hop.body.map(|b| &b.content) {
        Some(Content::Bytes(bytes)) => {
            let request = builder.body(bytes.as_slice()).map_err(invalid)?;
            wire::run(agent, request, call.mode, timeouts)
        }
        Some(Content::Stream { open, length }) => {
            let reader = open().map_err(|source| {
                fail(
                    Error::Io {
                        delivery: crate::Delivery::NotSent,
                        source,
                    },
                    hop.count,
                )
            })?;
            let reader = ExactLength {
                inner: reader,
                left: *length,
            };
            let request = header(builder, "content-length", &length.to_string())
                .body(ureq::SendBody::from_owned_reader(reader))
                .map_err(invalid)?;
            wire::run(agent, request, call.mode, timeouts)
        }
        None => {
            let request = builder.body(()).map_err(invalid)?;
            wire::run(agent, request, call.mode, timeouts)
        }
    };
    sent.map_err(|e| exchange_failed(call, hop, route, e))
}

/// A failed exchange as the attempt's failure.
#[cold]
#[inline(never)]
fn exchange_failed(
    call: &Call<'_>,
    hop: &Hop<'_>,
    route: Option<&crate::proxy::ProxyRoute>,
    e: ureq::Error,
) -> Error {
    let mut error = wire::map_error(e, call.elapsed());
    // Through a proxy, an I/O failure names it: the proxy may be what closed.
    if let (Error::Io { source, .. }, Some(proxy)) = (&mut error, route) {
        *source = std::io::Error::new(
            source.kind(),
            format!("{source} (through the proxy {})", proxy.address()),
        );
    }
    fail(error, hop.count)
}

/// Follows a redirect to `location`, or refuses it: not a usable URL, too many, plain
/// HTTP, a loop; another origin for an action, for a request whose credentials are only
/// for its own, or for a body holding credentials.
#[cold]
#[inline(never)]
fn redirect(
    call: &Call<'_>,
    hop: &mut Hop<'_>,
    origin: &Origin,
    status: u16,
    location: &str,
) -> Result<(), Error> {
    let cfg = &call.client.inner.config;
    // The original request has reached the server from here on: whatever
    // happens next, it may have acted on it.
    let refuse = |location: &str, reason: &str| {
        fail(
            Error::Redirect {
                status,
                location: url::strip_query(location).to_owned(),
                reason: reason.to_owned(),
            },
            hop.count + 1,
        )
    };
    let Some(next) = url::resolve(hop.url.as_ref(), location) else {
        return Err(refuse(location, "the Location header is not a usable URL"));
    };
    if hop.count >= cfg.max_redirects {
        return Err(refuse(
            &next,
            &format!("more than {} redirects", cfg.max_redirects),
        ));
    }
    let next_origin = match Origin::parse(&next) {
        Ok(o) => o,
        Err(_) => return Err(refuse(&next, "not an http(s) URL")),
    };
    if next_origin
        .check_secure(&next, cfg.allow_insecure_http)
        .is_err()
    {
        return Err(refuse(
            &next,
            "plain http:// to a host that is not loopback is not allowed",
        ));
    }
    let keeps_body =
        !(status == 303 || (matches!(status, 301 | 302) && hop.method != Method::Head));
    if next_origin != *origin
        && let Some(reason) = cross_origin_refusal(call, hop, keeps_body)
    {
        return Err(refuse(&next, &reason));
    }
    if hop.visited.is_empty() {
        hop.visited.push(hop.url.clone().into_owned());
    }
    if hop.visited.contains(&next) {
        return Err(refuse(&next, "the redirects go round in a loop"));
    }
    if !keeps_body {
        if hop.method != Method::Get {
            hop.body = None;
        }
        hop.method = Method::Get;
    }
    debug!("    redirect {status} to {}", url::strip_query(&next));
    hop.visited.push(next.clone());
    hop.url = Cow::Owned(next);
    hop.count += 1;
    Ok(())
}

/// Why a redirect to another origin is refused, if it is: an action is answered by the
/// server it was sent to or not at all; a request whose credentials are only for its own
/// origin follows none; a body holding credentials never goes elsewhere.
#[cold]
#[inline(never)]
fn cross_origin_refusal(call: &Call<'_>, hop: &Hop<'_>, keeps_body: bool) -> Option<String> {
    if !matches!(call.method, Method::Get | Method::Head) {
        return Some(format!(
            "a {} is never followed to another origin: nothing was sent there, and the \
             server it was sent to may or may not have processed it (look it up before \
             repeating it)",
            call.method.as_str()
        ));
    }
    if call.same_origin_only {
        return Some(
            "this request carries credentials and follows no redirect to another origin".into(),
        );
    }
    if keeps_body && hop.body.is_some_and(|b| b.credentials) {
        return Some("the body holds credentials and would be sent to another origin".into());
    }
    None
}

/// A success: its body read under the cap, or handed over as a stream.
fn receive(
    call: &Call<'_>,
    status: u16,
    headers: Headers,
    body: crate::encoding::Incoming,
    hops: u32,
) -> Result<Answer, Error> {
    let cfg = &call.client.inner.config;
    // A body announced beyond the cap is refused before a byte of it is read.
    if call.mode == Mode::Buffered
        && headers
            .content_length()
            .is_some_and(|len| len > cfg.max_body_size)
    {
        let error = body_error(BodyError::TooLarge, call, status);
        return Err(fail(error, hops));
    }
    match call.mode {
        Mode::Buffered => match wire::read_capped(body, cfg.max_body_size) {
            Ok(bytes) => Ok(Answer::Buffered(Response::new(
                status,
                headers,
                bytes,
                call.method,
                call.redact.clone(),
            ))),
            Err(e) => Err(fail(body_error(e, call, status), hops)),
        },
        Mode::Streaming => Ok(Answer::Streaming(StreamingResponse::new(
            status,
            headers,
            body.into_reader(),
        ))),
    }
}

/// An error status: its body read as far as it goes within the call's time (a broken one
/// still gives a typed error), and what it means for the retry decision.
#[cold]
#[inline(never)]
fn error_status(
    call: &Call<'_>,
    status: u16,
    headers: &Headers,
    body: crate::encoding::Incoming,
    hops: u32,
) -> Error {
    let cfg = &call.client.inner.config;
    // An error body is read as far as it goes within the call's time; a broken one
    // still gives a typed error.
    let bytes = match call.mode {
        Mode::Buffered => read_error_body_buffered(body),
        Mode::Streaming => {
            let within = call.deadline.remaining(cfg.clock.now());
            wire::read_within(body, ERROR_BODY_CAP, within).unwrap_or_default()
        }
    };
    let now = crate::time::wall_time(cfg.clock.as_ref());
    let retry_after = crate::retry::retry_after_for(status, headers, now);
    let api = ApiError::build(status, headers, &bytes, &call.redact, retry_after);
    fail(Error::Api(Box::new(api)), hops)
}

/// Adds a header: every header of a request goes through here, so that the `http`
/// crate's generic setter is built once, for text.
fn header(
    builder: ureq::http::request::Builder,
    name: &str,
    value: &str,
) -> ureq::http::request::Builder {
    builder.header(name, value)
}

/// Adds the credentials' header: `authorization` by its parsed constant name.
fn auth_header(
    builder: ureq::http::request::Builder,
    name: &str,
    value: &str,
) -> ureq::http::request::Builder {
    match (name, ureq::http::HeaderValue::from_str(value)) {
        ("authorization", Ok(value)) => {
            known_header(builder, ureq::http::header::AUTHORIZATION, value)
        }
        _ => header(builder, name, value),
    }
}

/// Adds a header whose name and value are already checked (the standard ones the client
/// always sends, parsed once rather than on every request).
fn known_header(
    builder: ureq::http::request::Builder,
    name: ureq::http::HeaderName,
    value: ureq::http::HeaderValue,
) -> ureq::http::request::Builder {
    builder.header(name, value)
}

/// Reads up to [`ERROR_BODY_CAP`] of an error body (the exchange's global timeout
/// bounds it); whatever arrived before a failure is kept.
#[cold]
#[inline(never)]
fn read_error_body_buffered(body: crate::encoding::Incoming) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = wire::read_up_to(&mut body.into_reader(), ERROR_BODY_CAP, &mut out);
    out
}

#[cold]
#[inline(never)]
fn body_error(e: BodyError, call: &Call<'_>, status: u16) -> Error {
    match e {
        BodyError::TooLarge => Error::ResponseTooLarge {
            status,
            limit: call.client.inner.config.max_body_size,
        },
        BodyError::Timeout => Error::Timeout {
            elapsed: call.elapsed(),
            delivery: crate::Delivery::MayHaveBeenProcessed,
        },
        BodyError::Io(source) => Error::Io {
            delivery: crate::Delivery::MayHaveBeenProcessed,
            source,
        },
        // The server answered and the answer cannot be read: not the network's doing,
        // so never retried. An action it answered with a success was carried out.
        BodyError::Encoding(message) if call.method.is_action() => Error::UndecodableSuccess {
            status,
            request_id: None,
            body: String::new(),
            source: <serde_json::Error as serde::de::Error>::custom(message),
        },
        BodyError::Encoding(message) => Error::UnexpectedBody { status, message },
    }
}
