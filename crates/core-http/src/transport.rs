//! The blocking transport on `ureq`: one attempt (with redirects handled here, so that
//! credentials never follow a redirect to another origin), and the retry loop around it.

use std::io;
use std::time::{Duration, Instant};

use log::{debug, trace};

use crate::HttpClient;
use crate::auth::{Auth, CachedToken, OAuth2Config, Secret, TokenResponse};
use crate::error::{ApiError, Error, ErrorKind, Result};
use crate::request::{Body, Content, Method, RequestBuilder};
use crate::response::{Headers, Response, StreamingResponse};
use crate::retry::{Outcome, Replay, RetryDecision, StopReason};
use crate::url::{self, Origin};

/// How the success body is handed back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Buffered,
    Streaming,
}

enum Answer {
    Buffered(Response),
    Streaming(StreamingResponse),
}

/// Why one attempt failed: an error status, or a transport error with what it means for
/// a retry (`None`: final, never retried).
enum Failure {
    Status(Box<ApiError>),
    Transport(Error, Option<Outcome>),
}

pub(crate) fn send_buffered(rb: RequestBuilder<'_>) -> Result<Response> {
    match execute(rb, Mode::Buffered)? {
        Answer::Buffered(r) => Ok(r),
        Answer::Streaming(_) => Err(Error::config("internal: unexpected streaming answer")),
    }
}

pub(crate) fn send_streaming(rb: RequestBuilder<'_>) -> Result<StreamingResponse> {
    match execute(rb, Mode::Streaming)? {
        Answer::Streaming(r) => Ok(r),
        Answer::Buffered(_) => Err(Error::config("internal: unexpected buffered answer")),
    }
}

/// One logical call: everything an attempt needs, fixed before the first attempt.
struct Call<'a> {
    client: &'a HttpClient,
    method: Method,
    url: String,
    origin: Origin,
    body: Option<Body>,
    headers: Vec<(String, String)>,
    idempotency_key: Option<String>,
    connect_timeout: Duration,
    read_timeout: Duration,
    mode: Mode,
    start: Instant,
}

fn execute(rb: RequestBuilder<'_>, mode: Mode) -> Result<Answer> {
    if let Some(e) = rb.error {
        return Err(e);
    }
    let client = rb.client;
    let cfg = &client.inner.config;
    let opts = client.defaults.merged(&rb.options);
    let base = cfg.base_url.as_deref().unwrap_or_default();
    let url = url::join(base, &rb.path, &rb.query);
    let origin = Origin::parse(&url)?;
    origin.check_secure(&url, cfg.allow_insecure_http)?;
    for (name, value) in &opts.headers {
        check_header(name, value)?;
    }
    let mut policy = cfg.retry.clone();
    if let Some(n) = opts.max_retries {
        policy.max_retries = n;
    }
    let timeout = opts.timeout.unwrap_or(cfg.timeout);
    let idempotency_key = opts.idempotency_key.clone().or_else(|| {
        (rb.method == Method::Post && cfg.idempotency_keys).then(crate::random::uuid_v4)
    });
    let replay = match rb.replay_safe {
        Some(true) => Replay::Safe,
        Some(false) => Replay::Unsafe,
        None if rb.method.is_idempotent() || idempotency_key.is_some() => Replay::Safe,
        None => Replay::Unsafe,
    };

    // A client-side rate limit is a wait the caller asked for: the call's timeout starts
    // once the first request is cleared to go.
    wait_for_rate_limit(client);
    let start = Instant::now();
    let deadline = start + timeout;
    let call = Call {
        client,
        method: rb.method,
        url,
        origin,
        body: rb.body,
        headers: opts.headers,
        idempotency_key,
        connect_timeout: opts.connect_timeout.unwrap_or(cfg.connect_timeout),
        read_timeout: timeout,
        mode,
        start,
    };

    let mut retries = 0u32;
    let mut refreshed_token = false;
    loop {
        let auth = if rb.authenticated {
            client.auth_header(None)?
        } else {
            None
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        let result = attempt(&call, auth.as_ref(), retries, remaining);
        let (error, outcome) = match result {
            Ok(answer) => return Ok(answer),
            Err(Failure::Status(api)) => {
                if api.status == 401
                    && !refreshed_token
                    && let (Auth::OAuth2ClientCredentials(_), Some(used)) =
                        (&cfg.auth, auth.as_ref())
                {
                    debug!(
                        "{} {}: 401 with an OAuth token; refreshing it once",
                        call.method,
                        url::strip_query(&call.url)
                    );
                    refreshed_token = true;
                    client.auth_header(Some(&used.1))?;
                    continue;
                }
                let outcome = Outcome::Status {
                    status: api.status,
                    retry_after: api.retry_after,
                    quota: api.kind == ErrorKind::QuotaExceeded,
                };
                (Error::Api(api), Some(outcome))
            }
            Err(Failure::Transport(e, outcome)) => (e, outcome),
        };
        let Some(outcome) = outcome else {
            return Err(error);
        };
        let decision = policy.decide(retries, &outcome, replay, crate::random::unit_f64());
        let decision = match decision {
            RetryDecision::Retry { delay } if Instant::now() + delay >= deadline => {
                RetryDecision::Stop(StopReason::DeadlineExceeded)
            }
            d => d,
        };
        match decision {
            RetryDecision::Retry { delay } => {
                debug!(
                    "{} {}: {error}; retry {} of {} in {delay:?}",
                    call.method,
                    url::strip_query(&call.url),
                    retries + 1,
                    policy.max_retries
                );
                cfg.sleeper.sleep(delay);
                retries += 1;
                wait_for_rate_limit(client);
            }
            RetryDecision::Stop(reason) => {
                debug!(
                    "{} {}: {error}; not retried ({reason})",
                    call.method,
                    url::strip_query(&call.url)
                );
                return Err(error);
            }
        }
    }
}

fn wait_for_rate_limit(client: &HttpClient) {
    let cfg = &client.inner.config;
    if let Some(bucket) = &client.inner.bucket {
        let wait = bucket.acquire(cfg.clock.now());
        if !wait.is_zero() {
            debug!("client-side rate limit: waiting {wait:?}");
            cfg.sleeper.sleep(wait);
        }
    }
}

/// One attempt, following redirects.
fn attempt(
    call: &Call<'_>,
    auth: Option<&(String, Secret)>,
    retries: u32,
    remaining: Duration,
) -> std::result::Result<Answer, Failure> {
    let cfg = &call.client.inner.config;
    let mut url = call.url.clone();
    let mut method = call.method;
    let mut body = call.body.as_ref();
    let mut send_auth = true;
    let mut hops = 0;
    loop {
        let mut builder = ureq::http::Request::builder()
            .method(method.as_str())
            .uri(&url)
            .header("user-agent", &cfg.user_agent);
        // JSON unless the client or this call asks for something else.
        if !cfg
            .headers
            .iter()
            .chain(call.headers.iter())
            .any(|(k, _)| k.eq_ignore_ascii_case("accept"))
        {
            builder = builder.header("accept", "application/json");
        }
        let mut logged: Vec<(&str, &str)> = vec![];
        if let Some(b) = body {
            builder = builder.header("content-type", &b.content_type);
        }
        if let Some(key) = &call.idempotency_key {
            builder = builder.header("idempotency-key", key);
            logged.push(("idempotency-key", key));
        }
        let retry_count = retries.to_string();
        if retries > 0 {
            builder = builder.header("x-retry-count", &retry_count);
            logged.push(("x-retry-count", &retry_count));
        }
        for (k, v) in cfg.headers.iter().chain(call.headers.iter()) {
            builder = builder.header(k, v);
            logged.push((k, v));
        }
        if let (Some((name, value)), true) = (auth, send_auth) {
            builder = builder.header(name, value.expose());
            logged.push((name, "***"));
        }
        debug!(
            "--> {method} {} (attempt {})",
            url::strip_query(&url),
            retries + 1
        );
        trace!("    headers: {}", crate::log::format_headers(logged));

        let connect = call.connect_timeout.min(remaining);
        let sent = match body.map(|b| &b.content) {
            Some(Content::Bytes(bytes)) => {
                let req = builder.body(bytes.as_slice()).map_err(request_error)?;
                run(call, req, connect, remaining)
            }
            Some(Content::Stream { open, length }) => {
                let reader = open().map_err(|source| {
                    Failure::Transport(
                        Error::Io {
                            may_have_been_processed: false,
                            source,
                        },
                        None,
                    )
                })?;
                let reader = ExactLength {
                    inner: reader,
                    left: *length,
                };
                let req = builder
                    .header("content-length", length.to_string())
                    .body(ureq::SendBody::from_owned_reader(reader))
                    .map_err(request_error)?;
                run(call, req, connect, remaining)
            }
            None => {
                let req = builder.body(()).map_err(request_error)?;
                run(call, req, connect, remaining)
            }
        };
        let response = sent.map_err(|e| map_ureq(e, call.start))?;
        let (parts, resp_body) = response.into_parts();
        let status = parts.status.as_u16();
        let headers = Headers::from_pairs(parts.headers.iter().map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        }));
        debug!(
            "<-- {status} {method} {} in {:?}{}",
            url::strip_query(&url),
            call.start.elapsed(),
            headers
                .request_id()
                .map(|id| format!(" (request id {id})"))
                .unwrap_or_default()
        );

        if matches!(status, 301 | 302 | 303 | 307 | 308)
            && hops < cfg.max_redirects
            && let Some(next) = headers
                .get("location")
                .and_then(|loc| url::resolve(&url, loc))
        {
            let next_origin = Origin::parse(&next).map_err(|e| Failure::Transport(e, None))?;
            next_origin
                .check_secure(&next, cfg.allow_insecure_http)
                .map_err(|e| Failure::Transport(e, None))?;
            if next_origin != call.origin {
                // Credentials belong to the origin they were configured for.
                send_auth = false;
            }
            if status == 303 || (matches!(status, 301 | 302) && method != Method::Head) {
                if method != Method::Get {
                    body = None;
                }
                method = Method::Get;
            }
            debug!("    redirect {status} to {}", url::strip_query(&next));
            url = next;
            hops += 1;
            continue;
        }

        if (200..300).contains(&status) {
            return match call.mode {
                Mode::Buffered => {
                    let bytes = read_body(resp_body, cfg.max_body_size, call.start)?;
                    Ok(Answer::Buffered(Response::new(status, headers, bytes)))
                }
                Mode::Streaming => Ok(Answer::Streaming(StreamingResponse::new(
                    status,
                    headers,
                    Box::new(resp_body.into_reader()),
                ))),
            };
        }
        // An error body is read as far as it goes; a broken one still gives a typed error.
        let bytes = read_body(resp_body, cfg.max_body_size, call.start).unwrap_or_default();
        return Err(Failure::Status(Box::new(ApiError::from_response(
            status, &headers, &bytes,
        ))));
    }
}

fn run<S: ureq::AsSendBody>(
    call: &Call<'_>,
    req: ureq::http::Request<S>,
    connect: Duration,
    remaining: Duration,
) -> std::result::Result<ureq::http::Response<ureq::Body>, ureq::Error> {
    let agent = &call.client.inner.agent;
    let configured = agent.configure_request(req).timeout_connect(Some(connect));
    let configured = match call.mode {
        Mode::Buffered => configured.timeout_global(Some(remaining)),
        Mode::Streaming => configured
            .timeout_send_request(Some(remaining))
            .timeout_send_body(Some(remaining))
            .timeout_recv_response(Some(remaining))
            .timeout_per_read(Some(call.read_timeout)),
    };
    agent.run(configured.build())
}

/// A streamed body that must be exactly as long as the `Content-Length` sent with it:
/// a reader that ends early or runs long fails the attempt instead of sending a body
/// that disagrees with its header.
struct ExactLength {
    inner: Box<dyn io::Read + Send>,
    left: u64,
}

impl io::Read for ExactLength {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the request body is longer than its announced length",
                )),
            };
        }
        let cap = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..cap])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the request body ended {} bytes short of its announced length",
                    self.left
                ),
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

fn request_error(e: ureq::http::Error) -> Failure {
    Failure::Transport(Error::config(format!("invalid request: {e}")), None)
}

fn read_body(
    body: ureq::Body,
    limit: u64,
    start: Instant,
) -> std::result::Result<Vec<u8>, Failure> {
    let mut body = body;
    body.with_config()
        .limit(limit)
        .read_to_vec()
        .map_err(|e| map_ureq(e, start))
}

/// Maps a `ureq` error to ours, with what it means for a retry.
fn map_ureq(e: ureq::Error, start: Instant) -> Failure {
    use ureq::Timeout as T;
    let elapsed = start.elapsed();
    let timeout = |sent: bool| Error::Timeout {
        elapsed,
        may_have_been_processed: sent,
    };
    match e {
        ureq::Error::Timeout(T::Connect | T::Resolve) => {
            Failure::Transport(timeout(false), Some(Outcome::NotSent))
        }
        ureq::Error::Timeout(_) => Failure::Transport(timeout(true), Some(Outcome::MaybeSent)),
        ureq::Error::HostNotFound => Failure::Transport(
            Error::Connect {
                message: "host not found".into(),
            },
            Some(Outcome::NotSent),
        ),
        ureq::Error::ConnectionFailed => Failure::Transport(
            Error::Connect {
                message: "connection failed".into(),
            },
            Some(Outcome::NotSent),
        ),
        ureq::Error::BodyExceedsLimit(limit) => {
            Failure::Transport(Error::ResponseTooLarge { limit }, None)
        }
        // A TLS failure (certificate, protocol) will not heal on a retry.
        ureq::Error::Tls(m) => Failure::Transport(
            Error::Connect {
                message: format!("TLS: {m}"),
            },
            None,
        ),
        ureq::Error::Rustls(err) => Failure::Transport(
            Error::Connect {
                message: format!("TLS: {err}"),
            },
            None,
        ),
        ureq::Error::RequireHttpsOnly(m) | ureq::Error::BadUri(m) => {
            Failure::Transport(Error::config(m), None)
        }
        ureq::Error::Http(err) => Failure::Transport(Error::config(err.to_string()), None),
        ureq::Error::Io(io) => map_io(io, elapsed),
        other => Failure::Transport(
            Error::Io {
                may_have_been_processed: true,
                source: io::Error::other(other.to_string()),
            },
            Some(Outcome::MaybeSent),
        ),
    }
}

fn map_io(io: io::Error, elapsed: Duration) -> Failure {
    match io.kind() {
        io::ErrorKind::ConnectionRefused
        | io::ErrorKind::AddrNotAvailable
        | io::ErrorKind::HostUnreachable
        | io::ErrorKind::NetworkUnreachable => Failure::Transport(
            Error::Connect {
                message: io.to_string(),
            },
            Some(Outcome::NotSent),
        ),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Failure::Transport(
            Error::Timeout {
                elapsed,
                may_have_been_processed: true,
            },
            Some(Outcome::MaybeSent),
        ),
        _ => Failure::Transport(
            Error::Io {
                may_have_been_processed: true,
                source: io,
            },
            Some(Outcome::MaybeSent),
        ),
    }
}

/// Turns an error from a streamed body (ureq wraps its own errors in `io::Error`) into a
/// plain `io::Error` with a clear kind.
pub(crate) fn unwrap_io(e: io::Error) -> io::Error {
    let is_timeout = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ureq::Error>())
        .is_some_and(|u| matches!(u, ureq::Error::Timeout(_)));
    if is_timeout {
        io::Error::new(io::ErrorKind::TimedOut, "timed out reading the body")
    } else {
        e
    }
}

/// Checks a header name and value before they are sent.
pub(crate) fn check_header(name: &str, value: &str) -> Result<()> {
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !name_ok {
        return Err(Error::config(format!("invalid header name {name:?}")));
    }
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(Error::config(format!(
            "the value of header {name:?} contains a line break"
        )));
    }
    Ok(())
}

impl HttpClient {
    /// The auth header for the next attempt. With OAuth, `stale` is a token the server
    /// just refused: it is dropped and a new one fetched (unless another thread already
    /// replaced it).
    pub(crate) fn auth_header(&self, stale: Option<&Secret>) -> Result<Option<(String, Secret)>> {
        match &self.inner.config.auth {
            Auth::None => Ok(None),
            Auth::Bearer(key) => Ok(Some((
                "authorization".into(),
                Secret::new(format!("Bearer {}", key.expose())),
            ))),
            Auth::Header { name, value } => Ok(Some((name.clone(), value.clone()))),
            Auth::OAuth2ClientCredentials(oauth) => {
                let token = self.oauth_token(oauth, stale)?;
                Ok(Some((
                    "authorization".into(),
                    Secret::new(format!("Bearer {}", token.expose())),
                )))
            }
        }
    }

    fn oauth_token(&self, oauth: &OAuth2Config, stale: Option<&Secret>) -> Result<Secret> {
        let mut slot = match self.inner.tokens.slot.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(stale_header) = stale {
            let same = slot.as_ref().is_some_and(|t| {
                stale_header.expose().strip_prefix("Bearer ") == Some(t.token.expose())
            });
            if same {
                *slot = None;
            }
        }
        if let Some(cached) = slot.as_ref()
            && cached.is_fresh(self.inner.config.clock.now())
        {
            return Ok(cached.token.clone());
        }
        debug!(
            "requesting an OAuth token from {}",
            url::strip_query(&oauth.token_url)
        );
        let form = oauth.token_form();
        let fields: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let answer: TokenResponse = self
            .request(Method::Post, &oauth.token_url)
            .unauthenticated()
            .replay_safe(true)
            .form(&fields)
            .send_json()?;
        if answer.access_token.is_empty() {
            return Err(Error::config(
                "the OAuth token endpoint answered without an access_token",
            ));
        }
        let cached = CachedToken::new(answer, self.inner.config.clock.now());
        let token = cached.token.clone();
        *slot = Some(cached);
        Ok(token)
    }
}
