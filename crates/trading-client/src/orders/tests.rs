//! The order types' unit tests.

#![allow(clippy::unwrap_used)]
use super::*;
use rust_decimal::Decimal;

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

#[test]
fn every_kind_writes_exactly_its_fields() {
    let cases = [
        (
            OrderRequest::market("AAPL", Side::Buy, Amount::Notional(d("250.50"))),
            r#"{"symbol":"AAPL","side":"buy","notional":250.50,"type":"market","time_in_force":"day","order_class":"simple","client_order_id":"c1"}"#,
        ),
        (
            OrderRequest::limit("AAPL", Side::Sell, d("0.0000001"), d("187.23"))
                .time_in_force(TimeInForce::Gtc),
            r#"{"symbol":"AAPL","side":"sell","qty":0.0000001,"type":"limit","time_in_force":"gtc","limit_price":187.23,"order_class":"simple","client_order_id":"c1"}"#,
        ),
        (
            OrderRequest::stop_limit("MSFT", Side::Buy, d("3"), d("410"), d("411.5")),
            r#"{"symbol":"MSFT","side":"buy","qty":3,"type":"stop_limit","time_in_force":"day","stop_price":410,"limit_price":411.5,"order_class":"simple","client_order_id":"c1"}"#,
        ),
        (
            OrderRequest::trailing_stop("MSFT", Side::Sell, d("3"), Trail::Percent(d("2.5"))),
            r#"{"symbol":"MSFT","side":"sell","qty":3,"type":"trailing_stop","time_in_force":"day","trail_percent":2.5,"order_class":"simple","client_order_id":"c1"}"#,
        ),
        (
            OrderRequest::bracket(
                "AAPL",
                Side::Buy,
                d("10"),
                Entry::Limit(d("180")),
                d("200"),
                StopLoss::with_limit(d("170"), d("169.5")),
            ),
            r#"{"symbol":"AAPL","side":"buy","qty":10,"type":"limit","time_in_force":"day","limit_price":180,"order_class":"bracket","take_profit":{"limit_price":200},"stop_loss":{"stop_price":170,"limit_price":169.5},"client_order_id":"c1"}"#,
        ),
        (
            OrderRequest::oco(
                "AAPL",
                Side::Sell,
                d("10"),
                d("210"),
                StopLoss::at(d("170")),
            ),
            r#"{"symbol":"AAPL","side":"sell","qty":10,"type":"limit","time_in_force":"day","limit_price":210,"order_class":"oco","take_profit":{"limit_price":210},"stop_loss":{"stop_price":170},"client_order_id":"c1"}"#,
        ),
        (
            OrderRequest::oto(
                "AAPL",
                Side::Buy,
                d("1"),
                Entry::Market,
                Exit::TakeProfit(d("250")),
            ),
            r#"{"symbol":"AAPL","side":"buy","qty":1,"type":"market","time_in_force":"day","order_class":"oto","take_profit":{"limit_price":250},"client_order_id":"c1"}"#,
        ),
    ];
    for (order, want) in cases {
        order.validate().unwrap();
        assert_eq!(order.body("c1"), want);
    }
}

#[test]
fn what_the_types_cannot_check_is_checked_before_sending() {
    let bad = [
        OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::ZERO)),
        OrderRequest::limit("AAPL", Side::Buy, d("1"), d("-1")),
        OrderRequest::market(" ", Side::Buy, Amount::Qty(d("1"))),
        OrderRequest::market("AAPL", Side::Unknown("hold".into()), Amount::Qty(d("1"))),
        OrderRequest::market("AAPL", Side::Buy, Amount::Qty(d("1")))
            .client_order_id("x".repeat(49)),
        OrderRequest::market("AAPL", Side::Buy, Amount::Qty(d("1"))).client_order_id(""),
        OrderRequest::bracket(
            "AAPL",
            Side::Buy,
            d("1"),
            Entry::Market,
            d("0"),
            StopLoss::at(d("1")),
        ),
    ];
    for order in bad {
        assert!(order.validate().is_err(), "{order:?}");
    }
}
