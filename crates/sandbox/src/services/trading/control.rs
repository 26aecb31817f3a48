//! The control routes under `/_sandbox/trading/`: the quote rate of stream sessions, a
//! symbol's price, and every order placed.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::TradingState;
use super::assets::{known_symbol, unknown_symbol, valid_symbol};
use crate::http::{bad_request, json, object_body};
use crate::state::{Shared, World};

/// The routes relative to `/_sandbox/trading`.
pub(super) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/quotes", post(quotes))
        .route("/prices/{symbol}", post(price))
        .route("/orders", get(orders))
}

/// `POST /quotes {"interval_ms"}`: how often stream sessions send quotes.
async fn quotes(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let interval = match object_body(&body).map(|b| b.get("interval_ms").and_then(Value::as_u64)) {
        Ok(Some(ms)) if ms >= 1 => ms,
        Ok(_) => {
            return bad_request(
                "invalid_interval",
                "interval_ms must be a whole number from 1",
            );
        }
        Err(e) => return e,
    };
    shared.with_world(|w| {
        w.services.get_mut::<TradingState>().quote_interval = Duration::from_millis(interval);
    });
    StatusCode::NO_CONTENT.into_response()
}

/// `POST /prices/{symbol} {"price"}`: moves the symbol's price there from now on.
async fn price(
    State(shared): State<Arc<Shared>>,
    Path(symbol): Path<String>,
    body: Bytes,
) -> Response {
    if !valid_symbol(&symbol) {
        return bad_request("invalid_symbol", format!("{symbol:?} is not a symbol"));
    }
    if !known_symbol(&symbol) {
        return bad_request("unknown_symbol", unknown_symbol(&symbol));
    }
    let price = match object_body(&body).map(|b| b.get("price").cloned()) {
        Ok(Some(Value::Number(n))) => Decimal::from_str(&n.to_string()).ok(),
        Ok(Some(Value::String(s))) => Decimal::from_str(&s).ok(),
        Ok(_) => None,
        Err(e) => return e,
    };
    let Some(price) = price.filter(|p| *p > Decimal::ZERO) else {
        return bad_request("invalid_price", "price must be a positive number");
    };
    shared.with_world(|w| set_price(w, &symbol, price));
    json(
        StatusCode::OK,
        &json!({"symbol": symbol, "price": super::market::number(price)}),
    )
}

pub(super) fn set_price(world: &mut World, symbol: &str, price: Decimal) {
    let seed = world.settings.seed;
    let now = world.now();
    let state = world.services.get_mut::<TradingState>();
    let walk = state.market.price(seed, symbol, now);
    state.offsets.insert(symbol.to_owned(), price - walk);
}

async fn orders(State(shared): State<Arc<Shared>>) -> Response {
    let data = shared.with_world(all_orders);
    json(StatusCode::OK, &json!({"orders": data}))
}

/// Every top order of every key, oldest first.
pub(super) fn all_orders(world: &mut World) -> Vec<Value> {
    let state = world.services.get_mut::<TradingState>();
    let mut all: Vec<(time::OffsetDateTime, Value)> = state
        .accounts
        .values()
        .flat_map(|a| {
            a.orders
                .iter()
                .filter(|o| o.parent.is_none())
                .map(|o| (o.created_at, o.to_json(&a.orders)))
                .collect::<Vec<_>>()
        })
        .collect();
    all.sort_by_key(|(t, _)| *t);
    all.into_iter().map(|(_, v)| v).collect()
}
