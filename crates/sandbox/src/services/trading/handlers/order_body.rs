//! An order request's body read and checked, in the service's own error shape.

use std::str::FromStr;

use axum::body::Bytes;
use axum::response::Response;
use rust_decimal::Decimal;
use serde_json::{Map, Value};

use super::super::assets::Asset;
use super::super::assets::{known_symbol, unknown_symbol, valid_symbol};
use super::super::engine::{Kind, Side};
use super::*;
use crate::http::object_body;

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
pub(super) struct NewOrder {
    pub(super) symbol: String,
    pub(super) side: Side,
    pub(super) qty: Option<Decimal>,
    pub(super) notional: Option<Decimal>,
    pub(super) kind: Kind,
    pub(super) tif: String,
    pub(super) limit: Option<Decimal>,
    pub(super) stop: Option<Decimal>,
    pub(super) trail_price: Option<Decimal>,
    pub(super) trail_percent: Option<Decimal>,
    pub(super) class: String,
    pub(super) take_profit: Option<Decimal>,
    pub(super) stop_loss: Option<(Decimal, Option<Decimal>)>,
    pub(super) client_order_id: Option<String>,
    pub(super) extended_hours: bool,
}

pub(super) fn parse_order(body: &Bytes) -> Result<NewOrder, Response> {
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
    if !known_symbol(&symbol) {
        return Err(unprocessable("unknown_symbol", unknown_symbol(&symbol)));
    }
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
    check_asset(&Asset::of(&symbol), qty, notional)?;
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
    let extended_hours = match body.get("extended_hours") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(unprocessable(
                "invalid_extended_hours",
                "extended_hours is true or false",
            ));
        }
    };
    if extended_hours && (kind != Kind::Limit || tif != "day" || class != "simple") {
        return Err(unprocessable(
            "invalid_extended_hours",
            "extended_hours is for simple limit orders with time_in_force day",
        ));
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
        extended_hours,
    })
}

/// Refuses an order the asset does not allow: one not tradable (halted or delisted),
/// or a fraction of a share (a fractional quantity, or an amount of money) of one that
/// trades only whole.
pub(super) fn check_asset(
    asset: &Asset,
    qty: Option<Decimal>,
    notional: Option<Decimal>,
) -> Result<(), Response> {
    if !asset.tradable {
        return Err(unprocessable(
            "asset_not_tradable",
            format!(
                "{} is not tradable ({})",
                asset.symbol,
                if asset.active { "halted" } else { "inactive" }
            ),
        ));
    }
    if asset.fractionable {
        return Ok(());
    }
    if notional.is_some() {
        return Err(unprocessable(
            "fractional_not_allowed",
            format!(
                "{} trades in whole shares only: order it by qty, not notional",
                asset.symbol
            ),
        ));
    }
    if let Some(q) = qty.filter(|q| !q.fract().is_zero()) {
        return Err(unprocessable(
            "fractional_not_allowed",
            format!("{} trades in whole shares only, got qty {q}", asset.symbol),
        ));
    }
    Ok(())
}
