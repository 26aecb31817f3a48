//! The order routes: place, list, get, cancel.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use rust_decimal::Decimal;
use serde_json::{Value, json};
use time::OffsetDateTime;

use super::super::engine::{Kind, Order, Side, day_end};
use super::super::{TradingState, account, publish};
use crate::http::{Caller, Object, error, json};
use crate::state::{Shared, World};

use super::order_body::{NewOrder, parse_order};

fn order(
    world: &mut World,
    new: &NewOrder,
    kind: Kind,
    side: Side,
    held: bool,
    now: OffsetDateTime,
) -> Order {
    Order {
        id: world.ids.next("ord"),
        client_order_id: String::new(),
        symbol: new.symbol.clone(),
        side,
        qty: new.qty,
        notional: new.notional,
        kind,
        tif: new.tif.clone(),
        limit: None,
        stop: None,
        trail_price: None,
        trail_percent: None,
        class: new.class.clone(),
        status: if held { "held" } else { "new" },
        filled_qty: Decimal::ZERO,
        filled_value: Decimal::ZERO,
        fills: Vec::new(),
        created_at: now,
        updated_at: now,
        filled_at: None,
        canceled_at: None,
        // A day order is for the session under way or, placed while the market is
        // closed, the next one: it ends at that session's close.
        expires_at: matches!(new.tif.as_str(), "day" | "opg" | "cls").then(|| {
            world
                .settings
                .market_hours
                .then(|| super::super::hours::clock(now).map(|(_, _, close)| close))
                .flatten()
                .unwrap_or_else(|| day_end(now))
        }),
        triggered: false,
        watermark: None,
        parent: None,
        legs: Vec::new(),
        sibling: None,
        target: None,
        replaces: None,
        replaced_by: None,
        extended_hours: false,
    }
}

pub(super) async fn place(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Response {
    let new = match parse_order(&body) {
        Ok(new) => new,
        Err(e) => return e,
    };
    shared.with_world(|w| place_order(w, &caller.key, &new))
}

pub(super) fn place_order(w: &mut World, key: &str, new: &NewOrder) -> Response {
    let seed = w.settings.seed;
    let now = w.now();
    // The same client_order_id answers the first order again.
    if let Some(cid) = &new.client_order_id {
        let acct = account(w, key);
        if let Some(&i) = acct.by_client_id.get(cid) {
            let body = acct.orders[i].to_json(&acct.orders);
            return json(StatusCode::OK, &body);
        }
    }
    let price = w
        .services
        .get_mut::<TradingState>()
        .price(seed, &new.symbol, now);
    let ask = price + Decimal::new(1, 2);
    {
        let World { services, .. } = &mut *w;
        let state = services.get_mut::<TradingState>();
        let TradingState {
            accounts,
            market,
            offsets,
            ..
        } = state;
        let acct = accounts
            .entry(key.to_owned())
            .or_insert_with(|| super::super::engine::Account::new(key, now));
        match new.side {
            Side::Buy => {
                let unit = new.limit.or(new.stop).unwrap_or(ask);
                let cost = new
                    .notional
                    .unwrap_or_else(|| new.qty.unwrap_or_default() * unit);
                let power = acct.buying_power(&mut |s| {
                    (market.price(seed, s, now) + offsets.get(s).copied().unwrap_or_default())
                        .max(Decimal::new(1, 2))
                });
                if cost > power {
                    return error(
                        StatusCode::FORBIDDEN,
                        "insufficient_buying_power",
                        format!(
                            "the order needs {} USD; buying power is {} USD",
                            cost.round_dp(2),
                            power.round_dp(2)
                        ),
                    );
                }
            }
            Side::Sell => {
                let qty = new.qty.unwrap_or_else(|| {
                    (new.notional.unwrap_or_default()
                        / (price - Decimal::new(1, 2)).max(Decimal::new(1, 2)))
                    .round_dp(6)
                });
                let sellable = acct.sellable(&new.symbol);
                if qty > sellable {
                    return error(
                        StatusCode::FORBIDDEN,
                        "insufficient_qty",
                        format!(
                            "the order sells {qty} {}; {sellable} can be sold",
                            new.symbol
                        ),
                    );
                }
            }
        }
    }
    let client_order_id = new
        .client_order_id
        .clone()
        .unwrap_or_else(|| w.ids.next("coid"));
    // The top order, then its legs.
    let mut top = order(w, new, new.kind, new.side, false, now);
    top.client_order_id = client_order_id.clone();
    top.limit = new.limit;
    top.stop = new.stop;
    top.trail_price = new.trail_price;
    top.trail_percent = new.trail_percent;
    top.extended_hours = new.extended_hours;
    let exit = match new.side {
        Side::Buy => Side::Sell,
        Side::Sell => Side::Buy,
    };
    let mut legs = Vec::new();
    match new.class.as_str() {
        "bracket" | "oto" => {
            if let Some(tp) = new.take_profit {
                let mut leg = order(w, new, Kind::Limit, exit, true, now);
                leg.limit = Some(tp);
                legs.push(leg);
            }
            if let Some((stop, limit)) = new.stop_loss {
                let kind = if limit.is_some() {
                    Kind::StopLimit
                } else {
                    Kind::Stop
                };
                let mut leg = order(w, new, kind, exit, true, now);
                leg.stop = Some(stop);
                leg.limit = limit;
                legs.push(leg);
            }
        }
        "oco" => {
            // The top order is the take-profit limit; the leg is the stop, both working.
            top.limit = new.take_profit;
            if let Some((stop, limit)) = new.stop_loss {
                let kind = if limit.is_some() {
                    Kind::StopLimit
                } else {
                    Kind::Stop
                };
                let mut leg = order(w, new, kind, new.side, false, now);
                leg.stop = Some(stop);
                leg.limit = limit;
                legs.push(leg);
            }
        }
        _ => {}
    }
    for leg in &mut legs {
        leg.client_order_id = format!("{}-{}", client_order_id, leg.id);
        leg.expires_at = None;
        leg.tif = "gtc".into();
    }
    let acct = account(w, key);
    let top_index = acct.orders.len();
    acct.by_client_id.insert(client_order_id, top_index);
    acct.orders.push(top);
    let leg_indexes: Vec<usize> = legs
        .into_iter()
        .map(|mut leg| {
            leg.parent = Some(top_index);
            acct.orders.push(leg);
            acct.orders.len() - 1
        })
        .collect();
    acct.orders[top_index].legs = leg_indexes.clone();
    match (
        acct.orders[top_index].class.as_str(),
        leg_indexes.as_slice(),
    ) {
        ("bracket", [tp, sl]) => {
            acct.orders[*tp].sibling = Some(*sl);
            acct.orders[*sl].sibling = Some(*tp);
        }
        ("oco", [sl]) => {
            acct.orders[top_index].sibling = Some(*sl);
            acct.orders[*sl].sibling = Some(top_index);
        }
        _ => {}
    }
    let mut events = Vec::new();
    acct.push_order(top_index, &mut events);
    // Placed: it meets the market at once.
    let open = super::super::hours::trades_at(w.settings.market_hours, now);
    let World { services, ids, .. } = &mut *w;
    let state = services.get_mut::<TradingState>();
    let mut to_check = vec![top_index];
    to_check.extend(leg_indexes);
    if let Some(acct) = state.accounts.get_mut(key) {
        for i in to_check {
            events.extend(acct.evaluate(i, price, now, open, ids));
        }
    }
    let body = state
        .accounts
        .get(key)
        .map(|a| a.orders[top_index].to_json(&a.orders))
        .unwrap_or_default();
    publish(w, key, events);
    json(StatusCode::CREATED, &body)
}

fn find(w: &mut World, key: &str, id: &str) -> Option<usize> {
    account(w, key).orders.iter().position(|o| o.id == id)
}

pub(super) async fn get_order(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    shared.with_world(|w| match find(w, &caller.key, &id) {
        Some(i) => {
            let acct = account(w, &caller.key);
            json(StatusCode::OK, &acct.orders[i].to_json(&acct.orders))
        }
        None => not_found(&id),
    })
}

fn not_found(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "order_not_found",
        format!("no order with id {id:?}"),
    )
}

pub(super) async fn cancel(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    shared.with_world(|w| {
        let Some(i) = find(w, &caller.key, &id) else {
            return not_found(&id);
        };
        let now = w.now();
        let acct = account(w, &caller.key);
        if !acct.orders[i].is_open() {
            // The order moved on (filled, canceled, expired) before the cancel: a conflict
            // with its current state, which a get reads.
            return error(
                StatusCode::CONFLICT,
                "order_not_cancelable",
                format!(
                    "order {id} is {} and can no longer be canceled; read it with GET \
                     /v1/orders/{id}",
                    acct.orders[i].status
                ),
            );
        }
        let mut events = Vec::new();
        acct.finish(i, "canceled", now, &mut events);
        let body = acct.orders[i].to_json(&acct.orders);
        events.push(("account", Value::Null));
        publish(w, &caller.key, events);
        json(StatusCode::OK, &body)
    })
}

/// `PATCH /v1/orders/{id}`: replaces an open simple order with a new one that differs in
/// `qty`, `limit_price`, `stop_price`, `trail_price`/`trail_percent` or `time_in_force`,
/// linked both ways (`replaces`, `replaced_by`); the old one becomes `replaced`. A
/// repeated `client_order_id` answers the first replacement. An order that filled (in
/// part or whole) or ended first is `409 order_not_replaceable`.
pub(super) async fn replace(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Object(changes): Object,
) -> Response {
    shared.with_world(|w| {
        let key = caller.key.as_str();
        let cid = changes
            .get("client_order_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        // A repeated replacement answers the first one; an id already used for other
        // work (another order's replacement, or an order placed under it) is refused,
        // never answered with that other order.
        if let Some(cid) = &cid {
            let acct = account(w, key);
            if let Some(&i) = acct.by_client_id.get(cid) {
                let first = &acct.orders[i];
                if first.replaces.as_deref() != Some(id.as_str()) {
                    return error(
                        StatusCode::CONFLICT,
                        "client_order_id_in_use",
                        format!(
                            "client_order_id {cid} is already used by order {}, which does not replace {id}",
                            first.id
                        ),
                    );
                }
                return json(StatusCode::OK, &first.to_json(&acct.orders));
            }
        }
        let Some(i) = find(w, key, &id) else {
            return not_found(&id);
        };
        let now = w.now();
        let acct = account(w, key);
        let old = &acct.orders[i];
        if !old.is_open() || !old.filled_qty.is_zero() {
            let state = if old.is_open() { "partially filled" } else { old.status };
            return error(
                StatusCode::CONFLICT,
                "order_not_replaceable",
                format!("order {id} is {state} and can no longer be replaced; read it with GET /v1/orders/{id}"),
            );
        }
        if old.class != "simple" || old.parent.is_some() {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "order_not_replaceable",
                "only a simple order is replaced; cancel a bracket or OCO and place it anew",
            );
        }
        let mut body = json!({
            "symbol": old.symbol,
            "side": old.side.as_str(),
            "type": old.kind.as_str(),
            "time_in_force": changes.get("time_in_force").cloned().unwrap_or_else(|| json!(old.tif)),
            "extended_hours": old.extended_hours,
        });
        let keep = |name: &str, value: Option<Decimal>| {
            changes
                .get(name)
                .cloned()
                .or_else(|| value.map(|v| json!(v.to_string())))
        };
        let qty = keep("qty", old.qty);
        let fields = [
            ("qty", qty.clone()),
            ("notional", if qty.is_none() { old.notional.map(|n| json!(n.to_string())) } else { None }),
            ("limit_price", keep("limit_price", old.limit)),
            ("stop_price", keep("stop_price", old.stop)),
            ("trail_price", if changes.contains_key("trail_percent") { None } else { keep("trail_price", old.trail_price) }),
            ("trail_percent", if changes.contains_key("trail_price") { None } else { keep("trail_percent", old.trail_percent) }),
        ];
        for (name, value) in fields {
            if let Some(v) = value {
                body[name] = v;
            }
        }
        let new_cid = cid.unwrap_or_else(|| w.ids.next("coid"));
        body["client_order_id"] = json!(new_cid);
        let new = match parse_order(&Bytes::from(body.to_string())) {
            Ok(new) => new,
            Err(e) => return e,
        };
        // The old order leaves first, so that what it held is free for the new one; if
        // the new one is refused, the old one stands as it was.
        let acct = account(w, key);
        let (status, updated_at) = (acct.orders[i].status, acct.orders[i].updated_at);
        acct.orders[i].status = "replaced";
        acct.orders[i].updated_at = now;
        let answer = place_order(w, key, &new);
        let acct = account(w, key);
        if !answer.status().is_success() {
            acct.orders[i].status = status;
            acct.orders[i].updated_at = updated_at;
            return answer;
        }
        let Some(&n) = acct.by_client_id.get(&new_cid) else {
            return answer;
        };
        let new_id = acct.orders[n].id.clone();
        acct.orders[n].replaces = Some(acct.orders[i].id.clone());
        acct.orders[i].replaced_by = Some(new_id);
        let mut events = Vec::new();
        acct.push_order(i, &mut events);
        acct.push_order(n, &mut events);
        let body = acct.orders[n].to_json(&acct.orders);
        publish(w, key, events);
        json(StatusCode::OK, &body)
    })
}
