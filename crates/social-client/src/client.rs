//! The social client: configuration, the plan's rate limit, and the resource handles.

use std::str::FromStr;

use core_http::{Error, RateLimit, Result};

use crate::accounts::Accounts;
use crate::analytics::Analytics;
use crate::posts::Posts;
use crate::schedule::Schedule;

core_http::service_client! {
    /// A client of the social publishing service. Cheap to clone; clones share the
    /// connection pool and the rate limiter.
    ///
    /// Build it with [`Client::new`], [`Client::builder`] or [`Client::from_env`]
    /// (`SOCIAL_API_KEY`, `SOCIAL_BASE_URL`, and `SOCIAL_PLAN` = `starter`, `pro` or
    /// `enterprise` to turn on that plan's rate limit), then reach the resources:
    /// [`posts`](Client::posts), [`schedule`](Client::schedule),
    /// [`analytics`](Client::analytics), [`accounts`](Client::accounts).
    pub struct Client;
    env_prefix = "SOCIAL";
    plan = Plan;
}

impl Client {
    /// Posts: create, list, iterate.
    pub fn posts(&self) -> Posts<'_> {
        Posts::new(self)
    }

    /// The publication schedule.
    pub fn schedule(&self) -> Schedule<'_> {
        Schedule::new(self)
    }

    /// Engagement analytics.
    pub fn analytics(&self) -> Analytics<'_> {
        Analytics::new(self)
    }

    /// Connected social media accounts.
    pub fn accounts(&self) -> Accounts<'_> {
        Accounts::new(self)
    }
}

/// The service's plans and their documented rate limits. Passing one to
/// [`ClientBuilder::rate_limit`](crate::ClientBuilder::rate_limit) makes the client pace itself under the limit instead of
/// running into 429s.
///
/// ```
/// let client = social_client::Client::builder()
///     .base_url("https://api.example.com")
///     .api_key("sk_live_...")
///     .rate_limit(social_client::Plan::Starter)
///     .build()?;
/// # Ok::<(), social_client::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Plan {
    /// 100 requests per minute.
    Starter,
    /// 1,000 requests per minute.
    Pro,
    /// 10,000 requests per minute.
    Enterprise,
}

impl Plan {
    /// The plan's limit in requests per minute.
    pub fn requests_per_minute(self) -> u32 {
        match self {
            Plan::Starter => 100,
            Plan::Pro => 1_000,
            Plan::Enterprise => 10_000,
        }
    }

    /// The plan's limit as a core-http rate limit (no burst above the per-minute count).
    pub fn rate_limit(self) -> RateLimit {
        RateLimit::per_minute(self.requests_per_minute())
    }
}

impl From<Plan> for Option<RateLimit> {
    fn from(plan: Plan) -> Self {
        Some(plan.rate_limit())
    }
}

impl FromStr for Plan {
    type Err = Error;

    fn from_str(s: &str) -> Result<Plan> {
        match s.trim().to_ascii_lowercase().as_str() {
            "starter" => Ok(Plan::Starter),
            "pro" => Ok(Plan::Pro),
            "enterprise" => Ok(Plan::Enterprise),
            other => Err(Error::Config(format!(
                "unknown social plan {other:?}: expected starter, pro or enterprise"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn _ensure_send_sync_clone() {
        fn check<T: Send + Sync + Clone>() {}
        check::<Client>();
    }

    #[test]
    fn plans_parse_and_carry_their_limits() {
        assert_eq!("Pro".parse::<Plan>().unwrap(), Plan::Pro);
        assert_eq!(Plan::Starter.requests_per_minute(), 100);
        assert_eq!(Plan::Enterprise.requests_per_minute(), 10_000);
        let err = "gold".parse::<Plan>().unwrap_err();
        assert!(err.to_string().contains("gold"), "{err}");
    }

    #[test]
    fn from_env_reads_the_plan_and_never_prints_the_key() {
        let env = |name: &str| match name {
            "SOCIAL_API_KEY" => Some("sk_live_secret".to_owned()),
            "SOCIAL_BASE_URL" => Some("https://api.example.com".to_owned()),
            "SOCIAL_PLAN" => Some("starter".to_owned()),
            _ => None,
        };
        let client = Client::from_env_with(env).unwrap();
        let debug = format!("{client:?}");
        assert!(!debug.contains("sk_live_secret"), "{debug}");
        assert!(
            debug.contains("100"),
            "the Starter limit should be configured: {debug}"
        );
        let missing = Client::from_env_with(|_| None).unwrap_err();
        assert!(missing.to_string().contains("SOCIAL_API_KEY"), "{missing}");
        let bad = Client::from_env_with(|n| {
            env(n).map(|v| if n == "SOCIAL_PLAN" { "gold".into() } else { v })
        });
        assert!(bad.is_err());
    }
}
