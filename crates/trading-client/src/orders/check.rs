//! Is the order the service answered the one asked for? The service answers a repeated
//! `client_order_id` with the order first placed under it, so an id used again for other
//! work comes back as that other order. Each action under a client order id (place,
//! replace, close) compares what it asked for with what it got, and a difference is
//! [`Error::IdConflict`]: nothing new was placed.
//!
//! What is compared is what the answer carries: a field the answer leaves out cannot
//! contradict the request, and a field the service fills in later (the quantity of an
//! order by notional, a trailing stop's moving stop price) is not compared.

use core_http::{Error, Result};
use rust_decimal::Decimal;

use super::model::{Order, OrderId};
use super::replace::ReplaceOrder;
use super::request::{Amount, OrderRequest, OrderType, Trail};

/// The differences found so far, each "field: asked X, answered Y".
#[derive(Default)]
struct Differences(Vec<String>);

impl Differences {
    /// A text field (symbols: case-insensitive) the answer may leave empty.
    fn text(&mut self, name: &str, asked: &str, answered: &str) {
        if !answered.is_empty() && !answered.eq_ignore_ascii_case(asked) {
            self.0
                .push(format!("{name}: asked {asked}, answered {answered}"));
        }
    }

    /// An amount: when asked, the answer's must be equal if it gives one; when not asked,
    /// the answer must not carry one.
    fn amount(&mut self, name: &str, asked: Option<Decimal>, answered: Option<Decimal>) {
        match (asked, answered) {
            (Some(a), Some(b)) if a != b => {
                self.0.push(format!("{name}: asked {a}, answered {b}"));
            }
            (None, Some(b)) => self.0.push(format!("{name}: none asked, answered {b}")),
            _ => {}
        }
    }

    /// An amount checked only when asked (the service may fill it in on its own).
    fn asked_amount(&mut self, name: &str, asked: Option<Decimal>, answered: Option<Decimal>) {
        if asked.is_some() {
            self.amount(name, asked, answered);
        }
    }

    fn into_result(self, client_order_id: &str) -> Result<()> {
        if self.0.is_empty() {
            return Ok(());
        }
        Err(Error::IdConflict {
            id_name: "client_order_id",
            id: client_order_id.to_owned(),
            differs: self.0.join("; "),
        })
    }
}

/// The client order id the answer carries must be the one sent (when it carries one).
fn same_id(d: &mut Differences, client_order_id: &str, order: &Order) {
    if !order.client_order_id.is_empty() && order.client_order_id != client_order_id {
        d.0.push(format!(
            "client_order_id: answered {}",
            order.client_order_id
        ));
    }
}

/// Checks that `order`, answered to placing `request` under `client_order_id`, is that
/// order: symbol, side, quantity or notional, type, time in force, limit, stop and trail,
/// class and extended hours.
pub(crate) fn placed(request: &OrderRequest, client_order_id: &str, order: &Order) -> Result<()> {
    let mut d = Differences::default();
    same_id(&mut d, client_order_id, order);
    d.text("symbol", &request.symbol, &order.symbol);
    d.text("side", request.side.as_str(), order.side.as_str());
    match request.amount {
        Amount::Qty(q) => {
            d.amount("qty", Some(q), order.qty);
            d.amount("notional", None, order.notional);
        }
        // The quantity of an order by notional is known once it fills.
        Amount::Notional(n) => d.amount("notional", Some(n), order.notional),
    }
    d.text("type", kind(request.order_type), order.order_type.as_str());
    d.text(
        "time_in_force",
        request.time_in_force.as_str(),
        order.time_in_force.as_str(),
    );
    let (limit, stop, trail) = prices(request.order_type);
    d.amount("limit_price", limit, order.limit_price);
    match request.order_type {
        // A trailing stop's stop price is where it stands now: it moves.
        OrderType::TrailingStop(_) => {}
        _ => d.amount("stop_price", stop, order.stop_price),
    }
    let (trail_price, trail_percent) = match trail {
        Some(Trail::Price(p)) => (Some(p), None),
        Some(Trail::Percent(p)) => (None, Some(p)),
        None => (None, None),
    };
    d.amount("trail_price", trail_price, order.trail_price);
    d.amount("trail_percent", trail_percent, order.trail_percent);
    d.text(
        "order_class",
        request.order_class().as_str(),
        order.order_class.as_str(),
    );
    match order.extended_hours {
        Some(answered) if answered != request.extended_hours => d.0.push(format!(
            "extended_hours: asked {}, answered {answered}",
            request.extended_hours
        )),
        _ => {}
    }
    d.into_result(client_order_id)
}

/// Checks that `order`, answered to replacing `target` with `change` under
/// `client_order_id`, is that replacement: it replaces `target` (when the answer says
/// what it replaces) and carries each change asked for.
pub(crate) fn replaced(
    target: &OrderId,
    change: &ReplaceOrder,
    client_order_id: &str,
    order: &Order,
) -> Result<()> {
    let mut d = Differences::default();
    same_id(&mut d, client_order_id, order);
    match &order.replaces {
        Some(replaces) if replaces != target => d.0.push(format!(
            "replaces: asked {}, answered {}",
            target.as_str(),
            replaces.as_str()
        )),
        _ => {}
    }
    d.asked_amount("qty", change.qty, order.qty);
    d.asked_amount("limit_price", change.limit_price, order.limit_price);
    d.asked_amount("stop_price", change.stop_price, order.stop_price);
    match change.trail {
        Some(Trail::Price(p)) => d.asked_amount("trail_price", Some(p), order.trail_price),
        Some(Trail::Percent(p)) => d.asked_amount("trail_percent", Some(p), order.trail_percent),
        None => {}
    }
    if let Some(tif) = &change.time_in_force {
        d.text("time_in_force", tif.as_str(), order.time_in_force.as_str());
    }
    d.into_result(client_order_id)
}

/// Checks that `order`, answered to closing (all or `qty` of) the position in `symbol`
/// under `client_order_id`, is that close: the symbol, a market order, the quantity.
pub(crate) fn closed(
    symbol: &str,
    qty: Option<Decimal>,
    client_order_id: &str,
    order: &Order,
) -> Result<()> {
    let mut d = Differences::default();
    same_id(&mut d, client_order_id, order);
    d.text("symbol", symbol, &order.symbol);
    d.text("type", "market", order.order_type.as_str());
    d.asked_amount("qty", qty, order.qty);
    d.into_result(client_order_id)
}

fn kind(order_type: OrderType) -> &'static str {
    match order_type {
        OrderType::Market => "market",
        OrderType::Limit { .. } => "limit",
        OrderType::Stop { .. } => "stop",
        OrderType::StopLimit { .. } => "stop_limit",
        OrderType::TrailingStop(_) => "trailing_stop",
    }
}

/// The limit, stop and trail an order type carries.
fn prices(order_type: OrderType) -> (Option<Decimal>, Option<Decimal>, Option<Trail>) {
    match order_type {
        OrderType::Market => (None, None, None),
        OrderType::Limit { limit } => (Some(limit), None, None),
        OrderType::Stop { stop } => (None, Some(stop), None),
        OrderType::StopLimit { stop, limit } => (Some(limit), Some(stop), None),
        OrderType::TrailingStop(trail) => (None, None, Some(trail)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::orders::{Side, TimeInForce};

    fn order(json: serde_json::Value) -> Order {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_same_order_passes_and_every_difference_is_named() {
        let buy = OrderRequest::limit("AAPL", Side::Buy, Decimal::ONE, Decimal::ONE);
        let same = order(serde_json::json!({
            "id": "o1", "client_order_id": "c1", "symbol": "aapl", "side": "buy",
            "qty": "1.00", "type": "limit", "time_in_force": "day", "limit_price": 1,
            "order_class": "simple", "extended_hours": false
        }));
        placed(&buy, "c1", &same).unwrap();
        // Only the id: nothing contradicts the request.
        placed(&buy, "c1", &order(serde_json::json!({"id": "o1"}))).unwrap();
        let sell = OrderRequest::limit("AAPL", Side::Sell, Decimal::from(5), Decimal::from(9999))
            .time_in_force(TimeInForce::Gtc);
        let err = placed(&sell, "c1", &same).unwrap_err();
        assert_eq!(err.kind(), core_http::ErrorKind::Conflict);
        let text = err.to_string();
        for part in [
            "\"c1\"",
            "side: asked sell, answered buy",
            "qty: asked 5, answered 1.00",
            "limit_price: asked 9999, answered 1",
            "time_in_force: asked gtc, answered day",
            "nothing new was placed",
        ] {
            assert!(text.contains(part), "{part} in {text}");
        }
        let market = OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::ONE))
            .extended_hours(false);
        let err = placed(&market, "c1", &same).unwrap_err().to_string();
        assert!(err.contains("type: asked market, answered limit"), "{err}");
        assert!(err.contains("limit_price: none asked, answered 1"), "{err}");
    }

    #[test]
    fn replacements_and_closes_are_checked_against_their_target() {
        let change = ReplaceOrder::new().limit_price(Decimal::from(187));
        let answer = order(serde_json::json!({
            "id": "o2", "client_order_id": "r1", "replaces": "o1", "limit_price": "187"
        }));
        replaced(&OrderId::from("o1"), &change, "r1", &answer).unwrap();
        let err = replaced(&OrderId::from("o9"), &change, "r1", &answer).unwrap_err();
        assert!(
            err.to_string().contains("replaces: asked o9, answered o1"),
            "{err}"
        );
        let close = order(serde_json::json!({
            "id": "o3", "client_order_id": "x", "symbol": "MSFT", "type": "market", "qty": 2
        }));
        closed("msft", Some(Decimal::from(2)), "x", &close).unwrap();
        let err = closed("AAPL", None, "x", &close).unwrap_err();
        assert!(
            err.to_string()
                .contains("symbol: asked AAPL, answered MSFT"),
            "{err}"
        );
    }
}
