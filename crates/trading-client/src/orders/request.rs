//! What to place: a type that carries its own prices, so an invalid order does not
//! compile, and its wire body.

use core_http::{Error, Result};
use rust_decimal::Decimal;

use super::MAX_CLIENT_ORDER_ID;
use super::model::{OrderClass, Side, TimeInForce};
use crate::money::JsonObject;

/// How much to trade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Amount {
    /// A number of shares (fractions allowed where the service allows them).
    Qty(Decimal),
    /// An amount of money (market orders only).
    Notional(Decimal),
}

/// How far a trailing stop follows the price.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Trail {
    /// A fixed distance in money.
    Price(Decimal),
    /// A percentage of the price.
    Percent(Decimal),
}

/// An order's type, with the prices it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OrderType {
    /// At the market.
    Market,
    /// At `limit` or better.
    Limit {
        /// The limit price.
        limit: Decimal,
    },
    /// A market order once the price reaches `stop` (a stop-loss).
    Stop {
        /// The stop price.
        stop: Decimal,
    },
    /// A limit order at `limit` once the price reaches `stop`.
    StopLimit {
        /// The stop price.
        stop: Decimal,
        /// The limit price.
        limit: Decimal,
    },
    /// A stop that follows the price by `Trail`.
    TrailingStop(Trail),
}

/// The entry of a bracket or OTO order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Entry {
    /// At the market.
    Market,
    /// At a limit price.
    Limit(Decimal),
}

/// The stop-loss exit of a bracket, OCO or OTO order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StopLoss {
    /// The stop price.
    pub stop: Decimal,
    /// A limit once stopped (a stop-limit exit); `None` exits at the market.
    pub limit: Option<Decimal>,
}

impl StopLoss {
    /// Exits at the market once the price reaches `stop`.
    ///
    /// ```
    /// use trading_client::{Decimal, orders::{OrderRequest, Side, StopLoss}};
    /// let exits = OrderRequest::oco("AAPL", Side::Sell, Decimal::from(10), Decimal::new(200_00, 2), StopLoss::at(Decimal::new(175_00, 2)));
    /// # let _ = exits;
    /// ```
    pub fn at(stop: Decimal) -> Self {
        StopLoss { stop, limit: None }
    }

    /// Exits with a limit at `limit` once the price reaches `stop`.
    ///
    /// ```
    /// use trading_client::{Decimal, orders::StopLoss};
    /// // Once AAPL trades at 175.00, sell, but not below 174.50.
    /// let stop = StopLoss::with_limit(Decimal::new(175_00, 2), Decimal::new(174_50, 2));
    /// assert_eq!(stop.limit, Some(Decimal::new(174_50, 2)));
    /// ```
    pub fn with_limit(stop: Decimal, limit: Decimal) -> Self {
        StopLoss {
            stop,
            limit: Some(limit),
        }
    }
}

/// The one exit of an OTO order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exit {
    /// A limit exit at this price.
    TakeProfit(Decimal),
    /// A stop-loss exit.
    StopLoss(StopLoss),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Legs {
    None,
    Bracket {
        take_profit: Decimal,
        stop_loss: StopLoss,
    },
    Oco {
        stop_loss: StopLoss,
    },
    Oto(Exit),
}

/// An order to place. Build it with one constructor per kind, each taking exactly what
/// that kind needs; then set the time in force or your own client order id.
///
/// ```
/// use trading_client::Decimal;
/// use trading_client::orders::{OrderRequest, Side, StopLoss, Entry, TimeInForce};
///
/// let buy = OrderRequest::limit("AAPL", Side::Buy, Decimal::from(10), Decimal::new(18_550, 2))
///     .time_in_force(TimeInForce::Gtc);
/// let bracket = OrderRequest::bracket(
///     "AAPL",
///     Side::Buy,
///     Decimal::from(10),
///     Entry::Market,
///     Decimal::new(20_000, 2),
///     StopLoss::at(Decimal::new(17_500, 2)),
/// );
/// # let _ = (buy, bracket);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OrderRequest {
    /// The symbol.
    pub(crate) symbol: String,
    /// Buy or sell.
    pub(crate) side: Side,
    /// How much.
    pub(crate) amount: Amount,
    /// The type, with its prices.
    pub(crate) order_type: OrderType,
    /// How long it works. Defaults to [`TimeInForce::Day`].
    pub(crate) time_in_force: TimeInForce,
    /// Your id for the order (at most 48 characters). Defaults to none: the client makes
    /// a UUID. Either way the same id goes with every attempt, and the service never
    /// places two orders with one id.
    pub(crate) client_order_id: Option<String>,
    /// May fill before the open and after the close too (a simple limit order working
    /// for the day only; anything else is refused before sending). Defaults to
    /// `false`.
    pub(crate) extended_hours: bool,
    legs: Legs,
}

impl OrderRequest {
    fn new(symbol: impl Into<String>, side: Side, amount: Amount, order_type: OrderType) -> Self {
        OrderRequest {
            symbol: symbol.into(),
            side,
            amount,
            order_type,
            time_in_force: TimeInForce::Day,
            client_order_id: None,
            extended_hours: false,
            legs: Legs::None,
        }
    }

    /// At the market, by quantity or by notional amount.
    ///
    /// ```
    /// use trading_client::{Decimal, orders::{Amount, OrderRequest, Side}};
    /// let shares = OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::from(5)));
    /// let dollars = OrderRequest::market("AAPL", Side::Buy, Amount::Notional(Decimal::from(500)));
    /// # let _ = (shares, dollars);
    /// ```
    pub fn market(symbol: impl Into<String>, side: Side, amount: Amount) -> Self {
        Self::new(symbol, side, amount, OrderType::Market)
    }

    /// At `limit` or better.
    ///
    /// ```
    /// use trading_client::{Decimal, orders::{OrderRequest, Side}};
    /// // Ten shares at 180.50 or less.
    /// let order = OrderRequest::limit("AAPL", Side::Buy, Decimal::from(10), Decimal::new(180_50, 2));
    /// # let _ = order;
    /// ```
    pub fn limit(symbol: impl Into<String>, side: Side, qty: Decimal, limit: Decimal) -> Self {
        Self::new(symbol, side, Amount::Qty(qty), OrderType::Limit { limit })
    }

    /// At the market once the price reaches `stop` (a stop-loss).
    ///
    /// ```
    /// use trading_client::{Decimal, orders::{OrderRequest, Side}};
    /// let stop_loss = OrderRequest::stop("AAPL", Side::Sell, Decimal::from(10), Decimal::new(175_00, 2));
    /// # let _ = stop_loss;
    /// ```
    pub fn stop(symbol: impl Into<String>, side: Side, qty: Decimal, stop: Decimal) -> Self {
        Self::new(symbol, side, Amount::Qty(qty), OrderType::Stop { stop })
    }

    /// At `limit` or better once the price reaches `stop`.
    ///
    /// ```
    /// use trading_client::{Decimal, orders::{OrderRequest, Side}};
    /// let order = OrderRequest::stop_limit(
    ///     "AAPL",
    ///     Side::Sell,
    ///     Decimal::from(10),
    ///     Decimal::new(175_00, 2), // stop
    ///     Decimal::new(174_50, 2), // limit
    /// );
    /// # let _ = order;
    /// ```
    pub fn stop_limit(
        symbol: impl Into<String>,
        side: Side,
        qty: Decimal,
        stop: Decimal,
        limit: Decimal,
    ) -> Self {
        Self::new(
            symbol,
            side,
            Amount::Qty(qty),
            OrderType::StopLimit { stop, limit },
        )
    }

    /// A stop that follows the price by `trail`.
    ///
    /// ```
    /// use trading_client::{Decimal, orders::{OrderRequest, Side, Trail}};
    /// // Sell if AAPL falls 2% below its highest price since the order was placed.
    /// let order = OrderRequest::trailing_stop("AAPL", Side::Sell, Decimal::from(10), Trail::Percent(Decimal::from(2)));
    /// # let _ = order;
    /// ```
    pub fn trailing_stop(
        symbol: impl Into<String>,
        side: Side,
        qty: Decimal,
        trail: Trail,
    ) -> Self {
        Self::new(
            symbol,
            side,
            Amount::Qty(qty),
            OrderType::TrailingStop(trail),
        )
    }

    /// An entry with two exits: a take-profit limit and a stop-loss; when one fills,
    /// the other is canceled.
    ///
    /// ```
    /// use trading_client::{Decimal, orders::{Entry, OrderClass, OrderRequest, Side, StopLoss}};
    /// let order = OrderRequest::bracket(
    ///     "AAPL",
    ///     Side::Buy,
    ///     Decimal::from(10),
    ///     Entry::Limit(Decimal::new(185_00, 2)),
    ///     Decimal::new(200_00, 2),               // take profit
    ///     StopLoss::at(Decimal::new(175_00, 2)), // stop loss
    /// );
    /// assert_eq!(order.order_class(), OrderClass::Bracket);
    /// ```
    pub fn bracket(
        symbol: impl Into<String>,
        side: Side,
        qty: Decimal,
        entry: Entry,
        take_profit: Decimal,
        stop_loss: StopLoss,
    ) -> Self {
        let mut order = Self::new(symbol, side, Amount::Qty(qty), entry_type(entry));
        order.legs = Legs::Bracket {
            take_profit,
            stop_loss,
        };
        order
    }

    /// Two exits of a position, one cancels the other: a take-profit limit and a
    /// stop-loss. (`side` is the exits' side: sell to close a long position.)
    ///
    /// ```
    /// use trading_client::{Decimal, orders::{OrderClass, OrderRequest, Side, StopLoss}};
    /// let exits = OrderRequest::oco(
    ///     "AAPL",
    ///     Side::Sell,
    ///     Decimal::from(10),
    ///     Decimal::new(200_00, 2),
    ///     StopLoss::at(Decimal::new(175_00, 2)),
    /// );
    /// assert_eq!(exits.order_class(), OrderClass::Oco);
    /// ```
    pub fn oco(
        symbol: impl Into<String>,
        side: Side,
        qty: Decimal,
        take_profit: Decimal,
        stop_loss: StopLoss,
    ) -> Self {
        let mut order = Self::new(
            symbol,
            side,
            Amount::Qty(qty),
            OrderType::Limit { limit: take_profit },
        );
        order.legs = Legs::Oco { stop_loss };
        order
    }

    /// An entry that, once filled, sets one exit to work.
    ///
    /// ```
    /// use trading_client::{Decimal, orders::{Entry, Exit, OrderClass, OrderRequest, Side}};
    /// let order = OrderRequest::oto(
    ///     "AAPL",
    ///     Side::Buy,
    ///     Decimal::from(10),
    ///     Entry::Market,
    ///     Exit::TakeProfit(Decimal::new(200_00, 2)),
    /// );
    /// assert_eq!(order.order_class(), OrderClass::Oto);
    /// ```
    pub fn oto(
        symbol: impl Into<String>,
        side: Side,
        qty: Decimal,
        entry: Entry,
        exit: Exit,
    ) -> Self {
        let mut order = Self::new(symbol, side, Amount::Qty(qty), entry_type(entry));
        order.legs = Legs::Oto(exit);
        order
    }

    /// Sets how long the order works. Defaults to [`TimeInForce::Day`].
    pub fn time_in_force(mut self, tif: TimeInForce) -> Self {
        self.time_in_force = tif;
        self
    }

    /// Sets your own client order id (at most 48 characters): to look the order up
    /// later, or to place it again safely after your program restarted.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::{Decimal, orders::{OrderRequest, Side}};
    /// let order = OrderRequest::limit("AAPL", Side::Buy, Decimal::from(10), Decimal::new(185_50, 2))
    ///     .client_order_id("rebalance-2026-11-23-aapl");
    /// // Run twice (say, after a crash): the service still places one order.
    /// client.orders().place(&order)?;
    /// let placed = client.orders().get_by_client_order_id("rebalance-2026-11-23-aapl")?;
    /// assert!(placed.is_some());
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn client_order_id(mut self, id: impl Into<String>) -> Self {
        self.client_order_id = Some(id.into());
        self
    }

    /// The order class this request makes.
    ///
    /// ```
    /// use trading_client::{Decimal, orders::{Amount, OrderClass, OrderRequest, Side}};
    /// let order = OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::from(1)));
    /// assert_eq!(order.order_class(), OrderClass::Simple);
    /// ```
    pub fn order_class(&self) -> OrderClass {
        match self.legs {
            Legs::None => OrderClass::Simple,
            Legs::Bracket { .. } => OrderClass::Bracket,
            Legs::Oco { .. } => OrderClass::Oco,
            Legs::Oto(_) => OrderClass::Oto,
        }
    }

    /// Lets a limit order fill in the extended sessions (before the open, after the
    /// close). Only a simple limit order for the day may: on anything else the order is
    /// refused before it is sent.
    pub fn extended_hours(mut self, yes: bool) -> Self {
        self.extended_hours = yes;
        self
    }

    /// The prices of the exits (take-profit, stop-loss and its limit), named.
    pub(crate) fn exit_prices(&self) -> Vec<(&'static str, Decimal)> {
        let stop_loss = |s: StopLoss| {
            let mut v = vec![("stop-loss price", s.stop)];
            v.extend(s.limit.map(|l| ("stop-loss limit price", l)));
            v
        };
        match self.legs {
            Legs::None => Vec::new(),
            Legs::Bracket {
                take_profit,
                stop_loss: sl,
            } => {
                let mut v = vec![("take-profit price", take_profit)];
                v.extend(stop_loss(sl));
                v
            }
            Legs::Oco { stop_loss: sl } => stop_loss(sl),
            Legs::Oto(Exit::TakeProfit(p)) => vec![("take-profit price", p)],
            Legs::Oto(Exit::StopLoss(sl)) => stop_loss(sl),
        }
    }

    /// Checks what the types cannot: positive amounts and prices, a symbol, a known
    /// side and time in force, a client order id of 1 to 48 characters.
    pub(crate) fn validate(&self) -> Result<()> {
        let invalid = |m: String| Err(Error::InvalidRequest(m));
        if self.symbol.trim().is_empty() || self.symbol.chars().any(char::is_whitespace) {
            return invalid(format!("{:?} is not a symbol", self.symbol));
        }
        if self.side.is_unknown() {
            return invalid(format!(
                "side {:?} is neither buy nor sell",
                self.side.as_str()
            ));
        }
        if self.time_in_force.is_unknown() {
            return invalid(format!(
                "unknown time in force {:?}",
                self.time_in_force.as_str()
            ));
        }
        let positive = |name: &str, d: Decimal| {
            if d > Decimal::ZERO {
                Ok(())
            } else {
                Err(Error::InvalidRequest(format!(
                    "{name} must be above zero, got {d}"
                )))
            }
        };
        match self.amount {
            Amount::Qty(q) => positive("qty", q)?,
            Amount::Notional(n) => positive("notional", n)?,
        }
        match self.order_type {
            OrderType::Market => {}
            OrderType::Limit { limit } => positive("limit price", limit)?,
            OrderType::Stop { stop } => positive("stop price", stop)?,
            OrderType::StopLimit { stop, limit } => {
                positive("stop price", stop)?;
                positive("limit price", limit)?;
            }
            OrderType::TrailingStop(Trail::Price(p)) => positive("trail price", p)?,
            OrderType::TrailingStop(Trail::Percent(p)) => positive("trail percent", p)?,
        }
        if let Some(id) = &self.client_order_id
            && (id.is_empty() || id.len() > MAX_CLIENT_ORDER_ID)
        {
            return invalid(format!(
                "a client order id is 1 to {MAX_CLIENT_ORDER_ID} characters, got {}",
                id.len()
            ));
        }
        if self.extended_hours
            && !(matches!(self.order_type, OrderType::Limit { .. })
                && self.legs == Legs::None
                && self.time_in_force == TimeInForce::Day)
        {
            return invalid(
                "extended hours are for simple limit orders with time in force day".into(),
            );
        }
        match self.legs {
            Legs::None => {}
            Legs::Bracket {
                take_profit,
                stop_loss,
            } => {
                positive("take-profit price", take_profit)?;
                positive("stop-loss price", stop_loss.stop)?;
            }
            Legs::Oco { stop_loss } => positive("stop-loss price", stop_loss.stop)?,
            Legs::Oto(Exit::TakeProfit(p)) => positive("take-profit price", p)?,
            Legs::Oto(Exit::StopLoss(s)) => positive("stop-loss price", s.stop)?,
        }
        Ok(())
    }

    /// The JSON body, numbers written as their exact decimal text.
    pub(crate) fn body(&self, client_order_id: &str) -> String {
        let mut o = JsonObject::new()
            .string("symbol", &self.symbol)
            .string("side", self.side.as_str());
        o = match self.amount {
            Amount::Qty(q) => o.decimal("qty", q),
            Amount::Notional(n) => o.decimal("notional", n),
        };
        let kind = match self.order_type {
            OrderType::Market => "market",
            OrderType::Limit { .. } => "limit",
            OrderType::Stop { .. } => "stop",
            OrderType::StopLimit { .. } => "stop_limit",
            OrderType::TrailingStop(_) => "trailing_stop",
        };
        o = o
            .string("type", kind)
            .string("time_in_force", self.time_in_force.as_str());
        o = match self.order_type {
            OrderType::Market => o,
            OrderType::Limit { limit } => o.decimal("limit_price", limit),
            OrderType::Stop { stop } => o.decimal("stop_price", stop),
            OrderType::StopLimit { stop, limit } => {
                o.decimal("stop_price", stop).decimal("limit_price", limit)
            }
            OrderType::TrailingStop(Trail::Price(p)) => o.decimal("trail_price", p),
            OrderType::TrailingStop(Trail::Percent(p)) => o.decimal("trail_percent", p),
        };
        let stop_loss = |s: StopLoss| {
            let sl = JsonObject::new().decimal("stop_price", s.stop);
            match s.limit {
                Some(l) => sl.decimal("limit_price", l),
                None => sl,
            }
        };
        o = o.string("order_class", self.order_class().as_str());
        o = match self.legs {
            Legs::None => o,
            Legs::Bracket {
                take_profit,
                stop_loss: sl,
            } => o
                .object(
                    "take_profit",
                    JsonObject::new().decimal("limit_price", take_profit),
                )
                .object("stop_loss", stop_loss(sl)),
            Legs::Oco { stop_loss: sl } => {
                let take_profit = match self.order_type {
                    OrderType::Limit { limit } => limit,
                    _ => Decimal::ZERO,
                };
                o.object(
                    "take_profit",
                    JsonObject::new().decimal("limit_price", take_profit),
                )
                .object("stop_loss", stop_loss(sl))
            }
            Legs::Oto(Exit::TakeProfit(p)) => {
                o.object("take_profit", JsonObject::new().decimal("limit_price", p))
            }
            Legs::Oto(Exit::StopLoss(sl)) => o.object("stop_loss", stop_loss(sl)),
        };
        if self.extended_hours {
            o = o.boolean("extended_hours", true);
        }
        o.string("client_order_id", client_order_id).finish()
    }
}

fn entry_type(entry: Entry) -> OrderType {
    match entry {
        Entry::Market => OrderType::Market,
        Entry::Limit(limit) => OrderType::Limit { limit },
    }
}
