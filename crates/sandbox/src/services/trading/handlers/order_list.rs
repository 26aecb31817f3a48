//! Listing orders: `GET /v1/orders` with its filters and page tokens.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use time::OffsetDateTime;

use super::super::account;
use super::super::engine::{Order, Side};
use crate::clock::parse_rfc3339;
use crate::http::{Caller, Params, bad_request, bounded_param, json};
use crate::state::Shared;

pub(super) async fn list_orders(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Response {
    let pairs = params.0.as_slice();
    let get = |name: &str| params.get(name);
    let status = get("status").unwrap_or_else(|| "open".into());
    if !matches!(status.as_str(), "open" | "closed" | "all") && !STATUSES.contains(&status.as_str())
    {
        return bad_request(
            "invalid_status",
            format!(
                "status is open, closed, all or one of {}",
                STATUSES.join(", ")
            ),
        );
    }
    let filters = match Filters::read(&params) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let since = match get("updated_since") {
        Some(s) => match parse_rfc3339(&s) {
            Some(t) => Some(t),
            None => {
                return bad_request("invalid_updated_since", "updated_since is an RFC 3339 time");
            }
        },
        None => None,
    };
    let limit = match bounded_param(pairs, "limit", 1, 500) {
        Ok(l) => l.unwrap_or(100) as usize,
        Err(e) => return e,
    };
    let client_order_id = get("client_order_id");
    let (cursor, offset) = match order_cursor(get("page_token"), since.is_some()) {
        Ok(c) => c,
        Err(e) => return e,
    };
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
                    "open" | "all" => true,
                    "closed" => !open,
                    exact => o.status == exact,
                }
            })
            .filter(|o| since.is_none_or(|s| latest_update(o, &acct.orders) >= s))
            .filter(|o| filters.keeps(o))
            .collect();
        // Pages: by change, a cursor after the last (change, id) given, so that an order
        // that changes while the caller pages moves ahead and is read again, never
        // skipped; by creation, newest first, an offset.
        let next = if since.is_some() {
            found.sort_by(|a, b| {
                (latest_update(a, &acct.orders), &a.id)
                    .cmp(&(latest_update(b, &acct.orders), &b.id))
            });
            if let Some((t, id)) = &cursor {
                found.retain(|o| (latest_update(o, &acct.orders), &o.id) > (*t, id));
            }
            (found.len() > limit).then(|| {
                let last = found[limit - 1];
                format!(
                    "u{}:{}",
                    latest_update(last, &acct.orders).unix_timestamp_nanos(),
                    last.id
                )
            })
        } else {
            // Newest first; orders made at the same instant, the later made first (or
            // the other way round, oldest first, with direction=asc).
            if filters.ascending {
                found.sort_by_key(|o| o.created_at);
            } else {
                found.reverse();
                found.sort_by_key(|o| std::cmp::Reverse(o.created_at));
            }
            let start = offset.min(found.len());
            found.drain(..start);
            (found.len() > limit).then(|| format!("p{}", start + limit))
        };
        let orders: Vec<Value> = found
            .into_iter()
            .take(limit)
            .map(|o| o.to_json(&acct.orders))
            .collect();
        json(
            StatusCode::OK,
            &json!({"orders": orders, "next_page_token": next}),
        )
    })
}

/// A page token of the order list: `u<nanos>:<id>` (after that change, when listing by
/// change) or `p<offset>` (listing by creation).
fn order_cursor(
    token: Option<String>,
    by_change: bool,
) -> Result<(Option<(OffsetDateTime, String)>, usize), Response> {
    let invalid = || {
        bad_request(
            "invalid_page_token",
            "the page token is not one this service gave",
        )
    };
    let Some(token) = token else {
        return Ok((None, 0));
    };
    if by_change {
        let (nanos, id) = token
            .strip_prefix('u')
            .and_then(|t| t.split_once(':'))
            .ok_or_else(invalid)?;
        let nanos: i128 = nanos.parse().map_err(|_| invalid())?;
        let t = OffsetDateTime::from_unix_timestamp_nanos(nanos)
            .ok()
            .filter(|t| crate::clock::within_years(*t))
            .ok_or_else(invalid)?;
        Ok((Some((t, id.to_owned())), 0))
    } else {
        let offset = token
            .strip_prefix('p')
            .and_then(crate::http::position)
            .ok_or_else(invalid)?;
        Ok((None, offset))
    }
}

/// When an order or one of its legs last changed.
pub(super) fn latest_update(order: &Order, all: &[Order]) -> OffsetDateTime {
    order
        .legs
        .iter()
        .filter_map(|&l| all.get(l))
        .map(|l| l.updated_at)
        .fold(order.updated_at, OffsetDateTime::max)
}

/// Every status an order can have.
const STATUSES: [&str; 12] = [
    "new",
    "accepted",
    "pending_new",
    "partially_filled",
    "filled",
    "canceled",
    "expired",
    "rejected",
    "replaced",
    "pending_cancel",
    "pending_replace",
    "held",
];

/// The order list's narrowing filters: `symbols`, `side`, `after`/`until` (placed
/// after, placed at or before) and `direction` (of a listing by creation).
struct Filters {
    symbols: Option<Vec<String>>,
    side: Option<Side>,
    after: Option<OffsetDateTime>,
    until: Option<OffsetDateTime>,
    ascending: bool,
}

impl Filters {
    fn read(params: &Params) -> Result<Filters, Response> {
        let time = |name: &str| match params.get(name) {
            None => Ok(None),
            Some(s) => parse_rfc3339(&s).map(Some).ok_or_else(|| {
                bad_request(
                    &format!("invalid_{name}"),
                    format!("{name} is an RFC 3339 time"),
                )
            }),
        };
        let symbols = match params.get("symbols") {
            None => None,
            Some(_) => Some(super::symbols(&params.0)?),
        };
        let side = match params.get("side").as_deref() {
            None => None,
            Some("buy") => Some(Side::Buy),
            Some("sell") => Some(Side::Sell),
            Some(_) => return Err(bad_request("invalid_side", "side is buy or sell")),
        };
        let ascending = match params.get("direction").as_deref() {
            None | Some("desc") => false,
            Some("asc") => true,
            Some(_) => {
                return Err(bad_request("invalid_direction", "direction is asc or desc"));
            }
        };
        let (after, until) = (time("after")?, time("until")?);
        if let (Some(a), Some(u)) = (after, until)
            && a > u
        {
            return Err(bad_request("invalid_range", "after is later than until"));
        }
        Ok(Filters {
            symbols,
            side,
            after,
            until,
            ascending,
        })
    }

    fn keeps(&self, o: &Order) -> bool {
        self.symbols.as_ref().is_none_or(|s| s.contains(&o.symbol))
            && self.side.is_none_or(|side| o.side == side)
            && self.after.is_none_or(|t| o.created_at > t)
            && self.until.is_none_or(|t| o.created_at <= t)
    }
}
