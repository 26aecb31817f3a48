//! The client against recorded and hand-written server answers (tests/fixtures/*.json),
//! served by mockito over a real socket, and a recorded stream transcript replayed by a
//! local WebSocket server. Each case snapshots what the client sent and what it made of
//! the answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Debug;
use std::io::Read as _;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use trading_client::{
    Client, Decimal,
    history::ListBars,
    markets::Timeframe,
    news::ListNews,
    orders::{Amount, Entry, ListOrders, OrderRequest, Side, StopLoss, TimeInForce},
    stream::Event,
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn check<T: Debug>(name: &str, call: impl FnOnce(&Client) -> trading_client::Result<T>) {
    let (sent, decoded) = testkit::exchange(DIR, name, testkit::client::<Client>, call);
    insta::assert_json_snapshot!(format!("{name}__sent"), sent);
    insta::assert_debug_snapshot!(format!("{name}__decoded"), decoded);
}

fn d(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

fn at(text: &str) -> trading_client::time::OffsetDateTime {
    trading_client::time::OffsetDateTime::parse(
        text,
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap()
}

fn recorded_id(name: &str) -> String {
    testkit::load(DIR, name).path_id()
}

// ---- recorded from the sandbox ----

#[test]
fn markets_quotes() {
    check("markets_quotes", |c| c.markets().quotes(&["AAPL", "MSFT"]));
}

#[test]
fn markets_bars() {
    check("markets_bars", |c| {
        c.markets().bars(&["AAPL"], Timeframe::FiveMinutes, 3)
    });
}

#[test]
fn markets_orderbook() {
    check("markets_orderbook", |c| c.markets().orderbook(&["AAPL"], 2));
}

#[test]
fn markets_trades() {
    check("markets_trades", |c| c.markets().trades(&["AAPL"], 3));
}

#[test]
fn orders_place_market() {
    check("orders_place_market", |c| {
        c.orders().place(
            &OrderRequest::market("AAPL", Side::Buy, Amount::Qty(d("10")))
                .client_order_id("fixture-market-1"),
        )
    });
}

#[test]
fn orders_place_limit() {
    check("orders_place_limit", |c| {
        c.orders().place(
            &OrderRequest::limit("AAPL", Side::Buy, d("0.5"), d("50.25"))
                .time_in_force(TimeInForce::Gtc)
                .client_order_id("fixture-limit-1"),
        )
    });
}

#[test]
fn orders_place_bracket() {
    check("orders_place_bracket", |c| {
        c.orders().place(
            &OrderRequest::bracket(
                "MSFT",
                Side::Buy,
                d("2"),
                Entry::Market,
                d("500"),
                StopLoss::with_limit(d("50"), d("49.5")),
            )
            .client_order_id("fixture-bracket-1"),
        )
    });
}

#[test]
fn orders_get() {
    let id = recorded_id("orders_get");
    check("orders_get", |c| c.orders().get(id.as_str()));
}

#[test]
fn orders_by_client_order_id() {
    check("orders_by_client_order_id", |c| {
        c.orders().get_by_client_order_id("fixture-limit-1")
    });
}

#[test]
fn orders_list() {
    check("orders_list", |c| {
        c.orders().list(&ListOrders::new().all().limit(10))
    });
}

#[test]
fn orders_cancel() {
    let id = recorded_id("orders_cancel");
    check("orders_cancel", |c| c.orders().cancel(id.as_str()));
}

#[test]
fn account() {
    check("account", |c| c.account().get());
}

#[test]
fn history_page() {
    check("history_page", |c| {
        c.history().list(
            &ListBars::new("AAPL", Timeframe::Minute)
                .start(at("2026-01-02T14:30:00Z"))
                .end(at("2026-01-02T21:00:00Z"))
                .limit(3),
        )
    });
}

#[test]
fn news_page() {
    check("news_page", |c| {
        c.news().list(&ListNews::new(&["AAPL"]).limit(3))
    });
}

#[test]
fn error_insufficient_buying_power() {
    check("error_insufficient_buying_power", |c| {
        c.orders().place(
            &OrderRequest::market("AAPL", Side::Buy, Amount::Qty(d("1000000")))
                .client_order_id("fixture-too-big"),
        )
    });
}

#[test]
fn error_sub_penny_price() {
    check("error_sub_penny_price", |c| {
        c.orders().place(
            &OrderRequest::limit("AAPL", Side::Buy, d("1"), d("50.255"))
                .client_order_id("fixture-sub-penny"),
        )
    });
}

#[test]
fn error_order_not_found() {
    check("error_order_not_found", |c| c.orders().get("ord_missing"));
}

#[test]
fn error_plan_required() {
    check("error_plan_required", |c| {
        c.history().list(&ListBars::new("AAPL", Timeframe::Day))
    });
}

// The client refuses a symbol with a space before sending; the raw escape hatch still
// reaches the server's own check.
#[test]
fn error_invalid_symbols() {
    check("error_invalid_symbols", |c| {
        c.raw().get::<Value>(
            "/v1/markets",
            &[("symbols", "AAPL,bad symbol"), ("kind", "quotes")],
        )
    });
}

// ---- hand-written: odd but legal answers ----

#[test]
fn quotes_odd_numbers() {
    check("quotes_odd_numbers", |c| {
        c.markets().quotes(&["AAPL", "MSFT", "IBM"])
    });
}

#[test]
fn order_unknown_values() {
    check("order_unknown_values", |c| c.orders().get("ord_future"));
}

#[test]
fn order_only_id() {
    check("order_only_id", |c| c.orders().get("ord_bare"));
}

#[test]
fn account_odd() {
    check("account_odd", |c| c.account().get());
}

#[test]
fn history_last_page() {
    check("history_last_page", |c| {
        c.history()
            .list(&ListBars::new("aapl", Timeframe::Day).page_token("tok_9"))
    });
}

#[test]
fn error_html_500() {
    check("error_html_500", |c| c.account().get());
}

#[test]
fn error_rate_limited() {
    check("error_rate_limited", |c| c.markets().quotes(&["AAPL"]));
}

// ---- the exact bytes of an order ----

#[test]
fn an_order_body_carries_the_exact_decimal_text() {
    // 0.1 + 0.2 through f64 would be 0.30000000000000004; a price of 187.10 keeps its
    // trailing zero; a tiny quantity is never written with an exponent.
    let mut server = mockito::Server::new();
    let expected = concat!(
        r#"{"symbol":"AAPL","side":"buy","qty":0.0000001,"type":"stop_limit","time_in_force":"gtc","#,
        r#""stop_price":0.3,"limit_price":187.10,"order_class":"simple","client_order_id":"exact-1"}"#
    );
    let answer = json!({"id": "ord_exact", "client_order_id": "exact-1", "status": "new"});
    let mock = server
        .mock("POST", "/v1/orders")
        .match_header("content-type", "application/json")
        .match_body(mockito::Matcher::Exact(expected.to_owned()))
        .with_status(200)
        .with_body(answer.to_string())
        .expect(1)
        .create();
    let client = testkit::client::<Client>(&server.url());
    let stop = d("0.1") + d("0.2");
    let order = client
        .orders()
        .place(
            &OrderRequest::stop_limit("AAPL", Side::Buy, d("0.0000001"), stop, d("187.10"))
                .time_in_force(TimeInForce::Gtc)
                .client_order_id("exact-1"),
        )
        .unwrap();
    mock.assert();
    assert_eq!(order.id.as_str(), "ord_exact");
}

#[test]
fn an_order_without_an_id_gets_a_fresh_uuid_sent_once() {
    let mut server = mockito::Server::new();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let mock = server
        .mock("POST", "/v1/orders")
        .match_request(move |r| {
            let body: Value = serde_json::from_slice(r.body().unwrap()).unwrap();
            record
                .lock()
                .unwrap()
                .push(body["client_order_id"].as_str().unwrap().to_owned());
            true
        })
        .with_body(r#"{"id":"ord_1"}"#)
        .expect(2)
        .create();
    let client = testkit::client::<Client>(&server.url());
    let request = OrderRequest::market("AAPL", Side::Sell, Amount::Notional(d("250")));
    client.orders().place(&request).unwrap();
    client.orders().place(&request).unwrap();
    mock.assert();
    let ids = seen.lock().unwrap().clone();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1], "each place() is a new order");
    for id in &ids {
        assert_eq!(id.len(), 36, "{id}");
        assert_eq!(id.as_bytes()[14], b'4', "a version-4 UUID: {id}");
    }
}

#[test]
fn a_success_that_cannot_be_read_is_settled_by_a_lookup() {
    // A proxy's HTML page with status 200: the order may have been placed. The client
    // asks by client order id instead of reporting an error that invites a resend.
    let mut server = mockito::Server::new();
    let post = server
        .mock("POST", "/v1/orders")
        .with_status(200)
        .with_header("content-type", "text/html")
        .with_body("<html><body>OK</body></html>")
        .expect(1)
        .create();
    let lookup = server
        .mock("GET", "/v1/orders")
        .match_query(mockito::Matcher::AllOf(vec![
            mockito::Matcher::UrlEncoded("client_order_id".into(), "settle-1".into()),
            mockito::Matcher::UrlEncoded("status".into(), "all".into()),
        ]))
        .with_body(
            json!({"orders": [{"id": "ord_settled", "client_order_id": "settle-1", "status": "filled"}]})
                .to_string(),
        )
        .expect(1)
        .create();
    let client = testkit::client::<Client>(&server.url());
    let order = client
        .orders()
        .place(
            &OrderRequest::market("AAPL", Side::Buy, Amount::Qty(d("1")))
                .client_order_id("settle-1"),
        )
        .unwrap();
    post.assert();
    lookup.assert();
    assert_eq!(order.id.as_str(), "ord_settled");
}

#[test]
fn a_lookup_that_finds_nothing_says_the_order_was_not_placed() {
    let mut server = mockito::Server::new();
    let post = server
        .mock("POST", "/v1/orders")
        .with_status(200)
        .with_body("{\"id\": ")
        .expect(1)
        .create();
    let lookup = server
        .mock("GET", "/v1/orders")
        .match_query(mockito::Matcher::Any)
        .with_body(r#"{"orders": []}"#)
        .expect(1)
        .create();
    let client = testkit::client::<Client>(&server.url());
    let err = client
        .orders()
        .place(
            &OrderRequest::market("AAPL", Side::Buy, Amount::Qty(d("1"))).client_order_id("gone-1"),
        )
        .unwrap_err();
    post.assert();
    lookup.assert();
    assert!(
        matches!(&err, trading_client::Error::NotProcessed { reason, .. } if reason.contains("gone-1")),
        "{err:?}"
    );
    // The first request may still arrive: the one safe repeat carries the same id.
    assert_eq!(err.repeat_with(), Some(("client_order_id", "gone-1")));
    assert!(
        err.to_string()
            .contains("only with the same client_order_id"),
        "{err}"
    );
}

// ---- refused before sending ----

fn invalid<T: Debug>(result: trading_client::Result<T>) -> String {
    match result {
        Err(trading_client::Error::InvalidRequest(m)) => m,
        other => panic!("expected InvalidRequest, got {other:?}"),
    }
}

#[test]
fn bad_input_is_refused_without_a_request() {
    // A client pointed at a closed port: any request would be a Connect error.
    let client = Client::builder()
        .base_url("http://127.0.0.1:9")
        .api_key("k")
        .max_retries(0)
        .build()
        .unwrap();
    let m = invalid(client.orders().place(&OrderRequest::market(
        "AAPL",
        Side::Buy,
        Amount::Qty(d("0")),
    )));
    assert!(m.contains("qty"), "{m}");
    let m = invalid(client.orders().place(&OrderRequest::limit(
        "AAPL",
        Side::Buy,
        d("1"),
        d("-5"),
    )));
    assert!(m.contains("limit price"), "{m}");
    let m = invalid(client.orders().place(&OrderRequest::market(
        "BAD SYMBOL",
        Side::Buy,
        Amount::Qty(d("1")),
    )));
    assert!(m.contains("symbol"), "{m}");
    let m = invalid(
        client.orders().place(
            &OrderRequest::market("AAPL", Side::Buy, Amount::Qty(d("1")))
                .client_order_id("x".repeat(49)),
        ),
    );
    assert!(m.contains("48"), "{m}");
    invalid(client.markets().quotes::<&str>(&[]));
    invalid(client.markets().bars(&["AAPL"], Timeframe::Day, 0));
    invalid(client.markets().orderbook(&["AAPL"], 51));
    invalid(client.orders().get(""));
    invalid(
        client.history().list(
            &ListBars::new("AAPL", Timeframe::Day)
                .start(at("2026-01-02T00:00:00Z"))
                .end(at("2026-01-01T00:00:00Z")),
        ),
    );
    invalid(client.news().list(&ListNews::new(&["AAPL"]).limit(51)));
}

// ---- the stream, replayed ----

/// A subscription's acknowledgement: sent once the client has asked.
fn is_ack(frame: &Value) -> bool {
    frame.get("type").and_then(Value::as_str) == Some("subscribed")
}

#[test]
fn stream_transcript_replays_into_typed_events() {
    let transcript: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/transcripts/stream.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let received = transcript["received"].as_array().unwrap().clone();
    let (url, seen) = testkit::ws::replay(received, is_ack);

    // REST for the order reconciliation: the orders as they stood before the stream.
    let mut rest = mockito::Server::new();
    let list = rest
        .mock("GET", "/v1/orders")
        .match_query(mockito::Matcher::Any)
        .with_body(r#"{"orders": []}"#)
        .expect(2)
        .create();
    let client = testkit::client::<Client>(&rest.url()).with_stream_url(url);
    let mut stream = client.stream().unwrap();
    stream.subscribe_quotes(&["AAPL", "MSFT"]).unwrap();
    stream.subscribe_orders().unwrap();
    let mut events = Vec::new();
    while events.len() < 8 {
        match stream.next_timeout(Duration::from_secs(10)) {
            Some(event) => events.push(event.unwrap()),
            None => break,
        }
    }
    stream.close();
    list.assert();

    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen[0],
        format!("/stream auth=Bearer {}", testkit::FIXTURE_KEY),
        "the key goes in the handshake's header, never the URL"
    );
    let messages: Vec<Value> = seen[1..]
        .iter()
        .map(|m| serde_json::from_str(m).unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            transcript["sent"][0].clone(),
            json!({"action": "subscribe", "channels": ["orders"], "symbols": []}),
        ]
    );
    // Four quotes, then the order accepted, its fill, the order filled, the account.
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            Event::Quote(_) => "quote",
            Event::Fill(_) => "fill",
            Event::Order(_) => "order",
            Event::Account(_) => "account",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "quote", "quote", "quote", "quote", "order", "fill", "order", "account"
        ]
    );
    insta::assert_debug_snapshot!("stream_transcript__events", events);
}

#[test]
fn stream_messages_that_are_odd_or_unknown_are_kept_not_fatal() {
    let frames = vec![
        json!({"type": "subscribed", "channels": ["quotes"], "symbols": ["AAPL"]}),
        json!({"type": "quote", "symbol": "AAPL", "price": "187.2300", "venue": "new"}),
        json!({"type": "quote", "symbol": "AAPL", "price": "not a number"}),
        json!({"type": "halt", "symbol": "AAPL", "reason": "news pending"}),
        json!([{"type": "quote", "symbol": "AAPL", "price": 1e2}, {"type": "unsubscribed"}]),
    ];
    let (url, _) = testkit::ws::replay(frames, is_ack);
    let client = testkit::client::<Client>("http://127.0.0.1:9").with_stream_url(url);
    let mut stream = client.stream().unwrap();
    stream.subscribe_quotes(&["AAPL"]).unwrap();
    let mut events = Vec::new();
    while events.len() < 4 {
        match stream.next_timeout(Duration::from_secs(10)) {
            Some(event) => events.push(event.unwrap()),
            None => break,
        }
    }
    stream.close();
    insta::assert_debug_snapshot!("stream_odd_messages__events", events);
    assert!(matches!(&events[0], Event::Quote(q) if q.price == d("187.23")));
    assert!(
        matches!(&events[1], Event::Unknown { kind, .. } if kind == "quote"),
        "a quote without a readable price is kept whole, never a zero: {:?}",
        events[1]
    );
    assert!(matches!(&events[2], Event::Unknown { kind, .. } if kind == "halt"));
    assert!(matches!(&events[3], Event::Quote(q) if q.price == d("100")));
}

#[test]
fn fixture_files_read_as_json() {
    // A broken hand-written fixture fails here with its name, not deep in a test.
    for entry in std::fs::read_dir(DIR).unwrap() {
        let path = entry.unwrap().path();
        let mut text = String::new();
        std::fs::File::open(&path)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        serde_json::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    }
}
