//! The trading service (`/trading/v1/...`, stream at `/trading/stream`): a paper-trading
//! engine, deterministic from the seed and the sandbox clock.
//!
//! - Markets: random-walk prices per symbol; quotes, OHLCV bars, an order book and
//!   recent trades (`GET /v1/markets?symbols=A,B&kind=quotes|bars|orderbook|trades`).
//! - Orders: market orders fill at the quote (1,000 shares a minute at most, so large
//!   ones fill partially); limit, stop, stop-limit and trailing-stop orders rest and
//!   fill when the price crosses as the clock moves; bracket, OCO and OTO orders hold
//!   their legs. An order beyond buying power (or selling more than is held) is refused;
//!   the same `client_order_id` twice answers the first order.
//! - Orders are listed by status, symbols, side, dates and direction, replaced
//!   (`PATCH`), canceled one by one or all at once; positions closed in part or whole.
//! - Assets: every well-formed symbol trades; BRK.A only in whole shares, HALT is halted
//!   and OLDCO delisted, and orders they do not allow are refused.
//! - Account: cash (100,000 USD to start), buying power, equity and positions; its
//!   activities (the opening deposit and every fill) and its equity over a period.
//! - Clock and calendar: weekdays but three holidays, 14:30 to 21:00 UTC.
//! - History: twenty years of one-minute bars generated on demand, paged by token;
//!   news and earnings, paged by token.
//! - Stream: quotes and trades at a configurable rate, a minute bar as each minute of
//!   the sandbox clock ends, fills, order and account changes as they happen,
//!   subscription acknowledgements.
//! - Plans: Free 200 requests a minute (no stream, no history), Pro 10,000, Enterprise
//!   unlimited.

mod assets;
mod control;
pub(crate) mod engine;
mod handlers;
mod hours;
pub(crate) mod market;
mod stream;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use rust_decimal::Decimal;
use serde_json::Value;
use time::OffsetDateTime;

use crate::Sandbox;
use crate::outbox::StreamEvent;
use crate::plans::Limit;
use crate::registry::ServiceDef;
use crate::service::Service;
use crate::state::{Shared, World};

use engine::{Account, Emitted};
use market::Market;

/// The service, as the registry sees it.
pub(crate) struct Def;

impl ServiceDef for Def {
    fn hint(&self) -> &'static str {
        "cargo run -p trading-client --example trading_quote_ticker -- AAPL MSFT"
    }

    fn router(&self) -> Router<Arc<Shared>> {
        handlers::router()
    }

    fn control_router(&self) -> Router<Arc<Shared>> {
        control::router()
    }

    fn limit(&self, plan: &str) -> Option<Limit> {
        match plan {
            "free" => Some(Limit::per_minute(200)),
            "pro" => Some(Limit::per_minute(10_000)),
            _ => None,
        }
    }

    fn tick(&self, world: &mut World, now: OffsetDateTime) -> Vec<(&'static str, Value)> {
        let seed = world.settings.seed;
        let keeps_hours = world.settings.market_hours;
        let World { services, ids, .. } = world;
        let state = services.get_mut::<TradingState>();
        let TradingState {
            accounts,
            market,
            offsets,
            ..
        } = state;
        let mut published = Vec::new();
        for (key, account) in accounts.iter_mut() {
            let events = account.step(market, seed, offsets, now, keeps_hours, ids);
            if !events.is_empty() {
                published.push((key.clone(), events));
            }
        }
        for (key, events) in published {
            publish(world, &key, events);
        }
        Vec::new()
    }
}

/// The service's state.
#[derive(Debug)]
pub(crate) struct TradingState {
    pub accounts: BTreeMap<String, Account>,
    pub market: Market,
    /// Per-symbol shifts set by the control endpoint (`prices/{symbol}`).
    pub offsets: HashMap<String, Decimal>,
    /// How often a stream session sends quotes.
    pub quote_interval: Duration,
}

impl Default for TradingState {
    fn default() -> Self {
        TradingState {
            accounts: BTreeMap::new(),
            market: Market::default(),
            offsets: HashMap::new(),
            quote_interval: Duration::from_millis(1000),
        }
    }
}

impl TradingState {
    /// The price of `symbol` at `t`, shift included.
    pub(crate) fn price(&mut self, seed: u64, symbol: &str, t: OffsetDateTime) -> Decimal {
        let offset = self.offsets.get(symbol).copied().unwrap_or_default();
        (self.market.price(seed, symbol, t) + offset).max(Decimal::new(1, 2))
    }
}

/// The account of `key`, created on first use.
pub(crate) fn account<'w>(world: &'w mut World, key: &str) -> &'w mut Account {
    let now = world.now();
    world
        .services
        .get_mut::<TradingState>()
        .accounts
        .entry(key.to_owned())
        .or_insert_with(|| Account::new(key, now))
}

/// Publishes the engine's events to `key`'s stream sessions; an `account` marker
/// becomes the account as it now stands.
pub(crate) fn publish(world: &mut World, key: &str, events: Vec<Emitted>) {
    let seed = world.settings.seed;
    let now = world.now();
    let mut account_changed = false;
    for (channel, data) in events {
        if channel == "account" {
            account_changed = true;
            continue;
        }
        world.publish(StreamEvent {
            service: Service::Trading,
            tenant: Some(key.to_owned()),
            channel: channel.to_owned(),
            data,
        });
    }
    if account_changed {
        let data = {
            let state = world.services.get_mut::<TradingState>();
            let TradingState {
                accounts,
                market,
                offsets,
                ..
            } = state;
            accounts.get(key).map(|a| {
                a.to_json(&mut |symbol| {
                    let offset = offsets.get(symbol).copied().unwrap_or_default();
                    (market.price(seed, symbol, now) + offset).max(Decimal::new(1, 2))
                })
            })
        };
        if let Some(account) = data {
            world.publish(StreamEvent {
                service: Service::Trading,
                tenant: Some(key.to_owned()),
                channel: "account".into(),
                data: serde_json::json!({"type": "account", "account": account}),
            });
        }
    }
}

/// The trading service of a running sandbox: `sandbox.trading()`.
#[derive(Debug, Clone, Copy)]
pub struct Trading<'a> {
    sandbox: &'a Sandbox,
}

impl Sandbox {
    /// The trading service.
    pub fn trading(&self) -> Trading<'_> {
        Trading { sandbox: self }
    }
}

impl Trading<'_> {
    /// The base URL a client uses (paths such as `/v1/orders` go after it).
    pub fn url(&self) -> String {
        self.sandbox.service_url(Service::Trading)
    }

    /// The stream's URL (`ws://.../trading/stream`).
    pub fn stream_url(&self) -> String {
        format!("{}/stream", self.url().replacen("http://", "ws://", 1))
    }

    /// The price of `symbol` now.
    pub fn price(&self, symbol: &str) -> Decimal {
        self.sandbox.shared.with_world(|w| {
            let seed = w.settings.seed;
            let now = w.now();
            w.services
                .get_mut::<TradingState>()
                .price(seed, symbol, now)
        })
    }

    /// Moves `symbol`'s price to `price` from now on (its walk goes on from there), as
    /// `POST /_sandbox/trading/prices/{symbol}` does; resting orders it crosses fill at
    /// the next clock move.
    pub fn set_price(&self, symbol: &str, price: Decimal) {
        self.sandbox
            .shared
            .with_world(|w| control::set_price(w, symbol, price));
    }

    /// How often stream sessions send quotes. Defaults to once a second.
    pub fn set_quote_interval(&self, every: Duration) {
        self.sandbox.shared.with_world(|w| {
            w.services.get_mut::<TradingState>().quote_interval =
                every.max(Duration::from_millis(1));
        });
    }

    /// Every order of every key (top orders, legs inside), as the API shows them: lets a
    /// test count what was really placed.
    pub fn orders(&self) -> Vec<Value> {
        self.sandbox.shared.with_world(control::all_orders)
    }
}
