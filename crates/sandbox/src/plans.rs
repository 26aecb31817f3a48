//! API keys, the plan each key is on, and the per-plan rate limits the sandbox applies
//! (a token bucket per key and service, measured on the sandbox clock).

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

/// The services the sandbox emulates, each under its own path prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Service {
    /// The social publishing service, under `/social`.
    Social,
    /// The developer project service, under `/projects`.
    Projects,
    /// The vision service, under `/vision`.
    Vision,
    /// The e-signature service, under `/esign`.
    Esign,
}

impl Service {
    /// Every service.
    pub const ALL: &'static [Service] = &[
        Service::Social,
        Service::Projects,
        Service::Vision,
        Service::Esign,
    ];

    /// The path segment the service lives under.
    pub fn prefix(self) -> &'static str {
        match self {
            Service::Social => "social",
            Service::Projects => "projects",
            Service::Vision => "vision",
            Service::Esign => "esign",
        }
    }

    /// The service whose prefix starts this path, if any.
    pub(crate) fn from_path(path: &str) -> Option<Service> {
        let first = path.trim_start_matches('/').split('/').next()?;
        Service::ALL.iter().copied().find(|s| s.prefix() == first)
    }
}

/// A rate limit: `count` requests per `window`, with bursts up to `burst`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Limit {
    pub count: u32,
    pub window: Duration,
    pub burst: u32,
}

impl Limit {
    const fn per_minute(count: u32) -> Limit {
        Limit {
            count,
            window: Duration::from_secs(60),
            burst: count,
        }
    }

    const fn with_burst(self, burst: u32) -> Limit {
        Limit { burst, ..self }
    }

    const fn per_hour(count: u32) -> Limit {
        Limit {
            count,
            window: Duration::from_secs(3600),
            burst: count,
        }
    }
}

/// The limit of `plan` on `service`; `None` is unlimited. A plan name the service does
/// not know (such as `default`) gets the service's most generous plan.
pub(crate) fn limit_for(service: Service, plan: &str) -> Option<Limit> {
    match (service, plan) {
        (Service::Social, "starter") => Some(Limit::per_minute(100)),
        (Service::Social, "pro") => Some(Limit::per_minute(1000)),
        (Service::Social, _) => Some(Limit::per_minute(10_000)),
        (Service::Projects, "free") => Some(Limit::per_minute(100).with_burst(150)),
        (Service::Projects, "pro") => Some(Limit::per_minute(1000).with_burst(1500)),
        (Service::Projects, _) => None,
        // The vision service documents a monthly call quota, not a request rate.
        (Service::Vision, _) => None,
        (Service::Esign, "business") => Some(Limit::per_hour(10_000)),
        (Service::Esign, _) => None,
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
    fn unknown_plans_get_the_most_generous_limit() {
        assert_eq!(
            limit_for(Service::Social, "default").map(|l| l.count),
            Some(10_000)
        );
        assert_eq!(
            Service::from_path("/social/v1/posts"),
            Some(Service::Social)
        );
        assert_eq!(Service::from_path("/nope/v1"), None);
        assert_eq!(limit_for(Service::Projects, "default"), None);
        let free = limit_for(Service::Projects, "free").unwrap();
        assert_eq!((free.count, free.burst), (100, 150));
    }

    #[test]
    fn free_projects_burst_150_then_refill_at_100_a_minute() {
        let start = time::macros::datetime!(2026-01-01 00:00 UTC);
        let mut bucket = Bucket::new(limit_for(Service::Projects, "free").unwrap(), start);
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
