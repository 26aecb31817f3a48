//! A stream session: subscriptions to market data per symbol (quotes, trades and
//! minute bars), orders (fills and order changes) and the account. Quotes and trades are
//! sent on the session's timer, one object for one symbol and an array for several
//! (quotes alternate text and binary frames); a minute bar when the sandbox clock has
//! passed into a new minute (the bar of the last whole minute); orders and account
//! changes as the engine publishes them.
//!
//! A subscription names channels and symbols: the symbols go to each market-data
//! channel named (`{"action":"subscribe","channels":["trades"],"symbols":["AAPL"]}`).
//! An unsubscription with symbols takes them off the market-data channels named (off
//! all of them when it names none); one without symbols ends the channels named.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{Value, json};
use time::OffsetDateTime;

use rust_decimal::Decimal;

use super::TradingState;
use super::assets::{known_symbol, unknown_symbol, valid_symbol};
use super::market;
use crate::outbox::StreamEvent;
use crate::sessions::{Outgoing, SessionHandler};
use crate::state::Shared;

const CHANNELS: &[&str] = &["quotes", "trades", "bars", "orders", "account"];
/// The channels that take symbols.
const MARKET: &[&str] = &["quotes", "trades", "bars"];

#[derive(Debug, Default)]
pub(super) struct Session {
    channels: BTreeSet<String>,
    /// The symbols of each market-data channel.
    symbols: BTreeMap<String, BTreeSet<String>>,
    frames: u64,
    /// The minute whose bar was sent last (or the one subscribed in).
    bar_minute: Option<OffsetDateTime>,
}

fn minute(t: OffsetDateTime) -> OffsetDateTime {
    t - time::Duration::nanoseconds(i64::from(t.nanosecond()))
        - time::Duration::seconds(i64::from(t.second()))
}

impl Session {
    fn acknowledgement(&self, kind: &str) -> Outgoing {
        let all: BTreeSet<&String> = self.symbols.values().flatten().collect();
        Outgoing::Text(
            json!({
                "type": kind,
                "channels": self.channels,
                "symbols": all,
                "subscriptions": self.symbols,
            })
            .to_string(),
        )
    }

    fn symbols_of(&self, channel: &str) -> Option<&BTreeSet<String>> {
        self.symbols
            .get(channel)
            .filter(|s| self.channels.contains(channel) && !s.is_empty())
    }

    /// One frame of `channel`'s messages, one per symbol, made by `make`.
    fn frame(
        &mut self,
        shared: &Shared,
        channel: &str,
        make: impl Fn(&mut TradingState, u64, &str, OffsetDateTime, Decimal) -> Value,
    ) -> Option<Value> {
        let symbols = self.symbols_of(channel)?.clone();
        let items: Vec<Value> = shared.with_world(|w| {
            let seed = w.settings.seed;
            let now = w.now();
            let state = w.services.get_mut::<TradingState>();
            symbols
                .iter()
                .map(|s| {
                    let offset = state.offsets.get(s).copied().unwrap_or_default();
                    make(state, seed, s, now, offset)
                })
                .collect()
        });
        Some(if items.len() == 1 {
            items.into_iter().next().unwrap_or_default()
        } else {
            Value::Array(items)
        })
    }

    fn quotes(&mut self, shared: &Shared) -> Option<Outgoing> {
        let frame = self.frame(shared, "quotes", |state, seed, s, now, offset| {
            let mut q = market::quote(&mut state.market, seed, s, now, offset);
            q["type"] = json!("quote");
            q
        })?;
        let text = frame.to_string();
        self.frames += 1;
        Some(if self.frames.is_multiple_of(2) {
            Outgoing::Binary(text)
        } else {
            Outgoing::Text(text)
        })
    }

    fn trades(&mut self, shared: &Shared) -> Option<Outgoing> {
        let frame = self.frame(shared, "trades", |state, seed, s, now, offset| {
            let mut trade = market::trades(&mut state.market, seed, s, now, 1, offset)
                .pop()
                .unwrap_or_default();
            trade["type"] = json!("trade");
            trade
        })?;
        Some(Outgoing::Text(frame.to_string()))
    }

    /// The bar of the last whole minute, once the clock has passed into a new one.
    fn bars(&mut self, shared: &Shared) -> Option<Outgoing> {
        self.symbols_of("bars")?;
        let now = minute(shared.with_world(|w| w.now()));
        let last = *self.bar_minute.get_or_insert(now);
        if now <= last {
            return None;
        }
        self.bar_minute = Some(now);
        let bar_start = now - time::Duration::minutes(1);
        let frame = self.frame(shared, "bars", |state, seed, s, _, offset| {
            let mut bar = state.market.minute_bar(seed, s, bar_start);
            let shift = |p: Decimal| (p + offset).max(Decimal::new(1, 2));
            (bar.o, bar.h, bar.l, bar.c) = (shift(bar.o), shift(bar.h), shift(bar.l), shift(bar.c));
            let mut body = bar.to_json();
            body["type"] = json!("bar");
            body["symbol"] = json!(s);
            body
        })?;
        Some(Outgoing::Text(frame.to_string()))
    }

    /// What the timer sends: quotes, trades, and a bar when a minute has passed.
    fn market_data(&mut self, shared: &Shared) -> Vec<Outgoing> {
        let mut out: Vec<Outgoing> = self.quotes(shared).into_iter().collect();
        out.extend(self.trades(shared));
        out.extend(self.bars(shared));
        out
    }
}

fn refuse(message: &str) -> Vec<Outgoing> {
    vec![Outgoing::Text(
        json!({"type": "error", "code": "invalid_subscription", "message": message}).to_string(),
    )]
}

impl SessionHandler for Session {
    fn on_text(&mut self, shared: &Shared, text: &str) -> Vec<Outgoing> {
        let Ok(Value::Object(message)) = serde_json::from_str::<Value>(text) else {
            return refuse("a message is a JSON object with an action");
        };
        let list = |name: &str| -> Result<Vec<String>, String> {
            match message.get(name) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_owned)
                            .ok_or(format!("{name} are strings"))
                    })
                    .collect(),
                Some(_) => Err(format!("{name} is an array")),
            }
        };
        let (channels, symbols) = match (list("channels"), list("symbols")) {
            (Ok(c), Ok(s)) => (c, s),
            (Err(e), _) | (_, Err(e)) => return refuse(&e),
        };
        if let Some(bad) = channels.iter().find(|c| !CHANNELS.contains(&c.as_str())) {
            return refuse(&format!(
                "unknown channel {bad:?}: channels are quotes, trades, bars, orders and account"
            ));
        }
        if let Some(bad) = symbols.iter().find(|s| !valid_symbol(s)) {
            return refuse(&format!("{bad:?} is not a symbol"));
        }
        if let Some(bad) = symbols.iter().find(|s| !known_symbol(s)) {
            return refuse(&unknown_symbol(bad));
        }
        let market: Vec<&String> = channels
            .iter()
            .filter(|c| MARKET.contains(&c.as_str()))
            .collect();
        match message.get("action").and_then(Value::as_str) {
            Some("subscribe") => {
                if let Some(c) = market.iter().find(|c| {
                    symbols.is_empty()
                        && self.symbols.get(c.as_str()).is_none_or(BTreeSet::is_empty)
                }) {
                    return refuse(&format!("the {c} channel needs symbols"));
                }
                for c in &market {
                    self.symbols
                        .entry((*c).clone())
                        .or_default()
                        .extend(symbols.iter().cloned());
                }
                if market.iter().any(|c| *c == "bars") && !self.channels.contains("bars") {
                    self.bar_minute = None;
                }
                self.channels.extend(channels.iter().cloned());
                let mut out = vec![self.acknowledgement("subscribed")];
                out.extend(self.quotes(shared));
                if market.iter().any(|c| *c == "bars") {
                    out.extend(self.bars(shared));
                }
                out
            }
            Some("unsubscribe") => {
                if symbols.is_empty() {
                    for c in &channels {
                        self.channels.remove(c);
                        self.symbols.remove(c);
                    }
                } else {
                    let from: Vec<String> = if market.is_empty() {
                        MARKET.iter().map(|c| (*c).to_owned()).collect()
                    } else {
                        market.iter().map(|c| (*c).clone()).collect()
                    };
                    for c in from {
                        if let Some(set) = self.symbols.get_mut(&c) {
                            for s in &symbols {
                                set.remove(s);
                            }
                        }
                    }
                }
                vec![self.acknowledgement("unsubscribed")]
            }
            _ => refuse("action is subscribe or unsubscribe"),
        }
    }

    fn on_event(&mut self, _shared: &Shared, event: &StreamEvent) -> Vec<Outgoing> {
        if self.channels.contains(&event.channel) {
            vec![Outgoing::Text(event.data.to_string())]
        } else {
            Vec::new()
        }
    }

    fn on_tick(&mut self, shared: &Shared) -> Vec<Outgoing> {
        self.market_data(shared)
    }

    fn tick_every(&self, shared: &Shared) -> Duration {
        shared.with_world(|w| w.services.get_mut::<TradingState>().quote_interval)
    }
}
