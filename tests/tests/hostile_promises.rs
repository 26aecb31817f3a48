//! The newest promises held against servers that behave badly, each over a real socket,
//! asserting what the caller is told and what the server saw: waiters keep their
//! schedule and check every reading against the question; bulk answers are complete
//! only when they account for every item in a form the client reads; an offset list
//! that repeats any page is cut short; a retry's advice never leads to a second action;
//! a field the answer leaves out never contradicts the request; a figure that only
//! describes an answer never fails it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use core_http::ErrorKind;
use core_http::wait::WaitError;
use testkit::FakeTime;
use testkit::hostile::{Act, Hostile};

fn json(body: &str) -> Act {
    Act::json(200, body)
}

/// A client of `C` for `server`, on fake time (its waits take no real time), no
/// retries: one request per reading.
fn on_fake_time<C: core_http::service::ServiceClient>(server: &Hostile, time: &Arc<FakeTime>) -> C {
    core_http::ClientBuilder::<C>::new()
        .base_url(server.url())
        .api_key("sk_test_PROMISES_KEY")
        .max_retries(0)
        .clock(time.clone())
        .sleeper(time.clone())
        .build()
        .unwrap()
}

/// A server answering every request with `act`, noting on `time` when each came.
fn noting(time: &Arc<FakeTime>, act: Act) -> (Hostile, Arc<Mutex<Vec<Duration>>>) {
    let at: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let (log, clock) = (at.clone(), time.clone());
    let server = Hostile::start(move |r| {
        if !r.method.is_empty() {
            log.lock().unwrap().push(clock.elapsed());
        }
        act.clone()
    });
    (server, at)
}

// ---- 1. waiters keep their schedule ----

#[test]
fn a_wait_that_times_out_keeps_its_schedule_and_reads_once_at_the_end() {
    let time = FakeTime::new();
    let (server, at) = noting(
        &time,
        json(r#"{"id":"ord_1","status":"new","symbol":"AAPL"}"#),
    );
    let client: trading_client::Client = on_fake_time(&server, &time);
    let err = client
        .orders()
        .wait_until_filled("ord_1", Duration::from_secs(6))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    let times: Vec<f64> = at
        .lock()
        .unwrap()
        .iter()
        .map(Duration::as_secs_f64)
        .collect();
    // The schedule: 0, 0.5, 1.25, 2.4, 4.1 (each up to a tenth later), one last at 5.5.
    assert!(
        (5..=7).contains(&times.len()),
        "{} readings where the schedule allows 6 or 7: {times:?}",
        times.len()
    );
    let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.iter().all(|g| *g >= 0.5 - 1e-6),
        "no pause under 0.5 s: {gaps:?}"
    );
    assert!(
        times.iter().filter(|t| **t > 5.0).count() <= 1,
        "at most one reading in the last second: {times:?}"
    );
    assert!(times.iter().all(|t| *t <= 6.0), "{times:?}");
    assert!(time.elapsed() <= Duration::from_secs(6));
}

// ---- 2. a reading of another resource is never the answer ----

#[test]
fn a_wait_never_takes_another_resources_answer() {
    let time = FakeTime::new();
    let (orders, _) = noting(&time, json(r#"{"id":"ord_9","status":"filled"}"#));
    let client: trading_client::Client = on_fake_time(&orders, &time);
    let err = client
        .orders()
        .wait_until_filled("ord_1", Duration::from_secs(60))
        .unwrap_err();
    assert!(matches!(err, WaitError::Call(_)), "{err}");
    let text = err.to_string();
    assert!(text.contains("ord_1") && text.contains("ord_9"), "{text}");
    assert_eq!(orders.count("GET"), 1, "one reading was enough to see it");
    // The plain read says so too.
    let err = client.orders().get("ord_1").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode, "{err}");

    let (documents, _) = noting(
        &time,
        json(r#"{"data":{"id":"doc_2","status":"completed","signers":[]}}"#),
    );
    let client: esign_client::Client = on_fake_time(&documents, &time);
    let err = client
        .documents()
        .wait_until_completed("doc_1", Duration::from_secs(60))
        .unwrap_err();
    assert!(matches!(err, WaitError::Call(_)), "{err}");
    assert!(err.to_string().contains("doc_2"), "{err}");
}

// ---- 3. the social waiter keeps the list's rules ----

fn posts(from: usize, total: usize) -> String {
    let items: Vec<String> = (from..from + 100)
        .map(|i| format!(r#"{{"id":"post_{i}","platform":"x","status":"scheduled","text":"t"}}"#))
        .collect();
    format!(
        r#"{{"data":[{}],"meta":{{"total":{total}}}}}"#,
        items.join(",")
    )
}

#[test]
fn the_social_waiter_reads_a_looping_list_once_and_says_it_was_cut_short() {
    // A list that ignores `offset`: the same page every time.
    let time = FakeTime::new();
    let (same, _) = noting(&time, json(&posts(0, 100_000)));
    let client: social_client::Client = on_fake_time(&same, &time);
    let err = client
        .posts()
        .wait_until_published("post_missing", Duration::from_secs(4))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Incomplete, "{err}");
    assert!(matches!(
        err.cause(),
        Some(core_http::Error::ListCutShort {
            reason: core_http::CutShort::RepeatedPage,
            ..
        })
    ));
    assert_eq!(same.count("GET"), 2, "the page, and its repeat");

    // Two pages served in turn: the third request repeats the first page.
    let (a, b) = (posts(0, 100_000), posts(100, 100_000));
    let turns = Hostile::start(move |r| json(if r.index % 2 == 0 { &a } else { &b }));
    let client: social_client::Client = on_fake_time(&turns, &time);
    let err = client
        .posts()
        .wait_until_published("post_missing", Duration::from_secs(4))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Incomplete, "{err}");
    assert_eq!(turns.count("GET"), 3);
}

#[test]
fn two_offset_pages_served_in_turn_end_the_list_as_a_repeated_page() {
    let (a, b) = (posts(0, 100_000), posts(100, 100_000));
    let turns = Hostile::start(move |r| json(if r.index % 2 == 0 { &a } else { &b }));
    let client = social_client::Client::builder()
        .base_url(turns.url())
        .api_key("sk_test")
        .build()
        .unwrap();
    let items: Vec<_> = client.posts().iter().collect();
    assert_eq!(items.len(), 201, "two pages, then the cut");
    assert!(matches!(
        items.last(),
        Some(Err(core_http::Error::ListCutShort {
            pages: 3,
            reason: core_http::CutShort::RepeatedPage
        }))
    ));
    assert_eq!(turns.count("GET"), 3, "not 10,000");
}

// ---- 4. the caller is told what ended the wait ----

#[test]
fn a_retry_after_past_the_deadline_is_named_and_a_wait_through_5xx_keeps_the_last_failure() {
    let time = FakeTime::new();
    let (limited, _) = noting(
        &time,
        Act::json_with(
            429,
            &[("retry-after", "3600")],
            r#"{"error":{"code":"rate_limited","message":"slow down"}}"#,
        ),
    );
    let client: esign_client::Client = on_fake_time(&limited, &time);
    let err = client
        .documents()
        .wait_until_completed("doc_1", Duration::from_secs(60))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    let text = err.to_string();
    assert!(text.contains("429") && text.contains("3600 s"), "{text}");
    assert_eq!(limited.count("GET"), 1);
    assert!(time.elapsed() < Duration::from_secs(1), "ended at once");

    let (failing, _) = noting(
        &time,
        Act::json(
            502,
            r#"{"error":{"code":"bad_gateway","message":"upstream down"}}"#,
        ),
    );
    let client: esign_client::Client = on_fake_time(&failing, &time);
    let err = client
        .documents()
        .wait_until_completed("doc_1", Duration::from_secs(5))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert_eq!(err.cause().and_then(core_http::Error::status), Some(502));
    let text = err.to_string();
    assert!(
        text.contains("502") && text.contains("upstream down"),
        "{text}"
    );
    // As the crate's error, the failure is its source.
    let as_error: esign_client::Error = err.into();
    assert!(std::error::Error::source(&as_error).is_some(), "{as_error}");
}

#[test]
fn the_stream_waiter_keeps_its_first_reading_and_gives_back_an_undecodable_event() {
    use testkit::hostile_ws::WsServer;
    use trading_client::stream::Event;
    let rest = Hostile::start(|r| {
        if r.path.starts_with("/v1/orders/ord_1") {
            json(r#"{"id":"ord_1","status":"new","symbol":"AAPL"}"#)
        } else {
            json(r#"{"orders":[],"next_page_token":null}"#)
        }
    });
    let ws = WsServer::start(|_, peer| {
        if !peer.accept() || peer.read_text().is_none() {
            return;
        }
        peer.text(r#"{"type":"subscribed"}"#);
        std::thread::sleep(Duration::from_millis(100));
        // A fill of another order that cannot be read.
        peer.text(r#"{"type":"fill","order_id":"ord_2","execution_id":"x1","qty":"many"}"#);
        while peer.read_text().is_some() {}
    });
    let client = trading_client::Client::builder()
        .base_url(rest.url())
        .api_key("pk_test")
        .max_retries(0)
        .build()
        .unwrap()
        .with_stream_url(ws.url());
    let mut stream = client.stream().unwrap();
    stream.subscribe_orders().unwrap();
    let err = stream
        .wait_until_filled("ord_1", Duration::from_millis(1500))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    match &err {
        WaitError::TimedOut { state, last, .. } => {
            assert_eq!(
                state.as_deref(),
                Some("new"),
                "the first reading is the last"
            );
            assert_eq!(last.as_ref().map(|o| o.id.as_str()), Some("ord_1"));
        }
        other => panic!("{other}"),
    }
    // The unreadable fill of the other order is still the caller's, in order.
    match stream.next_timeout(Duration::from_secs(1)) {
        Some(Err(e)) => assert!(e.to_string().contains("ord_2"), "{e}"),
        other => panic!("the undecodable event is handed back: {other:?}"),
    }
    assert!(!matches!(
        stream.next_timeout(Duration::from_millis(50)),
        Some(Ok(Event::Fill(_)))
    ));
}

// ---- 5. bulk answers ----

fn bulk(status: u16, body: &str) -> core_http::BulkOutcome<trading_client::orders::Order> {
    let server = Hostile::start({
        let body = body.to_owned();
        move |_| Act::json(status, &body)
    });
    let client = trading_client::Client::builder()
        .base_url(server.url())
        .api_key("pk_test")
        .build()
        .unwrap();
    let outcome = client.orders().cancel_all().unwrap();
    assert_eq!(server.count("DELETE"), 1);
    outcome
}

#[test]
fn a_bulk_answer_is_complete_only_when_it_accounts_for_every_item() {
    // A status as text, or null, is not "done".
    let outcome = bulk(
        207,
        r#"[{"id":"ord_1","status":200,"body":{"id":"ord_1","status":"canceled"}},
            {"id":"ord_2","status":"409","body":{"code":"not_cancelable","message":"filled"}},
            {"id":"ord_3","status":null,"body":{"id":"ord_3"}}]"#,
    );
    assert_eq!(outcome.done.len(), 1);
    assert!(!outcome.is_complete());
    let ids: Vec<_> = outcome.failed.iter().map(|f| f.id.as_deref()).collect();
    assert_eq!(ids, [Some("ord_2"), Some("ord_3")]);
    assert!(outcome.failed.iter().all(|f| f.status.is_none()));
    let err = outcome.into_complete().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Incomplete);

    // An id listed as done twice is one item.
    let outcome = bulk(
        207,
        r#"{"orders":[{"id":"ord_1","status":200,"body":{"id":"ord_1"}},
                      {"id":"ord_1","status":200,"body":{"id":"ord_1"}}]}"#,
    );
    assert_eq!(outcome.done.len(), 1);
    assert!(outcome.is_complete());

    // A shape the client does not know: the errors beside the list are not dropped.
    let outcome = bulk(
        207,
        r#"{"orders":[{"id":"ord_1","status":"canceled"}],
            "errors":[{"id":"ord_2","message":"not cancelable"}]}"#,
    );
    assert!(!outcome.is_complete(), "{outcome:?}");
    assert!(outcome.failed.iter().any(|f| f.message.contains("errors")));

    // A plain 200 list of orders is done, each order its own status.
    let outcome = bulk(
        200,
        r#"{"orders":[{"id":"ord_1","status":"canceled"},{"id":"ord_2","status":"canceled"}]}"#,
    );
    assert_eq!(outcome.done.len(), 2);
    assert!(outcome.is_complete());
}

// ---- 10. a retry's advice ----

#[test]
fn not_processed_says_to_place_again_with_the_same_id_and_following_it_places_once() {
    use trading_client::Decimal;
    use trading_client::orders::{Amount, OrderRequest, Side};
    // The POST times out; the lookup finds nothing (the first request is still on its
    // way); the repeat with the same id is answered with the order.
    let placed: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = placed.clone();
    let server = Hostile::start(move |r| {
        if r.method == "POST" {
            if r.index == 0 {
                return Act::stall(Duration::from_secs(3));
            }
            return json(r#"{"id":"ord_1","status":"new"}"#);
        }
        if r.method == "GET" {
            log.lock().unwrap().push(r.path.clone());
            return json(r#"{"orders":[]}"#);
        }
        Act::CloseAfterRead
    });
    let client = trading_client::Client::builder()
        .base_url(server.url())
        .api_key("pk_test")
        .max_retries(0)
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    let order = OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::from(1)));
    let err = client.orders().place(&order).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotProcessed, "{err}");
    let (name, id) = err.repeat_with().unwrap();
    assert_eq!(name, "client_order_id");
    let text = err.to_string();
    assert!(
        text.contains("only with the same client_order_id") && text.contains(id),
        "{text}"
    );
    assert!(!text.contains("safe to send again"), "{text}");
    assert_eq!(placed.lock().unwrap().len(), 1, "one lookup");
    // Following the advice: the same id goes out again.
    let again = client
        .orders()
        .place(&order.clone().client_order_id(id))
        .unwrap();
    assert_eq!(again.id.as_str(), "ord_1");
    let bodies: Vec<String> = server
        .seen()
        .into_iter()
        .filter(|s| s.method == "POST")
        .map(|s| s.body)
        .collect();
    assert_eq!(bodies.len(), 2);
    assert!(
        bodies
            .iter()
            .all(|b| b.contains(&format!("\"client_order_id\":\"{id}\""))),
        "both POSTs carry the one id: {bodies:?}"
    );
}

#[test]
fn an_unsettled_send_names_its_idempotency_key() {
    use esign_client::documents::{DocumentSource, NewSigner, SendDocument};
    let server = Hostile::start(|_| Act::stall(Duration::from_secs(3)));
    let client = esign_client::Client::builder()
        .base_url(server.url())
        .api_key("sk_test")
        .max_retries(1)
        .timeout(Duration::from_millis(600))
        .build()
        .unwrap();
    let document = SendDocument::new(DocumentSource::bytes(
        "a.pdf",
        b"%PDF-1.4\n%%EOF\n".to_vec(),
    ))
    .signer(NewSigner::new("Ada", "ada@example.com"))
    .idempotency_key("send-key-1");
    let err = client.documents().send(&document).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert_eq!(err.repeat_with(), Some(("Idempotency-Key", "send-key-1")));
    assert!(err.to_string().contains("send-key-1"), "{err}");
    assert!(
        server
            .seen()
            .iter()
            .filter(|s| s.method == "POST")
            .all(|s| s
                .head
                .to_ascii_lowercase()
                .contains("idempotency-key: send-key-1")),
        "every attempt carried the key"
    );
}

// ---- 11. a field the answer leaves out ----

#[test]
fn an_answer_without_extended_hours_is_the_order_placed() {
    use trading_client::Decimal;
    use trading_client::orders::{OrderRequest, Side, TimeInForce};
    // The documents show only an order's id: an answer with no more is not a conflict.
    let server = Hostile::start(|_| json(r#"{"id":"ord_1"}"#));
    let client = trading_client::Client::builder()
        .base_url(server.url())
        .api_key("pk_test")
        .build()
        .unwrap();
    let order = OrderRequest::limit("AAPL", Side::Buy, Decimal::from(1), Decimal::from(100))
        .time_in_force(TimeInForce::Day)
        .extended_hours(true);
    let placed = client.orders().place(&order).unwrap();
    assert_eq!(placed.id.as_str(), "ord_1");
    assert_eq!(placed.extended_hours, None);
    assert_eq!(server.count("POST"), 1);
    // An answer that says otherwise is still a conflict.
    let server = Hostile::start(|_| json(r#"{"id":"ord_1","extended_hours":false}"#));
    let client = trading_client::Client::builder()
        .base_url(server.url())
        .api_key("pk_test")
        .build()
        .unwrap();
    let err = client.orders().place(&order).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
}

// ---- 12. a figure that only describes the answer ----

#[test]
fn an_out_of_range_processing_time_reads_as_absent_and_the_analysis_is_kept() {
    use vision_client::analyses::DetectRequest;
    let server = Hostile::start(|_| {
        json(
            r#"{"objects":[{"label":"cat","confidence":0.9,"bbox":[1,2,3,4]}],"processing_time_ms":-5}"#,
        )
    });
    let client = vision_client::Client::builder()
        .base_url(server.url())
        .api_key("sk_test")
        .build()
        .unwrap();
    let found = client
        .analyses()
        .detect(&DetectRequest::new("https://img.example/cat.jpg"))
        .unwrap();
    assert_eq!(found.objects.len(), 1);
    assert_eq!(found.processing_time_ms, None);
    // A count that is the answer stays exact or fails.
    let server = Hostile::start(|_| {
        json(
            r#"{"status":"operational","latency_ms":-1,"usage":{"calls_used":-3,"calls_limit":10,"period":"2026-12"}}"#,
        )
    });
    let client = vision_client::Client::builder()
        .base_url(server.url())
        .api_key("sk_test")
        .build()
        .unwrap();
    let err = client.status().get().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
}
