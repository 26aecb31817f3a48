//! An opt-in client-side token bucket, shared by every clone of a client, so a program
//! stays under its plan's request rate instead of collecting 429s; and the same budget
//! shared by every process of the machine that uses the key ([`Budget::Machine`]).

mod machine;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Who spends a client's rate budget ([`ClientBuilder::rate_limit`](crate::ClientBuilder::rate_limit))
/// with it.
///
/// ```
/// use core_http::config::{Budget, RateLimit};
/// let client = core_http::HttpClient::builder()
///     .base_url("https://api.example.com")
///     .api_key("sk_test")
///     .rate_limit(RateLimit::per_minute(200))
///     // Every cron job and script of this machine with this key paces as one.
///     .shared(Budget::machine())
///     .build()?;
/// # let _ = client;
/// assert_eq!("machine".parse::<Budget>()?, Budget::machine());
/// # Ok::<(), core_http::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Budget {
    /// The clones of the client in this process (the default): each process paces
    /// alone, and several processes with one key spend the account's budget several
    /// times over.
    #[default]
    Process,
    /// Every process of this machine's user calling the same base URL with the same key
    /// at the same rate: a 16-byte state file under the user's cache directory
    /// (`$XDG_CACHE_HOME` or `~/.cache`, `service-clients/budgets/`), updated under an
    /// OS file lock that a process dying releases. Named by a keyed hash, never the key.
    /// A 429's `Retry-After` holds back every process sharing it. One request of the
    /// burst is kept in hand (the service's bucket starts refilling when the first
    /// request arrives, a little after its turn was taken). When the file cannot
    /// be used (a read-only disk, a lock held past 250 ms), the client paces alone,
    /// says so once as a warning, and says so again when it shares again.
    Machine,
}

impl Budget {
    /// [`Budget::Process`].
    pub fn process() -> Budget {
        Budget::Process
    }

    /// [`Budget::Machine`].
    pub fn machine() -> Budget {
        Budget::Machine
    }
}

impl std::str::FromStr for Budget {
    type Err = crate::Error;

    /// `process` or `machine`, as `<SERVICE>_RATE_BUDGET` gives it.
    fn from_str(s: &str) -> crate::Result<Budget> {
        match s.trim().to_ascii_lowercase().as_str() {
            "process" | "" => Ok(Budget::Process),
            "machine" => Ok(Budget::Machine),
            other if other.starts_with("redis://") || other.starts_with("rediss://") => {
                Err(crate::Error::config(
                    "a rate budget shared through Redis is not available in this version: \
                     use `machine` (the processes of one machine) or `process`",
                ))
            }
            _ => Err(crate::Error::config(format!(
                "a rate budget is `process` or `machine`, got {s:?}"
            ))),
        }
    }
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

/// A client's pace: its own bucket, or the machine's budget with the bucket to fall
/// back on.
#[derive(Debug)]
pub(crate) struct Pacer {
    local: TokenBucket,
    shared: Option<machine::MachineBudget>,
    /// Whether the last use of the shared budget failed (said once, and once again when
    /// it works again).
    alone: AtomicBool,
}

impl Pacer {
    /// The pace for `limit`, shared as `budget` says; `base_url` and `key` name a
    /// machine budget.
    pub(crate) fn new(
        limit: RateLimit,
        now: Instant,
        budget: &Budget,
        base_url: &str,
        key: &str,
    ) -> Pacer {
        let shared = match budget {
            Budget::Process => None,
            Budget::Machine => {
                let made = machine::default_dir()
                    .ok_or_else(|| {
                        machine::Unavailable("no cache directory (HOME is not set)".into())
                    })
                    .and_then(|dir| machine::MachineBudget::new(&dir, base_url, key, limit));
                match made {
                    Ok(budget) => Some(budget),
                    Err(machine::Unavailable(why)) => {
                        log::warn!(
                            "the machine's rate budget cannot be used ({why}): this client paces alone"
                        );
                        None
                    }
                }
            }
        };
        Pacer {
            local: TokenBucket::new(limit, now),
            shared,
            alone: AtomicBool::new(false),
        }
    }

    /// Takes the next request's turn and returns how long to wait for it; `None` (no
    /// turn taken from a shared budget) when that is `within` or more away.
    pub(crate) fn acquire(&self, now: Instant, within: Option<Duration>) -> Option<Duration> {
        if let Some(shared) = &self.shared {
            match shared.acquire(within) {
                Ok(wait) => {
                    if self.alone.swap(false, Ordering::AcqRel) {
                        log::warn!("the machine's rate budget works again: this client shares it");
                    }
                    return wait;
                }
                Err(machine::Unavailable(why)) => {
                    if !self.alone.swap(true, Ordering::AcqRel) {
                        log::warn!(
                            "the machine's rate budget cannot be used ({why}): this client paces alone until it can"
                        );
                    }
                }
            }
        }
        let wait = self.local.acquire(now);
        match within {
            Some(within) if wait >= within => None,
            _ => Some(wait),
        }
    }

    /// A 429 said to wait `pause`: every process sharing the budget waits it out.
    pub(crate) fn back_off(&self, pause: Duration) {
        if let Some(shared) = &self.shared
            && shared.back_off(pause).is_err()
        {
            self.alone.store(true, Ordering::Release);
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
