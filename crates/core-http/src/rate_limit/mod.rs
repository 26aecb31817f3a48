//! The client's pace: an opt-in token bucket shared by every clone of a client
//! ([`RateLimit`]), so a program stays under its plan's request rate instead of
//! collecting 429s; the seam to a budget shared beyond the process (`shared.rs`, kept by
//! the `core-budgets` crate); and the pacer that asks both (`pacer.rs`).

mod pacer;
pub(crate) mod shared;

use std::sync::Mutex;
use std::time::{Duration, Instant};

pub(crate) use pacer::{PaceSettings, Pacer, Refusal};

/// What a client does for a request when its shared budget cannot be reached (Redis
/// down, slow or refusing; the machine's file unwritable or locked too long).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum WhenUnavailable {
    /// Pace alone, on the client's own bucket, and say so (a warning and an
    /// [`Observer::budget`](crate::config::Observer::budget) event, once; and once
    /// again when it shares again). The default: the program goes on, at the risk of
    /// 429s while the budget is out of reach.
    #[default]
    PaceAlone,
    /// Wait for the budget, trying it every 100 ms, until the call's time runs out (the
    /// client's timeout, for a call's first request): the call then fails with
    /// [`Error::Timeout`](crate::Error::Timeout), nothing sent. For a key a 429 would
    /// lock out.
    Wait,
}

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

    /// The pace of a budget shared beyond the process, as a GCRA keeps it: the time
    /// between two turns at the paced rate (the documented rate less 1 %), and how far
    /// ahead of its time a turn may go (the burst, less one turn kept in hand: the
    /// service's bucket starts refilling when the first request arrives, a little after
    /// its turn was taken).
    ///
    /// ```
    /// use std::time::Duration;
    /// let (interval, tolerance) = core_http::config::RateLimit::per_minute(60).with_burst(3).gcra();
    /// assert_eq!(interval, Duration::from_secs_f64(1.0 / 0.99));
    /// assert_eq!(tolerance, interval);
    /// ```
    pub fn gcra(&self) -> (Duration, Duration) {
        let interval = Duration::from_secs_f64(1.0 / self.tokens_per_sec().max(1e-9));
        (interval, interval * self.burst.max(2).saturating_sub(2))
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
