//! core-http against servers on real sockets: retries, Retry-After, idempotency, timeouts,
//! error bodies, caps, HTTPS and redirect rules, OAuth, rate limiting and pagination.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use common::hostile::{Act, Hostile, refused_url};
use common::{ManualClock, RecordingSleeper};
use core_http::{
    Error, ErrorKind, HttpClient,
    config::{Auth, OAuth2Config, RateLimit, RequestOptions},
    pagination::{OffsetPaginator, Page, TokenPage, TokenPaginator},
};
use mockito::Matcher;
use serde_json::{Value, json};

fn client(url: &str, sleeper: &Arc<RecordingSleeper>) -> HttpClient {
    HttpClient::builder()
        .base_url(url)
        .api_key("sk_test_secret_value")
        .sleeper(sleeper.clone())
        .build()
        .unwrap()
}

#[test]
fn retries_503_then_succeeds_in_three_attempts() {
    let mut server = mockito::Server::new();
    let fail = server
        .mock("GET", "/v1/things")
        .with_status(503)
        .with_body(r#"{"error":{"code":"unavailable","message":"try later"}}"#)
        .expect(2)
        .create();
    let ok = server
        .mock("GET", "/v1/things")
        .match_header("x-retry-count", "2")
        .with_body(r#"{"ok":true}"#)
        .expect(1)
        .create();
    let sleeper = RecordingSleeper::new();
    let v: Value = client(&server.url(), &sleeper)
        .get("/v1/things")
        .send_json()
        .unwrap();
    assert_eq!(v, json!({"ok": true}));
    fail.assert();
    ok.assert();
    let slept = sleeper.slept();
    assert_eq!(slept.len(), 2);
    assert!(slept[0] >= Duration::from_millis(375) && slept[0] <= Duration::from_millis(500));
    assert!(slept[1] >= Duration::from_millis(750) && slept[1] <= Duration::from_secs(1));
}

#[test]
fn gives_up_after_max_retries_with_the_last_error() {
    let mut server = mockito::Server::new();
    let m = server
        .mock("GET", "/x")
        .with_status(502)
        .with_header("x-request-id", "req_123")
        .with_body(r#"{"message":"bad gateway"}"#)
        .expect(3)
        .create();
    let sleeper = RecordingSleeper::new();
    let err = client(&server.url(), &sleeper)
        .get("/x")
        .send()
        .unwrap_err();
    m.assert();
    let api = err.api().unwrap();
    assert_eq!(api.status, 502);
    assert_eq!(api.kind, ErrorKind::Server);
    assert_eq!(api.message, "bad gateway");
    assert_eq!(err.request_id(), Some("req_123"));
    assert!(err.to_string().contains("bad gateway"), "{err}");
    assert!(err.to_string().contains("req_123"), "{err}");
}

#[test]
fn client_errors_and_501_are_not_retried() {
    let cases = [
        (400, ErrorKind::BadRequest),
        (401, ErrorKind::Unauthorized),
        (403, ErrorKind::Forbidden),
        (404, ErrorKind::NotFound),
        (409, ErrorKind::Conflict),
        (422, ErrorKind::BadRequest),
        (501, ErrorKind::Server),
    ];
    for (status, kind) in cases {
        let mut server = mockito::Server::new();
        let m = server
            .mock("GET", "/x")
            .with_status(status)
            .with_body(r#"{"error":{"code":"c","message":"m"}}"#)
            .expect(1)
            .create();
        let sleeper = RecordingSleeper::new();
        let err = client(&server.url(), &sleeper)
            .get("/x")
            .send()
            .unwrap_err();
        m.assert();
        assert_eq!(err.status(), Some(status as u16));
        assert_eq!(err.kind(), kind, "{status}");
        assert!(sleeper.slept().is_empty(), "{status} slept");
    }
}

fn retry_after_case(header: (&str, String)) -> Vec<Duration> {
    let mut server = mockito::Server::new();
    let limited = server
        .mock("GET", "/x")
        .with_status(429)
        .with_header(header.0, &header.1)
        .expect(1)
        .create();
    let ok = server.mock("GET", "/x").with_body("{}").expect(1).create();
    let sleeper = RecordingSleeper::new();
    client(&server.url(), &sleeper).get("/x").send().unwrap();
    limited.assert();
    ok.assert();
    sleeper.slept()
}

#[test]
fn retry_after_in_seconds_is_honoured() {
    let slept = retry_after_case(("Retry-After", "3".into()));
    assert_eq!(slept, vec![Duration::from_secs(3)]);
}

#[test]
fn retry_after_ms_is_honoured() {
    let slept = retry_after_case(("retry-after-ms", "1250".into()));
    assert_eq!(slept, vec![Duration::from_millis(1250)]);
}

#[test]
fn retry_after_http_date_is_honoured() {
    let date = httpdate_in(Duration::from_secs(20));
    let slept = retry_after_case(("Retry-After", date));
    assert_eq!(slept.len(), 1);
    assert!(
        slept[0] >= Duration::from_secs(17) && slept[0] <= Duration::from_secs(21),
        "{slept:?}"
    );
}

#[test]
fn rate_limit_reset_is_used_when_429_has_no_retry_after() {
    let slept = retry_after_case(("X-RateLimit-Reset", "4".into()));
    assert_eq!(slept, vec![Duration::from_secs(4)]);
}

fn httpdate_in(d: Duration) -> String {
    // RFC 7231 IMF-fixdate, built by hand to keep the test free of extra crates.
    let t = SystemTime::now() + d;
    let secs = t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
    let days = secs / 86_400;
    let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    // Civil-from-days (Howard Hinnant).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let mon = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(month - 1) as usize];
    format!("{weekday}, {day:02} {mon} {year} {h:02}:{m:02}:{s:02} GMT")
}

#[test]
fn retry_after_over_sixty_seconds_fails_with_the_wait() {
    let mut server = mockito::Server::new();
    let m = server
        .mock("GET", "/x")
        .with_status(429)
        .with_header("Retry-After", "120")
        .with_body(r#"{"error":{"code":"rate_limited","message":"slow down"}}"#)
        .expect(1)
        .create();
    let sleeper = RecordingSleeper::new();
    let err = client(&server.url(), &sleeper)
        .get("/x")
        .send()
        .unwrap_err();
    m.assert();
    assert!(sleeper.slept().is_empty());
    let api = err.api().unwrap();
    assert_eq!(api.kind, ErrorKind::RateLimited);
    assert_eq!(api.retry_after, Some(Duration::from_secs(120)));
    assert!(err.to_string().contains("retry after 120s"), "{err}");
}

#[test]
fn quota_429_is_not_retried() {
    let mut server = mockito::Server::new();
    let m = server
        .mock("POST", "/v2/detect")
        .with_status(429)
        .with_body(r#"{"error":{"code":"quota_exceeded","message":"Monthly quota reached"}}"#)
        .expect(1)
        .create();
    let sleeper = RecordingSleeper::new();
    let err = client(&server.url(), &sleeper)
        .post("/v2/detect")
        .idempotency_key("k")
        .json(&json!({"image_url": "https://x/y.png"}))
        .send()
        .unwrap_err();
    m.assert();
    assert_eq!(err.kind(), ErrorKind::QuotaExceeded);
    assert!(sleeper.slept().is_empty());
}

#[test]
fn post_500_without_key_is_not_repeated() {
    let mut server = mockito::Server::new();
    let m = server
        .mock("POST", "/v1/orders")
        .with_status(500)
        .with_body(r#"{"message":"internal"}"#)
        .expect(1)
        .create();
    let sleeper = RecordingSleeper::new();
    let err = client(&server.url(), &sleeper)
        .post("/v1/orders")
        .json(&json!({"symbol": "AAPL"}))
        .send()
        .unwrap_err();
    m.assert();
    assert!(err.may_have_been_processed());
    assert!(sleeper.slept().is_empty());
}

#[test]
fn post_with_key_is_retried_with_the_identical_key() {
    let mut server = mockito::Server::new();
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = keys.clone();
    let fail = server
        .mock("POST", "/v1/orders")
        .match_request(move |r| {
            seen.lock().unwrap().push(
                r.header("idempotency-key")
                    .first()
                    .map(|v| v.to_str().unwrap().to_owned()),
            );
            true
        })
        .with_status(500)
        .expect(2)
        .create();
    let ok = server
        .mock("POST", "/v1/orders")
        .match_header("idempotency-key", "order-42")
        .match_body(Matcher::Json(json!({"symbol": "AAPL"})))
        .with_status(201)
        .with_body(r#"{"id":"o1"}"#)
        .expect(1)
        .create();
    let sleeper = RecordingSleeper::new();
    // A server declared to de-duplicate by the key.
    let honouring = HttpClient::builder()
        .base_url(server.url())
        .api_key("sk_test_secret_value")
        .idempotency_keys(true)
        .sleeper(sleeper.clone())
        .build()
        .unwrap();
    let v: Value = honouring
        .post("/v1/orders")
        .idempotency_key("order-42")
        .json(&json!({"symbol": "AAPL"}))
        .send_json()
        .unwrap();
    assert_eq!(v["id"], "o1");
    fail.assert();
    ok.assert();
    let keys = keys.lock().unwrap().clone();
    assert!(keys.len() >= 2);
    assert!(
        keys.iter().all(|k| k.as_deref() == Some("order-42")),
        "{keys:?}"
    );
}

#[test]
fn automatic_idempotency_keys_are_stable_across_attempts() {
    let server = Hostile::scripted(vec![
        Act::json(500, "{}"),
        Act::json(502, "{}"),
        Act::json(201, r#"{"id":"p1"}"#),
    ]);
    let sleeper = RecordingSleeper::new();
    let client = HttpClient::builder()
        .base_url(server.url())
        .api_key("k")
        .idempotency_keys(true)
        .sleeper(sleeper.clone())
        .build()
        .unwrap();
    let v: Value = client
        .post("/v1/posts")
        .json(&json!({}))
        .send_json()
        .unwrap();
    assert_eq!(v["id"], "p1");
    let keys: Vec<String> = server
        .requests()
        .iter()
        .map(|r| header_of(r, "idempotency-key").unwrap())
        .collect();
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|k| k == &keys[0]), "{keys:?}");
    assert_eq!(keys[0].len(), 36);
    // A second logical call gets a new key.
    client.post("/v1/posts").json(&json!({})).send().unwrap();
    let all = server.requests();
    assert_ne!(header_of(&all[3], "idempotency-key").unwrap(), keys[0]);
}

#[test]
fn a_key_on_a_service_that_does_not_honour_keys_is_sent_but_changes_no_retry() {
    // The same call through a per-call option, as a user would write it: the key goes
    // out, but the POST is not repeated after a dropped connection, because nothing
    // says this server would discard the repeat.
    let server = Hostile::scripted(vec![Act::CloseAfterRead, Act::json(201, r#"{"id":"p1"}"#)]);
    let sleeper = RecordingSleeper::new();
    let err = client(server.url(), &sleeper)
        .with_options(&RequestOptions::new().idempotency_key("k-1"))
        .post("/v1/posts")
        .json(&json!({"content": "hi"}))
        .send()
        .unwrap_err();
    assert!(err.may_have_been_processed(), "{err:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "the POST was sent again");
    assert_eq!(
        header_of(&requests[0], "idempotency-key").as_deref(),
        Some("k-1")
    );
    assert!(sleeper.slept().is_empty());
}

fn header_of(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
    })
}

#[test]
fn post_503_and_429_are_retried_even_without_key() {
    for status in [503, 429] {
        let mut server = mockito::Server::new();
        let fail = server
            .mock("POST", "/p")
            .with_status(status)
            .expect(1)
            .create();
        let ok = server.mock("POST", "/p").with_body("{}").expect(1).create();
        let sleeper = RecordingSleeper::new();
        client(&server.url(), &sleeper)
            .post("/p")
            .json(&json!({}))
            .send()
            .unwrap();
        fail.assert();
        ok.assert();
    }
}

#[test]
fn dropped_connection_on_post_is_not_repeated_but_get_is() {
    let server = Hostile::scripted(vec![Act::CloseAfterRead, Act::json(200, "{}")]);
    let sleeper = RecordingSleeper::new();
    let c = client(server.url(), &sleeper);
    let err = c.post("/p").json(&json!({})).send().unwrap_err();
    assert!(err.may_have_been_processed(), "{err:?}");
    assert_eq!(server.requests().len(), 1);

    let server = Hostile::scripted(vec![Act::CloseAfterRead, Act::json(200, "{}")]);
    let c = client(server.url(), &sleeper);
    c.get("/g").send().unwrap();
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn stalled_server_times_out_within_the_budget() {
    let server = Hostile::scripted(vec![Act::stall(Duration::from_secs(5))]);
    let sleeper = RecordingSleeper::new();
    let c = HttpClient::builder()
        .base_url(server.url())
        .timeout(Duration::from_millis(400))
        .sleeper(sleeper.clone())
        .build()
        .unwrap();
    let started = Instant::now();
    let err = c.get("/slow").send().unwrap_err();
    let took = started.elapsed();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    // The whole call, retries included, fits in the timeout (plus scheduling slack).
    assert!(took < Duration::from_millis(1900), "took {took:?}");
    assert!(took >= Duration::from_millis(350), "took {took:?}");
}

#[test]
fn per_call_timeout_override() {
    let server = Hostile::scripted(vec![Act::stall(Duration::from_secs(5))]);
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    let started = Instant::now();
    let err = c
        .with_options(
            &RequestOptions::new()
                .timeout(Duration::from_millis(300))
                .max_retries(0),
        )
        .get("/slow")
        .send()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Timeout {
                delivery: core_http::Delivery::MayHaveBeenProcessed,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_millis(1800));
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn connection_refused_is_a_connect_error_retried_safely() {
    let sleeper = RecordingSleeper::new();
    let err = client(&refused_url(), &sleeper)
        .post("/p")
        .json(&json!({}))
        .send()
        .unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err:?}");
    assert!(!err.may_have_been_processed());
    // Nothing reached a server, so even a POST was tried 3 times.
    assert_eq!(sleeper.slept().len(), 2);
}

#[test]
fn error_bodies_of_every_shape() {
    let cases: &[(&str, &str, Option<&str>, &str)] = &[
        (
            "application/problem+json",
            r#"{"type":"https://x/invalid","title":"Invalid","detail":"name is required","status":400}"#,
            Some("https://x/invalid"),
            "name is required",
        ),
        (
            "application/json",
            r#"{"error":{"code":"invalid_name","message":"name is required"}}"#,
            Some("invalid_name"),
            "name is required",
        ),
        (
            "application/json",
            r#"{"error":"invalid_request","error_description":"limit must be at most 100"}"#,
            Some("invalid_request"),
            "limit must be at most 100",
        ),
        (
            "application/json",
            r#"{"code":"E1","message":"bad"}"#,
            Some("E1"),
            "bad",
        ),
        (
            "application/json",
            r#"{"errorCode":"E2","message":"worse"}"#,
            Some("E2"),
            "worse",
        ),
        (
            "application/json",
            r#"{"message":"just a message"}"#,
            None,
            "just a message",
        ),
        (
            "text/html",
            "<!DOCTYPE html><html><head><title>400 Bad Request</title></head><body><h1>nginx</h1></body></html>",
            None,
            "400 Bad Request",
        ),
        ("text/plain", "", None, "Bad Request"),
        ("application/json", "{not json", None, "{not json"),
    ];
    for (ct, body, code, message) in cases {
        let mut server = mockito::Server::new();
        let _m = server
            .mock("GET", "/x")
            .with_status(400)
            .with_header("content-type", ct)
            .with_body(*body)
            .create();
        let sleeper = RecordingSleeper::new();
        let err = client(&server.url(), &sleeper)
            .get("/x")
            .send()
            .unwrap_err();
        let api = err.api().unwrap();
        assert_eq!(api.code.as_deref(), *code, "{body}");
        assert_eq!(api.message, *message, "{body}");
        assert_eq!(api.kind, ErrorKind::BadRequest);
        assert!(err.to_string().contains(message), "{err}");
    }
}

#[test]
fn an_error_body_cut_short_keeps_what_arrived() {
    // A 400 announcing 500 bytes, of which the connection carries 26 before it closes:
    // the error is the server's answer, with the text that arrived, not a read failure.
    let server = Hostile::scripted(vec![Act::answer(
        400,
        &[
            ("content-type", "text/plain"),
            ("content-length", "500"),
            ("connection", "close"),
        ],
        "the field name is required",
    )]);
    let sleeper = RecordingSleeper::new();
    let err = client(server.url(), &sleeper).get("/x").send().unwrap_err();
    let api = err.api().unwrap_or_else(|| panic!("{err:?}"));
    assert_eq!(api.status, 400);
    assert_eq!(api.kind, ErrorKind::BadRequest);
    assert_eq!(api.message, "the field name is required");
    assert_eq!(api.body, "the field name is required");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn html_500_page_is_a_typed_server_error() {
    let mut server = mockito::Server::new();
    let _m = server
        .mock("GET", "/x")
        .with_status(500)
        .with_header("content-type", "text/html")
        .with_body("<html><head><title>Internal Server Error</title></head></html>")
        .create();
    let sleeper = RecordingSleeper::new();
    let err = client(&server.url(), &sleeper)
        .get("/x")
        .send()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server);
    assert_eq!(err.api().unwrap().message, "Internal Server Error");
    assert_eq!(sleeper.slept().len(), 2);
}

#[test]
fn malformed_json_is_a_decode_error_with_an_excerpt() {
    let mut server = mockito::Server::new();
    let _m = server
        .mock("GET", "/x")
        .with_body(r#"{"data": [1, 2,"#)
        .create();
    let sleeper = RecordingSleeper::new();
    let err = client(&server.url(), &sleeper)
        .get("/x")
        .send_json::<Value>()
        .unwrap_err();
    match &err {
        Error::Decode {
            status, excerpt, ..
        } => {
            assert_eq!(*status, 200);
            assert_eq!(excerpt, r#"{"data": [1, 2,"#);
        }
        other => panic!("expected Decode, got {other:?}"),
    }
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn html_where_json_was_expected_is_a_decode_error() {
    let mut server = mockito::Server::new();
    let _m = server
        .mock("GET", "/x")
        .with_header("content-type", "text/html")
        .with_body("<html>captive portal</html>")
        .create();
    let sleeper = RecordingSleeper::new();
    let err = client(&server.url(), &sleeper)
        .get("/x")
        .send_json::<Value>()
        .unwrap_err();
    assert!(matches!(&err, Error::Decode { excerpt, .. } if excerpt.contains("captive portal")));
}

#[test]
fn truncated_body_is_an_error_and_get_is_retried() {
    let server = Hostile::scripted(vec![
        Act::truncated(100, r#"{"partial":"#),
        Act::json(200, r#"{"whole":true}"#),
    ]);
    let sleeper = RecordingSleeper::new();
    let v: Value = client(server.url(), &sleeper)
        .get("/x")
        .send_json()
        .unwrap();
    assert_eq!(v, json!({"whole": true}));
    assert_eq!(server.requests().len(), 2);

    let server = Hostile::scripted(vec![Act::truncated(100, r#"{"partial":"#)]);
    let err = client(server.url(), &sleeper)
        .post("/x")
        .json(&json!({}))
        .send()
        .unwrap_err();
    assert!(err.may_have_been_processed(), "{err:?}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn body_over_the_cap_is_refused() {
    let mut server = mockito::Server::new();
    let _m = server
        .mock("GET", "/big")
        .with_body(vec![b'a'; 4096])
        .create();
    let c = HttpClient::builder()
        .base_url(server.url())
        .max_body_size(1024)
        .build()
        .unwrap();
    let err = c.get("/big").send().unwrap_err();
    assert!(
        matches!(
            err,
            Error::ResponseTooLarge {
                limit: 1024,
                status: 200
            }
        ),
        "{err:?}"
    );
    // Under the cap is fine.
    let c = HttpClient::builder()
        .base_url(server.url())
        .max_body_size(4096)
        .build()
        .unwrap();
    assert_eq!(c.get("/big").send().unwrap().body().len(), 4096);
}

#[test]
fn plain_http_to_a_remote_host_is_refused_before_sending() {
    let err = HttpClient::builder()
        .base_url("http://api.example.com")
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::Config(_)));
    // An absolute URL on a call follows the same rule.
    let server = mockito::Server::new();
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    let err = c.get("http://api.example.com/v1/x").send().unwrap_err();
    assert!(
        matches!(err, Error::Config(ref m) if m.contains("refusing plain http://")),
        "{err}"
    );
}

#[test]
fn credentials_do_not_follow_a_redirect_to_another_origin() {
    let mut other = mockito::Server::new();
    let landing = other
        .mock("GET", "/landing")
        .match_header("authorization", Matcher::Missing)
        .match_header("x-api-key", Matcher::Missing)
        .with_body(r#"{"landed":true}"#)
        .expect(2)
        .create();
    let mut origin = mockito::Server::new();
    let redirect = origin
        .mock("GET", "/start")
        .match_header("authorization", "Bearer sk_test_secret_value")
        .with_status(307)
        .with_header("location", &format!("{}/landing", other.url()))
        .expect(1)
        .create();
    let sleeper = RecordingSleeper::new();
    let v: Value = client(&origin.url(), &sleeper)
        .get("/start")
        .send_json()
        .unwrap();
    assert_eq!(v["landed"], true);
    redirect.assert();

    // A custom key header is stripped too.
    let custom = origin
        .mock("GET", "/start2")
        .match_header("x-api-key", "sk_custom")
        .with_status(302)
        .with_header("location", &format!("{}/landing", other.url()))
        .expect(1)
        .create();
    let c = HttpClient::builder()
        .base_url(origin.url())
        .auth(Auth::header("X-API-Key", "sk_custom"))
        .build()
        .unwrap();
    c.get("/start2").send().unwrap();
    custom.assert();
    landing.assert();
}

#[test]
fn credentials_follow_a_same_origin_redirect() {
    let mut server = mockito::Server::new();
    let _r = server
        .mock("GET", "/old")
        .with_status(301)
        .with_header("location", "/new")
        .create();
    let new = server
        .mock("GET", "/new")
        .match_header("authorization", "Bearer sk_test_secret_value")
        .with_body("{}")
        .expect(1)
        .create();
    let sleeper = RecordingSleeper::new();
    client(&server.url(), &sleeper).get("/old").send().unwrap();
    new.assert();
}

#[test]
fn default_headers_are_sent() {
    let mut server = mockito::Server::new();
    let m = server
        .mock("POST", "/x")
        .match_header("authorization", "Bearer sk_test_secret_value")
        .match_header("accept", "application/json")
        .match_header("content-type", "application/json")
        .match_header(
            "user-agent",
            Matcher::Regex(r"^core-http/\d+\.\d+\.\d+ \(rust; core-http/\d+\.\d+\.\d+\)$".into()),
        )
        .match_header("x-extra", "1")
        .match_header("x-retry-count", Matcher::Missing)
        .match_query(Matcher::UrlEncoded("q".into(), "a b&c".into()))
        .with_body("{}")
        .expect(1)
        .create();
    let sleeper = RecordingSleeper::new();
    client(&server.url(), &sleeper)
        .post("/x")
        .query("q", "a b&c")
        .header("x-extra", "1")
        .json(&json!({}))
        .send()
        .unwrap();
    m.assert();
}

#[test]
fn a_call_accept_header_replaces_the_default() {
    let mut server = mockito::Server::new();
    // Exactly one Accept, the call's: mockito joins repeated headers with ", ".
    let m = server
        .mock("GET", "/file")
        .match_header("accept", "application/pdf")
        .with_body("{}")
        .expect(1)
        .create();
    let sleeper = RecordingSleeper::new();
    client(&server.url(), &sleeper)
        .get("/file")
        .header("Accept", "application/pdf")
        .send()
        .unwrap();
    m.assert();
}

fn token_body(token: &str, expires_in: u64) -> String {
    json!({"access_token": token, "token_type": "Bearer", "expires_in": expires_in}).to_string()
}

fn oauth_client(server: &mockito::Server) -> HttpClient {
    HttpClient::builder()
        .base_url(server.url())
        .auth(Auth::oauth2(
            OAuth2Config::new(
                format!("{}/oauth/token", server.url()),
                "client_1",
                "cs_secret",
            )
            .with_scope("documents"),
        ))
        .build()
        .unwrap()
}

#[test]
fn oauth_token_is_fetched_once_and_cached() {
    let mut server = mockito::Server::new();
    let token = server
        .mock("POST", "/oauth/token")
        .match_header("content-type", "application/x-www-form-urlencoded")
        .match_header("authorization", Matcher::Missing)
        .match_body(Matcher::AllOf(vec![
            Matcher::UrlEncoded("grant_type".into(), "client_credentials".into()),
            Matcher::UrlEncoded("client_id".into(), "client_1".into()),
            Matcher::UrlEncoded("client_secret".into(), "cs_secret".into()),
            Matcher::UrlEncoded("scope".into(), "documents".into()),
        ]))
        .with_body(token_body("tok_1", 3600))
        .expect(1)
        .create();
    let api = server
        .mock("GET", "/documents/d1")
        .match_header("authorization", "Bearer tok_1")
        .with_body("{}")
        .expect(50)
        .create();
    let c = oauth_client(&server);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let c = c.clone();
            std::thread::spawn(move || {
                let n = if t < 2 { 13 } else { 12 };
                for _ in 0..n {
                    c.get("/documents/d1").send().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    token.assert();
    api.assert();
}

#[test]
fn oauth_token_is_refreshed_when_it_expires() {
    let mut server = mockito::Server::new();
    // expires_in 0: the token is due for refresh immediately.
    let token = server
        .mock("POST", "/oauth/token")
        .with_body(token_body("tok_short", 0))
        .expect(2)
        .create();
    let api = server.mock("GET", "/d").with_body("{}").expect(2).create();
    let c = oauth_client(&server);
    c.get("/d").send().unwrap();
    c.get("/d").send().unwrap();
    token.assert();
    api.assert();
}

#[test]
fn oauth_401_refreshes_once_and_retries() {
    let mut server = mockito::Server::new();
    let first = server
        .mock("POST", "/oauth/token")
        .with_body(token_body("tok_old", 3600))
        .expect(1)
        .create();
    let second = server
        .mock("POST", "/oauth/token")
        .with_body(token_body("tok_new", 3600))
        .expect(1)
        .create();
    let refused = server
        .mock("GET", "/d")
        .match_header("authorization", "Bearer tok_old")
        .with_status(401)
        .with_body(r#"{"error":"invalid_token"}"#)
        .expect(1)
        .create();
    let ok = server
        .mock("GET", "/d")
        .match_header("authorization", "Bearer tok_new")
        .with_body(r#"{"id":"d"}"#)
        .expect(1)
        .create();
    let c = oauth_client(&server);
    let v: Value = c.get("/d").send_json().unwrap();
    assert_eq!(v["id"], "d");
    first.assert();
    second.assert();
    refused.assert();
    ok.assert();
}

#[test]
fn oauth_persistent_401_is_returned_after_one_refresh() {
    let mut server = mockito::Server::new();
    let token = server
        .mock("POST", "/oauth/token")
        .with_body(token_body("tok", 3600))
        .expect(2)
        .create();
    let refused = server
        .mock("GET", "/d")
        .with_status(401)
        .with_body(r#"{"error":"invalid_token","error_description":"revoked"}"#)
        .expect(2)
        .create();
    let err = oauth_client(&server).get("/d").send().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthorized);
    assert_eq!(err.api().unwrap().message, "revoked");
    token.assert();
    refused.assert();
}

#[test]
fn token_bucket_paces_requests_across_clones() {
    let mut server = mockito::Server::new();
    let m = server.mock("GET", "/x").with_body("{}").expect(5).create();
    let clock = ManualClock::new();
    let sleeper = RecordingSleeper::with_clock(clock.clone());
    let c = HttpClient::builder()
        .base_url(server.url())
        .rate_limit(RateLimit::per_minute(60).with_burst(2))
        .clock(clock.clone())
        .sleeper(sleeper.clone())
        .build()
        .unwrap();
    let clone = c.clone();
    c.get("/x").send().unwrap();
    clone.get("/x").send().unwrap();
    assert!(sleeper.slept().is_empty(), "the burst goes out at once");
    c.get("/x").send().unwrap();
    clone.get("/x").send().unwrap();
    // One second apart, less the client's 1 % margin.
    assert_eq!(
        sleeper.slept(),
        vec![Duration::from_secs_f64(1.0 / 0.99); 2]
    );
    clock.advance(Duration::from_secs(10));
    c.get("/x").send().unwrap();
    assert_eq!(sleeper.slept().len(), 2, "tokens came back while idle");
    m.assert();
}

#[derive(serde::Deserialize)]
struct Listed {
    data: Vec<u32>,
    #[serde(default)]
    meta: Option<Meta>,
}

#[derive(serde::Deserialize)]
struct Meta {
    total: Option<u64>,
}

fn offset_items(c: &HttpClient, page: u32) -> Vec<u32> {
    OffsetPaginator::new(page, |offset, limit| {
        let l: Listed = c
            .get("/items")
            .query("offset", offset)
            .query("limit", limit)
            .send_json()?;
        Ok(Page::new(l.data, l.meta.and_then(|m| m.total)))
    })
    .collect::<Result<Vec<_>, _>>()
    .unwrap()
}

#[test]
fn offset_paginator_stops_at_total() {
    let mut server = mockito::Server::new();
    let pages = [
        ("0", r#"{"data":[1,2],"meta":{"total":5}}"#),
        ("2", r#"{"data":[3,4],"meta":{"total":5}}"#),
        ("4", r#"{"data":[5],"meta":{"total":5}}"#),
    ];
    let mocks: Vec<_> = pages
        .iter()
        .map(|(offset, body)| {
            server
                .mock("GET", "/items")
                .match_query(Matcher::AllOf(vec![
                    Matcher::UrlEncoded("offset".into(), (*offset).into()),
                    Matcher::UrlEncoded("limit".into(), "2".into()),
                ]))
                .with_body(*body)
                .expect(1)
                .create()
        })
        .collect();
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    assert_eq!(offset_items(&c, 2), vec![1, 2, 3, 4, 5]);
    for m in mocks {
        m.assert();
    }
}

#[test]
fn offset_paginator_without_total_stops_at_a_short_or_empty_page() {
    let mut server = mockito::Server::new();
    let full = server
        .mock("GET", "/items")
        .match_query(Matcher::UrlEncoded("offset".into(), "0".into()))
        .with_body(r#"{"data":[1,2]}"#)
        .expect(1)
        .create();
    let empty = server
        .mock("GET", "/items")
        .match_query(Matcher::UrlEncoded("offset".into(), "2".into()))
        .with_body(r#"{"data":[]}"#)
        .expect(1)
        .create();
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    assert_eq!(offset_items(&c, 2), vec![1, 2]);
    full.assert();
    empty.assert();
}

#[test]
fn offset_paginator_is_lazy() {
    let mut server = mockito::Server::new();
    let first = server
        .mock("GET", "/items")
        .match_query(Matcher::UrlEncoded("offset".into(), "0".into()))
        .with_body(r#"{"data":[1,2],"meta":{"total":1000}}"#)
        .expect(1)
        .create();
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    let taken: Vec<u32> = OffsetPaginator::new(2, |offset, limit| {
        let l: Listed = c
            .get("/items")
            .query("offset", offset)
            .query("limit", limit)
            .send_json()?;
        Ok(Page::new(l.data, None))
    })
    .take(2)
    .map(Result::unwrap)
    .collect();
    assert_eq!(taken, vec![1, 2]);
    first.assert();
}

#[derive(serde::Deserialize)]
struct Bars {
    bars: Vec<u32>,
    next_page_token: Option<String>,
}

#[test]
fn token_paginator_follows_tokens_and_reports_a_repeat_as_cut_short() {
    let mut server = mockito::Server::new();
    let first = server
        .mock("GET", "/bars")
        .match_query(Matcher::Missing)
        .with_body(r#"{"bars":[1,2],"next_page_token":"t1"}"#)
        .expect(1)
        .create();
    let second = server
        .mock("GET", "/bars")
        .match_query(Matcher::UrlEncoded("page_token".into(), "t1".into()))
        .with_body(r#"{"bars":[3],"next_page_token":"t2"}"#)
        .expect(1)
        .create();
    // The server misbehaves: t2 points back to t1.
    let third = server
        .mock("GET", "/bars")
        .match_query(Matcher::UrlEncoded("page_token".into(), "t2".into()))
        .with_body(r#"{"bars":[4],"next_page_token":"t1"}"#)
        .expect(1)
        .create();
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    let items: Vec<Result<u32, Error>> = TokenPaginator::new(|token| {
        let b: Bars = c.get("/bars").query_opt("page_token", token).send_json()?;
        Ok(TokenPage::new(b.bars, b.next_page_token))
    })
    .collect();
    let read: Vec<u32> = items[..4].iter().map(|i| *i.as_ref().unwrap()).collect();
    assert_eq!(read, vec![1, 2, 3, 4]);
    // The repeated token ends the list with an error that says it is not whole.
    assert_eq!(items.len(), 5, "{items:?}");
    assert!(matches!(
        items[4],
        Err(Error::ListCutShort {
            pages: 3,
            reason: core_http::CutShort::RepeatedToken
        })
    ));
    first.assert();
    second.assert();
    third.assert();
}

#[test]
fn token_paginator_stops_without_a_token_and_reports_errors() {
    let mut server = mockito::Server::new();
    let only = server
        .mock("GET", "/bars")
        .with_body(r#"{"bars":[7],"next_page_token":null}"#)
        .expect(1)
        .create();
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    let fetch = |token: Option<&str>| -> core_http::Result<TokenPage<u32>> {
        let b: Bars = c.get("/bars").query_opt("page_token", token).send_json()?;
        Ok(TokenPage::new(b.bars, b.next_page_token))
    };
    let items: Vec<u32> = TokenPaginator::new(fetch)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(items, vec![7]);
    only.assert();

    let mut broken = mockito::Server::new();
    let _m = broken.mock("GET", "/bars").with_status(404).create();
    let c = HttpClient::builder()
        .base_url(broken.url())
        .build()
        .unwrap();
    let results: Vec<_> = TokenPaginator::new(|token: Option<&str>| {
        let b: Bars = c.get("/bars").query_opt("page_token", token).send_json()?;
        Ok(TokenPage::new(b.bars, b.next_page_token))
    })
    .collect();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].as_ref().unwrap_err().kind(), ErrorKind::NotFound);
}

#[test]
fn raw_escape_hatch_uses_auth_and_errors() {
    let mut server = mockito::Server::new();
    let get = server
        .mock("GET", "/v9/new")
        .match_header("authorization", "Bearer sk_test_secret_value")
        .match_query(Matcher::UrlEncoded("limit".into(), "5".into()))
        .with_body(r#"{"fresh":1}"#)
        .expect(1)
        .create();
    let del = server
        .mock("DELETE", "/v9/new/1")
        .with_status(204)
        .expect(1)
        .create();
    let sleeper = RecordingSleeper::new();
    let c = client(&server.url(), &sleeper);
    let v: Value = c.raw().get("/v9/new", &[("limit", "5")]).unwrap();
    assert_eq!(v["fresh"], 1);
    let nothing: Option<Value> = c.raw().delete("/v9/new/1").unwrap();
    assert!(nothing.is_none());
    get.assert();
    del.assert();
}

#[test]
fn streaming_download_detects_a_short_body() {
    let server = Hostile::scripted(vec![Act::Send(
        "HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ncontent-length: 1000\r\nconnection: close\r\n\r\n%PDF-1.7 only part"
            .into(),
    )]);
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    let mut resp = c.get("/doc").send_streaming().unwrap();
    assert_eq!(resp.content_length(), Some(1000));
    let mut sink = Vec::new();
    let mut progress = Vec::new();
    let err = resp
        .copy_to(&mut sink, |so_far, total| progress.push((so_far, total)))
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            std::io::ErrorKind::UnexpectedEof
                | std::io::ErrorKind::ConnectionAborted
                | std::io::ErrorKind::Other
        ),
        "{err:?}"
    );
    assert!(sink.starts_with(b"%PDF-1.7"));
    // Everything that arrived before the failed read is written, and reported.
    assert_eq!(sink, b"%PDF-1.7 only part");
    assert_eq!(progress, vec![(18, Some(1000))]);
}

#[test]
fn streaming_download_reports_progress() {
    let mut server = mockito::Server::new();
    let body = vec![7u8; 200_000];
    let _m = server.mock("GET", "/doc").with_body(body.clone()).create();
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    let mut resp = c.get("/doc").send_streaming().unwrap();
    let mut sink = Vec::new();
    let mut calls = Vec::new();
    let n = resp
        .copy_to(&mut sink, |so_far, total| calls.push((so_far, total)))
        .unwrap();
    assert_eq!(n, 200_000);
    assert_eq!(sink, body);
    assert_eq!(calls.last(), Some(&(200_000, Some(200_000))));
    assert!(calls.windows(2).all(|w| w[0].0 < w[1].0));
}

/// Records the size of each write it is given.
struct WriteSizes(Vec<usize>);

impl std::io::Write for WriteSizes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.push(buf.len());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn streaming_download_writes_whole_chunks_however_the_body_arrives() {
    // The connection hands the body over in reads smaller than a chunk; each write is
    // still a full 256 KiB but the last, so a file behind a BufWriter of that size gets
    // few, large writes.
    let mut server = mockito::Server::new();
    let body = vec![9u8; 600_000];
    let _m = server.mock("GET", "/doc").with_body(body).create();
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    let mut resp = c.get("/doc").send_streaming().unwrap();
    let mut sizes = WriteSizes(Vec::new());
    let mut calls = 0;
    let n = resp.copy_to(&mut sizes, |_, _| calls += 1).unwrap();
    assert_eq!(n, 600_000);
    assert_eq!(sizes.0, vec![262_144, 262_144, 75_712]);
    assert_eq!(calls, 3);
}

#[test]
fn keep_alive_reuses_one_connection() {
    let server = Hostile::scripted(vec![Act::json(200, "{}")]);
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    for _ in 0..20 {
        c.get("/x").send().unwrap();
    }
    assert_eq!(server.requests().len(), 20);
    assert_eq!(server.connections(), 1);
}

#[test]
fn eight_threads_sharing_a_client_open_at_most_eight_connections() {
    let server = Hostile::scripted(vec![Act::json(200, "{}")]);
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    std::thread::scope(|scope| {
        for _ in 0..8 {
            let c = c.clone();
            scope.spawn(move || {
                for _ in 0..125 {
                    c.get("/x").send().unwrap();
                }
            });
        }
    });
    assert_eq!(server.requests().len(), 1000);
    let opened = server.connections();
    assert!((1..=8).contains(&opened), "{opened} connections");
}

#[test]
fn a_streamed_body_is_reopened_for_each_attempt_and_sent_with_its_length() {
    let mut server = mockito::Server::new();
    let payload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let fail = server
        .mock("POST", "/v1/upload")
        .match_header("content-length", "200000")
        .match_body(payload.clone())
        .with_status(503)
        .expect(1)
        .create();
    let ok = server
        .mock("POST", "/v1/upload")
        .match_header("x-retry-count", "1")
        .match_header("content-type", "application/octet-stream")
        .match_body(payload.clone())
        .with_status(201)
        .with_body(r#"{"id":"u1"}"#)
        .expect(1)
        .create();
    let opened = Arc::new(Mutex::new(0));
    let counter = opened.clone();
    let shared = Arc::new(payload);
    let sleeper = RecordingSleeper::new();
    let v: Value = client(&server.url(), &sleeper)
        .post("/v1/upload")
        .idempotency_key("upload-1")
        .body_stream("application/octet-stream", 200_000, move || {
            *counter.lock().unwrap() += 1;
            let bytes = shared.clone();
            Ok(Box::new(std::io::Cursor::new(bytes.to_vec())) as Box<dyn std::io::Read + Send>)
        })
        .send_json()
        .unwrap();
    assert_eq!(v["id"], "u1");
    fail.assert();
    ok.assert();
    assert_eq!(*opened.lock().unwrap(), 2, "opened once per attempt");
}

#[test]
fn a_streamed_body_of_the_wrong_length_is_not_sent_as_is() {
    let server = mockito::Server::new();
    let sleeper = RecordingSleeper::new();
    let err = client(&server.url(), &sleeper)
        .post("/v1/upload")
        .max_retries(0)
        .body_stream("application/octet-stream", 10, || {
            Ok(Box::new(std::io::Cursor::new(b"short".to_vec())) as Box<dyn std::io::Read + Send>)
        })
        .send()
        .unwrap_err();
    assert!(
        matches!(common::unsettled(&err), Error::Io { .. }),
        "{err:?}"
    );
    let err = client(&server.url(), &sleeper)
        .post("/v1/upload")
        .body_stream("application/octet-stream", 3, || {
            Err(std::io::Error::new(std::io::ErrorKind::NotFound, "gone"))
        })
        .send()
        .unwrap_err();
    assert!(
        matches!(&err, Error::Io { delivery: core_http::Delivery::NotSent, source } if source.to_string() == "gone"),
        "{err:?}"
    );
}

#[test]
fn a_key_from_a_source_is_read_for_every_request_and_kept_out_of_errors() {
    let mut server = mockito::Server::new();
    let first = server
        .mock("GET", "/v1/me")
        .match_header("authorization", "Bearer sk_rotating_one")
        .with_status(200)
        .with_body("{}")
        .expect(1)
        .create();
    let second = server
        .mock("GET", "/v1/me")
        .match_header("authorization", "Bearer sk_rotating_two")
        .with_status(401)
        .with_body(r#"{"error":{"message":"sk_rotating_two is revoked"}}"#)
        .expect(1)
        .create();
    let key = Arc::new(Mutex::new("sk_rotating_one".to_owned()));
    let source = key.clone();
    let client = HttpClient::builder()
        .base_url(server.url())
        .allow_insecure_http(true)
        .auth(Auth::bearer_from(move || {
            core_http::config::Secret::new(source.lock().unwrap().clone())
        }))
        .build()
        .unwrap();
    client.get("/v1/me").send().unwrap();
    *key.lock().unwrap() = "sk_rotating_two".to_owned();
    let err = client.get("/v1/me").send().unwrap_err();
    first.assert();
    second.assert();
    // The key of the moment is redacted wherever the error is shown.
    for text in [err.to_string(), format!("{err:?}")] {
        assert!(!text.contains("sk_rotating_two"), "{text}");
    }
    // An empty key fails before anything is sent.
    *key.lock().unwrap() = String::new();
    let err = client.get("/v1/me").send().unwrap_err();
    assert!(!err.may_have_been_processed(), "{err}");
    assert!(format!("{client:?}").contains("***") && !format!("{client:?}").contains("sk_rot"));
}
