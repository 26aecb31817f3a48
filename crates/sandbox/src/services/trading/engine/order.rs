//! An order as the engine keeps it, its side, type and fills, and its JSON.

use rust_decimal::Decimal;
use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use super::super::market::number;
use crate::clock::rfc3339;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Buy,
    Sell,
}

impl Side {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Side::Buy => "buy",
            Side::Sell => "sell",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Market,
    Limit,
    Stop,
    StopLimit,
    TrailingStop,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Market => "market",
            Kind::Limit => "limit",
            Kind::Stop => "stop",
            Kind::StopLimit => "stop_limit",
            Kind::TrailingStop => "trailing_stop",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Fill {
    pub execution_id: String,
    pub qty: Decimal,
    pub price: Decimal,
    pub at: OffsetDateTime,
}

/// An order as the engine keeps it.
#[derive(Debug, Clone)]
pub(crate) struct Order {
    pub id: String,
    pub client_order_id: String,
    pub symbol: String,
    pub side: Side,
    pub qty: Option<Decimal>,
    pub notional: Option<Decimal>,
    pub kind: Kind,
    pub tif: String,
    pub limit: Option<Decimal>,
    pub stop: Option<Decimal>,
    pub trail_price: Option<Decimal>,
    pub trail_percent: Option<Decimal>,
    pub class: String,
    pub status: &'static str,
    pub filled_qty: Decimal,
    pub filled_value: Decimal,
    pub fills: Vec<Fill>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub filled_at: Option<OffsetDateTime>,
    pub canceled_at: Option<OffsetDateTime>,
    pub expires_at: Option<OffsetDateTime>,
    /// A stop that has triggered (it now acts as a market or limit order).
    pub triggered: bool,
    /// The best price seen since a trailing stop was placed.
    pub watermark: Option<Decimal>,
    pub parent: Option<usize>,
    pub legs: Vec<usize>,
    /// The other exit of an OCO pair (or of a bracket's exits).
    pub sibling: Option<usize>,
    /// What a trailing stop's notional qty resolved to, etc.: the qty to fill in all.
    pub target: Option<Decimal>,
    /// The order this one replaced, and the one that replaced it.
    pub replaces: Option<String>,
    pub replaced_by: Option<String>,
    /// May fill outside regular hours (a simple day limit order).
    pub extended_hours: bool,
}

impl Order {
    pub(crate) fn is_open(&self) -> bool {
        matches!(
            self.status,
            "new" | "accepted" | "partially_filled" | "held" | "pending_new"
        )
    }

    pub(super) fn remaining(&self) -> Option<Decimal> {
        self.target
            .or(self.qty)
            .map(|q| (q - self.filled_qty).max(Decimal::ZERO))
    }

    /// A trailing stop's stop price when the best price seen is `mark`.
    pub(super) fn trailing_stop(&self, mark: Decimal) -> Decimal {
        let trail = match (self.trail_price, self.trail_percent) {
            (Some(p), _) => p,
            (None, Some(pct)) => mark * pct / Decimal::from(100),
            (None, None) => Decimal::ZERO,
        };
        let stop = match self.side {
            Side::Sell => mark - trail,
            Side::Buy => mark + trail,
        };
        stop.round_dp(2).max(Decimal::new(1, 2))
    }

    pub(crate) fn to_json(&self, all: &[Order]) -> Value {
        let mut o = Map::new();
        let mut put = |k: &str, v: Value| {
            o.insert(k.to_owned(), v);
        };
        put("id", json!(self.id));
        put("client_order_id", json!(self.client_order_id));
        put("symbol", json!(self.symbol));
        put("side", json!(self.side.as_str()));
        if let Some(q) = self.qty {
            put("qty", number(q));
        }
        if let Some(n) = self.notional {
            put("notional", number(n));
        }
        put("type", json!(self.kind.as_str()));
        put("time_in_force", json!(self.tif));
        // A trailing stop's stop is where it stands now: the best price seen, less
        // (for a sell) the trail.
        let stop = match (self.kind, self.watermark) {
            (Kind::TrailingStop, Some(mark)) => Some(self.trailing_stop(mark)),
            _ => self.stop,
        };
        for (name, value) in [
            ("limit_price", self.limit),
            ("stop_price", stop),
            (
                "hwm",
                self.watermark.filter(|_| self.kind == Kind::TrailingStop),
            ),
            ("trail_price", self.trail_price),
            ("trail_percent", self.trail_percent),
        ] {
            if let Some(v) = value {
                put(name, number(v));
            }
        }
        put("order_class", json!(self.class));
        put("extended_hours", json!(self.extended_hours));
        if let Some(id) = &self.replaces {
            put("replaces", json!(id));
        }
        if let Some(id) = &self.replaced_by {
            put("replaced_by", json!(id));
        }
        put("status", json!(self.status));
        put("filled_qty", number(self.filled_qty));
        if !self.filled_qty.is_zero() {
            put(
                "filled_avg_price",
                number((self.filled_value / self.filled_qty).round_dp(4)),
            );
        }
        put("created_at", json!(rfc3339(self.created_at)));
        put("updated_at", json!(rfc3339(self.updated_at)));
        if let Some(t) = self.filled_at {
            put("filled_at", json!(rfc3339(t)));
        }
        if let Some(t) = self.canceled_at {
            put("canceled_at", json!(rfc3339(t)));
        }
        if let Some(t) = self.expires_at {
            put("expires_at", json!(rfc3339(t)));
        }
        put(
            "fills",
            Value::Array(
                self.fills
                    .iter()
                    .map(|f| {
                        json!({
                            "execution_id": f.execution_id,
                            "qty": number(f.qty),
                            "price": number(f.price),
                            "timestamp": rfc3339(f.at),
                        })
                    })
                    .collect(),
            ),
        );
        if let Some(parent) = self.parent.and_then(|p| all.get(p)) {
            put("parent_id", json!(parent.id));
        }
        if !self.legs.is_empty() {
            put(
                "legs",
                Value::Array(
                    self.legs
                        .iter()
                        .filter_map(|&l| all.get(l))
                        .map(|leg| leg.to_json(all))
                        .collect(),
                ),
            );
        }
        Value::Object(o)
    }
}
