//! The service's routes: markets, orders, account, history, news, and the stream's
//! upgrade.

mod activities;
mod assets;
mod order_body;
mod order_list;
mod orders;
mod positions;

use std::sync::Arc;

use axum::extract::State;
use axum::extract::ws::WebSocketUpgrade;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use super::assets::{known_symbol, unknown_symbol, valid_symbol};
use super::market::{self, Timeframe};
use super::{TradingState, account};
use crate::clock::{parse_rfc3339, rfc3339};
use crate::http::{Caller, Params, bad_request, bounded_param, error, json, page_token};
use crate::service::Service;
use crate::state::{Shared, World};
use order_list::list_orders;
use orders::{cancel, get_order, place};

/// The routes relative to `/trading`.
pub(super) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/v1/markets", get(markets))
        .route(
            "/v1/orders",
            get(list_orders).post(place).delete(positions::cancel_all),
        )
        .route(
            "/v1/positions",
            get(positions::list).delete(positions::close_all),
        )
        .route(
            "/v1/positions/{symbol}",
            get(positions::get_one).delete(positions::close_one),
        )
        .route(
            "/v1/orders/{id}",
            get(get_order).delete(cancel).patch(orders::replace),
        )
        .route("/v1/account", get(get_account))
        .route("/v1/account/history", get(activities::portfolio))
        .route("/v1/activities", get(activities::list))
        .route("/v1/assets", get(assets::list))
        .route("/v1/assets/{symbol}", get(assets::get_one))
        .route("/v1/clock", get(clock))
        .route("/v1/calendar", get(calendar))
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
    if let Some(bad) = list.iter().find(|s| !known_symbol(s)) {
        return Err(bad_request("unknown_symbol", unknown_symbol(bad)));
    }
    Ok(list)
}

// ---- markets ----

async fn markets(State(shared): State<Arc<Shared>>, params: Params) -> Response {
    let pairs = params.0.as_slice();
    let symbols = match symbols(pairs) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let kind = pairs
        .iter()
        .find(|(k, _)| k == "kind")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "quotes".into());
    let limit = match bounded_param(pairs, "limit", 1, 1000) {
        Ok(l) => l.unwrap_or(10) as usize,
        Err(e) => return e,
    };
    let depth = match bounded_param(pairs, "depth", 1, 50) {
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

// ---- the market's clock and calendar ----

/// `GET /v1/clock`: `{"timestamp", "is_open", "next_open", "next_close"}`.
async fn clock(State(shared): State<Arc<Shared>>) -> Response {
    shared.with_world(|w| {
        let now = w.now();
        match super::hours::clock(now) {
            Some((is_open, next_open, next_close)) => json(
                StatusCode::OK,
                &json!({
                    "timestamp": rfc3339(now),
                    "is_open": is_open,
                    "next_open": rfc3339(next_open),
                    "next_close": rfc3339(next_close),
                }),
            ),
            None => error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "no session ahead",
            ),
        }
    })
}

/// `GET /v1/calendar?start&end` (dates `YYYY-MM-DD`, default today and 30 days on, at
/// most 366 days): `{"days": [{"date", "open", "close", "early_close"}]}`.
async fn calendar(State(shared): State<Arc<Shared>>, params: Params) -> Response {
    let parse = |name: &str| -> Result<Option<time::Date>, Response> {
        let Some(text) = params.get(name) else {
            return Ok(None);
        };
        let format = time::macros::format_description!("[year]-[month]-[day]");
        time::Date::parse(&text, &format)
            .ok()
            .filter(|d| (1..=9999).contains(&d.year()))
            .map(Some)
            .ok_or_else(|| {
                bad_request(
                    &format!("invalid_{name}"),
                    format!("{name} is a date YYYY-MM-DD of the years 0001 to 9999"),
                )
            })
    };
    let (start, end) = match (parse("start"), parse("end")) {
        (Ok(s), Ok(e)) => (s, e),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    shared.with_world(|w| {
        let today = w.now().date();
        let start = start.unwrap_or(today);
        let end = end.unwrap_or_else(|| start.checked_add(Duration::days(30)).unwrap_or(start));
        if end < start || (end - start) > Duration::days(366) {
            return bad_request("invalid_range", "end is on or after start, at most 366 days on");
        }
        let mut days = Vec::new();
        let mut day = start;
        while day <= end {
            if let Some(s) = super::hours::session(day) {
                days.push(json!({
                    "date": format!("{:04}-{:02}-{:02}", day.year(), u8::from(day.month()), day.day()),
                    "open": rfc3339(s.open),
                    "close": rfc3339(s.close),
                    "early_close": s.early,
                }));
            }
            match day.next_day() {
                Some(next) => day = next,
                None => break,
            }
        }
        json(StatusCode::OK, &json!({"days": days}))
    })
}

// ---- history ----

/// How far back history reaches.
const HISTORY_YEARS: i64 = 20;

async fn history(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Response {
    let pairs = params.0.as_slice();
    let get = |name: &str| params.get(name);
    let Some(symbol) = get("symbol").filter(|s| valid_symbol(s)) else {
        return bad_request(
            "invalid_symbol",
            "symbol is required (1 to 10 capital letters, digits, . or -)",
        );
    };
    if !known_symbol(&symbol) {
        return bad_request("unknown_symbol", unknown_symbol(&symbol));
    }
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
    let limit = match bounded_param(pairs, "limit", 1, 10_000) {
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
            None => return crate::http::invalid_page_token(),
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
        // A token of this service names a bar of the range it was given for.
        if token_start.is_some_and(|t| t < earliest || t > end) {
            return crate::http::invalid_page_token();
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

async fn news(State(shared): State<Arc<Shared>>, params: Params) -> Response {
    let pairs = params.0.as_slice();
    let symbols = match symbols(pairs) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let limit = match bounded_param(pairs, "limit", 1, 50) {
        Ok(l) => l.unwrap_or(10) as usize,
        Err(e) => return e,
    };
    let offset = match page_token(pairs, "n") {
        Ok(n) => n,
        Err(e) => return e,
    };
    let time = |name: &str| match params.get(name) {
        None => Ok(None),
        Some(s) => parse_rfc3339(&s).map(Some).ok_or_else(|| {
            bad_request(
                &format!("invalid_{name}"),
                format!("{name} is an RFC 3339 time"),
            )
        }),
    };
    let (start, end) = match (time("start"), time("end")) {
        (Ok(s), Ok(e)) => (s, e),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    if let (Some(s), Some(e)) = (start, end)
        && s > e
    {
        return bad_request("invalid_range", "start is after end");
    }
    shared.with_world(|w| {
        let seed = w.settings.seed;
        // The items up to `end` (or now), from `start` on.
        let before = end.unwrap_or_else(|| w.now()).min(w.now());
        let mut all: Vec<(OffsetDateTime, Value)> = symbols
            .iter()
            .flat_map(|s| market::news(seed, s, before, NEWS_ITEMS_PER_SYMBOL))
            .filter(|(t, _)| start.is_none_or(|s| *t >= s))
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
            crate::sessions::run_session(
                shared,
                Service::Trading,
                key,
                socket,
                super::stream::Session::default(),
            )
        })
        .into_response()
}
