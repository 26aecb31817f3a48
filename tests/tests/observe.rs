//! The observer a user installs on the builder: it sees every attempt (method, path
//! without query, attempt number, status or failure, retry delay, duration, request id,
//! bytes) and every stream's connections, losses and reconnects, and never a credential.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use core_http::config::{Attempt, Observer, StreamEvent};
use sandbox::{Fault, Service};

#[derive(Default, Clone)]
struct Recorder {
    attempts: Arc<Mutex<Vec<Attempt>>>,
    streams: Arc<Mutex<Vec<StreamEvent>>>,
}

impl Observer for Recorder {
    fn attempt(&self, attempt: &Attempt) {
        self.attempts.lock().unwrap().push(attempt.clone());
    }
    fn stream(&self, event: &StreamEvent) {
        self.streams.lock().unwrap().push(event.clone());
    }
}

#[test]
fn every_attempt_is_seen_with_its_figures_and_no_secret() {
    let sandbox = e2e::sandbox().unwrap();
    let recorder = Recorder::default();
    let client = worlds_client::Client::builder()
        .base_url(sandbox.worlds().url())
        .api_key(sandbox.api_key())
        .observer(recorder.clone())
        .build()
        .unwrap();
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    // The first attempt meets a 503, the retry succeeds.
    sandbox.inject(Fault::on("GET", &format!("/worlds/api/v1/worlds/{plaza}/users")).status(503));
    client.worlds().users(plaza.as_str()).unwrap();
    // A page of worlds, asked with a query.
    client
        .worlds()
        .list(&worlds_client::worlds::ListWorlds::new().limit(1))
        .unwrap();
    let attempts = recorder.attempts.lock().unwrap().clone();
    assert_eq!(attempts.len(), 3, "{attempts:#?}");
    let (first, retry, list) = (&attempts[0], &attempts[1], &attempts[2]);
    assert_eq!(
        (
            first.method,
            first.path.as_str(),
            first.number,
            first.status,
            first.failure
        ),
        (
            "GET",
            format!("/worlds/api/v1/worlds/{plaza}/users").as_str(),
            1,
            Some(503),
            Some("status")
        )
    );
    assert!(first.retry_in.is_some(), "a retry follows: {first:?}");
    assert_eq!(
        (retry.number, retry.status, retry.failure, retry.retry_in),
        (2, Some(200), None, None)
    );
    assert!(retry.bytes.is_some_and(|b| b > 0));
    assert!(retry.request_id.as_deref().is_some_and(|id| !id.is_empty()));
    // The path carries no query.
    assert_eq!(list.path, "/worlds/api/v1/worlds");
    assert_eq!((list.number, list.status), (1, Some(200)));
    let shown = format!("{attempts:?}");
    assert!(!shown.contains(sandbox.api_key()), "{shown}");
}

#[test]
fn a_failure_that_is_not_retried_is_the_last_attempt() {
    let sandbox = e2e::sandbox().unwrap();
    let recorder = Recorder::default();
    let client = worlds_client::Client::builder()
        .base_url(sandbox.worlds().url())
        .api_key(sandbox.api_key())
        .observer(recorder.clone())
        .build()
        .unwrap();
    assert!(client.worlds().users("world_missing").is_err());
    let attempts = recorder.attempts.lock().unwrap().clone();
    assert_eq!(attempts.len(), 1);
    assert_eq!(
        (
            attempts[0].status,
            attempts[0].failure,
            attempts[0].retry_in
        ),
        (Some(404), Some("status"), None)
    );
}

#[test]
fn a_stream_reports_its_connection_losses_and_reconnects() {
    let sandbox = e2e::sandbox().unwrap();
    let recorder = Recorder::default();
    let client = worlds_client::Client::builder()
        .base_url(sandbox.worlds().url())
        .api_key(sandbox.api_key())
        .observer(recorder.clone())
        .build()
        .unwrap();
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    let mut realtime = client
        .stream_with(|c| {
            let mut policy = worlds_client::stream::ReconnectPolicy::default();
            policy.backoff = core_http::config::Backoff::new(
                Duration::from_millis(2),
                Duration::from_millis(10),
                1.0,
            );
            c.reconnect(policy)
        })
        .unwrap();
    realtime.join(plaza.as_str()).unwrap();
    sandbox.drop_streams(Some(Service::Worlds));
    let started = Instant::now();
    loop {
        match realtime.next_timeout(Duration::from_secs(10)) {
            Some(Ok(worlds_client::stream::Event::Reconnected { .. })) => break,
            Some(_) => {}
            None => panic!("no reconnect"),
        }
        assert!(started.elapsed() < Duration::from_secs(10));
    }
    realtime.close();
    let seen: Vec<String> = recorder
        .streams
        .lock()
        .unwrap()
        .iter()
        .map(|e| match e {
            StreamEvent::Connected { url } => {
                format!("connected {}", url.ends_with("/ws/v1/realtime"))
            }
            StreamEvent::Lost { .. } => "lost".into(),
            StreamEvent::Reconnected { attempts, .. } => format!("reconnected after {attempts}"),
            StreamEvent::Ended => "ended".into(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        seen,
        ["connected true", "lost", "reconnected after 1", "ended"]
    );
}
