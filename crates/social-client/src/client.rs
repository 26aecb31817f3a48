//! The social client: configuration, the plan's rate limit, and the resource handles.

use core_http::config::RateLimit;

/// A client of the social publishing service. Cheap to clone; clones share the
/// connection pool and the rate limiter.
///
/// Build it with [`Client::new`], [`Client::builder`] or [`Client::from_env`]
/// (`SOCIAL_API_KEY`, `SOCIAL_BASE_URL`, and `SOCIAL_PLAN` = `starter`, `pro` or
/// `enterprise` to turn on that plan's rate limit), then reach the resources:
/// [`posts`](Client::posts), [`schedule`](Client::schedule),
/// [`analytics`](Client::analytics), [`accounts`](Client::accounts).
#[derive(Clone, Debug)]
pub struct Client {
    http: core_http::HttpClient,
}

core_http::service_client!(Client, env_prefix = "SOCIAL", plan = Plan);

core_http::service_plans! {
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
    pub enum Plan for "social" {
        /// 100 requests per minute.
        Starter = "starter" => Some(RateLimit::per_minute(100)),
        /// 1,000 requests per minute.
        Pro = "pro" => Some(RateLimit::per_minute(1_000)),
        /// 10,000 requests per minute.
        Enterprise = "enterprise" => Some(RateLimit::per_minute(10_000)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_parse_and_carry_their_limits() {
        assert_eq!("Pro".parse::<Plan>().unwrap(), Plan::Pro);
        assert_eq!(Plan::Starter.rate_limit(), Some(RateLimit::per_minute(100)));
        assert_eq!(
            Plan::Enterprise.rate_limit(),
            Some(RateLimit::per_minute(10_000))
        );
        let err = "gold".parse::<Plan>().unwrap_err();
        assert!(
            err.to_string()
                .contains("\"gold\": expected starter, pro or enterprise"),
            "{err}"
        );
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
