//! The `tracing` feature: a span per call and an event per attempt, with the fields an
//! observer gets, checked by what a subscriber recorded.
#![cfg(feature = "tracing")]
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use core_http::HttpClient;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

type Fields = BTreeMap<String, String>;

/// Records every span (name and fields) and every event (its fields and its span).
#[derive(Default, Clone)]
struct Capture {
    spans: Arc<Mutex<Vec<(String, Fields)>>>,
    events: Arc<Mutex<Vec<Fields>>>,
    next: Arc<AtomicU64>,
}

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut fields = Fields::new();
        attrs.record(&mut Collect(&mut fields));
        self.spans
            .lock()
            .unwrap()
            .push((attrs.metadata().name().to_owned(), fields));
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::new();
        event.record(&mut Collect(&mut fields));
        self.events.lock().unwrap().push(fields);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn a_call_is_a_span_and_each_attempt_an_event_with_no_secret() {
    let mut server = mockito::Server::new();
    let _fail = server
        .mock("GET", "/v1/things")
        .match_query(mockito::Matcher::Any)
        .with_status(503)
        .expect(1)
        .create();
    let client = HttpClient::builder()
        .base_url(server.url())
        .api_key("sk_tracing_secret")
        .build()
        .unwrap();
    let capture = Capture::default();
    let recorded = capture.clone();
    tracing::subscriber::with_default(capture, || {
        let _ok_after = server
            .mock("GET", "/v1/things")
            .match_query(mockito::Matcher::Any)
            .with_status(200)
            .with_header("x-request-id", "req_42")
            .with_body("{}")
            .create();
        client
            .get("/v1/things")
            .query("token", "q_secret")
            .send()
            .unwrap();
    });
    let spans = recorded.spans.lock().unwrap().clone();
    let calls: Vec<&(String, Fields)> = spans.iter().filter(|(n, _)| n == "call").collect();
    assert_eq!(calls.len(), 1, "{spans:?}");
    assert_eq!(calls[0].1["method"], "GET");
    assert_eq!(calls[0].1["path"], "/v1/things");
    let events = recorded.events.lock().unwrap().clone();
    let attempts: Vec<&Fields> = events
        .iter()
        .filter(|e| e.get("message").map(String::as_str) == Some("attempt"))
        .collect();
    assert_eq!(attempts.len(), 2, "{events:?}");
    assert_eq!(attempts[0]["attempt"], "1");
    assert_eq!(attempts[0]["status"], "503");
    assert_eq!(attempts[0]["failure"], "status");
    assert!(attempts[0].contains_key("retry_in_ms"));
    assert_eq!(attempts[1]["attempt"], "2");
    assert_eq!(attempts[1]["status"], "200");
    assert_eq!(attempts[1]["request_id"], "req_42");
    assert_eq!(attempts[1]["bytes"], "2");
    assert!(!attempts[1].contains_key("retry_in_ms"));
    let everything = format!("{spans:?} {events:?}");
    assert!(!everything.contains("sk_tracing_secret"), "{everything}");
    assert!(!everything.contains("q_secret"), "{everything}");
}
