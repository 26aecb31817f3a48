//! A server that echoes the client's own credentials back (in a request id, a `Location`,
//! an error message, a stream's close reason or a frame) never gets them shown: not in an
//! error's `Display` or `Debug`, not in the answer's headers, not in a log line of ours
//! at any level, not to the observer. The client knows its secrets and blanks them out
//! of every server-supplied string.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use core_http::config::{Attempt, Observer, StreamEvent};
use testkit::hostile::{Act, Hostile, Request};
use testkit::hostile_ws::WsServer;

const KEY: &str = "sk_live_ECHOED_SECRET_KEY_123";
const TOKEN: &str = "tok_ECHOED_OAUTH_TOKEN_456";

#[derive(Default, Clone)]
struct Recorder {
    seen: Arc<Mutex<Vec<String>>>,
}

impl Observer for Recorder {
    fn attempt(&self, attempt: &Attempt) {
        self.seen.lock().unwrap().push(format!("{attempt:?}"));
    }
    fn stream(&self, event: &StreamEvent) {
        self.seen.lock().unwrap().push(format!("{event:?}"));
    }
}

fn ours(target: &str) -> bool {
    target.starts_with("core_http") || target.ends_with("_client")
}

fn assert_hidden(what: &str, text: &str) {
    for secret in [KEY, TOKEN] {
        assert!(!text.contains(secret), "{what} shows a secret: {text}");
    }
}

fn check_logs_and_observer(recorder: &Recorder) {
    for line in testkit::logs::lines() {
        assert_hidden("a log line", &line);
    }
    for seen in recorder.seen.lock().unwrap().iter() {
        assert_hidden("the observer", seen);
    }
}

#[test]
fn a_key_echoed_in_headers_and_bodies_is_never_shown() {
    testkit::logs::install(ours);
    let server = Hostile::start(|r: &Request| {
        let echoed = format!("req_{KEY}");
        if r.index == 0 {
            // A 500 whose request id and message hold the key: retried.
            Act::answer(
                500,
                &[
                    ("content-type", "application/json"),
                    ("x-request-id", &echoed),
                ],
                &format!(r#"{{"error":{{"code":"{KEY}","message":"bad key {KEY}"}}}}"#),
            )
        } else if r.index == 1 {
            Act::answer(
                404,
                &[
                    ("content-type", "application/json"),
                    ("x-request-id", &echoed),
                ],
                &format!(r#"{{"message":"no project for {KEY}"}}"#),
            )
        } else {
            // A success whose headers echo the key, and a body that does not decode.
            Act::answer(
                200,
                &[
                    ("content-type", "application/json"),
                    ("x-request-id", &echoed),
                    ("x-echo", KEY),
                ],
                &format!(r#"{{"data":"{KEY}"}}"#),
            )
        }
    });
    let recorder = Recorder::default();
    let client = projects_client::Client::builder()
        .base_url(server.url())
        .api_key(KEY)
        .observer(recorder.clone())
        .build()
        .unwrap();
    let list = projects_client::projects::ListProjects::new();
    let err = client.projects().list(&list).unwrap_err();
    assert_eq!(err.status(), Some(404));
    assert_hidden("Display", &err.to_string());
    assert_hidden("Debug", &format!("{err:?}"));
    assert_hidden("the request id", err.request_id().unwrap_or_default());
    assert!(
        err.request_id().unwrap_or_default().contains("***"),
        "{err:?}"
    );
    let err = client.projects().list(&list).unwrap_err();
    assert_eq!(err.kind(), core_http::ErrorKind::Decode, "{err:?}");
    assert_hidden("a decode error", &format!("{err:?} {err}"));
    // The answer's headers, as a caller reads them.
    let with = client
        .with_response(|c| c.raw().get::<serde_json::Value>("/v1/anything", &[]))
        .unwrap();
    assert_hidden("the answer's headers", &format!("{:?}", with.headers));
    assert_eq!(with.headers.get("x-echo"), Some("***"));
    check_logs_and_observer(&recorder);
}

#[test]
fn an_oauth_token_echoed_back_is_never_shown() {
    testkit::logs::install(ours);
    let server = Hostile::start(|r: &Request| {
        if r.path.starts_with("/oauth/token") {
            Act::json(
                200,
                &format!(r#"{{"access_token":"{TOKEN}","token_type":"Bearer","expires_in":3600}}"#),
            )
        } else {
            Act::answer(
                409,
                &[
                    ("content-type", "application/json"),
                    ("x-request-id", &format!("req_{TOKEN}")),
                ],
                &format!(r#"{{"message":"token {TOKEN} may not"}}"#),
            )
        }
    });
    let recorder = Recorder::default();
    let client = esign_client::Client::builder()
        .base_url(server.url())
        .auth(core_http::config::Auth::oauth2(
            core_http::config::OAuth2Config::new(
                format!("{}/oauth/token", server.url()),
                "client_1",
                KEY,
            ),
        ))
        .observer(recorder.clone())
        .build()
        .unwrap();
    let err = client.documents().get("doc_1").unwrap_err();
    assert_eq!(err.status(), Some(409));
    assert_hidden("Display", &err.to_string());
    assert_hidden("Debug", &format!("{err:?}"));
    check_logs_and_observer(&recorder);
}

#[test]
fn a_key_echoed_in_a_close_reason_or_a_frame_is_never_shown() {
    testkit::logs::install(ours);
    let ws = WsServer::start(|n, peer| {
        if !peer.accept() {
            return;
        }
        if n == 0 {
            // A refusal that quotes the key, then a close that does.
            peer.text(&format!(
                r#"{{"type":"error","message":"key {KEY} refused"}}"#
            ));
            let reason = format!("bye {KEY}");
            let mut payload = 1001u16.to_be_bytes().to_vec();
            payload.extend_from_slice(&reason.as_bytes()[..reason.len().min(120)]);
            peer.write(&testkit::hostile_ws::frame(0x8, true, &payload));
            std::thread::sleep(Duration::from_millis(200));
        } else {
            let reason = format!("no {KEY}");
            let mut payload = 1008u16.to_be_bytes().to_vec();
            payload.extend_from_slice(reason.as_bytes());
            peer.write(&testkit::hostile_ws::frame(0x8, true, &payload));
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let recorder = Recorder::default();
    let client = trading_client::Client::builder()
        .base_url("http://127.0.0.1:9")
        .api_key(KEY)
        .observer(recorder.clone())
        .build()
        .unwrap()
        .with_stream_url(ws.url());
    let mut stream = client
        .stream_with(|c| {
            let mut policy = core_streams::ReconnectPolicy::default();
            policy.backoff = core_http::config::Backoff::new(
                Duration::from_millis(2),
                Duration::from_millis(10),
                1.0,
            );
            c.reconnect(policy)
        })
        .unwrap();
    let mut errors = Vec::new();
    for _ in 0..10 {
        match stream.next_timeout(Duration::from_secs(3)) {
            Some(Err(e)) => {
                let fatal = e.kind() == core_http::ErrorKind::Closed;
                errors.push(format!("{e} {e:?}"));
                if fatal {
                    break;
                }
            }
            Some(Ok(_)) => {}
            None => break,
        }
    }
    assert!(
        errors.iter().any(|e| e.contains("***")),
        "the echoed key shows blanked: {errors:?}"
    );
    for e in &errors {
        assert_hidden("a stream error", e);
    }
    check_logs_and_observer(&recorder);
}
