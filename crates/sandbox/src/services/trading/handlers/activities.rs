//! The account's past: activities (fills and cash movements, paged by a cursor) at
//! `GET /v1/activities`, and the portfolio's equity over a period at
//! `GET /v1/account/history`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use rust_decimal::Decimal;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use super::super::engine::{Account, STARTING_CASH, Side};
use super::super::market::number;
use super::super::{TradingState, account};
use crate::clock::{parse_rfc3339, rfc3339};
use crate::http::{Caller, Params, bad_request, bounded_param, json};
use crate::state::Shared;

/// The kinds of activity the paper account has.
const TYPES: [&str; 2] = ["fill", "deposit"];

/// One activity, before it is written.
struct Activity {
    at: OffsetDateTime,
    id: String,
    body: Value,
}

/// Every activity of `acct`, in no order.
fn activities(acct: &Account) -> Vec<Activity> {
    let deposit = Activity {
        at: acct.opened_at,
        id: format!("dep_{}", acct.id),
        body: json!({
            "activity_type": "deposit",
            "net_amount": number(Decimal::from(STARTING_CASH)),
            "currency": "USD",
            "description": "paper account opened",
        }),
    };
    let mut all = vec![deposit];
    for order in &acct.orders {
        for fill in &order.fills {
            let value = fill.qty * fill.price;
            let net = match order.side {
                Side::Buy => -value,
                Side::Sell => value,
            };
            all.push(Activity {
                at: fill.at,
                id: fill.execution_id.clone(),
                body: json!({
                    "activity_type": "fill",
                    "symbol": order.symbol,
                    "side": order.side.as_str(),
                    "qty": number(fill.qty),
                    "price": number(fill.price),
                    "net_amount": number(net),
                    "order_id": order.id,
                }),
            });
        }
    }
    all
}

/// `GET /v1/activities?types=fill,deposit&after&until&direction&page_size&page_token`:
/// newest first (or oldest with `direction=asc`), `page_size` 1 to 100 (default 50);
/// the token is a cursor after the last activity given (`<nanos>:<id>`), so an
/// activity made while the caller pages is never skipped on an oldest-first read.
pub(super) async fn list(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Response {
    let types: Vec<String> = match params.get("types") {
        None => TYPES.iter().map(|t| (*t).to_owned()).collect(),
        Some(list) => list.split(',').map(|t| t.trim().to_owned()).collect(),
    };
    if let Some(bad) = types.iter().find(|t| !TYPES.contains(&t.as_str())) {
        return bad_request(
            "invalid_types",
            format!("{bad:?} is not an activity type: types are fill and deposit"),
        );
    }
    let time = |name: &str| match params.get(name) {
        None => Ok(None),
        Some(s) => parse_rfc3339(&s).map(Some).ok_or_else(|| {
            bad_request(
                &format!("invalid_{name}"),
                format!("{name} is an RFC 3339 time"),
            )
        }),
    };
    let (after, until) = match (time("after"), time("until")) {
        (Ok(a), Ok(u)) => (a, u),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    if let (Some(a), Some(u)) = (after, until)
        && a > u
    {
        return bad_request("invalid_range", "after is later than until");
    }
    let ascending = match params.get("direction").as_deref() {
        None | Some("desc") => false,
        Some("asc") => true,
        Some(_) => return bad_request("invalid_direction", "direction is asc or desc"),
    };
    let size = match bounded_param(&params.0, "page_size", 1, 100) {
        Ok(n) => n.unwrap_or(50) as usize,
        Err(e) => return e,
    };
    let cursor = match params.get("page_token") {
        None => None,
        Some(token) => match token
            .split_once(':')
            .and_then(|(n, id)| Some((n.parse::<i128>().ok()?, id.to_owned())))
            .and_then(|(n, id)| Some((OffsetDateTime::from_unix_timestamp_nanos(n).ok()?, id)))
            .filter(|(t, _)| crate::clock::within_years(*t))
        {
            Some(c) => Some(c),
            None => {
                return bad_request(
                    "invalid_page_token",
                    "the page token is not one this service gave",
                );
            }
        },
    };
    shared.with_world(|w| {
        let acct = account(w, &caller.key);
        let mut found: Vec<Activity> = activities(acct)
            .into_iter()
            .filter(|a| types.iter().any(|t| a.body["activity_type"] == t.as_str()))
            .filter(|a| after.is_none_or(|t| a.at > t))
            .filter(|a| until.is_none_or(|t| a.at <= t))
            .collect();
        found.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
        if !ascending {
            found.reverse();
        }
        if let Some((t, id)) = &cursor {
            let key = (*t, id);
            found.retain(|a| {
                if ascending {
                    (a.at, &a.id) > key
                } else {
                    (a.at, &a.id) < key
                }
            });
        }
        let next = (found.len() > size).then(|| {
            let last = &found[size - 1];
            format!("{}:{}", last.at.unix_timestamp_nanos(), last.id)
        });
        let page: Vec<Value> = found
            .into_iter()
            .take(size)
            .map(|a| {
                let mut body = a.body;
                body["id"] = json!(a.id);
                body["transaction_time"] = json!(rfc3339(a.at));
                body
            })
            .collect();
        json(
            StatusCode::OK,
            &json!({"activities": page, "next_page_token": next}),
        )
    })
}

/// The most points one portfolio history gives.
const MAX_POINTS: i64 = 10_000;

/// `GET /v1/account/history?period=1D|1W|1M|3M|1A&timeframe=1Min|5Min|15Min|1H|1D&end`:
/// the equity at each step of `timeframe` over `period` up to `end` (default now), with
/// the profit or loss against the first point. Equity at a time is the cash and the
/// positions the fills up to then left, valued at the market's price then.
pub(super) async fn portfolio(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Response {
    let period = params.get("period").unwrap_or_else(|| "1M".into());
    let span = match period.as_str() {
        "1D" => Duration::days(1),
        "1W" => Duration::weeks(1),
        "1M" => Duration::days(30),
        "3M" => Duration::days(90),
        "1A" => Duration::days(365),
        _ => return bad_request("invalid_period", "period is 1D, 1W, 1M, 3M or 1A"),
    };
    let default_step = if period == "1D" { "5Min" } else { "1D" };
    let timeframe = params
        .get("timeframe")
        .unwrap_or_else(|| default_step.into());
    let step = match timeframe.as_str() {
        "1Min" => Duration::minutes(1),
        "5Min" => Duration::minutes(5),
        "15Min" => Duration::minutes(15),
        "1H" => Duration::hours(1),
        "1D" => Duration::days(1),
        _ => {
            return bad_request(
                "invalid_timeframe",
                "timeframe is 1Min, 5Min, 15Min, 1H or 1D",
            );
        }
    };
    let points = span.whole_seconds() / step.whole_seconds();
    if points > MAX_POINTS {
        return bad_request(
            "too_many_points",
            format!(
                "{period} at {timeframe} is {points} points; at most {MAX_POINTS}: take a longer timeframe"
            ),
        );
    }
    let end = match params.get("end") {
        None => None,
        Some(s) => match parse_rfc3339(&s) {
            Some(t) => Some(t),
            None => return bad_request("invalid_end", "end is an RFC 3339 time"),
        },
    };
    shared.with_world(|w| {
        let seed = w.settings.seed;
        let end = end.unwrap_or_else(|| w.now());
        // Every point is a time a client can read: within the years 0001 to 9999.
        if !end
            .checked_sub(span)
            .is_some_and(crate::clock::within_years)
        {
            return bad_request(
                "out_of_range",
                format!(
                    "{period} before {} reaches before the year 0001",
                    rfc3339(end)
                ),
            );
        }
        // The fills, oldest first: (time, symbol, signed qty, signed cash).
        let mut moves: Vec<(OffsetDateTime, String, Decimal, Decimal)> = account(w, &caller.key)
            .orders
            .iter()
            .flat_map(|o| {
                o.fills.iter().map(move |f| {
                    let (qty, cash) = match o.side {
                        Side::Buy => (f.qty, -(f.qty * f.price)),
                        Side::Sell => (-f.qty, f.qty * f.price),
                    };
                    (f.at, o.symbol.clone(), qty, cash)
                })
            })
            .collect();
        moves.sort_by_key(|m| m.0);
        let state = w.services.get_mut::<TradingState>();
        let mut cash = Decimal::from(STARTING_CASH);
        let mut held: BTreeMap<String, Decimal> = BTreeMap::new();
        let mut next = 0;
        let mut base = None;
        let mut out = Vec::with_capacity(points as usize + 1);
        for i in (0..=points).rev() {
            let t = end - step * (i as i32);
            while let Some((_, symbol, qty, money)) = moves.get(next).filter(|m| m.0 <= t) {
                *held.entry(symbol.clone()).or_default() += *qty;
                cash += *money;
                next += 1;
            }
            let mut equity = cash;
            for (symbol, qty) in held.iter().filter(|(_, q)| !q.is_zero()) {
                equity += *qty * state.price(seed, symbol, t);
            }
            let equity = equity.round_dp(2);
            let base_value = *base.get_or_insert(equity);
            let pl = equity - base_value;
            let pct = if base_value.is_zero() {
                Decimal::ZERO
            } else {
                (pl / base_value).round_dp(6)
            };
            out.push(json!({
                "timestamp": rfc3339(t),
                "equity": number(equity),
                "profit_loss": number(pl),
                "profit_loss_pct": number(pct),
            }));
        }
        json(
            StatusCode::OK,
            &json!({
                "period": period,
                "timeframe": timeframe,
                "base_value": number(base.unwrap_or_default()),
                "points": out,
            }),
        )
    })
}
