//! Positions (list, get one, close one in whole or in part, close all) and canceling
//! every open order. Closing places a market order the other way, under a
//! `client_order_id`, so a repeated close answers the first one's order.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::{Value, json};

use super::super::{TradingState, account, publish};
use super::order_body::parse_order;
use super::orders::place_order;
use crate::http::{Caller, Params, bad_request, error, json};
use crate::state::Shared;
use crate::state::World;

/// The caller's positions as the account shows them (symbol, qty, prices, P/L).
fn positions(w: &mut World, key: &str) -> Vec<Value> {
    let seed = w.settings.seed;
    let now = w.now();
    account(w, key);
    let TradingState {
        accounts,
        market,
        offsets,
        ..
    } = w.services.get_mut::<TradingState>();
    accounts
        .get(key)
        .map(|a| {
            a.to_json(&mut |s| {
                (market.price(seed, s, now) + offsets.get(s).copied().unwrap_or_default())
                    .max(Decimal::new(1, 2))
            })
        })
        .and_then(|a| a.get("positions").and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

fn not_found(symbol: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "position_not_found",
        format!("there is no open position in {symbol}"),
    )
}

/// `GET /v1/positions`.
pub(super) async fn list(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    shared.with_world(|w| {
        json(
            StatusCode::OK,
            &json!({"positions": positions(w, &caller.key)}),
        )
    })
}

/// `GET /v1/positions/{symbol}`.
pub(super) async fn get_one(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(symbol): Path<String>,
) -> Response {
    // Symbols are upper case, as orders have them: `msft` is MSFT.
    let symbol = symbol.to_ascii_uppercase();
    shared.with_world(|w| {
        match positions(w, &caller.key)
            .into_iter()
            .find(|p| p["symbol"] == symbol.as_str())
        {
            Some(p) => json(StatusCode::OK, &p),
            None => not_found(&symbol),
        }
    })
}

/// Places the market order that closes `qty` of the position in `symbol` (all of it
/// when `None`) under `client_order_id`; the order, or the error.
fn close(
    w: &mut World,
    key: &str,
    symbol: &str,
    part: Part,
    client_order_id: Option<&str>,
) -> Response {
    // A repeated close answers the first one's order, whatever the position is now; an
    // id already used for another symbol's order is refused, never answered with it.
    if let Some(cid) = client_order_id {
        let acct = account(w, key);
        if let Some(&i) = acct.by_client_id.get(cid) {
            let first = &acct.orders[i];
            if first.symbol != symbol {
                return error(
                    StatusCode::CONFLICT,
                    "client_order_id_in_use",
                    format!(
                        "client_order_id {cid} is already used by order {} for {}",
                        first.id, first.symbol
                    ),
                );
            }
            return json(StatusCode::OK, &first.to_json(&acct.orders));
        }
    }
    let held = account(w, key)
        .positions
        .get(symbol)
        .map(|p| p.qty)
        .unwrap_or_default();
    if held.is_zero() {
        return not_found(symbol);
    }
    let qty = match part {
        Part::All => held.abs(),
        // The same refusal as a sell of more than is held: 403.
        Part::Qty(q) if q > held.abs() => {
            return error(
                StatusCode::FORBIDDEN,
                "insufficient_qty",
                format!("the position in {symbol} is {}", held.abs()),
            );
        }
        Part::Qty(q) => q,
        Part::Percent(p) => (held.abs() * p / Decimal::from(100))
            .round_dp_with_strategy(4, RoundingStrategy::ToZero),
    };
    if qty <= Decimal::ZERO {
        return bad_request("invalid_qty", "the quantity to close is zero");
    }
    let side = if held > Decimal::ZERO { "sell" } else { "buy" };
    let mut body = json!({"symbol": symbol, "side": side, "type": "market", "qty": qty.to_string(), "time_in_force": "day"});
    if let Some(cid) = client_order_id {
        body["client_order_id"] = cid.into();
    }
    match parse_order(&Bytes::from(body.to_string())) {
        Ok(new) => place_order(w, key, &new),
        Err(e) => e,
    }
}

/// Closes all of the position in `symbol`: the order placed, or the refusal's status
/// and body.
fn close_body(
    w: &mut World,
    key: &str,
    symbol: &str,
    client_order_id: Option<&str>,
) -> Result<Value, (u16, Value)> {
    let answer = close(w, key, symbol, Part::All, client_order_id);
    let status = answer.status().as_u16();
    if answer.status().is_success() {
        let acct = account(w, key);
        let i = client_order_id
            .and_then(|c| acct.by_client_id.get(c).copied())
            .or_else(|| acct.orders.len().checked_sub(1));
        return Ok(i.map_or(Value::Null, |i| acct.orders[i].to_json(&acct.orders)));
    }
    Err((status, crate::http::error_body(&answer)))
}

/// How much of a position to close.
#[derive(Debug, Clone, Copy)]
enum Part {
    All,
    Qty(Decimal),
    Percent(Decimal),
}

fn part(params: &Params) -> Result<Part, Response> {
    let number = |name: &str| -> Result<Option<Decimal>, Response> {
        match params.get(name) {
            None => Ok(None),
            Some(v) => v
                .parse::<Decimal>()
                .ok()
                .filter(|d| *d > Decimal::ZERO)
                .map(Some)
                .ok_or_else(|| {
                    bad_request(
                        &format!("invalid_{name}"),
                        format!("{name} is a positive number"),
                    )
                }),
        }
    };
    match (number("qty")?, number("percentage")?) {
        (Some(_), Some(_)) => Err(bad_request(
            "invalid_request",
            "give qty or percentage, not both",
        )),
        (Some(q), None) => Ok(Part::Qty(q)),
        (None, Some(p)) if p <= Decimal::from(100) => Ok(Part::Percent(p)),
        (None, Some(_)) => Err(bad_request("invalid_percentage", "percentage is 0 to 100")),
        (None, None) => Ok(Part::All),
    }
}

/// `DELETE /v1/positions/{symbol}?qty|percentage&client_order_id`.
pub(super) async fn close_one(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(symbol): Path<String>,
    params: Params,
) -> Response {
    let part = match part(&params) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let cid = params.get("client_order_id");
    let symbol = symbol.to_ascii_uppercase();
    shared.with_world(|w| close(w, &caller.key, &symbol, part, cid.as_deref()))
}

/// `DELETE /v1/positions?client_order_id`: every position, each under
/// `<client_order_id>-<symbol>`; `{"orders": [...]}` when every one closes, else a
/// `207 Multi-Status` whose `orders` hold `{"symbol", "status", "body"}` per position
/// (the order, or the error), so that a partial close is never read as whole.
pub(super) async fn close_all(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Response {
    let cid = params.get("client_order_id");
    shared.with_world(|w| {
        let symbols: Vec<String> = account(w, &caller.key)
            .positions
            .iter()
            .filter(|(_, p)| !p.qty.is_zero())
            .map(|(s, _)| s.clone())
            .collect();
        let mut entries = Vec::new();
        let mut all_closed = true;
        for symbol in symbols {
            let leg_cid = cid.as_ref().map(|c| format!("{c}-{symbol}"));
            let (status, body) = match close_body(w, &caller.key, &symbol, leg_cid.as_deref()) {
                Ok(order) => (200, order),
                Err((status, body)) => {
                    all_closed = false;
                    (status, body)
                }
            };
            entries.push(json!({"symbol": symbol, "status": status, "body": body}));
        }
        if all_closed {
            let orders: Vec<Value> = entries.into_iter().map(|e| e["body"].clone()).collect();
            json(StatusCode::OK, &json!({"orders": orders}))
        } else {
            json(StatusCode::MULTI_STATUS, &json!({"orders": entries}))
        }
    })
}

/// `DELETE /v1/orders`: cancels every open order; `{"orders": [...]}`, those canceled.
pub(super) async fn cancel_all(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    shared.with_world(|w| {
        let now = w.now();
        let acct = account(w, &caller.key);
        // Every open order, legs included (a filled entry's working exits too); the
        // answer lists each top order that had something canceled, once.
        let open: Vec<usize> = (0..acct.orders.len())
            .filter(|&i| acct.orders[i].is_open())
            .collect();
        let mut events = Vec::new();
        let mut tops: Vec<usize> = Vec::new();
        for &i in &open {
            if acct.orders[i].is_open() {
                acct.finish(i, "canceled", now, &mut events);
            }
            let top = acct.orders[i].parent.unwrap_or(i);
            if !tops.contains(&top) {
                tops.push(top);
            }
        }
        let orders: Vec<Value> = tops
            .iter()
            .map(|&i| acct.orders[i].to_json(&acct.orders))
            .collect();
        if !open.is_empty() {
            events.push(("account", Value::Null));
        }
        publish(w, &caller.key, events);
        json(StatusCode::OK, &json!({"orders": orders}))
    })
}
