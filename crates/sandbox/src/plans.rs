//! API keys, the plan each key is on, and the token bucket that applies a plan's rate
//! limit (per key and service, measured on the sandbox clock). Each service states its
//! plans' limits in its own module.

use std::time::Duration;

use time::OffsetDateTime;

/// The key every client uses by default: on each service's most generous plan.
pub const DEFAULT_KEY: &str = "sk_test_sandbox";

/// The keys the sandbox knows out of the box, and the plan each selects.
pub const DEFAULT_KEYS: &[(&str, &str)] = &[
    (DEFAULT_KEY, "default"),
    ("sk_test_starter", "starter"),
    ("sk_test_pro", "pro"),
    ("sk_test_enterprise", "enterprise"),
    ("sk_test_free", "free"),
    ("sk_test_business", "business"),
];

/// A rate limit: `count` requests per `window`, with bursts up to `burst`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Limit {
    pub count: u32,
    pub window: Duration,
    pub burst: u32,
}

impl Limit {
    /// `count` requests a minute, bursts of the same size.
    pub(crate) const fn per_minute(count: u32) -> Limit {
        Limit {
            count,
            window: Duration::from_secs(60),
            burst: count,
        }
    }

    /// The same rate with another burst.
    pub(crate) const fn with_burst(self, burst: u32) -> Limit {
        Limit { burst, ..self }
    }

    /// `count` requests an hour, bursts of the same size.
    pub(crate) const fn per_hour(count: u32) -> Limit {
        Limit {
            count,
            window: Duration::from_secs(3600),
            burst: count,
        }
    }
}

/// What a request may do under its limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Admission {
    /// Allowed; `remaining` tokens are left, the bucket is full again in `reset` seconds.
    Allowed {
        limit: u32,
        remaining: u32,
        reset: u64,
    },
    /// Refused: one token comes back in `retry_after` seconds.
    Limited {
        limit: u32,
        retry_after: u64,
        reset: u64,
    },
}

/// A token bucket on the sandbox clock.
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    limit: Limit,
    tokens: f64,
    last: OffsetDateTime,
}

impl Bucket {
    pub(crate) fn new(limit: Limit, now: OffsetDateTime) -> Self {
        Bucket {
            limit,
            tokens: f64::from(limit.burst),
            last: now,
        }
    }

    fn rate_per_sec(&self) -> f64 {
        f64::from(self.limit.count) / self.limit.window.as_secs_f64()
    }

    /// Takes one token if there is one.
    pub(crate) fn admit(&mut self, now: OffsetDateTime) -> Admission {
        let elapsed = (now - self.last).as_seconds_f64().max(0.0);
        self.last = now;
        let burst = f64::from(self.limit.burst);
        self.tokens = (self.tokens + elapsed * self.rate_per_sec()).min(burst);
        let admitted = self.tokens >= 1.0;
        if admitted {
            self.tokens -= 1.0;
        }
        let reset = ((burst - self.tokens) / self.rate_per_sec()).ceil() as u64;
        if admitted {
            Admission::Allowed {
                limit: self.limit.count,
                remaining: self.tokens.floor() as u32,
                reset,
            }
        } else {
            let retry_after = ((1.0 - self.tokens) / self.rate_per_sec()).ceil().max(1.0) as u64;
            Admission::Limited {
                limit: self.limit.count,
                retry_after,
                reset,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starter_allows_100_a_minute_then_refills() {
        let start = time::macros::datetime!(2026-01-01 00:00 UTC);
        let mut bucket = Bucket::new(Limit::per_minute(100), start);
        for i in 0..100 {
            match bucket.admit(start) {
                Admission::Allowed { remaining, .. } => assert_eq!(remaining, 99 - i),
                other => panic!("request {i} refused: {other:?}"),
            }
        }
        assert_eq!(
            bucket.admit(start),
            Admission::Limited {
                limit: 100,
                retry_after: 1,
                reset: 60
            }
        );
        // 0.6 s brings one token back.
        let later = start + Duration::from_millis(600);
        assert!(matches!(bucket.admit(later), Admission::Allowed { .. }));
    }

    #[test]
    fn free_projects_burst_150_then_refill_at_100_a_minute() {
        let start = time::macros::datetime!(2026-01-01 00:00 UTC);
        let mut bucket = Bucket::new(Limit::per_minute(100).with_burst(150), start);
        for i in 0..150 {
            assert!(
                matches!(bucket.admit(start), Admission::Allowed { .. }),
                "request {i} refused"
            );
        }
        assert!(matches!(bucket.admit(start), Admission::Limited { .. }));
        let later = start + Duration::from_millis(600);
        assert!(matches!(bucket.admit(later), Admission::Allowed { .. }));
    }
}
