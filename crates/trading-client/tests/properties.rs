//! Property tests of the decoders: every answer valid under what the service's document
//! shows (a quote's `price`, an order's `id`; everything else optional) decodes, with
//! unknown fields, money in any JSON form and optional fields absent or null; and no
//! answer at all makes a decoder panic. Answers go through text, as they arrive: money is
//! read from the number's exact text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Value, json};
use testkit::arb::{Field, Kind, cases, json as any_json, object, optional, required};
use trading_client::{
    account::Account,
    markets::{Bar, OrderBook, Quote, Trade},
    news::NewsItem,
    orders::Order,
};

fn money(name: &'static str) -> Field {
    optional(name, Kind::Decimal)
}

fn quote() -> BoxedStrategy<Value> {
    object(vec![
        required("price", Kind::Decimal),
        optional("symbol", Kind::Text),
        money("bid"),
        money("ask"),
        optional("bid_size", Kind::Integer),
        optional("ask_size", Kind::Integer),
        optional("timestamp", Kind::Timestamp),
    ])
}

fn execution() -> Vec<Field> {
    vec![
        optional("execution_id", Kind::Id),
        money("qty"),
        money("price"),
        optional("timestamp", Kind::Timestamp),
    ]
}

fn order_fields() -> Vec<Field> {
    vec![
        required("id", Kind::Id),
        optional("client_order_id", Kind::Text),
        optional("symbol", Kind::Text),
        optional("side", Kind::Word(&["buy", "sell"])),
        money("qty"),
        money("notional"),
        optional(
            "type",
            Kind::Word(&["market", "limit", "stop", "stop_limit", "trailing_stop"]),
        ),
        optional("time_in_force", Kind::Word(&["day", "gtc", "ioc", "fok"])),
        money("limit_price"),
        money("stop_price"),
        money("trail_price"),
        money("trail_percent"),
        optional(
            "order_class",
            Kind::Word(&["simple", "bracket", "oco", "oto"]),
        ),
        optional(
            "status",
            Kind::Word(&[
                "new",
                "partially_filled",
                "filled",
                "canceled",
                "expired",
                "rejected",
            ]),
        ),
        money("filled_qty"),
        money("filled_avg_price"),
        optional("created_at", Kind::Timestamp),
        optional("updated_at", Kind::Timestamp),
        optional("filled_at", Kind::Timestamp),
        optional("canceled_at", Kind::Timestamp),
        optional("fills", Kind::Objects(execution())),
        optional("parent_id", Kind::Id),
    ]
}

fn order() -> BoxedStrategy<Value> {
    let mut with_legs = order_fields();
    with_legs.push(optional("legs", Kind::Objects(order_fields())));
    object(with_legs)
}

fn account() -> BoxedStrategy<Value> {
    object(vec![
        optional("id", Kind::Id),
        optional("status", Kind::Word(&["active", "restricted", "closed"])),
        optional("currency", Kind::Text),
        money("cash"),
        money("buying_power"),
        money("equity"),
        optional(
            "positions",
            Kind::Objects(vec![
                optional("symbol", Kind::Text),
                money("qty"),
                money("avg_entry_price"),
                money("market_value"),
                money("unrealized_pl"),
                money("current_price"),
            ]),
        ),
    ])
}

fn bar() -> BoxedStrategy<Value> {
    // A bar is its time and four prices (the crate's documented choice).
    object(vec![
        required("t", Kind::Timestamp),
        required("o", Kind::Decimal),
        required("h", Kind::Decimal),
        required("l", Kind::Decimal),
        required("c", Kind::Decimal),
        optional("v", Kind::Integer),
        optional("symbol", Kind::Text),
    ])
}

fn book() -> BoxedStrategy<Value> {
    let level = vec![
        required("price", Kind::Decimal),
        optional("size", Kind::Integer),
    ];
    object(vec![
        optional("symbol", Kind::Text),
        optional("timestamp", Kind::Timestamp),
        optional("bids", Kind::Objects(level.clone())),
        optional("asks", Kind::Objects(level)),
    ])
}

fn trade() -> BoxedStrategy<Value> {
    object(vec![
        optional("id", Kind::Id),
        optional("symbol", Kind::Text),
        required("price", Kind::Decimal),
        optional("size", Kind::Integer),
        optional("timestamp", Kind::Timestamp),
    ])
}

fn news() -> BoxedStrategy<Value> {
    object(vec![
        optional("id", Kind::Id),
        optional("kind", Kind::Word(&["news", "earnings"])),
        optional("headline", Kind::Text),
        optional("summary", Kind::Text),
        optional("source", Kind::Text),
        optional("symbols", Kind::Texts),
        optional("url", Kind::Text),
        optional("created_at", Kind::Timestamp),
        optional(
            "earnings",
            Kind::Object(vec![
                optional("fiscal_period", Kind::Text),
                money("eps_estimate"),
                money("eps_actual"),
            ]),
        ),
    ])
}

/// `value` as the text a server sends, decoded as `T`.
fn decode<T: serde::de::DeserializeOwned>(value: &Value) -> serde_json::Result<T> {
    serde_json::from_str(&value.to_string())
}

/// The same number, read exactly, whatever form it took.
fn same_amount(decoded: trading_client::Decimal, sent: &Value) -> bool {
    let text = match sent {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let want = text
        .parse::<trading_client::Decimal>()
        .or_else(|_| trading_client::Decimal::from_scientific(&text));
    want.is_ok_and(|w| w == decoded)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn documented_answers_always_decode(
        quote in quote(),
        order in order(),
        account in account(),
        bar in bar(),
        book in book(),
        trade in trade(),
        news in news(),
    ) {
        let q: Quote = decode(&quote).unwrap();
        prop_assert!(same_amount(q.price, &quote["price"]), "{} from {}", q.price, quote["price"]);
        let o: Order = decode(&order).unwrap();
        prop_assert_eq!(o.id.as_str(), order["id"].as_str().unwrap());
        decode::<Account>(&account).unwrap();
        let b: Bar = decode(&bar).unwrap();
        prop_assert!(same_amount(b.c, &bar["c"]));
        decode::<OrderBook>(&book).unwrap();
        decode::<Trade>(&trade).unwrap();
        decode::<NewsItem>(&news).unwrap();
    }

    #[test]
    fn no_answer_panics_a_decoder(value in any_json()) {
        let _ = decode::<Quote>(&value);
        let _ = decode::<Order>(&value);
        let _ = decode::<Account>(&value);
        let _ = decode::<Bar>(&value);
        let _ = decode::<OrderBook>(&value);
        let _ = decode::<Trade>(&value);
        let _ = decode::<NewsItem>(&value);
    }

    #[test]
    fn a_price_that_is_not_a_number_is_an_error_not_zero(junk in prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        "[a-z ]{0,8}".prop_map(Value::String),
        Just(json!([1])),
        Just(json!({"amount": 1})),
    ]) {
        let junk_price = json!({"price": junk});
        prop_assert!(decode::<Quote>(&junk_price).is_err());
        let no_price = json!({"symbol": "AAPL"});
        prop_assert!(decode::<Quote>(&no_price).is_err(), "price is required");
    }
}
