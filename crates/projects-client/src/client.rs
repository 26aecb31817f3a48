//! The projects client: configuration, the plan's rate limit, and the resource handle.

use core_http::config::RateLimit;

/// A client of the developer project service. Cheap to clone; clones share the
/// connection pool and the rate limiter.
///
/// Build it with [`Client::new`], [`Client::builder`] or [`Client::from_env`]
/// (`PROJECTS_API_KEY`, `PROJECTS_BASE_URL`, and `PROJECTS_PLAN` = `free`, `pro` or
/// `enterprise` to pace calls under that plan's limit), then use
/// [`projects`](Client::projects).
#[derive(Clone, Debug)]
pub struct Client {
    http: core_http::HttpClient,
}

core_http::service_client!(Client, env_prefix = "PROJECTS", plan = Plan);

core_http::service_plans! {
    /// The service's plans and their documented rate limits. Passing one to
    /// [`ClientBuilder::rate_limit`](crate::ClientBuilder::rate_limit) makes the client pace
    /// itself under the limit (with the plan's burst) instead of running into 429s.
    ///
    /// ```
    /// let client = projects_client::Client::builder()
    ///     .base_url("https://api.example.com")
    ///     .api_key("sk_live_...")
    ///     .rate_limit(projects_client::Plan::Free)
    ///     .build()?;
    /// # Ok::<(), projects_client::Error>(())
    /// ```
    pub enum Plan for "projects" {
        /// 100 requests per minute, bursts of up to 150.
        Free = "free" => Some(RateLimit::per_minute(100).with_burst(150)),
        /// 1,000 requests per minute, bursts of up to 1,500.
        Pro = "pro" => Some(RateLimit::per_minute(1_000).with_burst(1_500)),
        /// Unlimited (the "custom" burst is agreed per account): no client-side limit.
        Enterprise = "enterprise" => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn plans_carry_rate_and_burst() {
        assert_eq!("FREE".parse::<Plan>().unwrap(), Plan::Free);
        assert_eq!(
            Plan::Free.rate_limit(),
            Some(RateLimit::per_minute(100).with_burst(150))
        );
        assert_eq!(
            Plan::Pro.rate_limit(),
            Some(RateLimit::per_minute(1000).with_burst(1500))
        );
        assert_eq!(Plan::Enterprise.rate_limit(), None);
        assert!(
            "gold"
                .parse::<Plan>()
                .unwrap_err()
                .to_string()
                .contains("gold")
        );
    }

    #[test]
    fn from_env_reads_the_plan_and_never_prints_the_key() {
        let env = |name: &str| match name {
            "PROJECTS_API_KEY" => Some("sk_live_secret".to_owned()),
            "PROJECTS_BASE_URL" => Some("https://api.example.com".to_owned()),
            "PROJECTS_PLAN" => Some("free".to_owned()),
            _ => None,
        };
        let client = Client::from_env_with(env).unwrap();
        let debug = format!("{client:?}");
        assert!(!debug.contains("sk_live_secret"), "{debug}");
        assert!(
            debug.contains("150"),
            "the Free burst should be set: {debug}"
        );
        let missing = Client::from_env_with(|_| None).unwrap_err();
        assert!(missing.to_string().contains("PROJECTS_"), "{missing}");
    }
}
