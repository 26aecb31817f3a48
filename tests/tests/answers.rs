//! Every answer matches the question: a hostile server (raw sockets, every byte chosen)
//! answers with something that says less than it seems, and each test asserts what the
//! caller is told. A reused `client_order_id` answered with another order, a cancel-all
//! or close-all that was partial or carries no list, a list whose page token or offset
//! loops (once per crate that has lists), and an answer in a shape the client does not
//! know: none of them is taken as complete.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use core_http::{CutShort, Error, ErrorKind};
use rust_decimal::Decimal;
use testkit::hostile::{Act, Hostile, Request};
use trading_client::{
    orders::{Amount, OrderRequest, ReplaceOrder, Side},
    positions::Close,
};

const KEY: &str = "sk_test_ANSWERS_SECRET_KEY";

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

fn trading(server: &Hostile) -> trading_client::Client {
    trading_client::Client::builder()
        .base_url(server.url())
        .api_key(KEY)
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// The order the service first placed under `cid`: buy 1 AAPL limit 1, day.
fn first_order(cid: &str) -> String {
    format!(
        r#"{{"id":"ord_first","client_order_id":"{cid}","symbol":"AAPL","side":"buy","qty":"1","type":"limit","time_in_force":"day","limit_price":"1","order_class":"simple","extended_hours":false,"status":"new"}}"#
    )
}

/// A server that answers every POST and every lookup with the first order placed under
/// `cid`, as a service does for a repeated client order id.
fn answers_the_first_order(cid: &'static str) -> Hostile {
    Hostile::start(move |r: &Request| {
        if r.method == "GET" {
            Act::json(200, &format!(r#"{{"orders":[{}]}}"#, first_order(cid)))
        } else {
            Act::json(200, &first_order(cid))
        }
    })
}

#[test]
fn a_reused_client_order_id_answered_with_another_order_is_a_conflict() {
    let server = answers_the_first_order("reused-1");
    let client = trading(&server);
    let sell =
        OrderRequest::limit("AAPL", Side::Sell, d("5"), d("9999")).client_order_id("reused-1");
    let err = client.orders().place(&sell).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err:?}");
    assert!(matches!(err, Error::IdConflict { .. }), "{err:?}");
    let shown = err.to_string();
    for part in [
        "\"reused-1\"",
        "side: asked sell, answered buy",
        "qty: asked 5, answered 1",
        "limit_price: asked 9999, answered 1",
        "nothing new was placed",
    ] {
        assert!(shown.contains(part), "{part:?} in {shown}");
    }
    assert!(!shown.contains(KEY) && !format!("{err:?}").contains(KEY));
    assert_eq!(server.count("POST"), 1, "the order was sent once");
}

#[test]
fn an_identical_repeat_stays_idempotent() {
    let server = answers_the_first_order("reused-2");
    let client = trading(&server);
    let same =
        OrderRequest::limit("aapl", Side::Buy, d("1.00"), d("1")).client_order_id("reused-2");
    let order = client.orders().place(&same).unwrap();
    assert_eq!(order.id.as_str(), "ord_first");
}

#[test]
fn the_lookup_after_a_lost_answer_is_checked_too() {
    // The POST's answer is lost (the connection closes after the request); the lookup
    // finds the order first placed under the id, which is another order.
    let server = Hostile::start(|r: &Request| {
        if r.method == "POST" {
            Act::CloseAfterRead
        } else {
            Act::json(
                200,
                &format!(r#"{{"orders":[{}]}}"#, first_order("reused-3")),
            )
        }
    });
    let client = trading(&server);
    let market =
        OrderRequest::market("MSFT", Side::Buy, Amount::Qty(d("2"))).client_order_id("reused-3");
    let err = client.orders().place(&market).unwrap_err();
    assert!(matches!(err, Error::IdConflict { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("symbol: asked MSFT, answered AAPL"),
        "{err}"
    );
    assert!(server.count("GET") >= 1, "the order was looked up");
}

#[test]
fn a_replace_answered_with_another_replacement_is_a_conflict() {
    // The service answers the replacement first made under the id: it replaced another
    // order, at another price.
    let server = Hostile::start(|_: &Request| {
        Act::json(
            200,
            r#"{"id":"ord_new","client_order_id":"rep-1","replaces":"ord_other","limit_price":"150","status":"new"}"#,
        )
    });
    let client = trading(&server);
    let change = ReplaceOrder::new()
        .limit_price(d("187"))
        .client_order_id("rep-1");
    let err = client.orders().replace("ord_target", &change).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    let shown = err.to_string();
    assert!(
        shown.contains("replaces: asked ord_target, answered ord_other"),
        "{shown}"
    );
    assert!(
        shown.contains("limit_price: asked 187, answered 150"),
        "{shown}"
    );
    // The same replacement again is the first one: fine.
    let server = Hostile::start(|_: &Request| {
        Act::json(
            200,
            r#"{"id":"ord_new","client_order_id":"rep-1","replaces":"ord_target","limit_price":"187","status":"new"}"#,
        )
    });
    let order = trading(&server)
        .orders()
        .replace("ord_target", &change)
        .unwrap();
    assert_eq!(order.id.as_str(), "ord_new");
}

#[test]
fn a_close_answered_with_another_symbols_order_is_a_conflict() {
    let server = Hostile::start(|r: &Request| {
        let cid = r
            .path
            .split("client_order_id=")
            .nth(1)
            .and_then(|rest| rest.split('&').next())
            .unwrap_or_default()
            .to_owned();
        Act::json(
            200,
            &format!(
                r#"{{"id":"ord_c","client_order_id":"{cid}","symbol":"MSFT","side":"sell","qty":"3","type":"market","status":"new"}}"#
            ),
        )
    });
    let client = trading(&server);
    let err = client.positions().close("AAPL", Close::All).unwrap_err();
    assert!(matches!(err, Error::IdConflict { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("symbol: asked AAPL, answered MSFT"),
        "{err}"
    );
    // Lower case asks for the same symbol; the quantity asked is checked.
    let order = client
        .positions()
        .close("msft", Close::Qty(d("3")))
        .unwrap();
    assert_eq!(order.symbol, "MSFT");
    let err = client
        .positions()
        .close("MSFT", Close::Qty(d("2")))
        .unwrap_err();
    assert!(
        err.to_string().contains("qty: asked 2, answered 3"),
        "{err}"
    );
}

#[test]
fn a_partial_cancel_all_names_each_failure() {
    let server = Hostile::scripted(vec![Act::json(
        207,
        r#"[{"id":"ord_1","status":200,"body":{"id":"ord_1","status":"canceled"}},
            {"id":"ord_2","status":422,"body":{"code":"order_not_cancelable","message":"order ord_2 is filled"}}]"#,
    )]);
    let outcome = trading(&server).orders().cancel_all().unwrap();
    assert!(!outcome.is_complete());
    assert_eq!(outcome.done.len(), 1);
    assert_eq!(outcome.done[0].id.as_str(), "ord_1");
    let failure = &outcome.failed[0];
    assert_eq!(failure.id.as_deref(), Some("ord_2"));
    assert_eq!(failure.status, Some(422));
    assert_eq!(failure.code.as_deref(), Some("order_not_cancelable"));
    assert_eq!(failure.message, "order ord_2 is filled");
    assert_eq!(failure.kind(), ErrorKind::BadRequest);
    let err = outcome.into_complete().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Incomplete);
    assert!(err.to_string().contains("1 carried out, 1 not"), "{err}");
    assert!(err.to_string().contains("ord_2 (HTTP 422"), "{err}");
}

#[test]
fn a_cancel_all_without_its_list_is_an_error_never_nothing_canceled() {
    for body in [
        "{}",
        r#"{"canceled":[]}"#,
        r#"{"orders":{"id":"x"}}"#,
        "null",
        "[1]",
    ] {
        let server = Hostile::scripted(vec![Act::json(200, body)]);
        let err = trading(&server).orders().cancel_all().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode, "{body}: {err:?}");
        assert!(
            err.action_succeeded(),
            "{body}: the server acted; the error must not invite a repeat"
        );
    }
    // The sandbox's shape and a bare list both read.
    for body in [r#"{"orders":[{"id":"o1"}]}"#, r#"[{"id":"o1"}]"#] {
        let server = Hostile::scripted(vec![Act::json(200, body)]);
        let outcome = trading(&server).orders().cancel_all().unwrap();
        assert!(outcome.is_complete() && outcome.done.len() == 1, "{body}");
    }
}

#[test]
fn a_partial_close_all_names_the_position_left_open() {
    let server = Hostile::scripted(vec![Act::json(
        207,
        r#"[{"symbol":"AAPL","status":200,"body":{"id":"o1","symbol":"AAPL","type":"market"}},
            {"symbol":"TSLA","status":403,"body":{"message":"insufficient qty available"}}]"#,
    )]);
    let outcome = trading(&server).positions().close_all().unwrap();
    assert_eq!(outcome.done.len(), 1);
    assert_eq!(outcome.failed[0].id.as_deref(), Some("TSLA"));
    assert_eq!(outcome.failed[0].kind(), ErrorKind::Forbidden);
    let server = Hostile::scripted(vec![Act::json(200, "{}")]);
    let err = trading(&server).positions().close_all().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode, "{err:?}");
}

// ---- lists that loop: once per crate with lists ----

/// A page-token server that hands back the first token forever.
fn looping_tokens(first: &'static str, second: &'static str) -> Hostile {
    Hostile::start(move |r: &Request| {
        if r.path.contains("page_token=") {
            Act::json(200, second)
        } else {
            Act::json(200, first)
        }
    })
}

fn assert_cut_short<T: std::fmt::Debug>(items: &[Result<T, Error>], expect_ok: usize) {
    assert_eq!(items.len(), expect_ok + 1, "{items:?}");
    assert!(items[..expect_ok].iter().all(Result::is_ok), "{items:?}");
    match items.last() {
        Some(Err(e @ Error::ListCutShort { reason, .. })) => {
            assert!(
                matches!(reason, CutShort::RepeatedToken | CutShort::RepeatedPage),
                "{e:?}"
            );
            assert_eq!(e.kind(), ErrorKind::Incomplete);
        }
        other => panic!("expected the list to say it was cut short, got {other:?}"),
    }
}

#[test]
fn trading_lists_that_loop_say_so() {
    let orders = looping_tokens(
        r#"{"orders":[{"id":"o1"}],"next_page_token":"t1"}"#,
        r#"{"orders":[{"id":"o2"}],"next_page_token":"t1"}"#,
    );
    let items: Vec<_> = trading(&orders)
        .orders()
        .iter_from(&trading_client::orders::ListOrders::new().all())
        .collect();
    assert_cut_short(&items, 2);

    let news = looping_tokens(
        r#"{"news":[{"id":"n1","headline":"a"}],"next_page_token":"t1"}"#,
        r#"{"news":[{"id":"n2","headline":"b"}],"next_page_token":"t1"}"#,
    );
    let items: Vec<_> = trading(&news)
        .news()
        .iter_from(&trading_client::news::ListNews::new(&["AAPL"]))
        .collect();
    assert_cut_short(&items, 2);

    let activities = looping_tokens(
        r#"{"activities":[{"id":"a1","activity_type":"FILL"}],"next_page_token":"t1"}"#,
        r#"{"activities":[{"id":"a2","activity_type":"FILL"}],"next_page_token":"t1"}"#,
    );
    let items: Vec<_> = trading(&activities).activities().iter().collect();
    assert_cut_short(&items, 2);

    let bars = looping_tokens(
        r#"{"bars":[{"t":"2026-01-02T00:00:00Z","o":1,"h":1,"l":1,"c":1,"v":1}],"next_page_token":"t1"}"#,
        r#"{"bars":[{"t":"2026-01-03T00:00:00Z","o":1,"h":1,"l":1,"c":1,"v":1}],"next_page_token":"t1"}"#,
    );
    let items: Vec<_> = trading(&bars)
        .history()
        .iter_from(&trading_client::history::ListBars::new(
            "AAPL",
            trading_client::markets::Timeframe::Day,
        ))
        .collect();
    assert_cut_short(&items, 2);
}

#[test]
fn worlds_lists_that_loop_say_so() {
    let client = |server: &Hostile| worlds_client::Client::new(server.url(), KEY).unwrap();
    let worlds = looping_tokens(
        r#"{"data":[{"id":"w1","name":"a","theme":"t"}],"next_page_token":"t1"}"#,
        r#"{"data":[{"id":"w2","name":"b","theme":"t"}],"next_page_token":"t1"}"#,
    );
    let items: Vec<_> = client(&worlds).worlds().iter().collect();
    assert_cut_short(&items, 2);

    let assets = looping_tokens(
        r#"{"assets":[{"id":"a1","properties":{}}],"next_page_token":"t1"}"#,
        r#"{"assets":[{"id":"a2","properties":{}}],"next_page_token":"t1"}"#,
    );
    let items: Vec<_> = client(&assets).assets().iter("w1").collect();
    assert_cut_short(&items, 2);

    // The users of a world come as one list: a loop is an error, never a short list.
    let users = looping_tokens(
        r#"{"data":[{"id":"u1"}],"next_page_token":"t1"}"#,
        r#"{"data":[{"id":"u2"}],"next_page_token":"t1"}"#,
    );
    let err = client(&users).worlds().users("w1").unwrap_err();
    assert!(matches!(err, Error::ListCutShort { .. }), "{err:?}");
}

/// An offset server that ignores the offset: every page is the same full page.
fn ignores_offset(body: &'static str) -> Hostile {
    Hostile::start(move |_: &Request| Act::json(200, body))
}

#[test]
fn social_lists_that_loop_say_so() {
    let server = ignores_offset(
        r#"{"data":[{"id":"p1","content":"a","platform":"x","status":"draft"},{"id":"p2","content":"b","platform":"x","status":"draft"}],"meta":{"total":1000}}"#,
    );
    let client = social_client::Client::new(server.url(), KEY).unwrap();
    let items: Vec<_> = client
        .posts()
        .iter_from(&social_client::posts::ListPosts::new().limit(2))
        .collect();
    assert_cut_short(&items, 2);
}

#[test]
fn projects_lists_that_loop_say_so() {
    let server = ignores_offset(
        r#"{"data":[{"id":"p1","name":"a"},{"id":"p2","name":"b"}],"meta":{"total":1000}}"#,
    );
    let client = projects_client::Client::new(server.url(), KEY).unwrap();
    let items: Vec<_> = client
        .projects()
        .iter_from(&projects_client::projects::ListProjects::new().limit(2))
        .collect();
    assert_cut_short(&items, 2);
}

// ---- shapes the client does not know ----

#[test]
fn a_portfolio_history_in_parallel_arrays_is_read_and_unequal_arrays_are_an_error() {
    let query = trading_client::activities::PortfolioQuery::new(
        trading_client::activities::Period::Week,
        trading_client::activities::Step::Day,
    );
    let server = Hostile::scripted(vec![Act::json(
        200,
        r#"{"timestamp":[1767225600,1767312000],"equity":[100000,100250.5],"profit_loss":[0,250.5],"profit_loss_pct":[0,0.0025],"base_value":100000,"timeframe":"1D"}"#,
    )]);
    let history = trading(&server)
        .account()
        .portfolio_history(&query)
        .unwrap();
    assert_eq!(history.points.len(), 2);
    assert_eq!(history.points[1].equity, d("100250.5"));
    assert_eq!(history.points[1].profit_loss, Some(d("250.5")));
    assert_eq!(history.points[0].timestamp.unix_timestamp(), 1_767_225_600);

    for body in [
        r#"{"timestamp":[1767225600,1767312000],"equity":[100000]}"#,
        r#"{"timestamp":[1767225600],"equity":[100000],"profit_loss":[0,1]}"#,
        r#"{"base_value":100000,"timeframe":"1D"}"#,
        "{}",
    ] {
        let server = Hostile::scripted(vec![Act::json(200, body)]);
        let err = trading(&server)
            .account()
            .portfolio_history(&query)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode, "{body}: {err:?}");
    }
}

#[test]
fn answers_without_their_list_are_decode_errors_never_empty() {
    let server = Hostile::start(|_: &Request| Act::json(200, r#"{"unrelated":true}"#));
    let client = trading(&server);
    let start = time::Date::from_calendar_date(2026, time::Month::December, 1).unwrap();
    let end = time::Date::from_calendar_date(2026, time::Month::December, 31).unwrap();
    let checks: Vec<(&str, Error)> = vec![
        ("calendar", client.clock().calendar(start, end).unwrap_err()),
        ("positions", client.positions().list().unwrap_err()),
        (
            "orders page",
            client
                .orders()
                .list(&trading_client::orders::ListOrders::new())
                .unwrap_err(),
        ),
        ("quotes", client.markets().quotes(&["AAPL"]).unwrap_err()),
        ("assets", client.assets().list(None).unwrap_err()),
    ];
    for (what, err) in checks {
        assert_eq!(err.kind(), ErrorKind::Decode, "{what}: {err:?}");
    }
    let worlds = worlds_client::Client::new(server.url(), KEY).unwrap();
    let err = worlds.worlds().iter().next().unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode, "{err:?}");
    let social = social_client::Client::new(server.url(), KEY).unwrap();
    let err = social.posts().iter().next().unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode, "{err:?}");
}

// ---- the same rules against the sandbox ----

fn sandbox_client(sandbox: &sandbox::Sandbox) -> trading_client::Client {
    trading_client::Client::new(sandbox.trading().url(), sandbox.api_key()).unwrap()
}

#[test]
fn the_sandbox_answers_a_reused_id_with_the_first_order_and_the_client_says_conflict() {
    let sandbox = e2e::sandbox().unwrap();
    let client = sandbox_client(&sandbox);
    let below = (sandbox.trading().price("AAPL") * d("0.5")).round_dp(2);
    let buy = OrderRequest::limit("AAPL", Side::Buy, d("1"), below)
        .time_in_force(trading_client::orders::TimeInForce::Gtc)
        .client_order_id("script-order-1");
    let first = client.orders().place(&buy).unwrap();
    // The same order again: idempotent.
    assert_eq!(client.orders().place(&buy).unwrap().id, first.id);
    // Other work under the same id: a conflict, and nothing new was placed.
    let sell = OrderRequest::limit("AAPL", Side::Sell, d("5"), d("9999"))
        .client_order_id("script-order-1");
    let err = client.orders().place(&sell).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err:?}");
    let all: Vec<_> = client
        .orders()
        .iter_from(&trading_client::orders::ListOrders::new().all())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(all.len(), 1, "nothing new was placed: {all:?}");
    // A replacement under an id already in use is refused by the service (409), never
    // answered with the order placed under it.
    let change = ReplaceOrder::new()
        .qty(d("2"))
        .client_order_id("script-order-1");
    let err = client
        .orders()
        .replace(first.id.clone(), &change)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err:?}");
    assert_eq!(err.status(), Some(409), "{err:?}");
}

#[test]
fn the_sandbox_reports_a_partial_close_all_per_position_and_finds_positions_in_any_case() {
    let sandbox = e2e::sandbox().unwrap();
    let client = sandbox_client(&sandbox);
    for (symbol, qty) in [("AAPL", "2"), ("MSFT", "1")] {
        client
            .orders()
            .place(&OrderRequest::market(
                symbol,
                Side::Buy,
                Amount::Qty(d(qty)),
            ))
            .unwrap();
    }
    // Lower case finds the upper-case position.
    assert_eq!(client.positions().get("msft").unwrap().qty, Some(d("1")));
    // One AAPL share is held by a resting sell: AAPL cannot be closed whole.
    let above = (sandbox.trading().price("AAPL") * d("2")).round_dp(2);
    client
        .orders()
        .place(
            &OrderRequest::limit("AAPL", Side::Sell, d("1"), above)
                .time_in_force(trading_client::orders::TimeInForce::Gtc),
        )
        .unwrap();
    let outcome = client.positions().close_all().unwrap();
    assert!(!outcome.is_complete(), "{outcome:?}");
    assert_eq!(outcome.done.len(), 1);
    assert_eq!(outcome.done[0].symbol, "MSFT");
    let failure = &outcome.failed[0];
    assert_eq!(failure.id.as_deref(), Some("AAPL"));
    assert_eq!(failure.status, Some(403));
    assert_eq!(failure.code.as_deref(), Some("insufficient_qty"));
    // A sell of more than is held is refused the same way as a close of more.
    let sell = client
        .orders()
        .place(&OrderRequest::market(
            "AAPL",
            Side::Sell,
            Amount::Qty(d("5")),
        ))
        .unwrap_err();
    let close = client
        .positions()
        .close("aapl", Close::Qty(d("5")))
        .unwrap_err();
    assert_eq!(sell.status(), close.status());
    assert_eq!(sell.api().unwrap().code, close.api().unwrap().code);
}

#[test]
fn an_odd_position_reads_as_none_and_never_fails_the_world() {
    // As docs/worlds.md promises: a position that is not three finite numbers reads as
    // `None`; the world and its other objects are read.
    let server = Hostile::start(|_: &Request| {
        Act::json(
            200,
            r#"{"id":"w1","name":"odd","theme":"t","objects":[
                {"type":"a","position":[1e999,0,0]},
                {"type":"b","position":[1,"2",3]},
                {"type":"c","position":[1,2]},
                {"type":"d","position":{"x":1}},
                {"type":"e","position":"here"},
                {"type":"f","position":[-1e400,[1],{"a":1e999}]},
                {"type":"g","position":[0.5,0,-2]}
            ]}"#,
        )
    });
    let client = worlds_client::Client::new(server.url(), KEY).unwrap();
    let world = client.worlds().get("w1").unwrap();
    // In a list too (a page, or a bare list).
    let listed = Hostile::start(|_: &Request| {
        Act::json(
            200,
            r#"{"data":[{"id":"w1","objects":[{"type":"a","position":[1e999,0,0]},{"type":"b","position":[1,2,3]}]}]}"#,
        )
    });
    let page = worlds_client::Client::new(listed.url(), KEY)
        .unwrap()
        .worlds()
        .list(&worlds_client::worlds::ListWorlds::new())
        .unwrap();
    let listed: Vec<_> = page.data[0].objects.iter().map(|o| o.position).collect();
    assert_eq!(listed, [None, Some([1.0, 2.0, 3.0])]);
    let positions: Vec<_> = world.objects.iter().map(|o| o.position).collect();
    assert_eq!(
        positions,
        [
            None,
            Some([1.0, 2.0, 3.0]),
            None,
            None,
            None,
            None,
            Some([0.5, 0.0, -2.0])
        ]
    );
}

// ---- a delete retried and answered 404 ----

/// The first DELETE is read and its connection closed without an answer (the server may
/// have acted); every later one is a 404.
fn deleted_then_gone() -> Hostile {
    Hostile::start(|r: &Request| {
        if r.index == 0 {
            Act::CloseAfterRead
        } else {
            Act::json(
                404,
                r#"{"error":{"code":"not_found","message":"no such thing"}}"#,
            )
        }
    })
}

/// A server whose every answer is a 404.
fn never_there() -> Hostile {
    Hostile::start(|_: &Request| {
        Act::json(
            404,
            r#"{"error":{"code":"not_found","message":"no such thing"}}"#,
        )
    })
}

fn check_delete_rule(what: &str, delete: impl Fn(&str) -> Result<(), Error>) {
    let server = deleted_then_gone();
    delete(server.url())
        .unwrap_or_else(|e| panic!("{what}: a retried delete answered 404 is done: {e:?}"));
    assert_eq!(server.count("DELETE"), 2, "{what}");
    let server = never_there();
    let err = delete(server.url()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{what}: {err:?}");
    assert_eq!(server.count("DELETE"), 1, "{what}");
}

#[test]
fn every_delete_retried_and_answered_404_is_done_and_a_first_404_is_not_found() {
    check_delete_rule("projects", |url| {
        projects_client::Client::new(url, KEY)?
            .projects()
            .delete("proj_1")
    });
    check_delete_rule("social accounts", |url| {
        social_client::Client::new(url, KEY)?
            .accounts()
            .disconnect("acct_1")
    });
    check_delete_rule("worlds", |url| {
        worlds_client::Client::new(url, KEY)?.worlds().delete("w1")
    });
}

#[test]
fn an_id_beyond_64_bits_is_refused_without_a_rounded_figure() {
    for (body, kept) in [
        (
            r#"{"id":18446744073709551615}"#,
            Some("18446744073709551615"),
        ),
        (r#"{"id":18446744073709551616}"#, None),
        (r#"{"id":123456789012345678901234567890}"#, None),
    ] {
        let server = Hostile::scripted(vec![Act::json(200, body)]);
        let asked = kept.unwrap_or("o1");
        let result = trading(&server).orders().get(asked);
        match (result, kept) {
            (Ok(order), Some(id)) => assert_eq!(order.id.as_str(), id),
            (Err(e), None) => {
                assert_eq!(e.kind(), ErrorKind::Decode, "{e:?}");
                let shown = e.to_string();
                assert!(shown.contains("must come as a string"), "{shown}");
                assert!(
                    !shown.contains("18446744073709552000")
                        && !shown.contains("1234567890123456800000"),
                    "a rounded figure shown as if sent: {shown}"
                );
            }
            (other, _) => panic!("{body}: {other:?}"),
        }
    }
}
