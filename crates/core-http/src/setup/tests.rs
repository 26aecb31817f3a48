//! The configuration's unit tests.

use super::*;
use std::collections::HashMap;

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

fn env_error(pairs: &[(&str, &str)]) -> String {
    ClientBuilder::<HttpClient>::from_env_with("SOCIAL", env(pairs))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

#[test]
fn from_env_reads_every_variable() {
    let b = ClientBuilder::<HttpClient>::from_env_with(
        "SOCIAL",
        env(&[
            ("SOCIAL_API_KEY", "sk_x"),
            ("SOCIAL_BASE_URL", "https://api.example.com/"),
            ("SOCIAL_MAX_RETRIES", "5"),
            ("SOCIAL_TIMEOUT_SECS", "2.5"),
        ]),
    )
    .unwrap();
    assert_eq!(
        b.config.base_url.as_deref(),
        Some("https://api.example.com")
    );
    assert_eq!(b.config.retry.max_retries, 5);
    assert_eq!(b.config.timeout, Duration::from_millis(2500));
    assert!(matches!(&b.config.auth, Auth::Bearer(k) if k.expose() == "sk_x"));
    let client = b.build().unwrap();
    assert!(!format!("{client:?}").contains("sk_x"));
}

#[test]
fn from_env_errors_name_the_variable() {
    let url = ("SOCIAL_BASE_URL", "https://a.io");
    let key = ("SOCIAL_API_KEY", "k");
    assert!(env_error(&[url]).contains("SOCIAL_API_KEY is not set"));
    assert!(env_error(&[url, ("SOCIAL_API_KEY", "  ")]).contains("SOCIAL_API_KEY"));
    assert!(env_error(&[key]).contains("SOCIAL_BASE_URL is not set"));
    assert!(env_error(&[key, ("SOCIAL_BASE_URL", "not a url")]).contains("SOCIAL_BASE_URL"));
    // Everything missing at once, the base URL first; one prefix however deep the cause.
    assert_eq!(
        env_error(&[]),
        "configuration error: SOCIAL_BASE_URL and SOCIAL_API_KEY are not set"
    );
    let bad_url = env_error(&[key, ("SOCIAL_BASE_URL", "not a url")]);
    assert_eq!(
        bad_url.matches("configuration error").count(),
        1,
        "{bad_url}"
    );
    assert!(env_error(&[key, url, ("SOCIAL_MAX_RETRIES", "many")]).contains("SOCIAL_MAX_RETRIES"));
    for bad in ["0", "-1", "abc", "inf"] {
        assert!(
            env_error(&[key, url, ("SOCIAL_TIMEOUT_SECS", bad)]).contains("SOCIAL_TIMEOUT_SECS"),
            "{bad}"
        );
    }
}

#[test]
fn build_checks() {
    let err = HttpClient::builder().build().unwrap_err().to_string();
    assert!(err.contains("no base URL"), "{err}");
    let err = HttpClient::builder()
        .base_url("http://api.example.com")
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("refusing plain http://"), "{err}");
    assert!(
        HttpClient::builder()
            .base_url("http://api.example.com")
            .allow_insecure_http(true)
            .build()
            .is_ok()
    );
    assert!(
        HttpClient::builder()
            .base_url("http://127.0.0.1:9")
            .build()
            .is_ok()
    );
    assert!(
        HttpClient::builder()
            .base_url("https://a.io")
            .api_key("")
            .build()
            .is_err()
    );
    assert!(
        HttpClient::builder()
            .base_url("https://a.io")
            .header("bad header", "x")
            .build()
            .is_err()
    );
}
