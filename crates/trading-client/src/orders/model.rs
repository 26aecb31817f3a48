//! What an order is: its ids, enums, executions and the order as the service answers it.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

core_http::string_id! {
    /// The id of an order.
    pub struct OrderId in orders;
}

core_http::string_enum! {
    /// Buy or sell.
    pub enum Side in orders {
        /// Buy.
        Buy = "buy",
        /// Sell.
        Sell = "sell",
    }
}

core_http::string_enum! {
    /// How long an order stays working.
    pub enum TimeInForce in orders {
        /// Until the end of the trading day. The default.
        Day = "day",
        /// Until canceled.
        Gtc = "gtc",
        /// Fill what can be filled at once, cancel the rest.
        Ioc = "ioc",
        /// Fill all at once or nothing.
        Fok = "fok",
        /// At the opening auction.
        Opg = "opg",
        /// At the closing auction.
        Cls = "cls",
    }
}

core_http::string_enum! {
    /// Where an order stands.
    pub enum OrderStatus in orders {
        /// Received.
        New = "new",
        /// Accepted, not yet working.
        Accepted = "accepted",
        /// Being accepted.
        PendingNew = "pending_new",
        /// Some of it filled.
        PartiallyFilled = "partially_filled",
        /// All of it filled.
        Filled = "filled",
        /// Canceled.
        Canceled = "canceled",
        /// Expired (a day order at the close).
        Expired = "expired",
        /// Refused.
        Rejected = "rejected",
        /// Replaced by another order.
        Replaced = "replaced",
        /// Being canceled.
        PendingCancel = "pending_cancel",
        /// Being replaced.
        PendingReplace = "pending_replace",
        /// A leg waiting for its entry to fill.
        Held = "held",
    }
}

impl OrderStatus {
    /// `true` once the order will not change any more (filled, canceled, expired,
    /// rejected, replaced).
    ///
    /// ```
    /// use trading_client::orders::OrderStatus;
    /// assert!(OrderStatus::Filled.is_terminal());
    /// assert!(!OrderStatus::PartiallyFilled.is_terminal());
    /// ```
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            OrderStatus::Filled
                | OrderStatus::Canceled
                | OrderStatus::Expired
                | OrderStatus::Rejected
                | OrderStatus::Replaced
        )
    }
}

core_http::string_enum! {
    /// The type of an order, as the service reports it.
    pub enum OrderKind in orders {
        /// At the market.
        Market = "market",
        /// At a price or better.
        Limit = "limit",
        /// A market order once the price reaches the stop.
        Stop = "stop",
        /// A limit order once the price reaches the stop.
        StopLimit = "stop_limit",
        /// A stop that follows the price.
        TrailingStop = "trailing_stop",
    }
}

core_http::string_enum! {
    /// How an order relates to others.
    pub enum OrderClass in orders {
        /// One order.
        Simple = "simple",
        /// An entry with a take-profit and a stop-loss exit.
        Bracket = "bracket",
        /// Two exits, one cancels the other.
        Oco = "oco",
        /// An entry that triggers one exit.
        Oto = "oto",
    }
}

/// One execution of an order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Execution {
    /// Its id: unique; a fill seen twice has the same one (empty when not given).
    #[serde(default, deserialize_with = "core_http::de::text_or_empty")]
    pub execution_id: String,
    /// Shares filled; `None` when the answer does not say, never a fill of zero. The
    /// stream reports an execution without its quantity or price as an error naming
    /// the order, not as a fill.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub qty: Option<Decimal>,
    /// The price, like the quantity.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub price: Option<Decimal>,
    /// When.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<OffsetDateTime>,
}

/// An order as the service reports it. Only its `id` is required (the one field the
/// documents show); every amount is an `Option`, `None` when the answer does not carry
/// it, and a decode error when it carries something that is not exactly a number, never
/// a zero in its place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Order {
    /// Its id.
    pub id: OrderId,
    /// The client order id it was placed with.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub client_order_id: String,
    /// The symbol.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub symbol: String,
    /// Buy or sell.
    #[serde(default)]
    pub side: Side,
    /// Shares ordered (for an order by notional, once known).
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub qty: Option<Decimal>,
    /// Money ordered, for an order by notional.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub notional: Option<Decimal>,
    /// Its type.
    #[serde(default, rename = "type")]
    pub order_type: OrderKind,
    /// How long it works.
    #[serde(default)]
    pub time_in_force: TimeInForce,
    /// The limit price.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub limit_price: Option<Decimal>,
    /// The stop price; for a trailing stop, where the stop stands now (it moves with
    /// the best price seen, [`hwm`](Self::hwm)).
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub stop_price: Option<Decimal>,
    /// A trailing stop's distance in money.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub trail_price: Option<Decimal>,
    /// A trailing stop's distance in percent.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub trail_percent: Option<Decimal>,
    /// A trailing stop's best price seen since it was placed (the highest for a sell,
    /// the lowest for a buy), from which its stop price follows.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub hwm: Option<Decimal>,
    /// May fill in the extended sessions ([`OrderRequest::extended_hours`](crate::orders::OrderRequest::extended_hours));
    /// `None` when the answer does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_hours: Option<bool>,
    /// Its class.
    #[serde(default)]
    pub order_class: OrderClass,
    /// Where it stands.
    #[serde(default)]
    pub status: OrderStatus,
    /// Shares filled so far; `None` when the answer does not say (a filled order whose
    /// answer omits it is `None` too: read it again with `orders().get` rather than
    /// assume a figure).
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub filled_qty: Option<Decimal>,
    /// The average fill price, when given.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub filled_avg_price: Option<Decimal>,
    /// When it was placed.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_at: Option<OffsetDateTime>,
    /// When it last changed.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_at: Option<OffsetDateTime>,
    /// When it filled completely.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub filled_at: Option<OffsetDateTime>,
    /// When it was canceled or expired.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub canceled_at: Option<OffsetDateTime>,
    /// Its executions.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub fills: Vec<Execution>,
    /// The legs of a bracket, OCO or OTO order.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub legs: Vec<Order>,
    /// The order a leg belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<OrderId>,
    /// The order this one replaced ([`Orders::replace`](crate::orders::Orders::replace)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<OrderId>,
    /// The order that replaced this one (its status is then `replaced`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_by: Option<OrderId>,
}
