//! The promises a hostile server tests: nothing sent twice, no success reported as "not
//! processed", no credential sent to another origin or shown in an error, no call past
//! its timeout, no panic on absurd values. Each case counts what the server saw.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::hostile::{Act, Hostile, raw, refused_url};
use common::{ManualClock, RecordingSleeper};
use core_http::{
    Error, ErrorKind, HttpClient,
    config::{Auth, OAuth2Config, RateLimit, RequestOptions, RetryPolicy},
    pagination::{OffsetPaginator, Page},
};
use serde_json::{Value, json};

const KEY: &str = "sk_test_hostile_key";

fn client(url: &str, sleeper: &Arc<RecordingSleeper>) -> HttpClient {
    HttpClient::builder()
        .base_url(url)
        .api_key(KEY)
        .sleeper(sleeper.clone())
        .build()
        .unwrap()
}

fn count(server: &Hostile, line_start: &str) -> usize {
    server
        .lines()
        .iter()
        .filter(|l| l.starts_with(line_start))
        .count()
}

fn token_json(token: &str) -> String {
    json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600}).to_string()
}

/// Asserts that the call ended within `budget` plus one second.
fn within(started: Instant, budget: Duration) {
    let took = started.elapsed();
    assert!(
        took < budget + Duration::from_secs(1),
        "took {took:?} for a budget of {budget:?}"
    );
}

// ---- nothing twice ----

#[test]
fn a_post_answered_by_303_then_503_reaches_the_server_once() {
    let server = Hostile::scripted(vec![
        Act::redirect(303, "/v1/orders/o1"),
        Act::json(503, r#"{"message":"busy"}"#),
    ]);
    let sleeper = RecordingSleeper::new();
    let err = client(server.url(), &sleeper)
        .post("/v1/orders")
        .json(&json!({"qty": 1}))
        .send()
        .unwrap_err();
    assert_eq!(count(&server, "POST"), 1, "{:?}", server.lines());
    assert_eq!(count(&server, "GET /v1/orders/o1"), 1);
    assert_eq!(err.status(), Some(503));
    assert!(err.may_have_been_processed());
    assert!(sleeper.slept().is_empty());
}

#[test]
fn a_post_answered_by_303_to_a_refused_connection_reaches_the_server_once() {
    let server = Hostile::scripted(vec![Act::redirect(
        303,
        &format!("{}/status", refused_url()),
    )]);
    let sleeper = RecordingSleeper::new();
    let err = client(server.url(), &sleeper)
        .post("/v1/orders")
        .json(&json!({"qty": 1}))
        .send()
        .unwrap_err();
    assert_eq!(count(&server, "POST"), 1);
    // An action is never followed to another origin (the closed port is one): the
    // redirect is refused before anything is sent there.
    assert!(
        matches!(common::unsettled(&err), Error::Redirect { .. }),
        "{err:?}"
    );
    assert!(
        err.may_have_been_processed(),
        "the POST reached the server before the redirect: {err:?}"
    );
}

/// A keyed POST whose first attempt reached the server unanswered, and whose retry
/// found the port closed: the last failure says "not sent", the call does not.
#[test]
fn a_retry_refused_after_an_unanswered_attempt_still_says_the_post_may_have_arrived() {
    use std::io::Read as _;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains(r#"{"qty":1}"#) {
            let n = conn.read(&mut buf).unwrap();
            assert!(n > 0, "the request ended early");
            seen.extend_from_slice(&buf[..n]);
        }
        // The port closes before the connection does: the retry is refused.
        drop(listener);
        drop(conn);
        String::from_utf8_lossy(&seen).into_owned()
    });
    let sleeper = RecordingSleeper::new();
    let err = HttpClient::builder()
        .base_url(&url)
        .api_key(KEY)
        .idempotency_keys(true)
        .sleeper(sleeper.clone())
        .build()
        .unwrap()
        .post("/v1/orders")
        .idempotency_key("order-7")
        .json(&json!({"qty": 1}))
        .send()
        .unwrap_err();
    let seen = server.join().unwrap();
    assert!(seen.starts_with("POST /v1/orders"), "{seen}");
    assert!(!sleeper.slept().is_empty(), "retried");
    assert!(
        err.may_have_been_processed(),
        "the first attempt reached the server: {err:?}"
    );
    match &err {
        Error::Unsettled {
            repeat_with: Some((_, id)),
            source,
        } => {
            assert_eq!(id, "order-7");
            assert!(matches!(**source, Error::Connect { .. }), "{source:?}");
        }
        other => panic!("expected Unsettled, got {other:?}"),
    }
}

#[test]
fn an_oauth_401_after_a_redirect_does_not_replay_the_post() {
    let api = Hostile::scripted(vec![
        Act::redirect(303, "/v1/orders/o1"),
        Act::json(401, r#"{"error":"invalid_token"}"#),
    ]);
    let tokens = Hostile::scripted(vec![Act::json(200, &token_json("tok_abcdefgh1"))]);
    let sleeper = RecordingSleeper::new();
    let c = HttpClient::builder()
        .base_url(api.url())
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{}/token", tokens.url()),
            "id",
            "cs_secret_value",
        )))
        .sleeper(sleeper.clone())
        .build()
        .unwrap();
    let err = c
        .post("/v1/orders")
        .json(&json!({"qty": 1}))
        .send()
        .unwrap_err();
    assert_eq!(err.status(), Some(401));
    assert_eq!(count(&api, "POST"), 1, "{:?}", api.lines());
    assert_eq!(tokens.requests().len(), 1, "no refresh-and-replay");
}

#[test]
fn an_oauth_401_on_the_original_request_refreshes_and_repeats_it_once() {
    let api = Hostile::scripted(vec![
        Act::json(401, r#"{"error":"invalid_token"}"#),
        Act::json(201, r#"{"id":"o1"}"#),
    ]);
    let tokens = Hostile::scripted(vec![
        Act::json(200, &token_json("tok_old_abcdef")),
        Act::json(200, &token_json("tok_new_abcdef")),
    ]);
    let c = HttpClient::builder()
        .base_url(api.url())
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{}/token", tokens.url()),
            "id",
            "cs_secret_value",
        )))
        .build()
        .unwrap();
    let v: Value = c.post("/v1/orders").json(&json!({})).send_json().unwrap();
    assert_eq!(v["id"], "o1");
    let posts = api.requests();
    assert!(posts[0].contains("Bearer tok_old_abcdef"));
    assert!(posts[1].contains("Bearer tok_new_abcdef"));
    assert_eq!(tokens.requests().len(), 2);
}

#[test]
fn a_201_over_the_body_cap_says_it_may_have_been_processed() {
    let big = "x".repeat(5000);
    let server = Hostile::scripted(vec![Act::json(201, &format!("\"{big}\""))]);
    let c = HttpClient::builder()
        .base_url(server.url())
        .max_body_size(1024)
        .build()
        .unwrap();
    let err = c.post("/v1/posts").json(&json!({})).send().unwrap_err();
    assert!(
        matches!(
            common::unsettled(&err),
            Error::ResponseTooLarge {
                status: 201,
                limit: 1024
            }
        ),
        "{err:?}"
    );
    assert!(err.may_have_been_processed());
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_redirect_to_plain_http_is_refused_and_says_the_post_arrived() {
    let server = Hostile::scripted(vec![Act::redirect(307, "http://api.example.com/v1/x")]);
    let sleeper = RecordingSleeper::new();
    let err = client(server.url(), &sleeper)
        .post("/v1/posts")
        .json(&json!({}))
        .send()
        .unwrap_err();
    assert!(
        matches!(common::unsettled(&err), Error::Redirect { status: 307, .. }),
        "{err:?}"
    );
    assert!(err.may_have_been_processed());
    assert!(err.to_string().contains("plain http"), "{err}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn redirect_loops_and_chains_end_with_a_typed_error() {
    let server = Hostile::scripted(vec![Act::redirect(302, "/a"), Act::redirect(302, "/b")]);
    let sleeper = RecordingSleeper::new();
    let err = client(server.url(), &sleeper)
        .with_options(&RequestOptions::new().max_retries(0))
        .get("/a")
        .send()
        .unwrap_err();
    assert!(matches!(err, Error::Redirect { .. }), "{err:?}");
    assert!(err.to_string().contains("loop"), "{err}");
    assert!(server.requests().len() <= 3);
}

#[test]
fn a_dns_failure_is_a_connection_error_that_was_not_processed() {
    let c = HttpClient::builder()
        .base_url("https://nonexistent-host.invalid")
        .max_retries(0)
        .build()
        .unwrap();
    let err = c.post("/v1/posts").json(&json!({})).send().unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err:?}");
    assert!(!err.may_have_been_processed(), "{err:?}");
    assert!(
        err.to_string().contains("nonexistent-host.invalid"),
        "{err}"
    );
}

#[test]
fn a_created_record_that_does_not_decode_is_a_success_not_to_repeat() {
    #[derive(Debug, serde::Deserialize)]
    struct Created {
        #[allow(dead_code)]
        id: String,
    }
    let server = Hostile::scripted(vec![Act::json(201, r#"{"identifier":"p1"}"#)]);
    let sleeper = RecordingSleeper::new();
    let err = client(server.url(), &sleeper)
        .post("/v1/posts")
        .json(&json!({}))
        .send_json::<Created>()
        .unwrap_err();
    assert!(err.action_succeeded(), "{err:?}");
    assert!(err.may_have_been_processed());
    match &err {
        Error::UndecodableSuccess { status, body, .. } => {
            assert_eq!(*status, 201);
            assert_eq!(body, r#"{"identifier":"p1"}"#);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("do not repeat"), "{err}");
    assert_eq!(server.requests().len(), 1);
}

// ---- secrets ----

#[test]
fn a_token_endpoint_redirecting_elsewhere_never_receives_the_secret_there() {
    let elsewhere = Hostile::scripted(vec![Act::json(200, &token_json("tok_stolen_123"))]);
    let tokens = Hostile::scripted(vec![Act::redirect(307, &format!("{}/t", elsewhere.url()))]);
    let api = Hostile::scripted(vec![Act::json(200, "{}")]);
    let c = HttpClient::builder()
        .base_url(api.url())
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{}/token", tokens.url()),
            "id",
            "cs_client_secret_value",
        )))
        .build()
        .unwrap();
    let err = c.get("/x").send().unwrap_err();
    assert!(matches!(err, Error::Redirect { .. }), "{err:?}");
    assert!(
        elsewhere.requests().is_empty(),
        "{:?}",
        elsewhere.requests()
    );
    assert!(api.requests().is_empty());
    assert!(!format!("{err} {err:?}").contains("cs_client_secret_value"));
}

#[test]
fn a_token_answer_that_does_not_decode_never_shows_the_token() {
    for body in [
        r#"{"access_token":["tok_SECRET_ACCESS_1"],"expires_in":3600}"#,
        r#"{"token":"tok_SECRET_ACCESS_1"}"#,
        r#"<html>tok_SECRET_ACCESS_1</html>"#,
    ] {
        let tokens = Hostile::scripted(vec![Act::json(200, body)]);
        let c = HttpClient::builder()
            .base_url(tokens.url())
            .auth(Auth::oauth2(OAuth2Config::new(
                format!("{}/token", tokens.url()),
                "id",
                "cs_secret_value",
            )))
            .build()
            .unwrap();
        let err = c.get("/x").send().unwrap_err();
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains("tok_SECRET_ACCESS_1"), "{shown}");
        assert!(matches!(err, Error::UnexpectedBody { .. }), "{err:?}");
    }
}

#[test]
fn a_numeric_string_expires_in_is_accepted() {
    let tokens = Hostile::scripted(vec![Act::json(
        200,
        r#"{"access_token":"tok_abcdefgh","expires_in":"3599"}"#,
    )]);
    let api = Hostile::scripted(vec![Act::json(200, "{}")]);
    let c = HttpClient::builder()
        .base_url(api.url())
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{}/token", tokens.url()),
            "id",
            "cs_secret_value",
        )))
        .build()
        .unwrap();
    c.get("/x").send().unwrap();
    c.get("/x").send().unwrap();
    assert_eq!(tokens.requests().len(), 1, "the token was cached");
    assert!(api.requests()[1].contains("Bearer tok_abcdefgh"));
}

#[test]
fn credential_headers_never_leave_the_configured_origin() {
    let other = Hostile::scripted(vec![Act::json(200, "{}")]);
    let origin = Hostile::scripted(vec![Act::redirect(
        302,
        &format!("{}/landing", other.url()),
    )]);
    let tokens = Hostile::scripted(vec![Act::json(200, &token_json("tok_abcdefgh2"))]);
    let bearer = HttpClient::builder()
        .base_url(origin.url())
        .api_key(KEY)
        .header("X-Api-Key", "hdr_secret_value")
        .header("X-Tenant", "t1")
        .build()
        .unwrap();
    let custom = HttpClient::builder()
        .base_url(origin.url())
        .auth(Auth::header("X-Service-Key", "custom_secret_value"))
        .build()
        .unwrap();
    let oauth = HttpClient::builder()
        .base_url(origin.url())
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{}/token", tokens.url()),
            "id",
            "cs_secret_value",
        )))
        .build()
        .unwrap();
    // An absolute URL to another origin, and a redirect to it.
    for c in [&bearer, &custom, &oauth] {
        c.raw()
            .get::<Value>(&format!("{}/direct", other.url()), &[])
            .unwrap();
        c.get("/start").send().unwrap();
    }
    let seen = other.requests().join("\n").to_ascii_lowercase();
    for secret in [
        "authorization",
        "hdr_secret_value",
        "custom_secret_value",
        "tok_abcdefgh2",
        "x-service-key",
    ] {
        assert!(
            !seen.contains(secret),
            "{secret} reached the other origin:\n{seen}"
        );
    }
    assert!(
        seen.contains("x-tenant: t1"),
        "non-credential headers still go"
    );
    // The origin itself got the credentials; the token was fetched once, for it.
    let at_origin = origin.requests().join("\n");
    assert!(at_origin.contains(&format!("Bearer {KEY}")));
    assert!(at_origin.contains("custom_secret_value"));
    assert!(at_origin.contains("Bearer tok_abcdefgh2"));
    assert_eq!(tokens.requests().len(), 1);
}

#[test]
fn a_token_request_is_built_clean() {
    let tokens = Hostile::scripted(vec![Act::json(200, &token_json("tok_abcdefgh3"))]);
    let api = Hostile::scripted(vec![Act::json(200, "{}")]);
    let sleeper = RecordingSleeper::new();
    let clock = ManualClock::new();
    let c = HttpClient::builder()
        .base_url(api.url())
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{}/token", tokens.url()),
            "id",
            "cs_secret_value",
        )))
        .header("X-Tenant", "t1")
        .rate_limit(RateLimit::per_minute(1).with_burst(1))
        .clock(clock)
        .sleeper(sleeper.clone())
        .build()
        .unwrap();
    c.with_options(
        &RequestOptions::new()
            .idempotency_key("call-key-1")
            .header("X-Trace", "tr-1"),
    )
    .post("/v1/things")
    .json(&json!({}))
    .send()
    .unwrap();
    let token_request = tokens.requests()[0].to_ascii_lowercase();
    for absent in ["x-tenant", "x-trace", "idempotency-key", "authorization"] {
        assert!(
            !token_request.contains(absent),
            "{absent} on the token request:\n{token_request}"
        );
    }
    let call = api.requests()[0].to_ascii_lowercase();
    for present in [
        "x-tenant: t1",
        "x-trace: tr-1",
        "idempotency-key: call-key-1",
    ] {
        assert!(call.contains(present), "{present} missing:\n{call}");
    }
    // The bucket holds one token: had the token request taken it, the call would wait.
    assert!(sleeper.slept().is_empty(), "{:?}", sleeper.slept());
}

#[test]
fn an_error_body_echoing_the_key_is_shown_redacted() {
    let server = Hostile::scripted(vec![Act::json(
        401,
        &format!(r#"{{"error":{{"code":"bad_key","message":"key {KEY} is revoked"}}}}"#),
    )]);
    let sleeper = RecordingSleeper::new();
    let err = client(server.url(), &sleeper).get("/x").send().unwrap_err();
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("key *** is revoked"), "{shown}");
}

// ---- time ----

/// A client of `server` whose calls have `timeout` and are not retried.
fn one_try(server: &Hostile, timeout: Duration) -> HttpClient {
    HttpClient::builder()
        .base_url(server.url())
        .timeout(timeout)
        .max_retries(0)
        .build()
        .unwrap()
}

#[test]
fn a_shorter_timeout_left_on_the_socket_never_ends_a_longer_call_early() {
    // The first call leaves a 1 s read timeout on the pooled connection; the second,
    // given 10 s, is answered after 2 s on the same connection: it must succeed.
    let ok = r#"{"ok":true}"#;
    let server = Hostile::scripted(vec![
        Act::json(200, ok),
        Act::SendAfter(Duration::from_secs(2), raw(200, &[], ok.as_bytes())),
    ]);
    let c = one_try(&server, Duration::from_secs(1));
    c.get("/first").send().unwrap();
    let started = Instant::now();
    let answer = c.get("/second").timeout(Duration::from_secs(10)).send();
    assert!(answer.is_ok(), "{answer:?}");
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_eq!(
        server.connections(),
        1,
        "the second call went over the first's socket"
    );
}

#[test]
fn a_longer_timeout_left_on_the_socket_never_lets_a_shorter_call_run_late() {
    // The first call leaves a 5 s read timeout on the connection; the second, given
    // 400 ms, is never answered in time: it ends at its own deadline.
    let server = Hostile::scripted(vec![
        Act::json(200, r#"{"ok":true}"#),
        Act::stall(Duration::from_secs(10)),
    ]);
    let c = one_try(&server, Duration::from_secs(5));
    c.get("/first").send().unwrap();
    let budget = Duration::from_millis(400);
    let started = Instant::now();
    let err = c.get("/second").timeout(budget).send().unwrap_err();
    within(started, budget);
    assert!(
        started.elapsed() >= Duration::from_millis(350),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert_eq!(
        server.connections(),
        1,
        "the second call went over the first's socket"
    );
}

#[test]
fn a_longer_write_timeout_left_on_the_socket_never_lets_an_upload_run_late() {
    // The first call leaves a 5 s write timeout on the connection; the second sends
    // 32 MiB to a server that reads none of it, within 800 ms: once the socket's
    // buffers are full its writes block, and it ends at its own deadline.
    let server = Hostile::scripted(vec![
        Act::json(200, r#"{"ok":true}"#),
        Act::StallBeforeRead(Duration::from_secs(10)),
    ]);
    let c = one_try(&server, Duration::from_secs(5));
    c.get("/first").send().unwrap();
    let budget = Duration::from_millis(800);
    let upload = c
        .post("/upload")
        .timeout(budget)
        .bytes("application/octet-stream", vec![b'x'; 32 << 20]);
    let started = Instant::now();
    let err = upload.send().unwrap_err();
    within(started, budget);
    assert!(
        matches!(common::unsettled(&err), Error::Timeout { .. }),
        "{err:?}"
    );
    assert_eq!(
        server.connections(),
        1,
        "the second call went over the first's socket"
    );
}

/// A client whose calls take the common path: a buffered call with time for the
/// connect timeout twice over runs on the agent's configuration as it is, with no timeout
/// of ureq's, its reads and writes bounded by the call's deadline alone.
fn common_path(server: &Hostile, budget: Duration) -> HttpClient {
    HttpClient::builder()
        .base_url(server.url())
        .timeout(budget)
        .connect_timeout(budget / 4)
        .max_retries(0)
        .build()
        .unwrap()
}

/// Runs `call`, which must end in a timeout at `budget`, give or take the machine's
/// scheduling: not early, not late.
fn times_out_at<T: std::fmt::Debug>(budget: Duration, call: impl FnOnce() -> core_http::Result<T>) {
    let started = Instant::now();
    let err = call().unwrap_err();
    let took = started.elapsed();
    assert!(
        took >= budget - Duration::from_millis(20),
        "early: {took:?}"
    );
    assert!(took < budget + Duration::from_millis(400), "late: {took:?}");
    // An upload (a POST without a key) says it may have been carried out.
    let inner = match &err {
        Error::Unsettled { .. } => common::unsettled(&err),
        other => other,
    };
    assert!(matches!(inner, Error::Timeout { .. }), "{err:?}");
}

#[test]
fn a_trickling_body_on_the_common_path_ends_at_the_call_deadline() {
    // 300 bytes, one every 50 ms: 15 s, against a budget of 800 ms.
    let server = Hostile::scripted(vec![Act::Trickle {
        head: b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 300\r\n\r\n"
            .to_vec(),
        body: vec![b' '; 300],
        every: Duration::from_millis(50),
    }]);
    let budget = Duration::from_millis(800);
    let c = common_path(&server, budget);
    times_out_at(budget, || c.get("/slow").send());
}

#[test]
fn a_silent_server_on_the_common_path_ends_the_call_at_its_deadline() {
    let server = Hostile::scripted(vec![Act::stall(Duration::from_secs(10))]);
    let budget = Duration::from_millis(800);
    let c = common_path(&server, budget);
    times_out_at(budget, || c.get("/silent").send());
}

#[test]
fn an_upload_on_the_common_path_to_a_server_that_reads_nothing_ends_at_the_deadline() {
    let server = Hostile::scripted(vec![Act::StallBeforeRead(Duration::from_secs(10))]);
    let budget = Duration::from_millis(800);
    let c = common_path(&server, budget);
    let upload = c
        .post("/upload")
        .bytes("application/octet-stream", vec![b'x'; 32 << 20]);
    times_out_at(budget, || upload.send());
}

#[test]
fn an_upload_to_a_server_that_takes_a_little_at_a_time_ends_at_the_deadline() {
    // The server takes 16 KB every 50 ms, never the whole 32 MB body and never enough
    // for a write to finish: each write of the request makes some progress before its
    // wait runs out. The call must still end at its deadline, not one timeout later for
    // each part the server took.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    thread::spawn(move || {
        use std::io::Read;
        if let Ok((mut stream, _)) = listener.accept() {
            let mut chunk = vec![0u8; 16 * 1024];
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(10) {
                thread::sleep(Duration::from_millis(50));
                if matches!(stream.read(&mut chunk), Ok(0) | Err(_)) {
                    return;
                }
            }
        }
    });
    let budget = Duration::from_millis(800);
    let c = HttpClient::builder()
        .base_url(&url)
        .timeout(budget)
        .connect_timeout(budget / 4)
        .max_retries(0)
        .build()
        .unwrap();
    let upload = c
        .post("/upload")
        .bytes("application/octet-stream", vec![b'x'; 32 << 20]);
    times_out_at(budget, || upload.send());
}

#[test]
fn a_call_deadline_ends_with_its_call() {
    // A download's call (800 ms) bounds the wait for the answer and each read, not the
    // whole transfer: its body, 30 bytes one every 50 ms (1.5 s), is read on the same
    // thread after the call has returned, past the call's deadline, and must arrive.
    let server = Hostile::scripted(vec![Act::Trickle {
        head: b"HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ncontent-length: 30\r\n\r\n"
            .to_vec(),
        body: vec![b'x'; 30],
        every: Duration::from_millis(50),
    }]);
    let c = common_path(&server, Duration::from_millis(800));
    let mut download = c.get("/doc").send_streaming().unwrap();
    let mut body = Vec::new();
    std::io::Read::read_to_end(&mut download, &mut body).unwrap();
    assert_eq!(body, vec![b'x'; 30]);
}

#[test]
fn a_slow_redirect_hop_fits_in_the_call_budget() {
    let slow = Hostile::scripted(vec![Act::stall(Duration::from_secs(10))]);
    let origin = Hostile::scripted(vec![Act::redirect(302, &format!("{}/x", slow.url()))]);
    let budget = Duration::from_millis(800);
    let c = HttpClient::builder()
        .base_url(origin.url())
        .timeout(budget)
        .build()
        .unwrap();
    let started = Instant::now();
    let err = c.get("/start").send().unwrap_err();
    within(started, budget);
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
}

#[test]
fn a_trickling_error_body_of_a_download_fits_in_the_call_budget() {
    let server = Hostile::scripted(vec![Act::Trickle {
        head: "HTTP/1.1 500 X\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n"
            .into(),
        body: vec![b' '; 200],
        every: Duration::from_millis(100),
    }]);
    let budget = Duration::from_millis(800);
    let c = HttpClient::builder()
        .base_url(server.url())
        .timeout(budget)
        .max_retries(0)
        .build()
        .unwrap();
    let started = Instant::now();
    let err = c.get("/doc").send_streaming().unwrap_err();
    within(started, budget);
    assert_eq!(err.status(), Some(500), "{err:?}");
}

#[test]
fn a_download_refused_with_a_message_says_it_without_the_key_it_echoes() {
    // A streamed call's error body is read on a helper thread within the call's budget;
    // what it says reaches the error, with the key the server echoes blanked out.
    let body =
        format!(r#"{{"error": {{"code": "not_found", "message": "no document for {KEY}"}}}}"#);
    let server = Hostile::scripted(vec![Act::json(404, &body)]);
    let budget = Duration::from_millis(800);
    let c = HttpClient::builder()
        .base_url(server.url())
        .api_key(KEY)
        .timeout(budget)
        .build()
        .unwrap();
    let started = Instant::now();
    let err = c.get("/doc").send_streaming().unwrap_err();
    within(started, budget);
    let Error::Api(api) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(api.status, 404);
    assert_eq!(api.code.as_deref(), Some("not_found"));
    assert_eq!(api.message, "no document for ***");
    assert!(!format!("{err} {err:?}").contains(KEY), "{err:?}");
    assert_eq!(count(&server, "GET /doc"), 1);
}

#[test]
fn a_download_refused_with_an_endless_error_body_ends_in_the_call_budget() {
    // An error body of 10 GB, sent as fast as it is read: the call ends with the status
    // in its budget (the reader stops past its 1 MiB cap, or the budget ends the wait),
    // never reading on, and the request is sent once.
    let server = Hostile::scripted(vec![Act::Flood {
        head: b"HTTP/1.1 500 X\r\ncontent-type: text/plain\r\ncontent-length: 10000000000\r\n\r\n"
            .to_vec(),
        len: 10_000_000_000,
        fill: b'x',
    }]);
    let budget = Duration::from_millis(800);
    let c = common_path(&server, budget);
    let started = Instant::now();
    let err = c.get("/doc").send_streaming().unwrap_err();
    within(started, budget);
    assert_eq!(err.status(), Some(500), "{err:?}");
    assert_eq!(count(&server, "GET /doc"), 1);
}

#[test]
fn a_stalled_token_endpoint_fits_in_the_call_budget() {
    let tokens = Hostile::scripted(vec![Act::stall(Duration::from_secs(10))]);
    let api = Hostile::scripted(vec![Act::json(200, "{}")]);
    let budget = Duration::from_millis(800);
    let c = HttpClient::builder()
        .base_url(api.url())
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{}/token", tokens.url()),
            "id",
            "cs_secret_value",
        )))
        .timeout(budget)
        .build()
        .unwrap();
    let started = Instant::now();
    let err = c.get("/x").send().unwrap_err();
    within(started, budget);
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert!(api.requests().is_empty());
}

#[test]
fn the_refresh_after_a_401_shares_the_call_budget() {
    let tokens = Hostile::scripted(vec![
        Act::json(200, &token_json("tok_first_abcd")),
        Act::stall(Duration::from_secs(10)),
    ]);
    let api = Hostile::scripted(vec![Act::json(401, r#"{"error":"invalid_token"}"#)]);
    let budget = Duration::from_millis(900);
    let c = HttpClient::builder()
        .base_url(api.url())
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{}/token", tokens.url()),
            "id",
            "cs_secret_value",
        )))
        .timeout(budget)
        .build()
        .unwrap();
    let started = Instant::now();
    let err = c.get("/x").send().unwrap_err();
    within(started, budget);
    assert!(err.may_have_been_processed(), "{err:?}");
}

#[test]
fn waiting_for_another_threads_token_fetch_fits_in_the_call_budget() {
    let tokens = Hostile::scripted(vec![Act::stall(Duration::from_secs(2))]);
    let api = Hostile::scripted(vec![Act::json(200, "{}")]);
    let c = HttpClient::builder()
        .base_url(api.url())
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{}/token", tokens.url()),
            "id",
            "cs_secret_value",
        )))
        .timeout(Duration::from_secs(3))
        .build()
        .unwrap();
    let slow = c.clone();
    let fetcher = thread::spawn(move || slow.get("/x").send());
    // Let the first caller start its fetch (it holds no lock while it waits).
    while tokens.requests().is_empty() {
        thread::sleep(Duration::from_millis(10));
    }
    let budget = Duration::from_millis(600);
    let started = Instant::now();
    let err = c
        .with_options(&RequestOptions::new().timeout(budget))
        .get("/x")
        .send()
        .unwrap_err();
    within(started, budget);
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert!(fetcher.join().unwrap().is_err());
}

#[test]
fn a_whole_call_runs_on_fake_time() {
    // Two 503s asking for 20 s each, a 30 s budget: the first wait fits, the second
    // would outlast the deadline, so the call stops after two attempts, having slept
    // 20 s of fake time and no real time.
    let server = Hostile::scripted(vec![Act::json_with(503, &[("retry-after", "20")], "{}")]);
    let clock = ManualClock::new();
    let sleeper = RecordingSleeper::with_clock(clock.clone());
    let c = HttpClient::builder()
        .base_url(server.url())
        .timeout(Duration::from_secs(30))
        .max_retries(5)
        .clock(clock)
        .sleeper(sleeper.clone())
        .build()
        .unwrap();
    let started = Instant::now();
    let err = c.get("/x").send().unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(err.status(), Some(503));
    assert_eq!(sleeper.slept(), vec![Duration::from_secs(20)]);
    assert_eq!(server.requests().len(), 2);
}

// ---- panics and loops ----

#[test]
fn absurd_timeouts_and_waits_never_panic() {
    let server = Hostile::scripted(vec![
        Act::json_with(429, &[("retry-after", "1e19")], "{}"),
        Act::json(200, "{}"),
    ]);
    let sleeper = RecordingSleeper::new();
    let c = HttpClient::builder()
        .base_url(server.url())
        .timeout(Duration::MAX)
        .connect_timeout(Duration::MAX)
        .retry_policy(RetryPolicy::default().with_max_retry_after(Duration::MAX))
        .sleeper(sleeper.clone())
        .build()
        .unwrap();
    let err = c.get("/x").send().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RateLimited);
    assert!(
        sleeper.slept().is_empty(),
        "a 300-billion-year wait is not slept"
    );
    c.get("/y").send().unwrap();
}

#[test]
fn a_server_that_ignores_offset_does_not_loop_and_says_the_list_was_cut_short() {
    // Every page is the same full page, and `total` is huge.
    let server = Hostile::scripted(vec![Act::json(
        200,
        r#"{"data":[1,2],"meta":{"total":1000000000}}"#,
    )]);
    let c = HttpClient::builder()
        .base_url(server.url())
        .build()
        .unwrap();
    let items: Vec<Result<u32, Error>> = OffsetPaginator::new(2, |offset, limit| {
        let page: core_http::pagination::Page<u32> = c
            .get("/items")
            .query("offset", offset)
            .query("limit", limit)
            .send_json()?;
        Ok(page)
    })
    .collect();
    assert_eq!(items.len(), 3, "{items:?}");
    assert_eq!(*items[0].as_ref().unwrap(), 1);
    assert_eq!(*items[1].as_ref().unwrap(), 2);
    // The repeat is not taken as the end of the list: the caller is told.
    let cut = items[2].as_ref().unwrap_err();
    assert!(
        matches!(
            cut,
            Error::ListCutShort {
                reason: core_http::CutShort::RepeatedPage,
                ..
            }
        ),
        "{cut:?}"
    );
    assert_eq!(cut.kind(), ErrorKind::Incomplete);
    assert!(cut.to_string().contains("cut short"), "{cut}");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_endless_list_stops_at_the_page_cap_with_an_error() {
    let mut n = 0u32;
    let results: Vec<_> = OffsetPaginator::new(2, |_, _| {
        n += 2;
        Ok(Page::new(vec![n, n + 1], None))
    })
    .max_pages(5)
    .collect();
    assert_eq!(results.len(), 11);
    assert!(matches!(
        results.last(),
        Some(Err(Error::ListCutShort {
            pages: 5,
            reason: core_http::CutShort::PageCap
        }))
    ));
}

#[test]
fn a_query_only_location_keeps_the_path() {
    let server = Hostile::scripted(vec![
        Act::redirect(302, "?page=2"),
        Act::json(200, r#"{"page":2}"#),
    ]);
    let sleeper = RecordingSleeper::new();
    let v: Value = client(server.url(), &sleeper)
        .get("/v1/projects")
        .query("page", 1)
        .send_json()
        .unwrap();
    assert_eq!(v["page"], 2);
    assert_eq!(server.lines()[1], "GET /v1/projects?page=2 HTTP/1.1");
}

#[test]
fn every_failure_says_whether_the_server_acted_in_one_word() {
    use core_http::Delivery;
    let sleeper = RecordingSleeper::new();
    let post = |url: &str| {
        HttpClient::builder()
            .base_url(url)
            .api_key(KEY)
            .sleeper(sleeper.clone())
            .max_retries(0)
            .build()
            .unwrap()
            .post("/v1/orders")
            .json(&json!({"qty": 1}))
            .send()
            .unwrap_err()
    };
    // Never reached the server.
    let refused = post(&refused_url());
    assert_eq!(refused.delivery(), Delivery::NotSent, "{refused:?}");
    assert!(!refused.may_have_been_processed());
    // Reached it, no answer says what happened.
    for status in [500, 502, 503, 408] {
        let server = Hostile::scripted(vec![Act::json(status, r#"{"message":"x"}"#)]);
        let err = post(server.url());
        assert_eq!(
            err.delivery(),
            Delivery::MayHaveBeenProcessed,
            "{status}: {err:?}"
        );
        assert_eq!(count(&server, "POST"), 1);
    }
    let truncated = Hostile::scripted(vec![Act::truncated(100, r#"{"id":"#)]);
    let err = post(truncated.url());
    assert_eq!(err.delivery(), Delivery::MayHaveBeenProcessed, "{err:?}");
    // The server answered with its outcome: a refusal, so nothing was carried out.
    for status in [400, 401, 404, 409, 422] {
        let server = Hostile::scripted(vec![Act::json(status, r#"{"message":"no"}"#)]);
        let err = post(server.url());
        assert_eq!(err.delivery(), Delivery::Processed, "{status}: {err:?}");
        assert!(
            !err.may_have_been_processed(),
            "{status}: a refusal did nothing"
        );
    }
}

#[test]
fn a_retry_after_date_is_read_on_the_clients_clock() {
    let clock = ManualClock::new();
    let sleeper = RecordingSleeper::with_clock(clock.clone());
    let at = std::time::SystemTime::now() + Duration::from_secs(60);
    let server = Hostile::scripted(vec![Act::json_with(
        429,
        &[("retry-after", &httpdate::fmt_http_date(at))],
        r#"{"message":"slow down"}"#,
    )]);
    let c = HttpClient::builder()
        .base_url(server.url())
        .api_key(KEY)
        .clock(clock.clone())
        .sleeper(sleeper)
        .max_retries(0)
        .build()
        .unwrap();
    // The client's clock is 30 s ahead of the system's: the date is 30 s away for it.
    clock.advance(Duration::from_secs(30));
    let err = c.get("/v1/x").send().unwrap_err();
    let Error::Api(api) = &err else {
        panic!("{err:?}")
    };
    let wait = api.retry_after.expect("a wait");
    assert!(
        wait <= Duration::from_secs(31) && wait >= Duration::from_secs(28),
        "{wait:?}"
    );
}

#[test]
fn an_upload_refused_with_an_early_413_is_that_answer_never_a_blind_repeat() {
    let server = Hostile::scripted(vec![Act::AnswerBeforeBody(raw(
        413,
        &[
            ("content-type", "application/json"),
            ("connection", "close"),
        ],
        br#"{"error":{"code":"too_large","message":"the upload is over 1 MiB"}}"#,
    ))]);
    let c = HttpClient::builder()
        .base_url(server.url())
        .api_key(KEY)
        .idempotency_keys(true)
        .build()
        .unwrap();
    let body = vec![b'x'; 8 * 1024 * 1024];
    let started = Instant::now();
    let err = c
        .post("/v1/uploads")
        .bytes("application/octet-stream", body)
        .send()
        .unwrap_err();
    assert_eq!(err.status(), Some(413), "{err}");
    assert!(err.to_string().contains("over 1 MiB"), "{err}");
    assert_eq!(server.count("POST"), 1, "sent once: {:?}", server.lines());
    within(started, Duration::from_secs(5));
}
