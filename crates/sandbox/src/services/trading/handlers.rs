//! The service's routes: markets, orders, account, history, news, and the stream's
//! upgrade.

use std::str::FromStr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use rust_decimal::Decimal;
use serde_json::{Map, Value, json};
use time::{Duration, OffsetDateTime};

use super::engine::{Kind, Order, Side, day_end};
use super::market::{self, Timeframe, valid_symbol};
use super::{TradingState, account, publish};
use crate::clock::{parse_rfc3339, rfc3339};
use crate::http::{
    Caller, bad_request, bounded_param, error, json, object_body, page_token, query_pairs,
};
use crate::registry::Service;
use crate::state::{Shared, World};

/// The routes relative to `/trading`.
pub(super) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/v1/markets", get(markets))
        .route("/v1/orders", get(list_orders).post(place))
        .route("/v1/orders/{id}", get(get_order).delete(cancel))
        .route("/v1/account", get(get_account))
        .route("/v1/history", get(history))
        .route("/v1/news", get(news))
        .route("/stream", get(stream))
}

fn unprocessable(code: &str, message: impl Into<String>) -> Response {
    error(StatusCode::UNPROCESSABLE_ENTITY, code, message)
}

/// The plan of the caller's key (`default` for OAuth tenants, none here).
fn plan(world: &World, key: &str) -> String {
    world.plan_of(key).unwrap_or("default").to_owned()
}

/// Refuses what the Free plan does not include.
fn require_pro(world: &World, key: &str, what: &str) -> Result<(), Response> {
    if plan(world, key) == "free" {
        return Err(error(
            StatusCode::FORBIDDEN,
            "plan_required",
            format!("{what} is included in the Pro plan; this key is on the Free plan"),
        ));
    }
    Ok(())
}

fn symbols(pairs: &[(String, String)]) -> Result<Vec<String>, Response> {
    let raw = pairs
        .iter()
        .find(|(k, _)| k == "symbols" || k == "symbol")
        .map(|(_, v)| v.as_str())
        .unwrap_or_default();
    let list: Vec<String> = raw
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if list.is_empty() {
        return Err(bad_request("invalid_symbols", "give at least one symbol"));
    }
    if list.len() > 100 {
        return Err(bad_request("invalid_symbols", "at most 100 symbols"));
    }
    if let Some(bad) = list.iter().find(|s| !valid_symbol(s)) {
        return Err(bad_request(
            "invalid_symbols",
            format!("{bad:?} is not a symbol (1 to 10 capital letters, digits, . or -)"),
        ));
    }
    Ok(list)
}

// ---- markets ----

async fn markets(State(shared): State<Arc<Shared>>, RawQuery(query): RawQuery) -> Response {
    let pairs = query_pairs(query.as_deref());
    let symbols = match symbols(&pairs) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let kind = pairs
        .iter()
        .find(|(k, _)| k == "kind")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "quotes".into());
    let limit = match bounded_param(&pairs, "limit", 1, 1000) {
        Ok(l) => l.unwrap_or(10) as usize,
        Err(e) => return e,
    };
    let depth = match bounded_param(&pairs, "depth", 1, 50) {
        Ok(d) => d.unwrap_or(5) as usize,
        Err(e) => return e,
    };
    let timeframe = match pairs.iter().find(|(k, _)| k == "timeframe") {
        Some((_, v)) => match Timeframe::parse(v) {
            Some(tf) => tf,
            None => {
                return bad_request(
                    "invalid_timeframe",
                    "timeframe is 1Min, 5Min, 1Hour or 1Day",
                );
            }
        },
        None => Timeframe::Minute,
    };
    shared.with_world(|w| {
        let seed = w.settings.seed;
        let now = w.now();
        let state = w.services.get_mut::<TradingState>();
        let offset =
            |state: &TradingState, s: &str| state.offsets.get(s).copied().unwrap_or_default();
        let body = match kind.as_str() {
            "quotes" => {
                let quotes: Vec<Value> = symbols
                    .iter()
                    .map(|s| {
                        let o = offset(state, s);
                        market::quote(&mut state.market, seed, s, now, o)
                    })
                    .collect();
                json!({"quotes": quotes})
            }
            "bars" => {
                let step = Duration::minutes(timeframe.minutes());
                // Far enough back to hold `limit` bars of the session, weekends included.
                let per_day: i64 = match timeframe {
                    Timeframe::Minute => 390,
                    Timeframe::FiveMinutes => 78,
                    Timeframe::Hour => 6,
                    Timeframe::Day => 1,
                };
                let days_back = (limit as i64 / per_day + 1) * 7 / 5 + 4;
                let mut bars = Vec::new();
                for s in &symbols {
                    let o = offset(state, s);
                    // The last `limit` bars that ended by now.
                    let mut starts = std::collections::VecDeque::with_capacity(limit + 1);
                    let mut t = timeframe.next_start(now - Duration::days(days_back));
                    while t + step <= now {
                        starts.push_back(t);
                        if starts.len() > limit {
                            starts.pop_front();
                        }
                        t = timeframe.next_start(t + step);
                    }
                    for start in starts {
                        let mut bar = state.market.bar(seed, s, start, timeframe);
                        for p in [&mut bar.o, &mut bar.h, &mut bar.l, &mut bar.c] {
                            *p = (*p + o).max(Decimal::new(1, 2));
                        }
                        let mut v = bar.to_json();
                        v["symbol"] = json!(s);
                        bars.push(v);
                    }
                }
                json!({"bars": bars})
            }
            "orderbook" => {
                let books: Vec<Value> = symbols
                    .iter()
                    .map(|s| {
                        let o = offset(state, s);
                        market::orderbook(&mut state.market, seed, s, now, depth, o)
                    })
                    .collect();
                json!({"orderbooks": books})
            }
            "trades" => {
                let mut all = Vec::new();
                for s in &symbols {
                    let o = offset(state, s);
                    all.extend(market::trades(&mut state.market, seed, s, now, limit, o));
                }
                json!({"trades": all})
            }
            other => {
                return bad_request(
                    "invalid_kind",
                    format!("kind is quotes, bars, orderbook or trades, got {other:?}"),
                );
            }
        };
        json(StatusCode::OK, &body)
    })
}

// ---- orders ----

/// A positive decimal no larger than 1e9, from a JSON number or string.
fn decimal(body: &Map<String, Value>, name: &str) -> Result<Option<Decimal>, Response> {
    let text = match body.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(unprocessable(
                "invalid_number",
                format!("{name} must be a number"),
            ));
        }
    };
    let parsed = Decimal::from_str(&text)
        .or_else(|_| Decimal::from_scientific(&text))
        .map_err(|_| {
            unprocessable(
                "invalid_number",
                format!("{name} is not a number: {text:?}"),
            )
        })?;
    if parsed <= Decimal::ZERO || parsed > Decimal::from(1_000_000_000) {
        return Err(unprocessable(
            "invalid_number",
            format!("{name} must be above 0 and at most 1000000000"),
        ));
    }
    if parsed.scale() > 9 {
        return Err(unprocessable(
            "invalid_number",
            format!("{name} has more than 9 decimals"),
        ));
    }
    Ok(Some(parsed))
}

/// A price: like [`decimal`], in whole cents from 1 USD up (sub-penny prices are
/// refused, as exchanges do), or to 4 decimals below.
fn price(body: &Map<String, Value>, name: &str) -> Result<Option<Decimal>, Response> {
    let Some(p) = decimal(body, name)? else {
        return Ok(None);
    };
    let max_scale = if p >= Decimal::ONE { 2 } else { 4 };
    if p.normalize().scale() > max_scale {
        return Err(unprocessable(
            "sub_penny_price",
            format!("{name} {p} has more decimals than the tick size allows"),
        ));
    }
    Ok(Some(p))
}

fn text<'b>(body: &'b Map<String, Value>, name: &str) -> Result<Option<&'b str>, Response> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(unprocessable(
            "invalid_field",
            format!("{name} must be a string"),
        )),
    }
}

/// A new order, checked.
struct NewOrder {
    symbol: String,
    side: Side,
    qty: Option<Decimal>,
    notional: Option<Decimal>,
    kind: Kind,
    tif: String,
    limit: Option<Decimal>,
    stop: Option<Decimal>,
    trail_price: Option<Decimal>,
    trail_percent: Option<Decimal>,
    class: String,
    take_profit: Option<Decimal>,
    stop_loss: Option<(Decimal, Option<Decimal>)>,
    client_order_id: Option<String>,
}

fn parse_order(body: &Bytes) -> Result<NewOrder, Response> {
    let body = object_body(body)?;
    let symbol = text(&body, "symbol")?
        .filter(|s| valid_symbol(s))
        .ok_or_else(|| {
            unprocessable(
                "invalid_symbol",
                "symbol must be 1 to 10 capital letters, digits, . or -",
            )
        })?
        .to_owned();
    let side = match text(&body, "side")? {
        Some("buy") => Side::Buy,
        Some("sell") => Side::Sell,
        _ => return Err(unprocessable("invalid_side", "side is buy or sell")),
    };
    let kind = match text(&body, "type")?.unwrap_or("market") {
        "market" => Kind::Market,
        "limit" => Kind::Limit,
        "stop" => Kind::Stop,
        "stop_limit" => Kind::StopLimit,
        "trailing_stop" => Kind::TrailingStop,
        other => {
            return Err(unprocessable(
                "invalid_type",
                format!("type is market, limit, stop, stop_limit or trailing_stop, got {other:?}"),
            ));
        }
    };
    let qty = decimal(&body, "qty")?;
    let notional = decimal(&body, "notional")?;
    match (qty, notional) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(unprocessable(
                "invalid_qty",
                "give exactly one of qty and notional",
            ));
        }
        (None, Some(_)) if kind != Kind::Market => {
            return Err(unprocessable(
                "invalid_qty",
                "notional is for market orders",
            ));
        }
        _ => {}
    }
    let tif = text(&body, "time_in_force")?.unwrap_or("day").to_owned();
    if !matches!(tif.as_str(), "day" | "gtc" | "ioc" | "fok" | "opg" | "cls") {
        return Err(unprocessable(
            "invalid_time_in_force",
            "time_in_force is day, gtc, ioc, fok, opg or cls",
        ));
    }
    let limit = price(&body, "limit_price")?;
    let stop = price(&body, "stop_price")?;
    let trail_price = price(&body, "trail_price")?;
    let trail_percent = decimal(&body, "trail_percent")?;
    let needs = |ok: bool, message: &str| {
        if ok {
            Ok(())
        } else {
            Err(unprocessable("invalid_prices", message))
        }
    };
    match kind {
        Kind::Market => needs(
            limit.is_none() && stop.is_none(),
            "a market order takes no prices",
        )?,
        Kind::Limit => needs(
            limit.is_some() && stop.is_none(),
            "a limit order takes limit_price",
        )?,
        Kind::Stop => needs(
            stop.is_some() && limit.is_none(),
            "a stop order takes stop_price",
        )?,
        Kind::StopLimit => needs(
            stop.is_some() && limit.is_some(),
            "a stop_limit order takes stop_price and limit_price",
        )?,
        Kind::TrailingStop => needs(
            trail_price.is_some() != trail_percent.is_some(),
            "a trailing_stop order takes trail_price or trail_percent",
        )?,
    }
    let class = text(&body, "order_class")?.unwrap_or("simple").to_owned();
    let take_profit = match body.get("take_profit") {
        Some(Value::Object(tp)) => Some(price(tp, "limit_price")?.ok_or_else(|| {
            unprocessable("invalid_take_profit", "take_profit needs limit_price")
        })?),
        None | Some(Value::Null) => None,
        Some(_) => {
            return Err(unprocessable(
                "invalid_take_profit",
                "take_profit is an object",
            ));
        }
    };
    let stop_loss = match body.get("stop_loss") {
        Some(Value::Object(sl)) => Some((
            price(sl, "stop_price")?
                .ok_or_else(|| unprocessable("invalid_stop_loss", "stop_loss needs stop_price"))?,
            price(sl, "limit_price")?,
        )),
        None | Some(Value::Null) => None,
        Some(_) => return Err(unprocessable("invalid_stop_loss", "stop_loss is an object")),
    };
    match class.as_str() {
        "simple" => needs(
            take_profit.is_none() && stop_loss.is_none(),
            "a simple order has no take_profit or stop_loss",
        )?,
        "bracket" => needs(
            take_profit.is_some()
                && stop_loss.is_some()
                && qty.is_some()
                && matches!(kind, Kind::Market | Kind::Limit),
            "a bracket order is a market or limit entry by qty with take_profit and stop_loss",
        )?,
        "oco" => needs(
            take_profit.is_some() && stop_loss.is_some() && kind == Kind::Limit && qty.is_some(),
            "an oco order is a limit order by qty with take_profit and stop_loss",
        )?,
        "oto" => needs(
            take_profit.is_some() != stop_loss.is_some()
                && qty.is_some()
                && matches!(kind, Kind::Market | Kind::Limit),
            "an oto order is a market or limit entry by qty with take_profit or stop_loss",
        )?,
        other => {
            return Err(unprocessable(
                "invalid_order_class",
                format!("order_class is simple, bracket, oco or oto, got {other:?}"),
            ));
        }
    }
    let client_order_id = text(&body, "client_order_id")?.map(str::to_owned);
    if client_order_id
        .as_ref()
        .is_some_and(|c| c.is_empty() || c.len() > 48)
    {
        return Err(unprocessable(
            "invalid_client_order_id",
            "client_order_id is 1 to 48 characters",
        ));
    }
    Ok(NewOrder {
        symbol,
        side,
        qty,
        notional,
        kind,
        tif,
        limit,
        stop,
        trail_price,
        trail_percent,
        class,
        take_profit,
        stop_loss,
        client_order_id,
    })
}

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
        expires_at: matches!(new.tif.as_str(), "day" | "opg" | "cls").then(|| day_end(now)),
        triggered: false,
        watermark: None,
        parent: None,
        legs: Vec::new(),
        sibling: None,
        target: None,
    }
}

async fn place(
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

fn place_order(w: &mut World, key: &str, new: &NewOrder) -> Response {
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
            .or_insert_with(|| super::engine::Account::new(key, now));
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
    let World { services, ids, .. } = &mut *w;
    let state = services.get_mut::<TradingState>();
    let mut to_check = vec![top_index];
    to_check.extend(leg_indexes);
    if let Some(acct) = state.accounts.get_mut(key) {
        for i in to_check {
            events.extend(acct.evaluate(i, price, now, ids));
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

async fn list_orders(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    RawQuery(query): RawQuery,
) -> Response {
    let pairs = query_pairs(query.as_deref());
    let get = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let status = get("status").unwrap_or_else(|| "open".into());
    if !matches!(status.as_str(), "open" | "closed" | "all") {
        return bad_request("invalid_status", "status is open, closed or all");
    }
    let since = match get("updated_since") {
        Some(s) => match parse_rfc3339(&s) {
            Some(t) => Some(t),
            None => {
                return bad_request("invalid_updated_since", "updated_since is an RFC 3339 time");
            }
        },
        None => None,
    };
    let limit = match bounded_param(&pairs, "limit", 1, 500) {
        Ok(l) => l.unwrap_or(100) as usize,
        Err(e) => return e,
    };
    let client_order_id = get("client_order_id");
    shared.with_world(|w| {
        let acct = account(w, &caller.key);
        let mut found: Vec<&Order> = acct
            .orders
            .iter()
            .filter(|o| o.parent.is_none())
            .filter(|o| {
                client_order_id
                    .as_ref()
                    .is_none_or(|c| &o.client_order_id == c)
            })
            // An order is open while it or one of its legs still works.
            .filter(|o| {
                let open = o.is_open()
                    || o.legs
                        .iter()
                        .any(|&l| acct.orders.get(l).is_some_and(Order::is_open));
                match status.as_str() {
                    "open" if client_order_id.is_none() => open,
                    "closed" => !open,
                    _ => true,
                }
            })
            .filter(|o| since.is_none_or(|s| latest_update(o, &acct.orders) >= s))
            .collect();
        if since.is_some() {
            found.sort_by_key(|o| latest_update(o, &acct.orders));
        } else {
            found.sort_by_key(|o| std::cmp::Reverse(o.created_at));
        }
        let orders: Vec<Value> = found
            .into_iter()
            .take(limit)
            .map(|o| o.to_json(&acct.orders))
            .collect();
        json(StatusCode::OK, &json!({"orders": orders}))
    })
}

/// When an order or one of its legs last changed.
fn latest_update(order: &Order, all: &[Order]) -> OffsetDateTime {
    order
        .legs
        .iter()
        .filter_map(|&l| all.get(l))
        .map(|l| l.updated_at)
        .fold(order.updated_at, OffsetDateTime::max)
}

fn find(w: &mut World, key: &str, id: &str) -> Option<usize> {
    account(w, key).orders.iter().position(|o| o.id == id)
}

async fn get_order(
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

async fn cancel(
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
            return unprocessable(
                "order_not_cancelable",
                format!("order {id} is {}", acct.orders[i].status),
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

// ---- account ----

async fn get_account(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    shared.with_world(|w| {
        let seed = w.settings.seed;
        let now = w.now();
        account(w, &caller.key);
        let state = w.services.get_mut::<TradingState>();
        let TradingState {
            accounts,
            market,
            offsets,
            ..
        } = state;
        let body = accounts
            .get(&caller.key)
            .map(|a| {
                a.to_json(&mut |s| {
                    (market.price(seed, s, now) + offsets.get(s).copied().unwrap_or_default())
                        .max(Decimal::new(1, 2))
                })
            })
            .unwrap_or_default();
        json(StatusCode::OK, &body)
    })
}

// ---- history ----

/// How far back history reaches.
const HISTORY_YEARS: i64 = 20;

async fn history(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    RawQuery(query): RawQuery,
) -> Response {
    let pairs = query_pairs(query.as_deref());
    let get = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let Some(symbol) = get("symbol").filter(|s| valid_symbol(s)) else {
        return bad_request(
            "invalid_symbol",
            "symbol is required (1 to 10 capital letters, digits, . or -)",
        );
    };
    let timeframe = match get("timeframe").as_deref().map(Timeframe::parse) {
        None => Timeframe::Minute,
        Some(Some(tf)) => tf,
        Some(None) => {
            return bad_request(
                "invalid_timeframe",
                "timeframe is 1Min, 5Min, 1Hour or 1Day",
            );
        }
    };
    let limit = match bounded_param(&pairs, "limit", 1, 10_000) {
        Ok(l) => l.unwrap_or(1000) as usize,
        Err(e) => return e,
    };
    let time = |name: &str| -> Result<Option<OffsetDateTime>, Response> {
        match get(name) {
            None => Ok(None),
            Some(s) => parse_rfc3339(&s)
                .map(Some)
                .ok_or_else(|| bad_request("invalid_time", format!("{name} is an RFC 3339 time"))),
        }
    };
    let (start, end) = match (time("start"), time("end")) {
        (Ok(s), Ok(e)) => (s, e),
        (Err(r), _) | (_, Err(r)) => return r,
    };
    let token_start = match get("page_token") {
        None => None,
        Some(token) => match token
            .strip_prefix("t")
            .and_then(|t| t.parse::<i64>().ok())
            .and_then(|t| OffsetDateTime::from_unix_timestamp(t).ok())
        {
            Some(t) => Some(t),
            None => {
                return bad_request(
                    "invalid_page_token",
                    "the page token is not one this service gave",
                );
            }
        },
    };
    shared.with_world(|w| {
        if let Err(refused) = require_pro(w, &caller.key, "historical data") {
            return refused;
        }
        let seed = w.settings.seed;
        let now = w.now();
        let earliest = now - Duration::days(365 * HISTORY_YEARS + HISTORY_YEARS / 4);
        let end = end.unwrap_or(now).min(now);
        let start = start.unwrap_or(end - Duration::days(1));
        if start < earliest {
            return bad_request(
                "out_of_range",
                format!("history reaches back {HISTORY_YEARS} years, to {}", rfc3339(earliest)),
            );
        }
        if start >= end {
            return bad_request("invalid_range", "start must be before end");
        }
        let state = w.services.get_mut::<TradingState>();
        let offset = state.offsets.get(&symbol).copied().unwrap_or_default();
        let step = Duration::minutes(timeframe.minutes());
        let mut t = timeframe.next_start(token_start.unwrap_or(start).max(start));
        let mut bars = Vec::with_capacity(limit);
        while t + step <= end && bars.len() < limit {
            let mut bar = state.market.bar(seed, &symbol, t, timeframe);
            if !offset.is_zero() {
                for p in [&mut bar.o, &mut bar.h, &mut bar.l, &mut bar.c] {
                    *p = (*p + offset).max(Decimal::new(1, 2));
                }
            }
            bars.push(bar.to_json());
            t = timeframe.next_start(t + step);
        }
        let next = (t + step <= end).then(|| format!("t{}", t.unix_timestamp()));
        json(
            StatusCode::OK,
            &json!({"symbol": symbol, "timeframe": timeframe_name(timeframe), "bars": bars, "next_page_token": next}),
        )
    })
}

fn timeframe_name(tf: Timeframe) -> &'static str {
    match tf {
        Timeframe::Minute => "1Min",
        Timeframe::FiveMinutes => "5Min",
        Timeframe::Hour => "1Hour",
        Timeframe::Day => "1Day",
    }
}

// ---- news ----

/// How far back news goes.
const NEWS_ITEMS_PER_SYMBOL: usize = 120;

async fn news(State(shared): State<Arc<Shared>>, RawQuery(query): RawQuery) -> Response {
    let pairs = query_pairs(query.as_deref());
    let symbols = match symbols(&pairs) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let limit = match bounded_param(&pairs, "limit", 1, 50) {
        Ok(l) => l.unwrap_or(10) as usize,
        Err(e) => return e,
    };
    let offset = match page_token(&pairs, "n") {
        Ok(n) => n,
        Err(e) => return e,
    };
    shared.with_world(|w| {
        let seed = w.settings.seed;
        let now = w.now();
        let mut all: Vec<(OffsetDateTime, Value)> = symbols
            .iter()
            .flat_map(|s| market::news(seed, s, now, NEWS_ITEMS_PER_SYMBOL))
            .collect();
        all.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then_with(|| a.1["id"].as_str().cmp(&b.1["id"].as_str()))
        });
        let page: Vec<Value> = all
            .iter()
            .skip(offset)
            .take(limit)
            .map(|(_, v)| v.clone())
            .collect();
        let next = (offset + limit < all.len()).then(|| format!("n{}", offset + limit));
        json(
            StatusCode::OK,
            &json!({"news": page, "next_page_token": next}),
        )
    })
}

// ---- the stream ----

async fn stream(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let refused = shared.with_world(|w| require_pro(w, &caller.key, "streaming").err());
    if let Some(refused) = refused {
        return refused;
    }
    let key = caller.key.clone();
    upgrade
        .max_message_size(1024 * 1024)
        .on_upgrade(move |socket| {
            crate::streams::run_session(
                shared,
                Service::Trading,
                key,
                socket,
                super::stream::Session::default(),
            )
        })
        .into_response()
}
