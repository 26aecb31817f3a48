//! Never silently wrong, over a socket: a count out of its type's range is a decode
//! error, never clamped; a negative or fractional `meta.total` is never read as a total;
//! a count the answer does not carry is `None`, never zero; and numeric ids keep their
//! digits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use social_client::{Client, Error, posts::ListPosts};

fn serve(path: &str, body: &str) -> (mockito::ServerGuard, mockito::Mock) {
    let mut server = mockito::Server::new();
    let mock = server
        .mock("GET", path)
        .match_query(mockito::Matcher::Any)
        .with_header("content-type", "application/json")
        .with_body(body)
        .expect(1)
        .create();
    (server, mock)
}

#[test]
fn a_count_beyond_its_type_is_a_decode_error_never_a_clamp() {
    // 2^70 followers: the old reader clamped it to u64::MAX.
    for followers in ["1180591620717411303424", "-3", "12.5", "\"many\""] {
        let body = format!(r#"{{"followers": {followers}, "impressions": 1, "clicks": 0}}"#);
        let (server, mock) = serve("/v1/analytics/overview", &body);
        let client = testkit::client::<Client>(&server.url());
        let err = client.analytics().overview().unwrap_err();
        mock.assert();
        assert!(
            matches!(err, Error::Decode { status: 200, .. }),
            "{followers}: {err:?}"
        );
    }
}

#[test]
fn counts_in_any_exact_form_read_and_absent_ones_are_none() {
    let (server, _mock) = serve(
        "/v1/analytics/overview",
        r#"{"followers": "12", "impressions": 18446744073709551615, "clicks": 3.0}"#,
    );
    let client = testkit::client::<Client>(&server.url());
    let stats = client.analytics().overview().unwrap();
    assert_eq!(stats.followers, Some(12));
    assert_eq!(stats.impressions, Some(u64::MAX));
    assert_eq!(stats.clicks, Some(3));
    assert_eq!(stats.engagement_rate, None, "absent, not 0.0");
}

#[test]
fn a_negative_total_is_never_read_as_a_total() {
    for total in ["-1", "-0.5", "1e30"] {
        let body = format!(r#"{{"data": [], "meta": {{"total": {total}}}}}"#);
        let (server, mock) = serve("/v1/posts", &body);
        let client = testkit::client::<Client>(&server.url());
        let err = client.posts().list(&ListPosts::new()).unwrap_err();
        mock.assert();
        assert!(matches!(err, Error::Decode { .. }), "{total}: {err:?}");
    }
    // Without a total, the page has none (the iterator then stops at an empty page).
    let (server, _mock) = serve("/v1/posts", r#"{"data": [], "meta": {}}"#);
    let client = testkit::client::<Client>(&server.url());
    let page = client.posts().list(&ListPosts::new()).unwrap();
    assert_eq!(page.meta.unwrap().total, None);
}

#[test]
fn numeric_post_ids_keep_their_digits() {
    let body = json!({"data": [{"id": 9007199254740993u64, "content": "hi", "status": "published"}], "meta": {"total": 1}});
    let (server, _mock) = serve("/v1/posts", &body.to_string());
    let client = testkit::client::<Client>(&server.url());
    let page = client.posts().list(&ListPosts::new()).unwrap();
    // 2^53 + 1: a float would have made it ...992.
    assert_eq!(page.data[0].id.as_str(), "9007199254740993");
}
