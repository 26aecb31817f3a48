//! The stream's wire protocol: subscription messages, and frames decoded into events.

use std::collections::{BTreeMap, BTreeSet};

use core_streams::{Inbound, Protocol};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Event, Fill};
use crate::account::Account;
use crate::markets::{Bar, Quote, Trade};
use crate::orders::Order;

/// What to subscribe to: channels, and the symbols of the market-data channels named
/// (quotes, trades, bars).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subscription {
    pub(super) channels: Vec<&'static str>,
    pub(super) symbols: Vec<String>,
}

/// The channels that take symbols.
const MARKET: [&str; 3] = ["quotes", "trades", "bars"];

/// The stream's wire protocol. A subscription's symbols go to each market-data channel
/// it names; an unsubscription with symbols takes them off the channels it names, one
/// without symbols ends those channels. Replayed after a reconnect: one message for
/// the other channels, one per market-data channel with its symbols.
#[derive(Debug, Default)]
pub(crate) struct TradingProtocol {
    channels: BTreeSet<&'static str>,
    market: BTreeMap<&'static str, BTreeSet<String>>,
}

fn message(action: &str, channels: &[&str], symbols: &[String]) -> String {
    serde_json::json!({"action": action, "channels": channels, "symbols": symbols}).to_string()
}

#[derive(Deserialize)]
struct Head {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct OrderMessage {
    #[serde(default)]
    order: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct AccountMessage {
    #[serde(default)]
    account: Option<Box<RawValue>>,
}

impl TradingProtocol {
    fn one(&self, raw: &str) -> Option<Inbound<Event>> {
        // The common case first: a quote written type-first (as the service writes
        // them) is read straight into a `Quote`; anything else takes the general path
        // below.
        if raw.starts_with(r#"{"type":"quote","#)
            && let Ok(q) = serde_json::from_str::<Quote>(raw)
        {
            return Some(Inbound::lossy(Event::Quote(q)).on_channel("quotes"));
        }
        let head: Head = serde_json::from_str(raw).ok()?;
        let kind = head.kind.unwrap_or_default();
        let unknown = || Event::Unknown {
            kind: kind.clone(),
            data: serde_json::from_str(raw).unwrap_or_default(),
        };
        Some(match kind.as_str() {
            "subscribed" => Inbound::Ack,
            "unsubscribed" => return None,
            "error" => Inbound::Refused(
                head.message
                    .unwrap_or_else(|| "the server reported an error".into()),
            ),
            "quote" => match serde_json::from_str::<Quote>(raw) {
                Ok(q) => Inbound::lossy(Event::Quote(q)).on_channel("quotes"),
                Err(_) => Inbound::lossless(unknown()),
            },
            "trade" => match serde_json::from_str::<Trade>(raw) {
                Ok(t) => Inbound::lossy(Event::Trade(t)).on_channel("trades"),
                Err(_) => Inbound::lossy(unknown()),
            },
            "bar" => match serde_json::from_str::<Bar>(raw) {
                Ok(b) => Inbound::lossy(Event::Bar(b)).on_channel("bars"),
                Err(_) => Inbound::lossy(unknown()),
            },
            "fill" => match serde_json::from_str::<Fill>(raw) {
                Ok(f) => Inbound::lossless(Event::Fill(f)).on_channel("orders"),
                Err(e) => Inbound::Invalid(unreadable_fill(raw, &e)),
            },
            "order" => {
                let body = serde_json::from_str::<OrderMessage>(raw)
                    .ok()
                    .and_then(|m| m.order)
                    .map(|o| o.get().to_owned())
                    .unwrap_or_else(|| raw.to_owned());
                match serde_json::from_str::<Order>(&body) {
                    Ok(o) => Inbound::lossless(Event::Order(Box::new(o))).on_channel("orders"),
                    Err(_) => Inbound::lossless(unknown()),
                }
            }
            "account" => {
                let body = serde_json::from_str::<AccountMessage>(raw)
                    .ok()
                    .and_then(|m| m.account)
                    .map(|a| a.get().to_owned())
                    .unwrap_or_else(|| raw.to_owned());
                match serde_json::from_str::<Account>(&body) {
                    Ok(a) => Inbound::lossless(Event::Account(a)).on_channel("account"),
                    Err(_) => Inbound::lossless(unknown()),
                }
            }
            // A type this version does not know: kept, but on the lossy lane, so that a
            // flood of them cannot grow the client without bound.
            _ => Inbound::lossy(unknown()),
        })
    }
}

/// What a fill that could not be read becomes: an error naming its order and execution,
/// never a fill of zero.
fn unreadable_fill(raw: &str, error: &serde_json::Error) -> String {
    #[derive(Deserialize)]
    struct Ids {
        #[serde(default, deserialize_with = "core_http::de::opt_text")]
        order_id: Option<String>,
        #[serde(default, deserialize_with = "core_http::de::opt_text")]
        execution_id: Option<String>,
    }
    let ids = serde_json::from_str::<Ids>(raw).ok();
    let order = ids
        .as_ref()
        .and_then(|i| i.order_id.as_deref())
        .unwrap_or("?");
    let execution = ids
        .as_ref()
        .and_then(|i| i.execution_id.as_deref())
        .unwrap_or("?");
    format!(
        "a fill of order {order} (execution {execution}) could not be read ({error}); \
         read the order with orders().get(\"{order}\")"
    )
}

impl Protocol for TradingProtocol {
    type Event = Event;
    type Subscription = Subscription;

    fn subscribe(&mut self, s: &Subscription) -> Vec<String> {
        for c in &s.channels {
            if MARKET.contains(c) {
                self.market
                    .entry(c)
                    .or_default()
                    .extend(s.symbols.iter().cloned());
            } else {
                self.channels.insert(c);
            }
        }
        vec![message("subscribe", &s.channels, &s.symbols)]
    }

    fn unsubscribe(&mut self, s: &Subscription) -> Vec<String> {
        if s.symbols.is_empty() {
            for c in &s.channels {
                self.channels.remove(c);
                self.market.remove(c);
            }
        } else {
            for (c, symbols) in &mut self.market {
                if s.channels.is_empty() || s.channels.contains(c) {
                    for symbol in &s.symbols {
                        symbols.remove(symbol);
                    }
                }
            }
            self.market.retain(|_, symbols| !symbols.is_empty());
        }
        vec![message("unsubscribe", &s.channels, &s.symbols)]
    }

    fn replay(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.channels.is_empty() {
            let channels: Vec<&str> = self.channels.iter().copied().collect();
            out.push(message("subscribe", &channels, &[]));
        }
        for (c, symbols) in &self.market {
            let symbols: Vec<String> = symbols.iter().cloned().collect();
            out.push(message("subscribe", &[c], &symbols));
        }
        out
    }

    fn decode(&mut self, frame: &str, out: &mut Vec<Inbound<Event>>) {
        // One object or an array of them per frame.
        let trimmed = frame.trim_start();
        if trimmed.starts_with('[') {
            let items: Vec<&RawValue> = serde_json::from_str(trimmed).unwrap_or_default();
            out.extend(items.iter().filter_map(|raw| self.one(raw.get())));
        } else {
            out.extend(self.one(trimmed));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    impl TradingProtocol {
        /// What one frame decodes to.
        fn decoded(&mut self, frame: &str) -> Vec<Inbound<Event>> {
            let mut out = Vec::new();
            self.decode(frame, &mut out);
            out
        }
    }

    #[test]
    fn frames_of_one_object_or_many_decode_exactly() {
        let mut p = TradingProtocol::default();
        let frame = r#"[{"type":"quote","symbol":"AAPL","price":187.23,"bid":"187.22"},{"type":"fill","execution_id":"ex1","order_id":"o1","qty":0.5,"price":187.25},{"type":"halt","symbol":"AAPL"}]"#;
        let decoded = p.decoded(frame);
        assert_eq!(decoded.len(), 3);
        match &decoded[0] {
            Inbound::Event {
                event: Event::Quote(q),
                ..
            } => {
                assert_eq!(q.price.to_string(), "187.23");
                assert_eq!(q.bid.unwrap().to_string(), "187.22");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&decoded[1], Inbound::Event { event: Event::Fill(f), .. } if f.qty.to_string() == "0.5")
        );
        assert!(
            matches!(&decoded[2], Inbound::Event { event: Event::Unknown { kind, .. }, .. } if kind == "halt")
        );
        assert!(matches!(
            p.decoded(r#"{"type":"subscribed"}"#)[..],
            [Inbound::Ack]
        ));
        assert!(p.decoded(r#"{"type":"unsubscribed"}"#).is_empty());
        assert!(p.decoded("not json").is_empty());
    }

    #[test]
    fn subscriptions_are_replayed_per_channel() {
        let mut p = TradingProtocol::default();
        assert!(p.replay().is_empty());
        p.subscribe(&Subscription {
            channels: vec!["quotes"],
            symbols: vec!["AAPL".into(), "MSFT".into()],
        });
        p.subscribe(&Subscription {
            channels: vec!["trades"],
            symbols: vec!["TSLA".into()],
        });
        p.subscribe(&Subscription {
            channels: vec!["orders"],
            symbols: vec![],
        });
        p.unsubscribe(&Subscription {
            channels: vec!["quotes"],
            symbols: vec!["MSFT".into()],
        });
        assert_eq!(
            p.replay(),
            [
                r#"{"action":"subscribe","channels":["orders"],"symbols":[]}"#,
                r#"{"action":"subscribe","channels":["quotes"],"symbols":["AAPL"]}"#,
                r#"{"action":"subscribe","channels":["trades"],"symbols":["TSLA"]}"#,
            ]
        );
        // The last symbol of a channel gone, the channel is not replayed.
        p.unsubscribe(&Subscription {
            channels: vec!["trades"],
            symbols: vec!["TSLA".into()],
        });
        assert_eq!(p.replay().len(), 2);
    }

    #[test]
    fn trades_and_bars_decode_onto_the_lossy_lane() {
        let mut p = TradingProtocol::default();
        let frame = r#"[{"type":"trade","symbol":"AAPL","price":187.25,"size":12,"timestamp":"2026-11-24T15:00:07Z"},{"type":"bar","symbol":"AAPL","t":"2026-11-24T15:00:00Z","o":187.1,"h":187.3,"l":187.0,"c":187.25,"v":5120}]"#;
        let decoded = p.decoded(frame);
        match &decoded[..] {
            [
                Inbound::Event {
                    event: Event::Trade(t),
                    lane: core_streams::Lane::Lossy,
                    ..
                },
                Inbound::Event {
                    event: Event::Bar(b),
                    lane: core_streams::Lane::Lossy,
                    ..
                },
            ] => {
                assert_eq!(t.price.to_string(), "187.25");
                assert_eq!(b.c.to_string(), "187.25");
                assert_eq!(b.symbol.as_deref(), Some("AAPL"));
            }
            other => panic!("{other:?}"),
        }
        // A bar without its prices is no bar of zeros.
        assert!(matches!(
            &p.decoded(r#"{"type":"bar","symbol":"AAPL","t":"2026-11-24T15:00:00Z"}"#)[..],
            [Inbound::Event {
                event: Event::Unknown { .. },
                ..
            }]
        ));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        #[test]
        fn no_frame_panics_the_decoder(frame in "\\PC{0,200}") {
            let _ = TradingProtocol::default().decoded(&frame);
        }

        #[test]
        fn no_json_frame_panics_the_decoder(
            kind in proptest::sample::select(vec!["quote", "fill", "order", "account", "error", "subscribed", "x"]),
            body in testkit::arb::json(),
            batch in proptest::bool::ANY,
        ) {
            let mut message = match body {
                serde_json::Value::Object(m) => m,
                other => [("order".to_owned(), other)].into_iter().collect(),
            };
            message.insert("type".into(), kind.into());
            let text = serde_json::Value::Object(message).to_string();
            let frame = if batch { format!("[{text},{text}]") } else { text };
            let decoded = TradingProtocol::default().decoded(&frame);
            proptest::prop_assert!(decoded.len() <= 2);
        }
    }
}
