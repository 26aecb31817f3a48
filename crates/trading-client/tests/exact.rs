//! Never silently wrong, over a socket: an answer without its money fields reads as
//! `None` (never a zero someone might trade on), money that is there but unreadable or
//! too precise for a `Decimal` is an error, and an order id sent as a JSON integer keeps
//! its digits, so a placed order is never reported as undecodable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::str::FromStr;

use serde_json::json;
use trading_client::{
    Client, Decimal,
    orders::{Amount, OrderRequest, Side},
};

fn serve(path: &str, body: serde_json::Value) -> (mockito::ServerGuard, mockito::Mock) {
    let mut server = mockito::Server::new();
    let mock = server
        .mock("GET", path)
        .with_header("content-type", "application/json")
        .with_body(body.to_string())
        .expect(1)
        .create();
    (server, mock)
}

#[test]
fn an_account_without_money_fields_has_none_never_zero() {
    let (server, mock) = serve(
        "/v1/account",
        json!({"id": 991, "status": "active", "positions": [{"symbol": "AAPL"}]}),
    );
    let client = testkit::client::<Client>(&server.url());
    let account = client.account().get().unwrap();
    mock.assert();
    assert_eq!(account.id.as_deref(), Some("991"));
    assert_eq!(
        (account.cash, account.buying_power, account.equity),
        (None, None, None)
    );
    assert_eq!(account.currency, None);
    let position = &account.positions[0];
    assert_eq!(position.symbol, "AAPL");
    assert_eq!(
        (
            position.qty,
            position.avg_entry_price,
            position.market_value
        ),
        (None, None, None)
    );
}

#[test]
fn money_that_is_there_but_not_exactly_a_number_is_an_error() {
    for cash in [
        json!("ten dollars"),
        json!(true),
        json!("79228162514264337593543950336"),
        json!("0.12345678901234567890123456789"),
    ] {
        let (server, mock) = serve("/v1/account", json!({"status": "active", "cash": cash}));
        let client = testkit::client::<Client>(&server.url());
        let err = client.account().get().unwrap_err();
        mock.assert();
        assert!(
            matches!(err, trading_client::Error::Decode { status: 200, .. }),
            "{cash}: {err:?}"
        );
        assert!(err.to_string().contains("decimal"), "{err}");
    }
}

#[test]
fn money_at_the_edge_of_a_decimal_reads_exactly() {
    let max = "79228162514264337593543950335";
    let (server, _mock) = serve(
        "/v1/account",
        json!({"cash": max, "equity": 1e-28, "buying_power": "0.1000000000000000000000000001"}),
    );
    let client = testkit::client::<Client>(&server.url());
    let account = client.account().get().unwrap();
    assert_eq!(account.cash, Some(Decimal::MAX));
    assert_eq!(account.equity, Some(Decimal::new(1, 28)));
    assert_eq!(
        account.buying_power,
        Some(Decimal::from_str("0.1000000000000000000000000001").unwrap())
    );
}

#[test]
fn an_order_id_sent_as_an_integer_is_kept_and_the_order_is_placed_once() {
    let mut server = mockito::Server::new();
    let post = server
        .mock("POST", "/v1/orders")
        .with_status(201)
        .with_header("content-type", "application/json")
        .with_body(
            json!({"id": 12345, "client_order_id": "num-1", "status": "accepted", "symbol": "AAPL"})
                .to_string(),
        )
        .expect(1)
        .create();
    let client = testkit::client::<Client>(&server.url());
    let order = client
        .orders()
        .place(
            &OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::ONE))
                .client_order_id("num-1"),
        )
        .unwrap();
    post.assert();
    assert_eq!(order.id.as_str(), "12345");
    assert_eq!(order.filled_qty, None, "absent, not zero");
}

#[test]
fn a_fill_in_an_order_without_its_amounts_is_not_a_fill_of_zero() {
    let (server, _mock) = serve(
        "/v1/orders/ord_1",
        json!({"id": "ord_1", "status": "filled", "fills": [{"execution_id": 7}]}),
    );
    let client = testkit::client::<Client>(&server.url());
    let order = client.orders().get("ord_1").unwrap();
    let execution = &order.fills[0];
    assert_eq!(execution.execution_id, "7");
    assert_eq!((execution.qty, execution.price), (None, None));
    assert_eq!((order.filled_qty, order.filled_avg_price), (None, None));
}
