//! trading-client against the sandbox's paper-trading engine: every order kind, fills
//! after clock moves, the account, markets, history and news, orders never placed twice,
//! and a stream that delivers every fill exactly once across forced disconnects.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rust_decimal::Decimal;
use sandbox::{Fault, Sandbox, Service};
use trading_client::{
    Client, Error,
    history::ListBars,
    markets::Timeframe,
    news::ListNews,
    orders::{
        Amount, Entry, Exit, ListOrders, OrderClass, OrderRequest, OrderStatus, Side, StopLoss,
        TimeInForce, Trail,
    },
    stream::{Event, ReconnectPolicy, StreamConfig, TradingStream},
};

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

fn client(sandbox: &Sandbox) -> Client {
    Client::new(sandbox.trading().url(), sandbox.api_key()).unwrap()
}

/// Reconnects at once (a few ms of backoff), so tests of drops run fast.
fn fast(config: StreamConfig) -> StreamConfig {
    let mut policy = ReconnectPolicy::default();
    policy.backoff =
        core_http::config::Backoff::new(Duration::from_millis(2), Duration::from_millis(10), 1.0);
    config.reconnect(policy)
}

/// Waits until `f` says yes (a few seconds at most).
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let started = Instant::now();
    while !f() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The next event that is not a quote.
fn next_non_quote(stream: &mut TradingStream) -> Event {
    loop {
        match stream.next_timeout(Duration::from_secs(10)) {
            Some(Ok(Event::Quote(_))) => continue,
            Some(Ok(event)) => return event,
            other => panic!("expected an event, got {other:?}"),
        }
    }
}

#[test]
fn every_order_kind_is_placed_on_paper() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let price = sandbox.trading().price("AAPL");
    let below = (price * d("0.9")).round_dp(2);
    let above = (price * d("1.1")).round_dp(2);

    let market = client
        .orders()
        .place(&OrderRequest::market(
            "AAPL",
            Side::Buy,
            Amount::Qty(d("10")),
        ))
        .unwrap();
    assert_eq!(market.status, OrderStatus::Filled);
    assert_eq!(market.filled_qty, Some(d("10")));
    assert_eq!(
        market.filled_avg_price,
        Some(price + d("0.01")),
        "bought at the ask"
    );

    let notional = client
        .orders()
        .place(&OrderRequest::market(
            "MSFT",
            Side::Buy,
            Amount::Notional(d("1000.00")),
        ))
        .unwrap();
    assert_eq!(notional.status, OrderStatus::Filled);
    let filled = notional.filled_qty.unwrap();
    assert!(filled > Decimal::ZERO && filled < d("100"));

    let kinds = [
        OrderRequest::limit("AAPL", Side::Buy, d("1"), below).time_in_force(TimeInForce::Gtc),
        OrderRequest::stop("AAPL", Side::Buy, d("1"), above),
        OrderRequest::stop_limit("AAPL", Side::Buy, d("1"), above, above + d("1")),
        OrderRequest::trailing_stop("AAPL", Side::Sell, d("1"), Trail::Price(d("5"))),
        OrderRequest::trailing_stop("AAPL", Side::Sell, d("1"), Trail::Percent(d("2.5"))),
    ];
    for request in &kinds {
        let order = client.orders().place(request).unwrap();
        assert_eq!(order.status, OrderStatus::New, "{request:?} rests");
        assert_eq!(order.client_order_id.len(), 36, "the client made a UUID");
    }

    let bracket = client
        .orders()
        .place(&OrderRequest::bracket(
            "AAPL",
            Side::Buy,
            d("2"),
            Entry::Market,
            above,
            StopLoss::at(below),
        ))
        .unwrap();
    assert_eq!(bracket.order_class, OrderClass::Bracket);
    assert_eq!(bracket.status, OrderStatus::Filled);
    assert_eq!(bracket.legs.len(), 2);
    assert!(
        bracket.legs.iter().all(|l| l.status == OrderStatus::New),
        "exits work once the entry filled"
    );

    let oco = client
        .orders()
        .place(&OrderRequest::oco(
            "AAPL",
            Side::Sell,
            d("3"),
            above,
            StopLoss::at(below),
        ))
        .unwrap();
    assert_eq!(oco.order_class, OrderClass::Oco);
    assert_eq!(oco.legs.len(), 1);

    let oto = client
        .orders()
        .place(&OrderRequest::oto(
            "AAPL",
            Side::Buy,
            d("1"),
            Entry::Limit(below),
            Exit::TakeProfit(above),
        ))
        .unwrap();
    assert_eq!(oto.order_class, OrderClass::Oto);
    assert_eq!(
        oto.legs[0].status,
        OrderStatus::Held,
        "the exit waits for the entry"
    );

    // Canceling the OTO entry cancels its held exit.
    let canceled = client.orders().cancel(&oto.id).unwrap();
    assert_eq!(canceled.status, OrderStatus::Canceled);
    assert_eq!(canceled.legs[0].status, OrderStatus::Canceled);

    let open = client.orders().list(&ListOrders::new()).unwrap();
    assert_eq!(
        open.data.len(),
        kinds.len() + 2,
        "the resting kinds, the bracket (exits working) and the OCO pair"
    );
    let account = client.account().get().unwrap();
    assert!(account.cash.unwrap() < d("100000"));
    let aapl = account
        .positions
        .iter()
        .find(|p| p.symbol == "AAPL")
        .unwrap();
    assert_eq!(aapl.qty, Some(d("12")));
}

#[test]
fn a_limit_order_fills_after_the_clock_moves() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let price = sandbox.trading().price("NVDA");
    let limit = (price - d("5")).round_dp(2);
    let order = client
        .orders()
        .place(&OrderRequest::limit("NVDA", Side::Buy, d("4"), limit))
        .unwrap();
    assert_eq!(order.status, OrderStatus::New);
    // The price drops below the limit; a minute later the order has filled at it.
    sandbox.trading().set_price("NVDA", limit - d("1"));
    assert_eq!(
        client.orders().get(&order.id).unwrap().status,
        OrderStatus::New
    );
    sandbox.advance(Duration::from_secs(61));
    let filled = client.orders().get(&order.id).unwrap();
    assert_eq!(filled.status, OrderStatus::Filled);
    assert!(filled.filled_avg_price.unwrap() <= limit);
    assert_eq!(filled.fills.len(), 1);
}

#[test]
fn large_orders_fill_partially_and_buying_power_is_enforced() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    sandbox.trading().set_price("F", d("12.50"));
    let order = client
        .orders()
        .place(&OrderRequest::market(
            "F",
            Side::Buy,
            Amount::Qty(d("2500")),
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    // 1,000 shares a minute: the rest fills as the clock moves.
    assert_eq!(order.status, OrderStatus::PartiallyFilled);
    assert_eq!(order.filled_qty, Some(d("1000")));
    sandbox.advance(Duration::from_secs(120));
    assert_eq!(
        client.orders().get(&order.id).unwrap().status,
        OrderStatus::Filled
    );

    let price = sandbox.trading().price("AAPL");
    let too_many = (d("200000") / price).round_dp(0);
    let err = client
        .orders()
        .place(&OrderRequest::market(
            "AAPL",
            Side::Buy,
            Amount::Qty(too_many),
        ))
        .unwrap_err();
    assert_eq!(err.status(), Some(403), "{err}");
    assert_eq!(
        err.api().unwrap().code.as_deref(),
        Some("insufficient_buying_power")
    );
    let err = client
        .orders()
        .place(&OrderRequest::market(
            "TSLA",
            Side::Sell,
            Amount::Qty(d("1")),
        ))
        .unwrap_err();
    assert_eq!(err.api().unwrap().code.as_deref(), Some("insufficient_qty"));
}

#[test]
fn an_order_whose_answer_is_dropped_is_placed_once_and_returned() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    // The first answer is dropped after the order was placed: the retry, with the same
    // client order id, gets the first order back.
    sandbox.inject(Fault::on("POST", "/trading/v1/orders").drop_connection());
    let order = client
        .orders()
        .place(&OrderRequest::market(
            "AAPL",
            Side::Buy,
            Amount::Qty(d("1")),
        ))
        .unwrap();
    assert_eq!(order.status, OrderStatus::Filled);
    assert_eq!(sandbox.trading().orders().len(), 1);

    // Every answer dropped: after the retries the client looks the order up.
    sandbox.inject(
        Fault::on("POST", "/trading/v1/orders")
            .drop_connection()
            .times(3),
    );
    let order = client
        .orders()
        .place(
            &OrderRequest::market("AAPL", Side::Buy, Amount::Qty(d("2")))
                .client_order_id("mine-42"),
        )
        .unwrap();
    assert_eq!(order.client_order_id, "mine-42");
    assert_eq!(sandbox.trading().orders().len(), 2);

    // Refused every time without being placed: a clear "not placed".
    sandbox.inject(Fault::on("POST", "/trading/v1/orders").status(500).times(3));
    let err = client
        .orders()
        .place(&OrderRequest::market(
            "AAPL",
            Side::Buy,
            Amount::Qty(d("3")),
        ))
        .unwrap_err();
    assert!(matches!(err, Error::NotProcessed { .. }), "{err:?}");
    // No trace of it, but the first request may still arrive: repeat only with its id.
    assert!(err.may_have_been_processed());
    let (_, id) = err.repeat_with().unwrap();
    assert!(err.to_string().contains(id), "{err}");
    assert_eq!(sandbox.trading().orders().len(), 2);

    // The same client order id placed again is the same order.
    let again = client
        .orders()
        .place(
            &OrderRequest::market("AAPL", Side::Buy, Amount::Qty(d("2")))
                .client_order_id("mine-42"),
        )
        .unwrap();
    assert_eq!(again.id, order.id);
    assert_eq!(sandbox.trading().orders().len(), 2);
    assert_eq!(
        client
            .orders()
            .get_by_client_order_id("mine-42")
            .unwrap()
            .unwrap()
            .id,
        order.id
    );
    assert!(
        client
            .orders()
            .get_by_client_order_id("never-used")
            .unwrap()
            .is_none()
    );
}

#[test]
fn markets_history_and_news() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let quotes = client.markets().quotes(&["AAPL", "msft"]).unwrap();
    assert_eq!(quotes.len(), 2);
    assert_eq!(quotes[1].symbol, "MSFT");
    assert_eq!(quotes[0].ask.unwrap() - quotes[0].bid.unwrap(), d("0.02"));
    let bars = client
        .markets()
        .bars(&["AAPL"], Timeframe::FiveMinutes, 12)
        .unwrap();
    assert_eq!(bars.len(), 12);
    assert!(
        bars.iter()
            .all(|b| b.l <= b.o && b.o <= b.h && b.l <= b.c && b.c <= b.h)
    );
    let book = &client.markets().orderbook(&["AAPL"], 5).unwrap()[0];
    assert_eq!((book.bids.len(), book.asks.len()), (5, 5));
    assert!(book.bids[0].price < book.asks[0].price);
    assert_eq!(client.markets().trades(&["AAPL"], 20).unwrap().len(), 20);
    assert!(client.markets().quotes::<&str>(&[]).is_err());

    // Three pages of one-minute bars, resumed from a token by a second iterator.
    let start = sandbox.now() - time::Duration::days(7);
    let query = ListBars::new("AAPL", Timeframe::Minute)
        .start(start)
        .limit(500);
    let mut first = client.history().iter_from(&query);
    let head: Vec<_> = first.by_ref().take(750).map(Result::unwrap).collect();
    let token = first.resume_token().unwrap().to_owned();
    let buffered = first.buffered();
    let rest: Vec<_> = client
        .history()
        .iter_from(&query.page_token(token))
        .take(10)
        .map(Result::unwrap)
        .collect();
    assert_eq!(buffered, 250);
    assert!(rest[0].t > head[749].t);
    assert!(head.windows(2).all(|w| w[0].t < w[1].t));

    let news: Vec<_> = client
        .news()
        .iter_from(&ListNews::new(&["AAPL"]))
        .take(60)
        .map(Result::unwrap)
        .collect();
    assert_eq!(news.len(), 60);
    assert!(news.iter().any(|n| n.earnings.is_some()));
    assert!(news.windows(2).all(|w| w[0].created_at >= w[1].created_at));
}

#[test]
fn the_free_plan_is_paced_and_refused_the_stream_and_history_by_name() {
    let sandbox = e2e::sandbox().unwrap();
    let client = Client::new(sandbox.trading().url(), "sk_test_free").unwrap();
    let err = client.stream().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("Pro plan") && text.contains("Free"), "{text}");
    assert!(text.contains("paper environment"), "{text}");
    let err = client
        .history()
        .list(&ListBars::new("AAPL", Timeframe::Day))
        .unwrap_err();
    assert_eq!(err.api().unwrap().code.as_deref(), Some("plan_required"));
    // A client told its plan refuses before asking.
    let told = client.clone().with_plan(trading_client::Plan::Free);
    assert!(matches!(
        told.stream().unwrap_err(),
        Error::InvalidRequest(_)
    ));
}

#[test]
fn a_fill_reaches_the_stream_once_across_two_drops_one_during_the_fill() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let mut stream = client.stream_with(fast).unwrap();
    stream.subscribe_orders().unwrap();
    let price = sandbox.trading().price("AMZN");
    let limit = (price - d("3")).round_dp(2);
    let order = client
        .orders()
        .place(
            &OrderRequest::limit("AMZN", Side::Buy, d("2"), limit).time_in_force(TimeInForce::Gtc),
        )
        .unwrap();
    assert!(matches!(next_non_quote(&mut stream), Event::Order(o) if o.id == order.id));

    // Drop one: the fill happens while no connection is open (the reconnect's upgrade
    // is held for two seconds, so the client cannot be back before the fill).
    let mut hold = Fault::on("GET", "/trading/stream");
    hold.delay_ms = Some(2_000);
    sandbox.inject(hold);
    assert_eq!(sandbox.drop_streams(Some(Service::Trading)), 1);
    eventually("the session to close", || {
        sandbox.open_streams(Some(Service::Trading)) == 0
    });
    sandbox.trading().set_price("AMZN", limit - d("1"));
    sandbox.advance(Duration::from_secs(61));
    let mut fills = Vec::new();
    let mut reconnects = 0;
    // Drop two, once the first reconnect is through.
    while reconnects < 2 {
        match next_non_quote(&mut stream) {
            Event::Fill(fill) => fills.push(fill),
            Event::Reconnected { gap } => {
                assert!(gap < Duration::from_secs(5));
                reconnects += 1;
                if reconnects == 1 {
                    sandbox.drop_streams(Some(Service::Trading));
                }
            }
            Event::Order(_) | Event::Account(_) => {}
            other => panic!("{other:?}"),
        }
    }
    // Anything still queued.
    while let Some(Ok(event)) = stream.next_timeout(Duration::from_millis(300)) {
        if let Event::Fill(fill) = event {
            fills.push(fill);
        }
    }
    assert_eq!(fills.len(), 1, "{fills:#?}");
    assert!(
        fills[0].recovered,
        "found by the reconciliation after the reconnect"
    );
    assert_eq!(fills[0].order_id, order.id);
    assert_eq!(stream.stats().reconnects, 2);
}

#[test]
fn quotes_orders_and_account_arrive_on_the_stream() {
    let sandbox = e2e::sandbox().unwrap();
    sandbox
        .trading()
        .set_quote_interval(Duration::from_millis(20));
    let client = client(&sandbox);
    let mut stream = client.stream().unwrap();
    stream.subscribe_quotes(&["AAPL", "MSFT"]).unwrap();
    stream.subscribe_orders().unwrap();
    stream.subscribe_account().unwrap();
    let mut quoted = HashMap::new();
    while quoted.len() < 2 {
        if let Some(Ok(Event::Quote(q))) = stream.next_timeout(Duration::from_secs(10)) {
            quoted.insert(q.symbol.clone(), q.price);
        }
    }
    assert_eq!(quoted["AAPL"], sandbox.trading().price("AAPL"));
    client
        .orders()
        .place(&OrderRequest::market(
            "AAPL",
            Side::Buy,
            Amount::Qty(d("3")),
        ))
        .unwrap();
    let mut seen = (false, false, false);
    while !(seen.0 && seen.1 && seen.2) {
        match stream.next_timeout(Duration::from_secs(10)) {
            Some(Ok(Event::Fill(f))) => {
                assert_eq!(f.qty, d("3"));
                seen.0 = true;
            }
            Some(Ok(Event::Order(o))) => seen.1 |= o.status == OrderStatus::Filled,
            Some(Ok(Event::Account(a))) => seen.2 |= a.positions.iter().any(|p| p.symbol == "AAPL"),
            Some(Ok(_)) => {}
            other => panic!("{other:?}"),
        }
    }
    stream.unsubscribe_quotes(&["AAPL", "MSFT"]).unwrap();
    stream.close();
    assert!(stream.is_closed() || stream.next_timeout(Duration::from_millis(100)).is_some());
}

#[test]
fn a_thousand_forced_disconnects_lose_and_repeat_no_fill() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let mut stream = client.stream_with(fast).unwrap();
    stream.subscribe_orders().unwrap();
    let mut placed = Vec::new();
    let mut fills: HashMap<String, usize> = HashMap::new();
    let mut reconnects = 0u32;
    let started = Instant::now();
    for i in 0..1000 {
        eventually("a session to drop", || {
            sandbox.drop_streams(Some(Service::Trading)) == 1
        });
        // Every 100th disconnect, an order fills at once, while (or just after) the
        // stream is down.
        if i % 100 == 50 {
            let order = client
                .orders()
                .place(&OrderRequest::market(
                    "AAPL",
                    Side::Buy,
                    Amount::Qty(d("1")),
                ))
                .unwrap();
            placed.push(order.id);
        }
        // Until this drop's reconnect is through.
        loop {
            match stream.next_timeout(Duration::from_secs(10)) {
                Some(Ok(Event::Reconnected { .. })) => {
                    reconnects += 1;
                    break;
                }
                Some(Ok(Event::Fill(f))) => *fills.entry(f.execution_id).or_default() += 1,
                Some(Ok(_)) => {}
                other => panic!("after {reconnects} reconnects: {other:?}"),
            }
        }
    }
    while let Some(Ok(event)) = stream.next_timeout(Duration::from_millis(300)) {
        if let Event::Fill(f) = event {
            *fills.entry(f.execution_id).or_default() += 1;
        }
    }
    assert_eq!(reconnects, 1000);
    assert_eq!(stream.stats().reconnects, 1000);
    assert_eq!(fills.len(), placed.len(), "{fills:?}");
    assert!(
        fills.values().all(|&n| n == 1),
        "a fill was repeated: {fills:?}"
    );
    eprintln!(
        "1000 forced disconnects: {reconnects} reconnects, {} fills each delivered once, in {:.1?}",
        fills.len(),
        started.elapsed()
    );
}

#[test]
fn orders_are_listed_page_by_page_and_a_filled_order_cannot_be_canceled() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let price = sandbox.trading().price("AAPL");
    let below = (price * d("0.5")).round_dp(2);
    let mut placed = Vec::new();
    for _ in 0..12 {
        let order = client
            .orders()
            .place(
                &OrderRequest::limit("AAPL", Side::Buy, d("1"), below)
                    .time_in_force(TimeInForce::Gtc),
            )
            .unwrap();
        placed.push(order.id.to_string());
    }
    // By creation, newest first, five a page.
    let newest_first: Vec<String> = client
        .orders()
        .iter_from(&trading_client::orders::ListOrders::new().all().limit(5))
        .map(|o| o.unwrap().id.to_string())
        .collect();
    let mut expected = placed.clone();
    expected.reverse();
    assert_eq!(newest_first, expected);
    // By change: every order once, in change order, across pages.
    let first = client
        .orders()
        .list(
            &trading_client::orders::ListOrders::new()
                .all()
                .limit(5)
                .updated_since(trading_client::time::OffsetDateTime::UNIX_EPOCH),
        )
        .unwrap();
    assert_eq!(first.data.len(), 5);
    let token = first.next_page_token.clone().expect("a second page");
    let rest: Vec<String> = client
        .orders()
        .iter_from(
            &trading_client::orders::ListOrders::new()
                .all()
                .limit(5)
                .updated_since(trading_client::time::OffsetDateTime::UNIX_EPOCH)
                .page_token(token),
        )
        .map(|o| o.unwrap().id.to_string())
        .collect();
    let mut all: Vec<String> = first.data.iter().map(|o| o.id.to_string()).collect();
    all.extend(rest);
    assert_eq!(all.len(), 12, "{all:?}");
    let mut sorted = all.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 12, "no order twice");

    // A market order fills at once; canceling it is a conflict with its state.
    let filled = client
        .orders()
        .place(&OrderRequest::market(
            "AAPL",
            Side::Buy,
            Amount::Qty(d("1")),
        ))
        .unwrap();
    let err = client.orders().cancel(filled.id.clone()).unwrap_err();
    assert_eq!(err.status(), Some(409), "{err:?}");
    assert_eq!(err.kind(), trading_client::ErrorKind::Conflict, "{err:?}");
    assert!(err.to_string().contains("filled"), "{err}");
    assert_eq!(
        client.orders().get(filled.id).unwrap().status,
        OrderStatus::Filled
    );
}

#[test]
fn a_brackets_exit_fill_comes_as_its_own_fill_once() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let mut stream = client.stream_with(fast).unwrap();
    stream.subscribe_orders().unwrap();
    let price = sandbox.trading().price("AAPL");
    let take = (price * d("1.05")).round_dp(2);
    let stop = (price * d("0.95")).round_dp(2);
    let bracket = client
        .orders()
        .place(&OrderRequest::bracket(
            "AAPL",
            Side::Buy,
            d("2"),
            Entry::Market,
            take,
            StopLoss::at(stop),
        ))
        .unwrap();
    let exit_id = bracket.legs[0].id.clone();
    let mut events = Vec::new();
    // The entry's fill and its order event.
    while let Some(Ok(event)) = stream.next_timeout(Duration::from_millis(300)) {
        events.push(event);
    }
    // The take-profit is reached: its leg fills, the stop is canceled.
    sandbox.trading().set_price("AAPL", take + d("1"));
    sandbox.advance(Duration::from_secs(61));
    let mut later = Vec::new();
    while let Some(Ok(event)) = stream.next_timeout(Duration::from_millis(500)) {
        later.push(event);
    }
    let fills: Vec<String> = events
        .iter()
        .chain(later.iter())
        .filter_map(|e| match e {
            Event::Fill(f) => Some(f.order_id.to_string()),
            _ => None,
        })
        .collect();
    let legs_filled = fills
        .iter()
        .filter(|id| **id == exit_id.to_string())
        .count();
    assert_eq!(
        legs_filled, 1,
        "the exit's fill, as its own event, once: {fills:?}"
    );
    assert!(
        fills.contains(&bracket.id.to_string()),
        "the entry's fill: {fills:?}"
    );
    let order_events: Vec<String> = later
        .iter()
        .filter_map(|e| match e {
            Event::Order(o) => Some(format!(
                "{} {} [{}]",
                o.id,
                o.status,
                o.legs
                    .iter()
                    .map(|l| l.status.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )),
            _ => None,
        })
        .collect();
    let mut distinct = order_events.clone();
    distinct.dedup();
    assert_eq!(
        distinct, order_events,
        "no order event repeated: {order_events:?}"
    );
}

#[test]
fn positions_close_in_part_and_in_whole_once_and_open_orders_cancel_at_once() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    for (symbol, qty) in [("AAPL", "10"), ("MSFT", "4")] {
        client
            .orders()
            .place(&OrderRequest::market(
                symbol,
                Side::Buy,
                Amount::Qty(d(qty)),
            ))
            .unwrap();
    }
    let held: Vec<(String, Option<Decimal>)> = client
        .positions()
        .list()
        .unwrap()
        .into_iter()
        .map(|p| (p.symbol, p.qty))
        .collect();
    assert_eq!(
        held,
        [
            ("AAPL".to_owned(), Some(d("10"))),
            ("MSFT".to_owned(), Some(d("4")))
        ]
    );
    // Half of AAPL, then 2 shares, then what is left of everything.
    let half = client
        .positions()
        .close("AAPL", trading_client::positions::Close::Percent(d("50")))
        .unwrap();
    assert_eq!((half.side.clone(), half.qty), (Side::Sell, Some(d("5"))));
    client
        .positions()
        .close("AAPL", trading_client::positions::Close::Qty(d("2")))
        .unwrap();
    assert_eq!(client.positions().get("AAPL").unwrap().qty, Some(d("3")));
    let too_many = client
        .positions()
        .close("AAPL", trading_client::positions::Close::Qty(d("4")))
        .unwrap_err();
    assert_eq!(too_many.status(), Some(403), "{too_many:?}");
    let closing = client.positions().close_all().unwrap();
    assert!(closing.is_complete(), "{closing:?}");
    assert_eq!(closing.done.len(), 2);
    assert!(client.positions().list().unwrap().is_empty());
    let gone = client.positions().get("AAPL").unwrap_err();
    assert_eq!(gone.kind(), trading_client::ErrorKind::NotFound, "{gone:?}");

    // Cancel all: the resting orders, once.
    let price = sandbox.trading().price("AAPL");
    let below = (price * d("0.5")).round_dp(2);
    for _ in 0..3 {
        client
            .orders()
            .place(
                &OrderRequest::limit("AAPL", Side::Buy, d("1"), below)
                    .time_in_force(TimeInForce::Gtc),
            )
            .unwrap();
    }
    let canceled = client
        .orders()
        .cancel_all()
        .unwrap()
        .into_complete()
        .unwrap();
    assert_eq!(canceled.len(), 3);
    assert!(canceled.iter().all(|o| o.status == OrderStatus::Canceled));
    let again = client.orders().cancel_all().unwrap();
    assert!(
        again.done.is_empty() && again.failed.is_empty(),
        "nothing twice"
    );
}

#[test]
fn a_close_whose_answer_is_lost_closes_once() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    client
        .orders()
        .place(&OrderRequest::market(
            "AAPL",
            Side::Buy,
            Amount::Qty(d("6")),
        ))
        .unwrap();
    // The first close is carried out, then its connection drops; the retry answers the
    // same order, so only 2 shares are sold.
    sandbox.inject(Fault::on("DELETE", "/trading/v1/positions/AAPL").drop_connection());
    let order = client
        .positions()
        .close("AAPL", trading_client::positions::Close::Qty(d("2")))
        .unwrap();
    assert_eq!(order.qty, Some(d("2")));
    assert_eq!(client.positions().get("AAPL").unwrap().qty, Some(d("4")));
}

#[test]
fn an_order_is_replaced_in_one_step_once_and_a_filled_one_is_a_conflict() {
    use trading_client::orders::ReplaceOrder;
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let price = sandbox.trading().price("AAPL");
    let below = (price * d("0.8")).round_dp(2);
    let resting = client
        .orders()
        .place(
            &OrderRequest::limit("AAPL", Side::Buy, d("2"), below).time_in_force(TimeInForce::Gtc),
        )
        .unwrap();
    // The answer of the first replace is lost after it was carried out: the retry
    // answers the same replacement.
    sandbox.inject(
        Fault::on("PATCH", &format!("/trading/v1/orders/{}", resting.id)).drop_connection(),
    );
    let lower = (below - d("1")).round_dp(2);
    let new = client
        .orders()
        .replace(
            resting.id.clone(),
            &ReplaceOrder::new().qty(d("3")).limit_price(lower),
        )
        .unwrap();
    assert_eq!(new.replaces.as_ref(), Some(&resting.id));
    assert_eq!((new.qty, new.limit_price), (Some(d("3")), Some(lower)));
    assert_eq!(
        new.time_in_force,
        TimeInForce::Gtc,
        "what was not changed stays"
    );
    let old = client.orders().get(resting.id.clone()).unwrap();
    assert_eq!(old.status, OrderStatus::Replaced);
    assert_eq!(old.replaced_by.as_ref(), Some(&new.id));
    let open = client.orders().list(&ListOrders::new()).unwrap();
    assert_eq!(open.data.len(), 1, "one open order, not two: {open:?}");

    // Nothing to change is refused before sending; a filled order is a conflict.
    assert!(matches!(
        client
            .orders()
            .replace(new.id.clone(), &ReplaceOrder::new()),
        Err(Error::InvalidRequest(_))
    ));
    let filled = client
        .orders()
        .place(&OrderRequest::market(
            "AAPL",
            Side::Buy,
            Amount::Qty(d("1")),
        ))
        .unwrap();
    let err = client
        .orders()
        .replace(filled.id, &ReplaceOrder::new().qty(d("2")))
        .unwrap_err();
    assert_eq!(err.kind(), trading_client::ErrorKind::Conflict, "{err:?}");
}

#[test]
fn the_market_clock_opens_and_closes_and_the_calendar_knows_early_closes() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let clock = client.clock().get().unwrap();
    // Whatever the hour the sandbox starts at, the answer is consistent.
    if clock.is_open {
        assert!(clock.timestamp < clock.next_close && clock.next_close < clock.next_open);
    } else {
        assert!(clock.timestamp < clock.next_open && clock.next_open < clock.next_close);
    }
    // Move past the next open: open; past the next close: closed.
    let target = clock.next_open;
    let wait = (target - clock.timestamp + time::Duration::minutes(1)).unsigned_abs();
    sandbox.advance(wait);
    let later = client.clock().get().unwrap();
    assert!(later.is_open, "{later:?}");
    let to_close = (later.next_close - later.timestamp + time::Duration::minutes(1)).unsigned_abs();
    sandbox.advance(to_close);
    assert!(!client.clock().get().unwrap().is_open);

    // Christmas week 2026: Thursday the 24th closes early, Friday the 25th and the
    // weekend do not trade.
    let days = client
        .clock()
        .calendar(
            time::macros::date!(2026 - 12 - 21),
            time::macros::date!(2026 - 12 - 27),
        )
        .unwrap();
    let shown: Vec<String> = days
        .iter()
        .map(|d| {
            format!(
                "{} {}",
                d.date,
                if d.early_close { "early" } else { "full" }
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            "2026-12-21 full",
            "2026-12-22 full",
            "2026-12-23 full",
            "2026-12-24 early"
        ]
    );
    assert!(days.iter().all(|d| d.open < d.close));
}
