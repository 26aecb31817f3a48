//! Secrets never reach log output, even at trace level, across retries and OAuth.
//! (Its own test binary: the logger is process-global.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use core_http::{
    HttpClient,
    config::{Auth, OAuth2Config},
};
use log::{Level, LevelFilter, Log, Metadata, Record};

struct Capture(Mutex<Vec<String>>);

impl Log for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &Record<'_>) {
        self.0.lock().unwrap().push(format!(
            "{} {} {}",
            record.level(),
            record.target(),
            record.args()
        ));
    }
    fn flush(&self) {}
}

static LOGS: Capture = Capture(Mutex::new(Vec::new()));

#[test]
fn secrets_are_redacted_in_logs_debug_and_errors() {
    log::set_logger(&LOGS).unwrap();
    log::set_max_level(LevelFilter::Trace);

    let mut server = mockito::Server::new();
    let _token = server
        .mock("POST", "/oauth/token")
        .with_body(r#"{"access_token":"tok_SECRET_ACCESS","expires_in":3600}"#)
        .create();
    let _fail = server
        .mock("GET", "/x")
        .with_status(503)
        .with_body(r#"{"message":"busy"}"#)
        .expect(1)
        .create();
    let _ok = server.mock("GET", "/x").with_body("{}").create();
    let _unauth = server
        .mock("GET", "/denied")
        .with_status(401)
        .with_body(r#"{"message":"bad key"}"#)
        .create();

    let bearer = HttpClient::builder()
        .base_url(server.url())
        .api_key("sk_live_SECRET_KEY")
        .header("X-Api-Key", "SECRET_HEADER_VALUE")
        .max_retries(1)
        .build()
        .unwrap();
    bearer.get("/x").send().unwrap();
    let err = bearer.get("/denied").send().unwrap_err();

    let oauth = HttpClient::builder()
        .base_url(server.url())
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{}/oauth/token", server.url()),
            "client",
            "cs_SECRET_CLIENT",
        )))
        .build()
        .unwrap();
    oauth.get("/x").send().unwrap();

    let all = LOGS.0.lock().unwrap().clone();
    // Two sources are set aside: the test's own mock server (it logs what it received),
    // and ureq-proto's wire dump at TRACE, which prints raw request bytes 16 at a time and
    // cannot be turned off from a library. The crate docs tell users to keep the
    // `ureq_proto` target below TRACE; this test pins that it is the only exception.
    let logs: Vec<String> = all
        .iter()
        .filter(|l| !l.contains(" mockito::"))
        .filter(|l| !l.starts_with("TRACE ureq_proto::util "))
        .cloned()
        .collect();
    assert!(
        all.iter().any(|l| l.starts_with("TRACE ureq_proto::util ")),
        "ureq-proto no longer dumps wire bytes: drop the exception above and the doc note"
    );
    assert!(
        logs.iter()
            .any(|l| l.starts_with("DEBUG") && l.contains("/x")),
        "expected request lines in the log: {logs:#?}"
    );
    assert!(logs.iter().any(|l| l.contains("retry 1 of 1")), "{logs:#?}");
    assert!(
        logs.iter().any(|l| l.contains("authorization: ***")),
        "{logs:#?}"
    );
    let shown = [
        logs.join("\n"),
        format!("{bearer:?}"),
        format!("{oauth:?}"),
        format!("{err}"),
        format!("{err:?}"),
    ]
    .join("\n");
    for secret in [
        "sk_live_SECRET_KEY",
        "SECRET_HEADER_VALUE",
        "tok_SECRET_ACCESS",
        "cs_SECRET_CLIENT",
    ] {
        assert!(!shown.contains(secret), "{secret} leaked:\n{shown}");
    }
    assert!(
        logs.iter()
            .all(|l| !l.starts_with(&Level::Error.to_string()))
    );
}
