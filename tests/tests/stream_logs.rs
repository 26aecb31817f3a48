//! No log target of any crate, at any level, carries the stream's key: with a logger that
//! records everything at TRACE, a stream connects, subscribes, receives, reconnects, and
//! is refused with a 401 whose body echoes the key. (Its own test binary: the logger is
//! process-global.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use core_streams::{ReconnectPolicy, WsError};
use testkit::hostile::{Act, Hostile};
use testkit::hostile_ws::WsServer;

const KEY: &str = "pk_SECRET_STREAM_KEY";

#[test]
fn no_log_of_any_target_carries_the_key() {
    testkit::logs::install(testkit::logs::all_targets);

    let ws = WsServer::start(|n, peer| {
        let Some(head) = peer.read_head() else { return };
        if n == 2 {
            // Refused, the body echoing what the client sent.
            let body = format!(r#"{{"message":"bad key: {}"}}"#, head.replace('"', "'"));
            let answer = format!(
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\n\r\n{body}",
                body.len()
            );
            peer.write(answer.as_bytes());
            return;
        }
        let accept = peer.accept_bytes();
        peer.write(&accept);
        if peer.read_text().is_none() {
            return;
        }
        peer.text(r#"{"type":"subscribed"}"#);
        peer.text(r#"{"type":"quote","symbol":"AAPL","price":"187.25"}"#);
        if n == 0 {
            // Cut: the client reconnects.
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
        // Second connection closes too; the third attempt is refused.
    });
    let rest = Hostile::start(|_| {
        Act::answer(
            200,
            &[("content-type", "application/json")],
            r#"{"orders":[]}"#,
        )
    });
    let client = trading_client::Client::new(rest.url(), KEY)
        .unwrap()
        .with_stream_url(ws.url());
    let mut policy = ReconnectPolicy::default();
    policy.backoff =
        core_http::config::Backoff::new(Duration::from_millis(2), Duration::from_millis(10), 1.0);
    let mut stream = client.stream_with(|c| c.reconnect(policy)).unwrap();
    stream.subscribe_quotes(&["AAPL"]).unwrap();
    let mut refused = None;
    while let Some(item) = stream.next_timeout(Duration::from_secs(10)) {
        if let Err(e) = item {
            refused = Some(e);
            break;
        }
    }
    match refused.as_ref().and_then(|e| e.downcast_ref::<WsError>()) {
        Some(WsError::Unauthorized { status: 401, .. }) => {}
        other => panic!("expected the 401, got {other:?}"),
    }
    stream.close();

    let heads = ws.heads();
    assert!(
        heads
            .iter()
            .all(|h| h.contains(&format!("authorization: Bearer {KEY}"))),
        "the key went to the server: {heads:?}"
    );
    let logs = testkit::logs::lines();
    assert!(
        logs.iter().any(|l| l.contains("stream: connected")),
        "the stream logged its connections: {logs:#?}"
    );
    let shown = [
        logs.join("\n"),
        format!("{refused:?}"),
        format!("{stream:?}"),
    ]
    .join("\n");
    assert!(!shown.contains(KEY), "the key leaked:\n{shown}");
}
