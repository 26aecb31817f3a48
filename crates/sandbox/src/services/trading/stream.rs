//! A stream session: subscriptions to quotes (per symbol), orders (fills and order
//! changes) and the account; quotes sent on the session's timer, one object for one
//! symbol and an array for several, alternating text and binary frames; orders and
//! account changes as the engine publishes them.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use super::TradingState;
use super::market::{self, valid_symbol};
use crate::outbox::StreamEvent;
use crate::state::Shared;
use crate::streams::{Outgoing, SessionHandler};

const CHANNELS: &[&str] = &["quotes", "orders", "account"];

#[derive(Debug, Default)]
pub(super) struct Session {
    channels: BTreeSet<String>,
    symbols: BTreeSet<String>,
    frames: u64,
}

impl Session {
    fn acknowledgement(&self, kind: &str) -> Outgoing {
        Outgoing::Text(
            json!({
                "type": kind,
                "channels": self.channels,
                "symbols": self.symbols,
            })
            .to_string(),
        )
    }

    fn quotes(&mut self, shared: &Shared) -> Option<Outgoing> {
        if !self.channels.contains("quotes") || self.symbols.is_empty() {
            return None;
        }
        let quotes: Vec<Value> = shared.with_world(|w| {
            let seed = w.settings.seed;
            let now = w.now();
            let state = w.services.get_mut::<TradingState>();
            self.symbols
                .iter()
                .map(|s| {
                    let offset = state.offsets.get(s).copied().unwrap_or_default();
                    let mut q = market::quote(&mut state.market, seed, s, now, offset);
                    q["type"] = json!("quote");
                    q
                })
                .collect()
        });
        let text = if quotes.len() == 1 {
            quotes[0].to_string()
        } else {
            Value::Array(quotes).to_string()
        };
        self.frames += 1;
        Some(if self.frames.is_multiple_of(2) {
            Outgoing::Binary(text)
        } else {
            Outgoing::Text(text)
        })
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
                "unknown channel {bad:?}: channels are quotes, orders and account"
            ));
        }
        if let Some(bad) = symbols.iter().find(|s| !valid_symbol(s)) {
            return refuse(&format!("{bad:?} is not a symbol"));
        }
        match message.get("action").and_then(Value::as_str) {
            Some("subscribe") => {
                if channels.iter().any(|c| c == "quotes")
                    && symbols.is_empty()
                    && self.symbols.is_empty()
                {
                    return refuse("the quotes channel needs symbols");
                }
                self.channels.extend(channels);
                self.symbols.extend(symbols);
                let mut out = vec![self.acknowledgement("subscribed")];
                out.extend(self.quotes(shared));
                out
            }
            Some("unsubscribe") => {
                for c in &channels {
                    self.channels.remove(c);
                }
                for s in &symbols {
                    self.symbols.remove(s);
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
        self.quotes(shared).into_iter().collect()
    }

    fn tick_every(&self, shared: &Shared) -> Duration {
        shared.with_world(|w| w.services.get_mut::<TradingState>().quote_interval)
    }
}
