//! An opt-in client-side token bucket, shared by every clone of a client, so a program
//! stays under its plan's request rate instead of collecting 429s.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A request rate: `requests` per `per`, with bursts of up to `burst` requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimit {
    /// Requests allowed per period.
    pub requests: u32,
    /// The period.
    pub per: Duration,
    /// The most requests that may go out at once after a quiet spell.
    pub burst: u32,
}

impl RateLimit {
    /// `requests` per minute, with a burst of the same size.
    ///
    /// ```
    /// use std::time::Duration;
    /// let limit = core_http::config::RateLimit::per_minute(100);
    /// assert_eq!((limit.requests, limit.per, limit.burst), (100, Duration::from_secs(60), 100));
    /// ```
    pub fn per_minute(requests: u32) -> Self {
        RateLimit {
            requests,
            per: Duration::from_secs(60),
            burst: requests,
        }
    }

    /// `requests` per hour, with a burst of the same size.
    ///
    /// ```
    /// use std::time::Duration;
    /// let limit = core_http::config::RateLimit::per_hour(1_000);
    /// assert_eq!(limit.per, Duration::from_secs(3_600));
    /// ```
    pub fn per_hour(requests: u32) -> Self {
        RateLimit {
            requests,
            per: Duration::from_secs(3600),
            burst: requests,
        }
    }

    /// The same rate with another burst size.
    ///
    /// ```
    /// let limit = core_http::config::RateLimit::per_minute(100).with_burst(150);
    /// assert_eq!(limit.burst, 150);
    /// ```
    pub fn with_burst(mut self, burst: u32) -> Self {
        self.burst = burst;
        self
    }

    /// The pace the client keeps: the documented rate less [`PACING_MARGIN`].
    fn tokens_per_sec(&self) -> f64 {
        f64::from(self.requests.max(1)) / self.per.as_secs_f64().max(1e-9) * (1.0 - PACING_MARGIN)
    }
}

/// How much slower than the documented rate the client refills its bucket: 1 %. The
/// server's bucket starts when the first request reaches it, a little after the
/// client's; without a margin a request sent the instant a token comes back can arrive
/// a millisecond early and meet a 429. One percent gives each refill 6 ms of slack at
/// 100 a minute, growing with every token, and costs 1 % of throughput after the burst.
const PACING_MARGIN: f64 = 0.01;

/// A token bucket. Each request takes a token; tokens come back at the configured rate,
/// up to `burst`. When the bucket is empty a request reserves the next token and is told
/// how long to wait, so concurrent callers are paced in order rather than all at once.
#[derive(Debug)]
pub(crate) struct TokenBucket {
    limit: RateLimit,
    state: Mutex<BucketState>,
}

#[derive(Debug)]
struct BucketState {
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket for `limit`, as of `now`.
    pub(crate) fn new(limit: RateLimit, now: Instant) -> Self {
        TokenBucket {
            limit,
            state: Mutex::new(BucketState {
                tokens: f64::from(limit.burst.max(1)),
                last: now,
            }),
        }
    }

    /// The configured rate.
    #[allow(dead_code)]
    pub(crate) fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Takes a token at `now` and returns how long to wait before sending (zero when a
    /// token was available).
    pub(crate) fn acquire(&self, now: Instant) -> Duration {
        let rate = self.limit.tokens_per_sec();
        let burst = f64::from(self.limit.burst.max(1));
        let mut st = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let elapsed = now.saturating_duration_since(st.last).as_secs_f64();
        if now > st.last {
            st.last = now;
        }
        st.tokens = (st.tokens + elapsed * rate).min(burst);
        st.tokens -= 1.0;
        if st.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-st.tokens / rate)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_paced() {
        let t0 = Instant::now();
        let bucket = TokenBucket::new(RateLimit::per_minute(60).with_burst(3), t0);
        for _ in 0..3 {
            assert_eq!(bucket.acquire(t0), Duration::ZERO);
        }
        // The 4th and 5th reserve the next tokens, one second apart (and the 1 % margin).
        let paced = |secs: f64| Duration::from_secs_f64(secs / 0.99);
        assert_eq!(bucket.acquire(t0), paced(1.0));
        assert_eq!(bucket.acquire(t0), paced(2.0));
        // After 10 s the debt is repaid and the bucket holds 3 again (capped at burst).
        let later = t0 + Duration::from_secs(10);
        for _ in 0..3 {
            assert_eq!(bucket.acquire(later), Duration::ZERO);
        }
        assert_eq!(bucket.acquire(later), paced(1.0));
    }

    #[test]
    fn per_hour_rate() {
        let t0 = Instant::now();
        let bucket = TokenBucket::new(RateLimit::per_hour(3600).with_burst(1), t0);
        assert_eq!(bucket.acquire(t0), Duration::ZERO);
        assert_eq!(bucket.acquire(t0), Duration::from_secs_f64(1.0 / 0.99));
    }
}
