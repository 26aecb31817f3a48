//! A call fixed once before its first attempt (its URL and origin, options, retry
//! policy, whether it may be repeated, its deadline), what its attempts have learned so
//! far, and the one report of each attempt to the observer.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use log::debug;

use super::Purpose;
use crate::attempt::{Answer, Call};
use crate::auth::{Auth, AuthHeader, Secret};
use crate::builder::RequestBuilder;
use crate::client::HttpClient;
use crate::error::{Error, Result};
use crate::method::Method;
use crate::retry::{Replay, RetryDecision, RetryPolicy, StopReason};
use crate::time::Deadline;
use crate::url::{self, Origin};
use crate::wire::Mode;

/// A call as its attempts run it.
pub(super) struct Plan<'a> {
    pub(super) call: Call<'a>,
    client: &'a HttpClient,
    policy: RetryPolicy,
    replay: Replay,
    /// Whether the client's credentials go with it (only to the base URL's origin).
    authenticated: bool,
    /// A user's call (not the client's own token request).
    for_user: bool,
    /// The call carries an idempotency key the service de-duplicates by: a failure
    /// that leaves its outcome unknown names the key to repeat it with.
    key_honoured: bool,
}

/// What the attempts of a call have learned so far.
#[derive(Default)]
pub(super) struct Tries {
    /// Retries made.
    pub(super) retries: u32,
    /// The OAuth token was refreshed after a 401 (once per call at most).
    refreshed_token: bool,
    /// A token the server refused, to be replaced.
    stale: Option<Secret>,
    /// An earlier attempt may have reached the server and been acted on.
    maybe_acted: bool,
}

impl Tries {
    /// `error` ended an attempt that is now an earlier one.
    fn earlier(&mut self, error: &Error) {
        self.maybe_acted |= error.delivery() == crate::Delivery::MayHaveBeenProcessed;
    }
}

/// What to do after a failed attempt.
pub(super) enum Next {
    /// Try again (after any wait, already made).
    Again,
    /// Give up with this error.
    Stop(Error),
}

/// An attempt's request id: known, or in an answer's headers (looked up only when an
/// observer listens).
enum RequestId<'e> {
    Known(Option<&'e str>),
    In(&'e crate::response::Headers),
}

impl<'e> RequestId<'e> {
    fn get(&self) -> Option<&'e str> {
        match *self {
            RequestId::Known(id) => id,
            RequestId::In(headers) => headers.request_id(),
        }
    }
}

/// What the observer is told of one attempt.
struct Seen<'e> {
    status: Option<u16>,
    error: Option<&'e Error>,
    retry_in: Option<Duration>,
    request_id: RequestId<'e>,
    bytes: Option<u64>,
}

impl<'a> Plan<'a> {
    /// Fixes the call: checks what can be checked before sending, and (for a user's
    /// call) waits for the client's rate limit, after which its timeout starts.
    pub(super) fn new(rb: RequestBuilder<'a>, mode: Mode, purpose: Purpose) -> Result<Self> {
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
        let target = rb.url;
        let origin = origin_of(client, rb.absolute, &target)?;
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
        let deadline = match purpose {
            // A token request lives within the call that needed the token.
            Purpose::Token { within } => within,
            // A client-side rate limit is a wait the caller asked for: the call's timeout
            // starts once the first request is cleared to go.
            Purpose::User => {
                wait_for_rate_limit(client, None)?;
                Deadline::after(cfg.clock.now(), timeout)
            }
        };
        let base_origin = client.inner.base_origin.as_ref();
        // The client's credentials go only to its base URL's origin: a call to an
        // absolute URL elsewhere carries none (and fetches no token).
        let authenticated =
            rb.authenticated && base_origin.is_some_and(|b| Origin::same(b, &origin));
        let call = Call {
            client,
            method: rb.method,
            url: target,
            origin,
            base_origin,
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
        Ok(Plan {
            call,
            client,
            policy,
            replay,
            authenticated,
            for_user,
            key_honoured,
        })
    }

    /// Now, on the client's clock.
    pub(super) fn now(&self) -> Instant {
        self.client.inner.config.clock.now()
    }

    /// The auth header of the next attempt (a token fetched if needed, within the
    /// call's deadline); a credential that changes is kept out of this call's texts as
    /// it is now.
    pub(super) fn auth(&mut self, tries: &mut Tries) -> Result<Option<AuthHeader<'a>>> {
        if !self.authenticated {
            return Ok(None);
        }
        let auth = self
            .client
            .auth_header(tries.stale.take().as_ref(), &self.call.deadline)?;
        let changes = matches!(
            self.client.inner.config.auth,
            Auth::OAuth2ClientCredentials(_) | Auth::BearerFrom(_)
        );
        // The client's own credentials are in its redactor already; a token that
        // changes is added as it is now.
        if let (Some((_, token)), true) = (&auth, changes) {
            let shown = token.expose();
            self.call.redact = self
                .client
                .inner
                .config
                .redactor
                .with(shown.strip_prefix("Bearer ").unwrap_or(shown));
        }
        Ok(auth)
    }

    /// An attempt answered: the observer is told, and the answer recorded for
    /// `with_response`.
    pub(super) fn answered(&self, tries: &Tries, started: Instant, answer: &Answer) {
        let (status, headers, bytes) = match answer {
            Answer::Buffered(r) => (r.status(), r.headers(), Some(r.body().len() as u64)),
            Answer::Streaming(r) => (r.status(), r.headers(), None),
        };
        self.client.record_response(status, headers);
        self.report(
            tries,
            started,
            Seen {
                status: Some(status),
                error: None,
                retry_in: None,
                request_id: RequestId::In(headers),
                bytes,
            },
        );
    }

    /// After a failed attempt: refresh a refused OAuth token once, or retry after the
    /// policy's wait when the request may be repeated and the deadline allows, or stop.
    #[cold]
    #[inline(never)]
    pub(super) fn failed(
        &mut self,
        tries: &mut Tries,
        error: Error,
        auth: Option<&AuthHeader<'a>>,
        started: Instant,
    ) -> Next {
        // After a redirect the error says the original request reached the server
        // (its delivery), so only a replay-safe request is repeated.
        if let Some(used) = self.refusal_to_refresh(tries, &error, auth) {
            debug!(
                "{}: 401 with an OAuth token; refreshing it once",
                self.shown()
            );
            tries.refreshed_token = true;
            tries.stale = Some(used);
            tries.earlier(&error);
            self.report_failure(tries, started, &error, Some(Duration::ZERO));
            return Next::Again;
        }
        // A 429 holds back everyone who shares the budget, retried or not.
        if let Some(api) = error.api()
            && api.status == 429
            && let (Some(pause), Some(bucket)) = (api.retry_after, &self.client.inner.bucket)
        {
            bucket.back_off(pause, self.call.deadline.remaining(self.now()));
        }
        let decision = match self.policy.decide(
            tries.retries,
            &error,
            self.replay,
            crate::random::unit_f64(),
        ) {
            RetryDecision::Retry { delay } if delay >= self.call.deadline.remaining(self.now()) => {
                RetryDecision::Stop(StopReason::DeadlineExceeded)
            }
            d => d,
        };
        let retry_in = match decision {
            RetryDecision::Retry { delay } => Some(delay),
            RetryDecision::Stop(_) => None,
        };
        self.report_failure(tries, started, &error, retry_in);
        match decision {
            RetryDecision::Retry { delay } => self.retry_after(tries, delay, error),
            RetryDecision::Stop(reason) => {
                debug!("{}: {error}; not retried ({reason})", self.shown());
                Next::Stop(error)
            }
        }
    }

    /// The call's last error, as it reads after all its attempts: after an earlier
    /// attempt that may have acted it says so, whatever it is (a refused connection to a
    /// retry is not "not sent"); and when that leaves unknown whether an action keyed by
    /// an idempotency key the service honours was carried out, it names the key to
    /// repeat it with ([`Error::Unsettled`]).
    pub(super) fn stopped(&self, tries: &Tries, error: Error) -> Error {
        let error = if tries.maybe_acted {
            error.after_delivery()
        } else {
            error
        };
        // A connection that could not be made says how hard it was tried.
        let error = match error {
            Error::Connect { message, delivery } => {
                let attempts = tries.retries + 1;
                let took = self
                    .call
                    .deadline
                    .elapsed(self.client.inner.config.clock.now());
                Error::Connect {
                    message: format!(
                        "{message} ({attempts} attempt{} over {})",
                        if attempts == 1 { "" } else { "s" },
                        crate::error::rounded(took)
                    ),
                    delivery,
                }
            }
            other => other,
        };
        // A user's action whose outcome is unknown says so, with the id to repeat it
        // with when the service de-duplicates by one. A read, a request repeating
        // cannot do twice and the client's own token request are returned as they are.
        let keyed = self.key_honoured && self.call.method == Method::Post;
        let doubles = self.replay == Replay::Unsafe || keyed;
        if !self.for_user
            || !doubles
            || error.delivery() != crate::Delivery::MayHaveBeenProcessed
            || matches!(error, Error::Unsettled { .. })
        {
            return error;
        }
        let repeat_with = match &self.call.idempotency_key {
            Some(key) if keyed => Some(("Idempotency-Key", key.clone())),
            _ => None,
        };
        Error::Unsettled {
            repeat_with,
            source: Box::new(error),
        }
    }

    /// An expired or revoked OAuth token is refreshed once, and the request repeated,
    /// when the 401 answered the original request itself (the server refused it) or the
    /// request is safe to repeat anyway: the token to replace.
    #[cold]
    #[inline(never)]
    fn refusal_to_refresh(
        &self,
        tries: &Tries,
        error: &Error,
        auth: Option<&AuthHeader<'a>>,
    ) -> Option<Secret> {
        let oauth = matches!(
            self.client.inner.config.auth,
            Auth::OAuth2ClientCredentials(_)
        );
        // A 401 to the request itself (not to a hop after a redirect, when the
        // request may have acted) unless it may be repeated anyway.
        let to_itself = error.api().is_some_and(|a| !a.after_possible_delivery);
        let refreshable = error.status() == Some(401)
            && !tries.refreshed_token
            && (to_itself || self.replay == Replay::Safe)
            && oauth;
        match auth {
            Some((_, used)) if refreshable => Some(used.clone().into_owned()),
            _ => None,
        }
    }

    /// Sleeps `delay` (and the rate limit's wait), then says to try again; or stops with
    /// `error` when the rate limit's wait would outlast the call's deadline.
    #[cold]
    #[inline(never)]
    fn retry_after(&self, tries: &mut Tries, delay: Duration, error: Error) -> Next {
        debug!(
            "{}: {error}; retry {} of {} in {delay:?}",
            self.shown(),
            tries.retries + 1,
            self.policy.max_retries
        );
        self.client.inner.config.sleeper.sleep(delay);
        tries.retries += 1;
        tries.earlier(&error);
        if self.for_user && wait_for_rate_limit(self.client, Some(&self.call.deadline)).is_err() {
            debug!("the rate limit's wait would outlast the call's timeout");
            return Next::Stop(error);
        }
        Next::Again
    }

    #[cold]
    #[inline(never)]
    fn report_failure(
        &self,
        tries: &Tries,
        started: Instant,
        error: &Error,
        retry_in: Option<Duration>,
    ) {
        self.report(
            tries,
            started,
            Seen {
                status: error.status(),
                error: Some(error),
                retry_in,
                request_id: RequestId::Known(error.request_id()),
                bytes: None,
            },
        );
    }

    /// The one report of an attempt to the observer (built only when one listens).
    fn report(&self, tries: &Tries, started: Instant, seen: Seen<'_>) {
        self.client
            .inner
            .config
            .observer
            .attempt(|| crate::observe::Attempt {
                method: self.call.method.as_str(),
                path: crate::observe::path_of(&self.call.url).to_owned(),
                number: tries.retries + 1,
                status: seen.status,
                failure: seen.error.map(crate::observe::failure_word),
                retry_in: seen.retry_in,
                duration: self.now().saturating_duration_since(started),
                request_id: seen.request_id.get().map(str::to_owned),
                bytes: seen.bytes,
            });
    }

    /// The call as log lines show it: method and URL without its query.
    fn shown(&self) -> String {
        format!("{} {}", self.call.method, url::strip_query(&self.call.url))
    }
}

/// The origin a call goes to: the base URL's (parsed and checked when the client was
/// built) for a path under it; an absolute URL's, parsed and checked here.
fn origin_of<'a>(client: &'a HttpClient, absolute: bool, target: &str) -> Result<Cow<'a, Origin>> {
    match client.inner.base_origin.as_ref() {
        Some(base) if !absolute => Ok(Cow::Borrowed(base)),
        _ => {
            let origin = Origin::parse(target)?;
            origin.check_secure(target, client.inner.config.allow_insecure_http)?;
            Ok(Cow::Owned(origin))
        }
    }
}

/// Waits for the client's pace. With a deadline (a retry), a wait that would outlast it
/// is not made; before a call's first request, the client's own bucket is waited for
/// however long (the caller asked for the pace) and a shared budget within the client's
/// timeout.
fn wait_for_rate_limit(client: &HttpClient, deadline: Option<&Deadline>) -> Result<()> {
    let cfg = &client.inner.config;
    let Some(bucket) = &client.inner.bucket else {
        return Ok(());
    };
    let now = cfg.clock.now();
    let wait = bucket
        .acquire(deadline.map(|d| d.remaining(now)))
        .map_err(|refusal| {
            let elapsed = cfg.clock.now().saturating_duration_since(now);
            match (refusal, deadline) {
                // Before a retry the earlier attempt may have been acted on: the
                // caller is given that attempt's error.
                (_, Some(deadline)) => Error::Timeout {
                    elapsed: deadline.elapsed(now),
                    delivery: crate::Delivery::MayHaveBeenProcessed,
                },
                (crate::rate_limit::Refusal::Held(retry_after), None) => Error::RateLimited {
                    retry_after,
                    reason: "the service asked every program using this key to wait (a \
                             Retry-After kept in the shared rate budget), longer than this \
                             call can"
                        .into(),
                },
                (crate::rate_limit::Refusal::TooFar(retry_after), None) => Error::RateLimited {
                    retry_after,
                    reason: "the shared rate budget's next turn is further off than this \
                             call can wait (other programs using this key queue before it)"
                        .into(),
                },
                (crate::rate_limit::Refusal::Unreachable, None) => Error::Timeout {
                    elapsed,
                    delivery: crate::Delivery::NotSent,
                },
            }
        })?;
    if wait.is_zero() {
        return Ok(());
    }
    debug!("client-side rate limit: waiting {wait:?}");
    cfg.sleeper.sleep(wait);
    Ok(())
}
