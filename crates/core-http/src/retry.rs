//! The retry policy: which failures are retried, after how long, and when a request must
//! not be repeated because the server may already have acted on it.

use std::fmt;
use std::time::{Duration, SystemTime};

use crate::backoff::Backoff;
use crate::error::{Delivery, Error, ErrorKind};
use crate::headers::Headers;

/// The longest server-requested wait the client sleeps through. A longer `Retry-After`
/// ends the call with an error that carries the wait instead.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How a client retries failed calls.
///
/// The defaults: 2 retries (3 attempts), backoff `min(0.5 s * 2^n, 8 s)` times a random
/// factor in [0.75, 1.0], server-requested waits honoured up to 60 s.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// How many times a failed call is retried. Defaults to 2.
    pub max_retries: u32,
    /// The delays between attempts when the server gives none. Defaults to
    /// [`Backoff::http_retry`] (0.5 s doubling to 8 s, jitter 0.25).
    pub backoff: Backoff,
    /// The longest `Retry-After` that is slept through. Defaults to 60 s.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            backoff: Backoff::http_retry(),
            max_retry_after: MAX_RETRY_AFTER,
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_test")
    ///     .retry_policy(core_http::config::RetryPolicy::never())
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn never() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The same policy with another retry count.
    ///
    /// ```
    /// let policy = core_http::config::RetryPolicy::default().with_max_retries(4);
    /// assert_eq!(policy.max_retries, 4);
    /// ```
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// The same policy with other backoff delays.
    ///
    /// ```
    /// use std::time::Duration;
    /// use core_http::config::{Backoff, RetryPolicy};
    /// let policy = RetryPolicy::default()
    ///     .with_backoff(Backoff::new(Duration::from_millis(100), Duration::from_secs(5), 1.0));
    /// # let _ = policy;
    /// ```
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// The same policy sleeping through server-requested waits up to `max`.
    ///
    /// ```
    /// use std::time::Duration;
    /// // Wait up to two minutes when a 429 or 503 says `Retry-After: 90`.
    /// let policy = core_http::config::RetryPolicy::default().with_max_retry_after(Duration::from_secs(120));
    /// # let _ = policy;
    /// ```
    pub fn with_max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// Decides what to do after attempt number `retries_so_far + 1` failed with `error`.
    ///
    /// Whether the server may have acted is the error's own [`Error::delivery`], the one
    /// classifier of that; `replay` says whether repeating the request is safe even if
    /// it did. `random` is a number in [0, 1) for the jitter.
    pub(crate) fn decide(
        &self,
        retries_so_far: u32,
        error: &Error,
        replay: Replay,
        random: f64,
    ) -> RetryDecision {
        let api = error.api();
        if api.is_some_and(|a| a.kind == ErrorKind::QuotaExceeded) {
            return RetryDecision::Stop(StopReason::QuotaExhausted);
        }
        if !error.transient() {
            return RetryDecision::Stop(StopReason::NotRetryable);
        }
        // A 429 or 503 to the request itself says it was not processed.
        let unprocessed =
            api.is_some_and(|a| matches!(a.status, 429 | 503) && !a.after_possible_delivery);
        if replay == Replay::Unsafe && error.delivery() != Delivery::NotSent && !unprocessed {
            return RetryDecision::Stop(StopReason::MayHaveBeenProcessed);
        }
        if retries_so_far >= self.max_retries {
            return RetryDecision::Stop(StopReason::AttemptsExhausted);
        }
        if let Some(wait) = api.and_then(|a| a.retry_after) {
            if wait > self.max_retry_after {
                return RetryDecision::Stop(StopReason::RetryAfterTooLong(wait));
            }
            return RetryDecision::Retry { delay: wait };
        }
        RetryDecision::Retry {
            delay: self.backoff.delay(retries_so_far, random),
        }
    }
}

/// Whether repeating a request is safe even if the server already acted on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replay {
    /// GET, HEAD, PUT, DELETE, a POST that carries an idempotency key the service
    /// honours, or a request its crate declared replay-safe.
    Safe,
    /// Any other POST (or PATCH): repeated only when the server cannot have acted on it.
    Unsafe,
}

/// The decision after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum RetryDecision {
    /// Try again after this delay.
    Retry {
        /// How long to wait first.
        delay: Duration,
    },
    /// Give up and return the error.
    Stop(StopReason),
}

/// Why a failed call is not retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum StopReason {
    /// The failure is not one that a retry can fix (e.g. 400, 401, 404, 501).
    NotRetryable,
    /// The configured number of retries is used up.
    AttemptsExhausted,
    /// The server may have acted on a request that is not replay-safe.
    MayHaveBeenProcessed,
    /// A usage quota is exhausted; waiting a few seconds will not help.
    QuotaExhausted,
    /// The server asked for a wait longer than the policy sleeps through.
    RetryAfterTooLong(Duration),
    /// The whole-call timeout would run out before the retry.
    DeadlineExceeded,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::NotRetryable => f.write_str("not retryable"),
            StopReason::AttemptsExhausted => f.write_str("retries exhausted"),
            StopReason::MayHaveBeenProcessed => {
                f.write_str("not repeated: the server may have processed it")
            }
            StopReason::QuotaExhausted => f.write_str("quota exhausted"),
            StopReason::RetryAfterTooLong(d) => write!(f, "retry-after {d:?} is too long"),
            StopReason::DeadlineExceeded => f.write_str("the call's timeout would run out"),
        }
    }
}

/// The wait a response asks for: `retry-after-ms`, then `Retry-After` (seconds or an
/// HTTP date), then, on a 429 only, `X-RateLimit-Reset` / `RateLimit-Reset`.
///
/// Rate-limit reset values are read as seconds from now, or as a Unix time when larger
/// than 10^9.
pub fn retry_after_for(status: u16, headers: &Headers, now: SystemTime) -> Option<Duration> {
    retry_after(headers, now).or_else(|| {
        if status != 429 {
            return None;
        }
        let raw = headers
            .get("x-ratelimit-reset")
            .or_else(|| headers.get("ratelimit-reset"))?;
        let value = seconds(raw)?;
        if value > Duration::from_secs(1_000_000_000) {
            let at = SystemTime::UNIX_EPOCH.checked_add(value)?;
            Some(at.duration_since(now).unwrap_or(Duration::ZERO))
        } else {
            Some(value)
        }
    })
}

/// The wait given by `retry-after-ms` or `Retry-After` (seconds or HTTP date).
pub fn retry_after(headers: &Headers, now: SystemTime) -> Option<Duration> {
    if let Some(ms) = headers.get("retry-after-ms").and_then(seconds) {
        return Some(ms / 1000);
    }
    let value = headers.get("retry-after")?.trim();
    if let Some(secs) = seconds(value) {
        return Some(secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A non-negative number of seconds from a header; `None` when it is not a number or too
/// large for a `Duration` (a server's odd value must never panic the client).
fn seconds(raw: &str) -> Option<Duration> {
    let value: f64 = raw.trim().parse().ok()?;
    if value < 0.0 {
        return None;
    }
    Duration::try_from_secs_f64(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> Headers {
        Headers::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    fn status(s: u16, retry_after: Option<Duration>, code: Option<&str>) -> Error {
        let mut body = String::from("{}");
        if let Some(code) = code {
            body = format!(r#"{{"error":{{"code":"{code}","message":"m"}}}}"#);
        }
        let api = crate::api_error::ApiError::build(
            s,
            &Headers::default(),
            body.as_bytes(),
            &crate::redact::Redactor::default(),
            retry_after,
        );
        Error::Api(Box::new(api))
    }

    #[test]
    fn decision_table() {
        let p = RetryPolicy::default();
        let retry = |d: RetryDecision| matches!(d, RetryDecision::Retry { .. });
        for s in [408, 429, 500, 502, 503, 504] {
            assert!(
                retry(p.decide(0, &status(s, None, None), Replay::Safe, 0.0)),
                "{s}"
            );
        }
        for s in [400, 401, 403, 404, 409, 422, 501] {
            assert_eq!(
                p.decide(0, &status(s, None, None), Replay::Safe, 0.0),
                RetryDecision::Stop(StopReason::NotRetryable),
                "{s}"
            );
        }
        // An unsafe POST is retried only where the server cannot have acted.
        for s in [429, 503] {
            assert!(
                retry(p.decide(0, &status(s, None, None), Replay::Unsafe, 0.0)),
                "{s}"
            );
        }
        for s in [408, 500, 502, 504] {
            assert_eq!(
                p.decide(0, &status(s, None, None), Replay::Unsafe, 0.0),
                RetryDecision::Stop(StopReason::MayHaveBeenProcessed),
                "{s}"
            );
        }
        let not_sent = Error::Connect {
            message: "refused".into(),
            delivery: Delivery::NotSent,
        };
        assert!(retry(p.decide(0, &not_sent, Replay::Unsafe, 0.0)));
        let sent = Error::Timeout {
            elapsed: Duration::from_secs(1),
            delivery: Delivery::MayHaveBeenProcessed,
        };
        assert_eq!(
            p.decide(0, &sent, Replay::Unsafe, 0.0),
            RetryDecision::Stop(StopReason::MayHaveBeenProcessed)
        );
        assert!(retry(p.decide(0, &sent, Replay::Safe, 0.0)));
        let tls = Error::Tls {
            message: "bad certificate".into(),
        };
        assert_eq!(
            p.decide(0, &tls, Replay::Safe, 0.0),
            RetryDecision::Stop(StopReason::NotRetryable)
        );
        assert_eq!(
            p.decide(2, &status(503, None, None), Replay::Safe, 0.0),
            RetryDecision::Stop(StopReason::AttemptsExhausted)
        );
        assert_eq!(
            p.decide(
                0,
                &status(429, None, Some("quota_exceeded")),
                Replay::Safe,
                0.0
            ),
            RetryDecision::Stop(StopReason::QuotaExhausted)
        );
        let long = status(429, Some(Duration::from_secs(61)), None);
        assert_eq!(
            p.decide(0, &long, Replay::Safe, 0.0),
            RetryDecision::Stop(StopReason::RetryAfterTooLong(Duration::from_secs(61)))
        );
        let short = status(503, Some(Duration::from_secs(60)), None);
        assert_eq!(
            p.decide(0, &short, Replay::Unsafe, 0.0),
            RetryDecision::Retry {
                delay: Duration::from_secs(60)
            }
        );
        // After a redirect, a 503 is no longer about the original request.
        let mut redirected = status(503, None, None);
        if let Error::Api(api) = &mut redirected {
            api.after_possible_delivery = true;
        }
        assert_eq!(
            p.decide(0, &redirected, Replay::Unsafe, 0.0),
            RetryDecision::Stop(StopReason::MayHaveBeenProcessed)
        );
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            retry_after(&headers(&[("Retry-After", "7")]), now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after-ms", "1500")]), now),
            Some(Duration::from_millis(1500))
        );
        // retry-after-ms wins over Retry-After.
        assert_eq!(
            retry_after(
                &headers(&[("Retry-After", "9"), ("retry-after-ms", "250")]),
                now
            ),
            Some(Duration::from_millis(250))
        );
        let date = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            retry_after(&headers(&[("Retry-After", &date)]), now),
            Some(Duration::from_secs(30))
        );
        let past = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(
            retry_after(&headers(&[("Retry-After", &past)]), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers(&[("Retry-After", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[]), now), None);
    }

    #[test]
    fn absurd_values_are_ignored_not_panicked_on() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        for (name, value) in [
            ("Retry-After", "1e300"),
            ("retry-after-ms", "1e300"),
            ("Retry-After", "NaN"),
            ("Retry-After", "-5"),
            ("X-RateLimit-Reset", "1e300"),
            ("X-RateLimit-Reset", "inf"),
        ] {
            assert_eq!(
                retry_after_for(429, &headers(&[(name, value)]), now),
                None,
                "{name}: {value}"
            );
        }
    }

    #[test]
    fn rate_limit_reset_only_on_429() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let h = headers(&[("X-RateLimit-Reset", "12")]);
        assert_eq!(retry_after_for(429, &h, now), Some(Duration::from_secs(12)));
        assert_eq!(retry_after_for(503, &h, now), None);
        let epoch = headers(&[("RateLimit-Reset", "1700000005")]);
        assert_eq!(
            retry_after_for(429, &epoch, now),
            Some(Duration::from_secs(5))
        );
    }
}
