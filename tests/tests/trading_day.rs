//! trading-client against the sandbox: the rest of a trader's day. Order filters,
//! assets and the checks made before sending, account activities, portfolio history,
//! extended hours, a trailing stop's moving stop, news by date range, one quote, and
//! trades and minute bars on the stream.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use rust_decimal::Decimal;
use sandbox::{Sandbox, Service};
use trading_client::{
    Client, Error,
    activities::{ActivityType, ListActivities, Period, PortfolioQuery, Step},
    assets::AssetStatus,
    news::ListNews,
    orders::{
        Amount, Direction, ListOrders, OrderRequest, OrderStatus, Side, StatusFilter, TimeInForce,
        Trail,
    },
    stream::{Event, ReconnectPolicy, StreamConfig},
};

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

fn client(sandbox: &Sandbox) -> Client {
    Client::new(sandbox.trading().url(), sandbox.api_key()).unwrap()
}

fn market(symbol: &str, side: Side, qty: &str) -> OrderRequest {
    OrderRequest::market(symbol, side, Amount::Qty(d(qty)))
}

/// The API error's code, or a panic naming what came instead.
fn code(result: trading_client::Result<impl std::fmt::Debug>) -> String {
    match result {
        Err(Error::Api(e)) => e.code.clone().unwrap_or_default(),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[test]
fn orders_are_filtered_by_status_symbols_side_dates_and_direction() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let t0 = sandbox.now();
    let aapl = client
        .orders()
        .place(&market("AAPL", Side::Buy, "2"))
        .unwrap();
    sandbox.advance(Duration::from_secs(60));
    let t1 = sandbox.now();
    let msft = client
        .orders()
        .place(&market("MSFT", Side::Buy, "1"))
        .unwrap();
    sandbox.advance(Duration::from_secs(60));
    let sell = client
        .orders()
        .place(&market("AAPL", Side::Sell, "1"))
        .unwrap();
    let below = (sandbox.trading().price("TSLA") * d("0.5")).round_dp(2);
    let resting = client
        .orders()
        .place(&OrderRequest::limit("TSLA", Side::Buy, d("1"), below))
        .unwrap();
    let ids = |params: &ListOrders| -> Vec<String> {
        client
            .orders()
            .iter_from(params)
            .map(|o| o.unwrap().id.as_str().to_owned())
            .collect()
    };
    let id = |o: &trading_client::orders::Order| o.id.as_str().to_owned();

    // Status: a typed filter, or one exact status.
    assert_eq!(ids(&ListOrders::new().open()), [id(&resting)]);
    assert_eq!(
        ids(&ListOrders::new().status(StatusFilter::Open)),
        ids(&ListOrders::new())
    );
    assert_eq!(
        ids(&ListOrders::new().status(OrderStatus::Filled)),
        [id(&sell), id(&msft), id(&aapl)]
    );
    // Symbols and side, together.
    assert_eq!(
        ids(&ListOrders::new().all().symbols(&["aapl"])),
        [id(&sell), id(&aapl)]
    );
    assert_eq!(
        ids(&ListOrders::new().all().symbols(&["AAPL"]).side(Side::Buy)),
        [id(&aapl)]
    );
    assert_eq!(
        ids(&ListOrders::new()
            .all()
            .symbols(&["AAPL", "MSFT"])
            .side(Side::Buy)),
        [id(&msft), id(&aapl)]
    );
    // Dates: placed after t0 and up to t1 is the first two.
    assert_eq!(
        ids(&ListOrders::new()
            .all()
            .after(t0 - time::Duration::seconds(1))
            .until(t1)),
        [id(&msft), id(&aapl)]
    );
    assert_eq!(
        ids(&ListOrders::new().all().after(t1)).len(),
        2,
        "the sell and the resting limit"
    );
    // Direction: oldest first, paged two at a time, nothing skipped or repeated.
    assert_eq!(
        ids(&ListOrders::new().all().direction(Direction::Asc).limit(2)),
        [id(&aapl), id(&msft), id(&sell), id(&resting)]
    );
    // A filter the service does not know is refused by name, not ignored.
    let bad = client
        .orders()
        .list(&ListOrders::new().status(OrderStatus::Unknown("later".into())));
    assert_eq!(code(bad), "invalid_status");
}

#[test]
fn assets_say_how_a_symbol_trades_and_checked_orders_are_refused_before_sending() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let active = client.assets().list(None).unwrap();
    assert!(active.iter().any(|a| a.symbol == "AAPL" && a.fractionable));
    assert!(active.iter().all(|a| a.status == AssetStatus::Active));
    let inactive = client.assets().list(Some(AssetStatus::Inactive)).unwrap();
    assert_eq!(
        inactive
            .iter()
            .map(|a| a.symbol.as_str())
            .collect::<Vec<_>>(),
        ["OLDCO"]
    );
    let brk = client.assets().get("brk.a").unwrap();
    assert!(brk.tradable && !brk.fractionable && !brk.shortable);
    assert_eq!(
        (brk.min_qty, brk.qty_increment),
        (Some(d("1")), Some(d("1")))
    );
    assert_eq!(
        client.assets().get("AAPL").unwrap().tick_size,
        Some(d("0.01"))
    );
    let halted = client.assets().get("HALT").unwrap();
    assert!(!halted.tradable);
    assert!(matches!(
        client.assets().get("not a symbol"),
        Err(Error::InvalidRequest(_))
    ));

    // Each refused before sending when asked, and by the service otherwise.
    let price = sandbox.trading().price("AAPL");
    let off_tick = (price * d("0.9")).round_dp(2) + d("0.005");
    let cases = [
        (market("BRK.A", Side::Buy, "0.5"), "fractional_not_allowed"),
        (
            OrderRequest::market("BRK.A", Side::Buy, Amount::Notional(d("1000"))),
            "fractional_not_allowed",
        ),
        (market("HALT", Side::Buy, "1"), "asset_not_tradable"),
        (market("OLDCO", Side::Buy, "1"), "asset_not_tradable"),
        (
            OrderRequest::limit("AAPL", Side::Buy, d("1"), off_tick),
            "sub_penny_price",
        ),
    ];
    for (order, service_code) in &cases {
        let before = sandbox.trading().orders().len();
        match client.orders().place_checked(order) {
            Err(Error::InvalidRequest(why)) => assert!(!why.is_empty()),
            other => panic!("{order:?} was not refused before sending: {other:?}"),
        }
        assert_eq!(sandbox.trading().orders().len(), before, "nothing was sent");
        assert_eq!(
            code(client.orders().place(order)),
            *service_code,
            "{order:?}"
        );
        assert_eq!(sandbox.trading().orders().len(), before);
    }
    // A whole share of BRK.A passes both.
    let whole = market("BRK.A", Side::Buy, "1");
    client.assets().get("BRK.A").unwrap().check(&whole).unwrap();
    assert_eq!(
        client.orders().place_checked(&whole).unwrap().status,
        OrderStatus::Filled
    );
}

#[test]
fn activities_list_fills_and_the_deposit_paged_and_filtered() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let opened = client.account().get().unwrap();
    assert!(opened.cash.is_some());
    let mut placed = Vec::new();
    for symbol in ["AAPL", "MSFT", "NVDA"] {
        sandbox.advance(Duration::from_secs(60));
        placed.push(
            client
                .orders()
                .place(&market(symbol, Side::Buy, "2"))
                .unwrap(),
        );
    }
    let all: Vec<_> = client
        .activities()
        .iter_from(&ListActivities::new().limit(2))
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        all.len(),
        4,
        "three fills and the opening deposit: {all:#?}"
    );
    assert_eq!(all[3].activity_type, ActivityType::Deposit, "newest first");
    assert_eq!(all[3].net_amount, Some(d("100000")));
    // Cash moved by the activities is the cash the account has.
    let moved: Decimal = all.iter().map(|a| a.net_amount.unwrap()).sum();
    assert_eq!(
        moved.round_dp(2),
        client.account().get().unwrap().cash.unwrap()
    );
    // Each fill names its order, quantity and price; oldest first when asked.
    let fills: Vec<_> = client
        .activities()
        .iter_from(
            &ListActivities::new()
                .types(&[ActivityType::Fill])
                .direction(Direction::Asc),
        )
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        fills
            .iter()
            .map(|f| f.order_id.clone().unwrap())
            .collect::<Vec<_>>(),
        placed.iter().map(|o| o.id.clone()).collect::<Vec<_>>()
    );
    for (fill, order) in fills.iter().zip(&placed) {
        assert_eq!(fill.qty, Some(d("2")));
        assert_eq!(fill.price, order.filled_avg_price);
        assert_eq!(fill.net_amount, Some(-d("2") * fill.price.unwrap()));
    }
    // A date range.
    let after_first = fills[0].transaction_time.unwrap();
    let later = client
        .activities()
        .list(
            &ListActivities::new()
                .types(&[ActivityType::Fill])
                .after(after_first),
        )
        .unwrap();
    assert_eq!(later.data.len(), 2);
    assert!(later.next_page_token.is_none());
}

#[test]
fn portfolio_history_follows_equity_as_prices_move() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    client
        .orders()
        .place(&market("AAPL", Side::Buy, "10"))
        .unwrap();
    sandbox.advance(Duration::from_secs(2 * 3600));
    let up = sandbox.trading().price("AAPL") + d("25");
    sandbox.trading().set_price("AAPL", up);
    let history = client
        .account()
        .portfolio_history(&PortfolioQuery::new(Period::Day, Step::Hour))
        .unwrap();
    assert_eq!(history.points.len(), 25, "a day in hours, both ends");
    assert!(
        history
            .points
            .windows(2)
            .all(|w| w[1].timestamp - w[0].timestamp == time::Duration::hours(1))
    );
    let first = &history.points[0];
    let last = history.points.last().unwrap();
    assert_eq!(Some(first.equity), history.base_value);
    assert_eq!(first.profit_loss, Some(Decimal::ZERO));
    // The last point is the account as it stands now.
    let account = client.account().get().unwrap();
    assert_eq!(Some(last.equity), account.equity);
    assert_eq!(last.profit_loss, Some(last.equity - first.equity));
    // Too many points is refused by name.
    let minutes_a_year = PortfolioQuery::new(Period::Year, Step::Minute);
    assert_eq!(
        code(client.account().portfolio_history(&minutes_a_year)),
        "too_many_points"
    );
}

#[test]
fn extended_hours_go_on_day_limits_only_and_a_trailing_stop_shows_its_stop() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let price = sandbox.trading().price("AAPL");
    let below = (price * d("0.8")).round_dp(2);
    let early = client
        .orders()
        .place(&OrderRequest::limit("AAPL", Side::Buy, d("1"), below).extended_hours(true))
        .unwrap();
    assert_eq!(early.extended_hours, Some(true));
    assert_eq!(
        client.orders().get(&early.id).unwrap().extended_hours,
        Some(true)
    );
    let before = sandbox.trading().orders().len();
    for not_allowed in [
        market("AAPL", Side::Buy, "1").extended_hours(true),
        OrderRequest::limit("AAPL", Side::Buy, d("1"), below)
            .time_in_force(TimeInForce::Gtc)
            .extended_hours(true),
    ] {
        assert!(matches!(
            client.orders().place(&not_allowed),
            Err(Error::InvalidRequest(_))
        ));
    }
    assert_eq!(sandbox.trading().orders().len(), before, "nothing was sent");

    // A trailing stop: its stop follows the best price seen.
    client
        .orders()
        .place(&market("AAPL", Side::Buy, "5"))
        .unwrap();
    let trailing = client
        .orders()
        .place(&OrderRequest::trailing_stop(
            "AAPL",
            Side::Sell,
            d("5"),
            Trail::Price(d("5")),
        ))
        .unwrap();
    let mark = trailing.hwm.unwrap();
    assert_eq!(trailing.stop_price, Some(mark - d("5")));
    sandbox.trading().set_price("AAPL", mark + d("10"));
    sandbox.advance(Duration::from_secs(61));
    let moved = client.orders().get(&trailing.id).unwrap();
    assert_eq!(moved.status, OrderStatus::New);
    let new_mark = moved.hwm.unwrap();
    assert!(
        new_mark >= mark + d("10") - d("1"),
        "{new_mark} after {mark}"
    );
    assert_eq!(moved.stop_price, Some(new_mark - d("5")));
}

#[test]
fn news_by_date_range_and_one_quote() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let end = sandbox.now() - time::Duration::days(3);
    let start = end - time::Duration::days(2);
    let items: Vec<_> = client
        .news()
        .iter_from(&ListNews::new(&["AAPL"]).start(start).end(end))
        .map(Result::unwrap)
        .collect();
    // An item every six hours: eight in two days, every one inside the range.
    assert!((8..=9).contains(&items.len()), "{}", items.len());
    assert!(items.iter().all(|n| {
        let t = n.created_at.unwrap();
        start <= t && t <= end
    }));
    assert!(
        client
            .news()
            .list(&ListNews::new(&["AAPL"]).start(end).end(start).limit(10))
            .is_err()
    );

    let quote = client.markets().quote("aapl").unwrap();
    assert_eq!(quote.symbol, "AAPL");
    assert_eq!(quote.price, sandbox.trading().price("AAPL"));
}

#[test]
fn trades_and_minute_bars_arrive_on_the_stream_and_survive_a_reconnect() {
    let sandbox = e2e::sandbox().unwrap();
    sandbox
        .trading()
        .set_quote_interval(Duration::from_millis(20));
    let client = client(&sandbox);
    let mut policy = ReconnectPolicy::default();
    policy.backoff =
        core_http::config::Backoff::new(Duration::from_millis(2), Duration::from_millis(10), 1.0);
    let mut stream = client
        .stream_with(|c: StreamConfig| c.reconnect(policy))
        .unwrap();
    stream.subscribe_trades(&["AAPL"]).unwrap();
    stream.subscribe_bars(&["MSFT"]).unwrap();
    let mut trades = 0;
    let mut bars = Vec::new();
    let mut reconnected = false;
    let mut advanced = 0;
    while trades < 20 || bars.len() < 2 {
        match stream.next_timeout(Duration::from_secs(10)) {
            Some(Ok(Event::Trade(t))) => {
                assert_eq!(t.symbol, "AAPL");
                trades += 1;
                if trades == 10 && !reconnected {
                    assert_eq!(sandbox.drop_streams(Some(Service::Trading)), 1);
                }
            }
            Some(Ok(Event::Bar(b))) => {
                assert_eq!(b.symbol.as_deref(), Some("MSFT"));
                assert_eq!(b.t.second(), 0);
                assert!(b.l <= b.o && b.o <= b.h && b.l <= b.c && b.c <= b.h);
                bars.push(b);
            }
            Some(Ok(Event::Reconnected { .. })) => reconnected = true,
            Some(Ok(Event::Quote(_))) => panic!("no quotes were asked for"),
            Some(Ok(_)) => {}
            other => panic!("{other:?}"),
        }
        // The clock moves a minute at a time once trades flow, so bars come.
        if trades >= 5 && bars.len() == advanced {
            sandbox.advance(Duration::from_secs(60));
            advanced += 1;
        }
    }
    assert!(
        reconnected,
        "the subscriptions were replayed after the drop"
    );
    assert!(bars[1].t > bars[0].t);
}
