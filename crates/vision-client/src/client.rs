//! The vision client: configuration and the analyses.

/// A client of the vision service. Cheap to clone; clones share the connection pool.
///
/// Build it with [`Client::new`], [`Client::builder`] or [`Client::from_env`]
/// (`VISION_API_KEY`, `VISION_BASE_URL`), then run an analysis through
/// [`analyses`](Client::analyses) (`detect`, `classify`, `ocr`, `faces`) or read the
/// service's [`status`](Client::status). The service documents no request-rate plans, so
/// there is no `VISION_PLAN` (one that is set is a `Config` error, not a pace silently
/// not kept): pace with `builder().rate_limit(config::RateLimit::per_minute(n))`, which
/// `VISION_RATE_BUDGET` shares as in every client. The usage quota is reported by
/// `status().get()`.
#[derive(Clone, Debug)]
pub struct Client {
    http: core_http::HttpClient,
}

core_http::service_client!(Client, env_prefix = "VISION");

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn from_env_needs_key_and_url_and_hides_the_key() {
        let env = |name: &str| match name {
            "VISION_API_KEY" => Some("sk_live_secret".to_owned()),
            "VISION_BASE_URL" => Some("https://api.example.com".to_owned()),
            _ => None,
        };
        let client = Client::from_env_with(env).unwrap();
        assert!(!format!("{client:?}").contains("sk_live_secret"));
        let missing = Client::from_env_with(|_| None).unwrap_err();
        assert!(missing.to_string().contains("VISION_"), "{missing}");
        // No plans are documented: a plan asked for is refused, not ignored.
        let planned = Client::from_env_with(|name| match name {
            "VISION_PLAN" => Some("pro".to_owned()),
            other => env(other),
        })
        .unwrap_err();
        assert_eq!(planned.kind(), crate::ErrorKind::Config);
        assert!(planned.to_string().contains("VISION_PLAN"), "{planned}");
    }
}
