//! The paper-trading engine: orders and their legs, fills at the market's prices,
//! cash, buying power and positions. Market orders fill at the quote (up to 1,000
//! shares a minute, so large ones fill partially over several minutes); limit, stop,
//! stop-limit and trailing-stop orders rest and fill when the price crosses, checked
//! minute by minute as the clock moves.

use std::collections::{BTreeMap, HashMap};

use rust_decimal::Decimal;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime, Time};

mod order;

pub(crate) use order::{Fill, Kind, Order, Side};

use super::market::{Market, number};
use crate::clock::rfc3339;
use crate::ids::Ids;

/// The most shares that fill per minute of one order.
pub(crate) const LIQUIDITY: i64 = 1_000;
/// What a new account starts with.
pub(crate) const STARTING_CASH: i64 = 100_000;
/// The most minutes one clock move is checked minute by minute (a week); a longer move
/// checks the rest at its end.
const MAX_STEPS: i64 = 7 * 24 * 60;

fn cent() -> Decimal {
    Decimal::new(1, 2)
}

/// One tenant's account.
#[derive(Debug)]
pub(crate) struct Account {
    pub id: String,
    pub cash: Decimal,
    pub positions: BTreeMap<String, Position>,
    pub orders: Vec<Order>,
    pub by_client_id: HashMap<String, usize>,
    pub last_checked: OffsetDateTime,
    /// When the account opened (its first deposit).
    pub opened_at: OffsetDateTime,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Position {
    pub qty: Decimal,
    pub cost: Decimal,
}

/// A stream event produced by the engine: its channel and message.
pub(crate) type Emitted = (&'static str, Value);

impl Account {
    pub(crate) fn new(key: &str, now: OffsetDateTime) -> Self {
        Account {
            id: format!("acct_{:x}", crate::ids::stable_hash(key) & 0xffff_ffff),
            cash: Decimal::from(STARTING_CASH),
            positions: BTreeMap::new(),
            orders: Vec::new(),
            by_client_id: HashMap::new(),
            last_checked: now,
            opened_at: now,
        }
    }

    /// Cash not promised to open buy orders.
    pub(crate) fn buying_power(&self, price_of: &mut dyn FnMut(&str) -> Decimal) -> Decimal {
        let reserved: Decimal = self
            .orders
            .iter()
            .filter(|o| o.is_open() && o.status != "held" && o.side == Side::Buy)
            .map(|o| {
                if let Some(n) = o.notional.filter(|_| o.target.is_none()) {
                    return n;
                }
                let price = o
                    .limit
                    .or(o.stop)
                    .unwrap_or_else(|| price_of(&o.symbol) + cent());
                o.remaining().unwrap_or_default() * price
            })
            .sum();
        (self.cash - reserved).max(Decimal::ZERO)
    }

    /// Shares of `symbol` not promised to open sell orders.
    pub(crate) fn sellable(&self, symbol: &str) -> Decimal {
        let held = self
            .positions
            .get(symbol)
            .map(|p| p.qty)
            .unwrap_or_default();
        // The two exits of a pair promise the same shares: counted once.
        let promised: Decimal = self
            .orders
            .iter()
            .enumerate()
            .filter(|(_, o)| {
                o.is_open() && o.status != "held" && o.side == Side::Sell && o.symbol == symbol
            })
            .filter(|(i, o)| o.sibling.is_none_or(|s| *i < s))
            .filter_map(|(_, o)| o.remaining())
            .sum();
        held - promised
    }

    pub(crate) fn to_json(&self, price_of: &mut dyn FnMut(&str) -> Decimal) -> Value {
        let mut equity = self.cash;
        let positions: Vec<Value> = self
            .positions
            .iter()
            .filter(|(_, p)| !p.qty.is_zero())
            .map(|(symbol, p)| {
                let price = price_of(symbol);
                let value = p.qty * price;
                equity += value;
                let avg = (p.cost / p.qty).round_dp(4);
                json!({
                    "symbol": symbol,
                    "qty": number(p.qty),
                    "avg_entry_price": number(avg),
                    "current_price": number(price),
                    "market_value": number(value.round_dp(2)),
                    "unrealized_pl": number((value - p.cost).round_dp(2)),
                })
            })
            .collect();
        json!({
            "id": self.id,
            "status": "active",
            "currency": "USD",
            "cash": number(self.cash.round_dp(2)),
            "buying_power": number(self.buying_power(price_of).round_dp(2)),
            "equity": number(equity.round_dp(2)),
            "positions": positions,
        })
    }

    /// Runs order `index` against the market at `t` (`open`: whether the market trades
    /// then); returns the events it caused. While the market is closed nothing fills
    /// or triggers, but an order marked `extended_hours` (a limit order) may fill.
    pub(crate) fn evaluate(
        &mut self,
        index: usize,
        price: Decimal,
        t: OffsetDateTime,
        open: bool,
        ids: &mut Ids,
    ) -> Vec<Emitted> {
        let mut events = Vec::new();
        let Some(order) = self.orders.get(index) else {
            return events;
        };
        if !order.is_open() || order.status == "held" {
            return events;
        }
        if order.expires_at.is_some_and(|e| t >= e) {
            self.finish(index, "expired", t, &mut events);
            return events;
        }
        if !open && !order.extended_hours {
            return events;
        }
        let ask = price + cent();
        let bid = (price - cent()).max(cent());
        let order = &mut self.orders[index];
        // Stops and trailing stops trigger first.
        match order.kind {
            Kind::Stop | Kind::StopLimit if !order.triggered => {
                let stop = order.stop.unwrap_or_default();
                let hit = match order.side {
                    Side::Buy => price >= stop,
                    Side::Sell => price <= stop,
                };
                if !hit {
                    return events;
                }
                order.triggered = true;
            }
            Kind::TrailingStop if !order.triggered => {
                let mark = match (order.side, order.watermark) {
                    (Side::Sell, Some(m)) => m.max(price),
                    (Side::Buy, Some(m)) => m.min(price),
                    (_, None) => price,
                };
                order.watermark = Some(mark);
                let stop = order.trailing_stop(mark);
                let hit = match order.side {
                    Side::Sell => price <= stop,
                    Side::Buy => price >= stop,
                };
                if !hit {
                    return events;
                }
                order.triggered = true;
            }
            _ => {}
        }
        let limit = match order.kind {
            Kind::Limit | Kind::StopLimit => order.limit,
            _ => None,
        };
        let fill_price = match (order.side, limit) {
            (Side::Buy, Some(l)) if ask > l => return events,
            (Side::Sell, Some(l)) if bid < l => return events,
            (Side::Buy, Some(l)) => ask.min(l),
            (Side::Sell, Some(l)) => bid.max(l),
            (Side::Buy, None) => ask,
            (Side::Sell, None) => bid,
        };
        // A notional order's quantity is fixed at its first fill.
        if order.target.is_none()
            && let Some(n) = order.notional
        {
            order.target = Some((n / fill_price).round_dp(6));
        }
        let remaining = order.remaining().unwrap_or_default();
        if remaining.is_zero() {
            return events;
        }
        let qty = remaining.min(Decimal::from(LIQUIDITY));
        if order.tif == "fok" && qty < remaining {
            self.finish(index, "canceled", t, &mut events);
            return events;
        }
        self.fill(index, qty, fill_price, t, ids, &mut events);
        let order = &self.orders[index];
        if order.tif == "ioc" && order.is_open() {
            self.finish(index, "canceled", t, &mut events);
        }
        events
    }

    fn fill(
        &mut self,
        index: usize,
        qty: Decimal,
        price: Decimal,
        t: OffsetDateTime,
        ids: &mut Ids,
        events: &mut Vec<Emitted>,
    ) {
        let (symbol, side) = {
            let o = &self.orders[index];
            (o.symbol.clone(), o.side)
        };
        let position = self.positions.entry(symbol.clone()).or_default();
        match side {
            Side::Buy => {
                self.cash -= qty * price;
                position.qty += qty;
                position.cost += qty * price;
            }
            Side::Sell => {
                self.cash += qty * price;
                if !position.qty.is_zero() {
                    let avg = position.cost / position.qty;
                    position.cost -= avg * qty.min(position.qty);
                }
                position.qty -= qty;
                if position.qty.is_zero() {
                    position.cost = Decimal::ZERO;
                }
            }
        }
        let execution_id = ids.next("exec");
        let order = &mut self.orders[index];
        order.filled_qty += qty;
        order.filled_value += qty * price;
        order.updated_at = t;
        order.fills.push(Fill {
            execution_id: execution_id.clone(),
            qty,
            price,
            at: t,
        });
        let done = order.remaining().is_some_and(|r| r.is_zero());
        order.status = if done { "filled" } else { "partially_filled" };
        if done {
            order.filled_at = Some(t);
        }
        let fill = json!({
            "type": "fill",
            "execution_id": execution_id,
            "order_id": order.id,
            "client_order_id": order.client_order_id,
            "symbol": symbol,
            "side": side.as_str(),
            "qty": number(qty),
            "price": number(price),
            "timestamp": rfc3339(t),
        });
        events.push(("orders", fill));
        let sibling = order.sibling;
        let legs = order.legs.clone();
        let filled = order.filled_qty;
        // One exit of a pair filling cancels the other; that brings the top order's
        // event, which then is not sent twice.
        let mut announced = false;
        if let Some(s) = sibling
            && self.orders.get(s).is_some_and(Order::is_open)
        {
            self.finish(s, "canceled", t, events);
            announced = true;
        }
        // A filled entry sets its exits to work, for the quantity it got.
        if done {
            for leg in legs {
                if let Some(l) = self.orders.get_mut(leg)
                    && l.status == "held"
                {
                    l.status = "new";
                    l.qty = Some(filled);
                    l.updated_at = t;
                }
            }
        }
        if !announced {
            self.push_order(index, events);
        }
        events.push(("account", Value::Null));
    }

    /// Ends an open order (canceled or expired), and its working legs.
    pub(crate) fn finish(
        &mut self,
        index: usize,
        status: &'static str,
        t: OffsetDateTime,
        events: &mut Vec<Emitted>,
    ) {
        let legs = match self.orders.get_mut(index) {
            Some(o) if o.is_open() => {
                o.status = status;
                o.updated_at = t;
                o.canceled_at = Some(t);
                o.legs.clone()
            }
            _ => return,
        };
        for leg in legs {
            if self.orders.get(leg).is_some_and(|l| l.is_open()) {
                self.finish(leg, status, t, events);
            }
        }
        self.push_order(index, events);
    }

    /// The order event of order `index` (its top order, legs included).
    pub(crate) fn push_order(&self, index: usize, events: &mut Vec<Emitted>) {
        let top = self.orders[index].parent.unwrap_or(index);
        events.push((
            "orders",
            json!({"type": "order", "order": self.orders[top].to_json(&self.orders)}),
        ));
    }

    /// Checks every open order minute by minute from the last check to `now`.
    pub(crate) fn step(
        &mut self,
        market: &mut Market,
        seed: u64,
        offsets: &HashMap<String, Decimal>,
        now: OffsetDateTime,
        keeps_hours: bool,
        ids: &mut Ids,
    ) -> Vec<Emitted> {
        let mut events = Vec::new();
        let from = self.last_checked;
        if now <= from {
            return events;
        }
        self.last_checked = now;
        if !self.orders.iter().any(Order::is_open) {
            return events;
        }
        let mut minute = whole_minute(from) + Duration::minutes(1);
        let steps = (now - minute).whole_minutes();
        if steps > MAX_STEPS {
            minute = whole_minute(now) - Duration::minutes(MAX_STEPS);
        }
        let mut instants = Vec::new();
        while minute <= now {
            instants.push(minute);
            minute += Duration::minutes(1);
        }
        if instants.last() != Some(&now) {
            instants.push(now);
        }
        for t in instants {
            let open = super::hours::trades_at(keeps_hours, t);
            for index in 0..self.orders.len() {
                if !self.orders[index].is_open() {
                    continue;
                }
                let symbol = self.orders[index].symbol.clone();
                let offset = offsets.get(&symbol).copied().unwrap_or_default();
                let price = (market.price(seed, &symbol, t) + offset).max(cent());
                events.extend(self.evaluate(index, price, t, open, ids));
            }
        }
        events
    }
}

fn whole_minute(t: OffsetDateTime) -> OffsetDateTime {
    t.replace_second(0)
        .and_then(|t| t.replace_nanosecond(0))
        .unwrap_or(t)
}

/// When a day order placed at `t` expires: the session close (21:00 UTC) of its day, or
/// of the next day when placed after it.
pub(crate) fn day_end(t: OffsetDateTime) -> OffsetDateTime {
    let close = t.replace_time(Time::from_hms(21, 0, 0).unwrap_or(Time::MIDNIGHT));
    if t < close {
        close
    } else {
        close + Duration::days(1)
    }
}
