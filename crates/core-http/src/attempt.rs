//! One attempt of a call: the request, and the redirects it meets, followed here rather
//! than by `ureq` so that credentials go only to the origin they were configured for and
//! every hop fits in what is left of the call's timeout.

use std::borrow::Cow;
use std::time::Duration;

use log::{debug, trace};

use crate::HttpClient;
use crate::auth::AuthHeader;
use crate::error::{ApiError, Error};
use crate::redact::{Redactor, is_sensitive_header};
use crate::request::{Body, Content, Method};
use crate::response::{Headers, Response, StreamingResponse};
use crate::retry::Outcome;
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

/// A failed attempt.
pub(crate) struct Failure {
    /// The error, as the caller will see it.
    pub(crate) error: Error,
    /// What happened to the request on this attempt (of the last hop).
    pub(crate) outcome: Outcome,
    /// How many redirects were followed before it failed: after one, the original
    /// request has reached the server.
    pub(crate) hops: u32,
}

impl Call<'_> {
    fn elapsed(&self) -> Duration {
        self.deadline.elapsed(self.client.inner.config.clock.now())
    }
}

/// Runs one attempt: the request and the redirects it meets.
pub(crate) fn run(
    call: &Call<'_>,
    auth: Option<&AuthHeader<'_>>,
    retries: u32,
) -> Result<Answer, Failure> {
    let cfg = &call.client.inner.config;
    // Borrowed until a redirect gives another URL: a call without redirects copies none.
    let mut url: Cow<'_, str> = Cow::Borrowed(&call.url);
    let mut method = call.method;
    let mut body = call.body.as_ref();
    // The URLs of the hops, kept only once there is a redirect.
    let mut visited: Vec<String> = Vec::new();
    let mut hops = 0u32;
    let fail = |error: Error, outcome: Outcome, hops: u32| Failure {
        error: if hops > 0 {
            error.after_delivery()
        } else {
            error
        },
        outcome,
        hops,
    };
    loop {
        let remaining = call.deadline.remaining(cfg.clock.now());
        if remaining.is_zero() {
            let error = Error::Timeout {
                elapsed: call.elapsed(),
                delivery: crate::Delivery::NotSent,
            };
            return Err(fail(error, Outcome::Final, hops));
        }
        // The call's own URL was parsed once already; only a redirect's needs it.
        let parsed;
        let origin = if hops == 0 {
            &call.origin
        } else {
            parsed = Origin::parse(&url).map_err(|e| fail(e, Outcome::Final, hops))?;
            &parsed
        };
        // The client's credentials belong to its base URL's origin; a call's own
        // credential headers to the call's URL's origin.
        let client_credentials = call.base_origin == Some(origin);
        let call_credentials = *origin == *call.origin;

        // The `User-Agent` is the agent's own (set once when the client was built).
        let mut builder = ureq::http::Request::builder()
            .method(method.as_str())
            .uri(url.as_ref());
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
            builder = builder.header("accept", "application/json");
        }
        // What the trace line shows, gathered only when it is written.
        let tracing = log::log_enabled!(log::Level::Trace);
        let mut logged: Vec<(&str, &str)> = vec![];
        let mut log = |name, value| {
            if tracing {
                logged.push((name, value));
            }
        };
        if let Some(b) = body {
            builder = builder.header("content-type", &b.content_type);
        }
        if let Some(key) = &call.idempotency_key {
            builder = builder.header("idempotency-key", key);
            log("idempotency-key", key);
        }
        let retry_count;
        if retries > 0 {
            retry_count = retries.to_string();
            builder = builder.header("x-retry-count", &retry_count);
            log("x-retry-count", &retry_count);
        }
        for (k, v) in client_headers {
            if client_credentials || !is_sensitive_header(k) {
                builder = builder.header(k, v);
                log(k, v);
            }
        }
        for (k, v) in &call.headers {
            if call_credentials || !is_sensitive_header(k) {
                builder = builder.header(k, v);
                log(k, v);
            }
        }
        if let (Some((name, value)), true) = (auth, client_credentials) {
            builder = builder.header(name.as_ref(), value.expose());
            log(name, "***");
        }
        debug!(
            "--> {method} {} (attempt {})",
            url::strip_query(&url),
            retries + 1
        );
        trace!("    headers: {}", crate::redact::format_headers(logged));

        let timeouts = Timeouts {
            // The agent has the client's connect timeout; a call's own is set per request.
            connect: (call.connect_timeout != cfg.connect_timeout).then_some(call.connect_timeout),
            agent_connect: cfg.connect_timeout,
            remaining,
            per_read: call.per_read_timeout,
        };
        let agent = &call.client.inner.agent;
        let invalid = |e: ureq::http::Error| {
            fail(
                Error::config(format!("invalid request: {e}")),
                Outcome::Final,
                hops,
            )
        };
        let sent = match body.map(|b| &b.content) {
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
                        Outcome::Final,
                        hops,
                    )
                })?;
                let reader = ExactLength {
                    inner: reader,
                    left: *length,
                };
                let request = builder
                    .header("content-length", length.to_string())
                    .body(ureq::SendBody::from_owned_reader(reader))
                    .map_err(invalid)?;
                wire::run(agent, request, call.mode, timeouts)
            }
            None => {
                let request = builder.body(()).map_err(invalid)?;
                wire::run(agent, request, call.mode, timeouts)
            }
        };
        let response = sent.map_err(|e| {
            let failed = wire::map_error(e, call.elapsed(), &origin.host);
            fail(failed.error, failed.outcome, hops)
        })?;
        let (parts, response_body) = response.into_parts();
        let status = parts.status.as_u16();
        // `http` header names are lower case already.
        let headers = Headers::from_lowercase_pairs(
            parts
                .headers
                .iter()
                .map(|(k, v)| {
                    let value = match v.to_str() {
                        Ok(text) => text.to_owned(),
                        Err(_) => String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    };
                    (k.as_str().to_owned(), value)
                })
                .collect(),
        );
        debug!(
            "<-- {status} {method} {} in {:?}{}",
            url::strip_query(&url),
            call.elapsed(),
            headers
                .request_id()
                .map(|id| format!(" (request id {id})"))
                .unwrap_or_default()
        );

        if matches!(status, 301 | 302 | 303 | 307 | 308)
            && let Some(location) = headers.get("location")
        {
            // The original request has reached the server from here on: whatever
            // happens next, it may have acted on it.
            let refuse = |location: &str, reason: &str| {
                fail(
                    Error::Redirect {
                        status,
                        location: url::strip_query(location).to_owned(),
                        reason: reason.to_owned(),
                    },
                    Outcome::Final,
                    hops + 1,
                )
            };
            let Some(next) = url::resolve(url.as_ref(), location) else {
                return Err(refuse(location, "the Location header is not a usable URL"));
            };
            if hops >= cfg.max_redirects {
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
                !(status == 303 || (matches!(status, 301 | 302) && method != Method::Head));
            if next_origin != *origin {
                if !matches!(call.method, Method::Get | Method::Head) {
                    // An action is answered by the server it was sent to, or not at all:
                    // another origin's answer is not the action's outcome.
                    return Err(refuse(
                        &next,
                        &format!(
                            "a {} is never followed to another origin: nothing was sent \
                             there, and the server it was sent to may or may not have \
                             processed it (look it up before repeating it)",
                            call.method.as_str()
                        ),
                    ));
                }
                if call.same_origin_only {
                    return Err(refuse(
                        &next,
                        "this request carries credentials and follows no redirect to another origin",
                    ));
                }
                if keeps_body && body.is_some_and(|b| b.credentials) {
                    return Err(refuse(
                        &next,
                        "the body holds credentials and would be sent to another origin",
                    ));
                }
            }
            if visited.is_empty() {
                visited.push(url.clone().into_owned());
            }
            if visited.contains(&next) {
                return Err(refuse(&next, "the redirects go round in a loop"));
            }
            if !keeps_body {
                if method != Method::Get {
                    body = None;
                }
                method = Method::Get;
            }
            debug!("    redirect {status} to {}", url::strip_query(&next));
            visited.push(next.clone());
            url = Cow::Owned(next);
            hops += 1;
            continue;
        }

        if (200..300).contains(&status) {
            // A body announced beyond the cap is refused before a byte of it is read.
            if call.mode == Mode::Buffered
                && headers
                    .content_length()
                    .is_some_and(|len| len > cfg.max_body_size)
            {
                let error = body_error(BodyError::TooLarge, call, status);
                return Err(fail(error, Outcome::Final, hops));
            }
            return match call.mode {
                Mode::Buffered => match wire::read_capped(response_body, cfg.max_body_size) {
                    Ok(bytes) => Ok(Answer::Buffered(Response::new(
                        status,
                        headers,
                        bytes,
                        call.method,
                        call.redact.clone(),
                    ))),
                    Err(e) => {
                        let outcome = outcome_of(&e);
                        Err(fail(body_error(e, call, status), outcome, hops))
                    }
                },
                Mode::Streaming => Ok(Answer::Streaming(StreamingResponse::new(
                    status,
                    headers,
                    Box::new(response_body.into_reader()),
                ))),
            };
        }
        // An error body is read as far as it goes within the call's time; a broken one
        // still gives a typed error.
        let bytes = match call.mode {
            Mode::Buffered => read_error_body_buffered(response_body),
            Mode::Streaming => {
                let within = call.deadline.remaining(cfg.clock.now());
                wire::read_within(response_body, ERROR_BODY_CAP, within).unwrap_or_default()
            }
        };
        let now = crate::time::wall_time(cfg.clock.as_ref());
        let api = ApiError::build(status, &headers, &bytes, &call.redact, now);
        let outcome = Outcome::Status {
            status,
            retry_after: api.retry_after,
            quota: api.kind == crate::ErrorKind::QuotaExceeded,
        };
        return Err(fail(Error::Api(Box::new(api)), outcome, hops));
    }
}

/// Reads up to [`ERROR_BODY_CAP`] of an error body (the exchange's global timeout
/// bounds it); whatever arrived before a failure is kept.
fn read_error_body_buffered(body: ureq::Body) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    let _ = body
        .into_reader()
        .take(ERROR_BODY_CAP)
        .read_to_end(&mut out);
    out
}

fn outcome_of(e: &BodyError) -> Outcome {
    match e {
        BodyError::TooLarge => Outcome::Final,
        BodyError::Timeout | BodyError::Io(_) => Outcome::MayHaveBeenProcessed,
    }
}

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
    }
}
