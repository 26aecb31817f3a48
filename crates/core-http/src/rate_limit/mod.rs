//! An opt-in client-side token bucket, shared by every clone of a client, so a program
//! stays under its plan's request rate instead of collecting 429s; and the same budget
//! shared by every process of the machine that uses the key ([`Budget::Machine`]).

mod machine;
#[cfg(feature = "redis")]
mod shared_redis;

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
#[derive(Clone, Default, PartialEq, Eq)]
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
    /// be used (a read-only disk, a lock held past 250 ms or past the call's time),
    /// the client paces alone and says so once (a warning, and
    /// [`BudgetEvent::Lost`](crate::config::BudgetEvent::Lost) to the observer), and
    /// again when it shares again
    /// ([`BudgetEvent::Regained`](crate::config::BudgetEvent::Regained)). When its
    /// folder cannot be made at all, a client told to [`WhenUnavailable::Wait`] is
    /// refused at build (a `Config` error), since every call would time out.
    Machine,
    /// Every process of every machine calling the same base URL with the same key at
    /// the same rate, through the Redis server this `redis://` or `rediss://` URL names
    /// (feature `redis`; a password in the URL is never shown): one atomic step (a Lua
    /// script, on the server's clock) per request, its key a hash of the base URL, the
    /// key and the rate. Each step takes at most what is left of the call's time, and
    /// 500 ms, connecting included; while Redis cannot be reached (down, slow,
    /// resetting, a wrong password) the client paces alone, says so once (a warning
    /// and [`BudgetEvent::Lost`](crate::config::BudgetEvent::Lost)), tries again every
    /// second, and says when it shares again
    /// ([`BudgetEvent::Regained`](crate::config::BudgetEvent::Regained)). Each
    /// connection to Redis is owned by a thread of its own, so that the bound holds
    /// whatever the socket does (one per caller thread stepping at once, at most 8
    /// kept idle); a step costs about 0.13 ms on loopback, a Redis round trip elsewhere.
    Redis(RedisUrl),
}

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

/// A Redis URL, whose `Debug` shows no password.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisUrl(String);

impl RedisUrl {
    /// The URL as given, password included (its `Debug` blanks it).
    ///
    /// ```
    /// let budget = core_http::config::Budget::redis("redis://:pw@127.0.0.1:6379");
    /// if let core_http::config::Budget::Redis(url) = &budget {
    ///     assert_eq!(url.expose(), "redis://:pw@127.0.0.1:6379");
    ///     assert_eq!(format!("{url:?}"), "RedisUrl(\"redis://***@127.0.0.1:6379\")");
    /// }
    /// ```
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // scheme://[user[:password]@]host...: everything before an `@` is blanked.
        let shown = match self.0.split_once("://") {
            Some((scheme, rest)) => match rest.rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://***@{host}"),
                None => self.0.clone(),
            },
            None => "***".into(),
        };
        f.debug_tuple("RedisUrl").field(&shown).finish()
    }
}

impl std::fmt::Debug for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Budget::Process => f.write_str("Process"),
            Budget::Machine => f.write_str("Machine"),
            Budget::Redis(url) => f.debug_tuple("Redis").field(url).finish(),
        }
    }
}

impl Budget {
    /// [`Budget::Process`].
    ///
    /// ```
    /// assert_eq!(core_http::config::Budget::process(), core_http::config::Budget::default());
    /// ```
    pub fn process() -> Budget {
        Budget::Process
    }

    /// [`Budget::Machine`].
    ///
    /// ```
    /// assert_eq!("machine".parse::<core_http::config::Budget>()?, core_http::config::Budget::machine());
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn machine() -> Budget {
        Budget::Machine
    }

    /// [`Budget::Redis`] on the server `url` names (`redis://[:password@]host[:port][/db]`,
    /// or `rediss://` for TLS).
    ///
    /// ```
    /// use core_http::config::Budget;
    /// let budget = Budget::redis("rediss://:secret@redis.internal:6380/2");
    /// assert!(!format!("{budget:?}").contains("secret"));
    /// ```
    pub fn redis(url: impl Into<String>) -> Budget {
        Budget::Redis(RedisUrl(url.into()))
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
                if cfg!(feature = "redis") {
                    Ok(Budget::redis(s.trim()))
                } else {
                    Err(crate::Error::config(
                        "a rate budget shared through Redis needs the client's `redis` \
                         feature, which this build does not have",
                    ))
                }
            }
            _ => Err(crate::Error::config(format!(
                "a rate budget is `process`, `machine` or a redis:// or rediss:// URL, got {:?}",
                s.chars().take(40).collect::<String>()
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

/// A client's pace: its own bucket, or a shared budget with the bucket to fall back on.
#[derive(Debug)]
pub(crate) struct Pacer {
    local: TokenBucket,
    shared: Option<Shared>,
    when_unavailable: WhenUnavailable,
    /// The longest a call's first request spends on its shared budget (each step, and
    /// all of them with [`WhenUnavailable::Wait`]): the client's timeout.
    patience: Duration,
    /// Whether the last use of the shared budget failed (said once, and once again when
    /// it works again).
    alone: AtomicBool,
    /// Told when the shared budget goes out of reach and when it comes back.
    observer: crate::observe::Observers,
}

/// How often a client that waits for its shared budget tries it again.
const WAIT_RETRY: Duration = Duration::from_millis(100);

/// Where a shared budget is kept.
#[derive(Debug)]
enum Shared {
    Machine(machine::MachineBudget),
    #[cfg(feature = "redis")]
    Redis(Box<shared_redis::RedisBudget>),
}

impl Shared {
    /// Reserves a turn unless it is `horizon` or more away; the step itself takes at
    /// most `bound`.
    fn acquire(
        &self,
        horizon: Option<Duration>,
        bound: Duration,
    ) -> Result<Option<Duration>, machine::Unavailable> {
        match self {
            Shared::Machine(b) => b.acquire(horizon, bound),
            #[cfg(feature = "redis")]
            Shared::Redis(b) => b.acquire(horizon, bound),
        }
    }

    fn back_off(&self, pause: Duration, bound: Duration) -> Result<(), machine::Unavailable> {
        match self {
            Shared::Machine(b) => b.back_off(pause, bound),
            #[cfg(feature = "redis")]
            Shared::Redis(b) => b.back_off(pause, bound),
        }
    }

    fn store(&self) -> &'static str {
        match self {
            Shared::Machine(_) => "machine",
            #[cfg(feature = "redis")]
            Shared::Redis(_) => "redis",
        }
    }
}

/// The words a warning uses for a store.
fn budget_on(store: &str) -> &'static str {
    match store {
        "redis" => "the rate budget on Redis",
        _ => "the machine's rate budget",
    }
}

impl Pacer {
    /// The pace for `limit`, shared as `budget` says; `base_url` and `key` name a
    /// shared budget. A Redis URL that cannot be parsed is a configuration error.
    pub(crate) fn new(
        limit: RateLimit,
        now: Instant,
        (budget, when_unavailable, patience): (&Budget, WhenUnavailable, Duration),
        (base_url, key): (&str, &str),
        observer: crate::observe::Observers,
    ) -> crate::Result<Pacer> {
        let mut pacer = Pacer {
            local: TokenBucket::new(limit, now),
            shared: None,
            when_unavailable,
            patience,
            alone: AtomicBool::new(false),
            observer,
        };
        pacer.shared =
            match budget {
                Budget::Process => None,
                Budget::Machine => {
                    let made = machine::default_dir()
                        .ok_or_else(|| {
                            machine::Unavailable("no cache directory (HOME is not set)".into())
                        })
                        .and_then(|dir| machine::MachineBudget::new(&dir, base_url, key, limit));
                    match made {
                        Ok(budget) => Some(Shared::Machine(budget)),
                        // Told to wait for a budget that cannot be made: a client whose
                        // every call would time out is refused now instead.
                        Err(why) if when_unavailable == WhenUnavailable::Wait => {
                            return Err(crate::Error::config(format!(
                                "the machine's rate budget cannot be used ({}), and this client \
                             is told to wait for it",
                                why.0
                            )));
                        }
                        // For good: this client paces alone, and says so now.
                        Err(why) => {
                            pacer.lost("machine", &why);
                            None
                        }
                    }
                }
                #[cfg(feature = "redis")]
                Budget::Redis(url) => Some(Shared::Redis(Box::new(
                    shared_redis::RedisBudget::new(url.expose(), base_url, key, limit)?,
                ))),
                #[cfg(not(feature = "redis"))]
                Budget::Redis(_) => {
                    return Err(crate::Error::config(
                        "a rate budget shared through Redis needs the client's `redis` feature",
                    ));
                }
            };
        Ok(pacer)
    }

    /// Takes the next request's turn and returns how long to wait for it; `None` (no
    /// turn taken) when that is `within` or more away, or when the shared budget stays
    /// out of reach for all of `within` and the client is told to wait for it. Time on
    /// the shared budget counts in `within` (the client's timeout, without).
    pub(crate) fn acquire(&self, now: Instant, within: Option<Duration>) -> Option<Duration> {
        if let Some(shared) = &self.shared {
            let give_up = now + within.unwrap_or(self.patience);
            loop {
                let left = give_up.saturating_duration_since(Instant::now());
                match shared.acquire(within.map(|_| left), left) {
                    Ok(wait) => {
                        if self.alone.swap(false, Ordering::AcqRel) {
                            log::warn!(
                                "{} works again: this client shares it",
                                budget_on(shared.store())
                            );
                            self.observer.budget(crate::observe::BudgetEvent::Regained {
                                store: shared.store(),
                            });
                        }
                        return wait;
                    }
                    Err(why) => {
                        self.lost(shared.store(), &why);
                        if self.when_unavailable == WhenUnavailable::PaceAlone {
                            break;
                        }
                        let left = give_up.saturating_duration_since(Instant::now());
                        if left <= WAIT_RETRY {
                            return None;
                        }
                        std::thread::sleep(WAIT_RETRY);
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

    /// A 429 said to wait `pause`: every process sharing the budget waits it out. The
    /// step takes at most `within` (what is left of the call's time).
    pub(crate) fn back_off(&self, pause: Duration, within: Duration) {
        if let Some(shared) = &self.shared
            && let Err(why) = shared.back_off(pause, within)
        {
            self.lost(shared.store(), &why);
        }
    }

    /// The shared budget could not be used: said once, until it works again.
    fn lost(&self, store: &'static str, why: &machine::Unavailable) {
        if !self.alone.swap(true, Ordering::AcqRel) {
            let then = match self.when_unavailable {
                WhenUnavailable::PaceAlone => "this client paces alone until it can",
                WhenUnavailable::Wait => "waiting for it",
            };
            log::warn!("{} cannot be used ({}): {then}", budget_on(store), why.0);
            self.observer.budget(crate::observe::BudgetEvent::Lost {
                store,
                reason: why.0.clone(),
            });
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
