//! One logical call: the request fixed once, then attempts until one succeeds or the
//! retry policy says stop. Every wait reads the client's clock, so a test can drive a
//! whole call, waits included, on fake time.

use std::borrow::Cow;

use std::time::Duration;

use log::debug;

use serde::de::DeserializeOwned;

use crate::attempt::{self, Answer, Call, Failure};
use crate::auth::{Auth, AuthHeader, CachedToken, OAuth2Config, Secret, TokenResponse, bearer};
use crate::builder::RequestBuilder;
use crate::client::HttpClient;
use crate::error::{Error, Result};
use crate::method::Method;
use crate::response::{Response, StreamingResponse};
use crate::retry::{Outcome, Replay, RetryDecision, StopReason};
use crate::time::Deadline;
use crate::url::{self, Origin};
use crate::wire::Mode;

/// Who a call is for: the user (the client's options, headers and rate limit), or the
/// client itself fetching an OAuth token within the user's call that needed it (only its
/// own options, no client headers, no rate-limit wait, no redirect to another origin).
#[derive(Debug, Clone, Copy)]
enum Purpose {
    User,
    Token { within: Deadline },
}

impl<'a> RequestBuilder<'a> {
    /// Sends the request, retrying as the policy allows, and returns the success response
    /// with its body read (up to the client's cap). Error statuses become [`Error::Api`].
    pub fn send(self) -> Result<Response> {
        crate::call::send_buffered(self)
    }

    /// Sends a request that removes something (a `DELETE`), ignoring the answer's body.
    ///
    /// One rule for every delete: a `404` that answers a *repeat* of the request, after
    /// an earlier attempt may have reached the server and been acted on (its answer was
    /// lost: a timeout, a reset, a 5xx), is success. The thing is gone, which is what
    /// was asked, and the earlier attempt most likely removed it. A `404` to the first
    /// attempt stays [`ErrorKind::NotFound`](crate::ErrorKind::NotFound): there was
    /// nothing to delete.
    ///
    /// ```no_run
    /// # let client = core_http::HttpClient::builder().base_url("https://api.example.com").build()?;
    /// client.delete("/v1/projects/proj_1").send_delete()?;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn send_delete(self) -> Result<()> {
        match self.send() {
            Ok(_) => Ok(()),
            Err(Error::Api(api)) if api.status == 404 && api.after_possible_delivery => {
                log::debug!(
                    "a repeated delete answered 404 after an earlier attempt may have done it: \
                     taken as done"
                );
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Sends the request and decodes the JSON body of the success response.
    pub fn send_json<T: DeserializeOwned>(self) -> Result<T> {
        self.send()?.json()
    }

    /// Sends the request and returns the success response with its body unread, for
    /// downloads. The timeout bounds the wait for the answer and each read of the body,
    /// not the whole transfer.
    pub fn send_streaming(self) -> Result<StreamingResponse> {
        crate::call::send_streaming(self)
    }
}

/// A user's call whose answer is read into memory.
pub(crate) fn send_buffered(rb: RequestBuilder<'_>) -> Result<Response> {
    buffered(execute(rb, Mode::Buffered, Purpose::User)?)
}

/// A token request, within the deadline of the user's call that needed the token.
pub(crate) fn send_token_request(rb: RequestBuilder<'_>, within: Deadline) -> Result<Response> {
    buffered(execute(rb, Mode::Buffered, Purpose::Token { within })?)
}

fn buffered(answer: Answer) -> Result<Response> {
    match answer {
        Answer::Buffered(r) => Ok(r),
        Answer::Streaming(_) => Err(Error::config("internal: unexpected streaming answer")),
    }
}

/// A user's call whose answer is handed over as a stream.
pub(crate) fn send_streaming(rb: RequestBuilder<'_>) -> Result<StreamingResponse> {
    match execute(rb, Mode::Streaming, Purpose::User)? {
        Answer::Streaming(r) => Ok(r),
        Answer::Buffered(_) => Err(Error::config("internal: unexpected buffered answer")),
    }
}

fn execute(rb: RequestBuilder<'_>, mode: Mode, purpose: Purpose) -> Result<Answer> {
    if let Some(e) = rb.error {
        return Err(e);
    }
    let client = rb.client;
    let cfg = &client.inner.config;
    let for_user = matches!(purpose, Purpose::User);
    let opts = match purpose {
        Purpose::User => client.defaults.merged(&rb.options),
        Purpose::Token { .. } => rb.options.clone(),
    };
    let base = cfg.base_url.as_deref().unwrap_or_default();
    let target = url::join(base, &rb.path, &rb.query);
    // A path under the base URL has the base URL's origin, parsed and checked when the
    // client was built; only an absolute URL is parsed here.
    let absolute = rb.path.starts_with("https://") || rb.path.starts_with("http://");
    let origin = match client.inner.base_origin.as_ref() {
        Some(base) if !absolute => Cow::Borrowed(base),
        _ => {
            let origin = Origin::parse(&target)?;
            origin.check_secure(&target, cfg.allow_insecure_http)?;
            Cow::Owned(origin)
        }
    };
    for (name, value) in &opts.headers {
        crate::wire::check_header(name, value)?;
    }
    let mut policy = cfg.retry.clone();
    if let Some(n) = opts.max_retries {
        policy.max_retries = n;
    }
    let timeout = opts.timeout.unwrap_or(cfg.timeout);
    let idempotency_key = opts.idempotency_key.clone().or_else(|| {
        (rb.method == Method::Post && cfg.idempotency_keys).then(crate::random::uuid_v4)
    });
    // A key makes a POST replay-safe only where the service de-duplicates by it.
    let key_honoured = idempotency_key.is_some() && cfg.honours_idempotency_keys;
    let replay = match rb.replay_safe {
        Some(true) => Replay::Safe,
        Some(false) => Replay::Unsafe,
        None if rb.method.is_replay_safe() || key_honoured => Replay::Safe,
        None => Replay::Unsafe,
    };

    let clock = cfg.clock.as_ref();
    let deadline = match purpose {
        // A token request lives within the call that needed the token.
        Purpose::Token { within } => within,
        Purpose::User => {
            // A client-side rate limit is a wait the caller asked for: the call's timeout
            // starts once the first request is cleared to go.
            wait_for_rate_limit(client, None)?;
            Deadline::after(clock.now(), timeout)
        }
    };
    // A span per call (`tracing` feature), around every attempt and wait.
    #[cfg(feature = "tracing")]
    let _span = crate::observe::call_span(rb.method.as_str(), crate::observe::path_of(&target));
    let base_redact = cfg.redactor.clone();
    let mut call = Call {
        client,
        method: rb.method,
        url: target,
        origin,
        base_origin: client.inner.base_origin.as_ref(),
        body: rb.body,
        headers: opts.headers,
        client_headers: for_user,
        idempotency_key,
        connect_timeout: opts.connect_timeout.unwrap_or(cfg.connect_timeout),
        per_read_timeout: timeout,
        mode,
        deadline,
        same_origin_only: !for_user,
        redact: cfg.redactor.clone(),
    };

    // The client's credentials go only to its base URL's origin: a call to an absolute
    // URL elsewhere carries none (and fetches no token).
    let authenticated = rb.authenticated && call.base_origin == Some(&*call.origin);
    let mut retries = 0u32;
    let mut refreshed_token = false;
    let mut stale = None;
    // Whether an earlier attempt may have reached the server and been acted on.
    let mut maybe_acted = false;
    loop {
        let auth = if authenticated {
            match client.auth_header(stale.take().as_ref(), &deadline) {
                Ok(auth) => auth,
                // Once an attempt has been made, the request has reached the server.
                Err(e) if retries > 0 || refreshed_token => return Err(e.after_delivery()),
                Err(e) => return Err(e),
            }
        } else {
            None
        };
        call.redact = match &auth {
            // A credential that changes is kept out of this call's texts as it is now.
            Some((_, token))
                if matches!(
                    cfg.auth,
                    Auth::OAuth2ClientCredentials(_) | Auth::BearerFrom(_)
                ) =>
            {
                base_redact.with(
                    token
                        .expose()
                        .strip_prefix("Bearer ")
                        .unwrap_or(token.expose()),
                )
            }
            _ => base_redact.clone(),
        };
        let started = clock.now();
        let Failure {
            error,
            outcome,
            hops,
        } = match attempt::run(&call, auth.as_ref(), retries) {
            Ok(answer) => {
                let (status, request_id, bytes) = match &answer {
                    Answer::Buffered(r) => {
                        client.record_response(r.status(), r.headers());
                        (r.status(), r.request_id(), Some(r.body().len() as u64))
                    }
                    Answer::Streaming(r) => {
                        client.record_response(r.status(), r.headers());
                        (r.status(), r.request_id(), None)
                    }
                };
                cfg.observer.attempt(|| {
                    observed(
                        &call,
                        retries,
                        started,
                        Some(status),
                        None,
                        None,
                        request_id,
                        bytes,
                    )
                });
                return Ok(answer);
            }
            Err(failure) => failure,
        };
        // After a redirect the decision is made for the original request, which has
        // reached the server: only a replay-safe request may be repeated.
        let outcome = match outcome {
            Outcome::Final => Outcome::Final,
            _ if hops > 0 && replay == Replay::Unsafe => Outcome::MayHaveBeenProcessed,
            other => other,
        };
        // An expired or revoked OAuth token is refreshed once, and the request repeated,
        // when the 401 answered the original request itself (the server refused it) or
        // the request is safe to repeat anyway.
        if error.status() == Some(401)
            && !refreshed_token
            && (hops == 0 || replay == Replay::Safe)
            && let (Auth::OAuth2ClientCredentials(_), Some((_, used))) = (&cfg.auth, &auth)
        {
            debug!(
                "{} {}: 401 with an OAuth token; refreshing it once",
                call.method,
                url::strip_query(&call.url)
            );
            refreshed_token = true;
            stale = Some(used.clone().into_owned());
            cfg.observer.attempt(|| {
                observed(
                    &call,
                    retries,
                    started,
                    error.status(),
                    Some(&error),
                    Some(Duration::ZERO),
                    error.request_id(),
                    None,
                )
            });
            continue;
        }
        let decision = policy.decide(retries, &outcome, replay, crate::random::unit_f64());
        let decision = match decision {
            RetryDecision::Retry { delay } if delay >= deadline.remaining(clock.now()) => {
                RetryDecision::Stop(StopReason::DeadlineExceeded)
            }
            d => d,
        };
        cfg.observer.attempt(|| {
            let retry_in = match decision {
                RetryDecision::Retry { delay } => Some(delay),
                RetryDecision::Stop(_) => None,
            };
            observed(
                &call,
                retries,
                started,
                error.status(),
                Some(&error),
                retry_in,
                error.request_id(),
                None,
            )
        });
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
                maybe_acted |= error.delivery() == crate::Delivery::MayHaveBeenProcessed;
                if for_user && wait_for_rate_limit(client, Some(&deadline)).is_err() {
                    debug!("the rate limit's wait would outlast the call's timeout");
                    return Err(error);
                }
            }
            RetryDecision::Stop(reason) => {
                debug!(
                    "{} {}: {error}; not retried ({reason})",
                    call.method,
                    url::strip_query(&call.url)
                );
                return Err(match error {
                    Error::Api(mut api) if maybe_acted => {
                        api.after_possible_delivery = true;
                        Error::Api(api)
                    }
                    other => other,
                });
            }
        }
    }
}

/// What an observer is told of an attempt.
#[allow(clippy::too_many_arguments)]
fn observed(
    call: &Call<'_>,
    retries: u32,
    started: std::time::Instant,
    status: Option<u16>,
    error: Option<&Error>,
    retry_in: Option<Duration>,
    request_id: Option<&str>,
    bytes: Option<u64>,
) -> crate::observe::Attempt {
    let path = crate::observe::path_of(&call.url);
    crate::observe::Attempt {
        method: call.method.as_str(),
        path: path.to_owned(),
        number: retries + 1,
        status,
        failure: error.map(crate::observe::failure_word),
        retry_in,
        duration: call
            .client
            .inner
            .config
            .clock
            .now()
            .saturating_duration_since(started),
        request_id: request_id.map(str::to_owned),
        bytes,
    }
}

/// Waits for the client-side rate limiter. With a deadline, a wait that would outlast it
/// is not made.
fn wait_for_rate_limit(client: &HttpClient, deadline: Option<&Deadline>) -> Result<()> {
    let cfg = &client.inner.config;
    let Some(bucket) = &client.inner.bucket else {
        return Ok(());
    };
    let now = cfg.clock.now();
    let wait = bucket.acquire(now);
    if wait.is_zero() {
        return Ok(());
    }
    if let Some(deadline) = deadline
        && wait >= deadline.remaining(now)
    {
        return Err(Error::Timeout {
            elapsed: deadline.elapsed(now),
            delivery: crate::Delivery::MayHaveBeenProcessed,
        });
    }
    debug!("client-side rate limit: waiting {wait:?}");
    cfg.sleeper.sleep(wait);
    Ok(())
}

/// The auth header an attempt carries, and the client's credentials to keep out of
/// texts.
impl HttpClient {
    /// The auth header for the next attempt. With OAuth, `stale` is a token the server
    /// just refused: it is dropped and a new one fetched (unless another thread already
    /// replaced it). A token fetch fits in what is left of the call's `deadline`.
    pub(crate) fn auth_header(
        &self,
        stale: Option<&Secret>,
        deadline: &Deadline,
    ) -> crate::Result<Option<AuthHeader<'_>>> {
        let config = &self.inner.config;
        match &config.auth {
            Auth::None => Ok(None),
            // Made once, when the client was built.
            Auth::Bearer(key) => Ok(Some((
                Cow::Borrowed("authorization"),
                match &self.inner.bearer {
                    Some(header) => Cow::Borrowed(header),
                    None => Cow::Owned(bearer(key)),
                },
            ))),
            Auth::Header { name, value } => {
                Ok(Some((Cow::Borrowed(name.as_str()), Cow::Borrowed(value))))
            }
            Auth::BearerFrom(source) => {
                let key = source.read();
                if key.is_empty() {
                    return Err(crate::Error::config("the key source gave an empty key"));
                }
                Ok(Some((
                    Cow::Borrowed("authorization"),
                    Cow::Owned(bearer(&key)),
                )))
            }
            Auth::OAuth2ClientCredentials(oauth) => {
                let stale = stale.and_then(|h| h.expose().strip_prefix("Bearer "));
                let stale = stale.map(Secret::new);
                let token = self.inner.tokens.get(
                    config.clock.as_ref(),
                    deadline,
                    stale.as_ref(),
                    || self.fetch_token(oauth, *deadline),
                )?;
                Ok(Some((
                    Cow::Borrowed("authorization"),
                    Cow::Owned(bearer(&token)),
                )))
            }
        }
    }

    /// Requests a token. The request is built clean: none of the calling request's
    /// options or headers, none of the client's extra headers, no rate-limit token, no
    /// redirect to another origin (the body holds the client secret), and only what is
    /// left of the calling request's deadline.
    fn fetch_token(&self, oauth: &OAuth2Config, deadline: Deadline) -> crate::Result<CachedToken> {
        debug!(
            "requesting an OAuth token from {}",
            crate::url::strip_query(&oauth.token_url)
        );
        let form = oauth.token_form();
        let fields: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut request = self
            .request(Method::Post, &oauth.token_url)
            .unauthenticated()
            .replay_safe(true)
            .form(&fields);
        if let Some(body) = request.body.as_mut() {
            body.credentials = true;
        }
        let response = send_token_request(request, deadline)?;
        let unusable = || crate::Error::UnexpectedBody {
            status: response.status(),
            message: "the OAuth token endpoint's answer is not a token (JSON with a \
                      non-empty access_token); it is not shown because it may hold one"
                .into(),
        };
        let answer: TokenResponse =
            serde_json::from_slice(response.body()).map_err(|_| unusable())?;
        if answer.access_token.trim().is_empty() {
            return Err(unusable());
        }
        Ok(CachedToken::new(answer, self.inner.config.clock.now()))
    }
}
