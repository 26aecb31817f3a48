//! The sandbox's market: deterministic prices from the seed and the sandbox clock.
//!
//! Each symbol walks day by day from 2006-01-02 (a multiplicative random walk of its
//! daily closes), and minute by minute within a day (a bridge from the previous close to
//! the day's close). Any minute's price is computed on demand from those two, so twenty
//! years of minute bars are never held in memory. Prices trade around the clock (a paper
//! market that is open whenever a test or the demo runs); the history's minute, 5-minute
//! and hourly bars cover the regular session only (weekdays, 14:30 to 21:00 UTC).

use std::collections::HashMap;

use rust_decimal::Decimal;
use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use serde_json::{Value, json};
use time::{Date, Duration, OffsetDateTime, Time, Weekday};

use crate::clock::rfc3339;
use crate::ids::{splitmix, stable_hash};

/// The first day of the market.
pub(crate) const FIRST_DAY: Date = time::macros::date!(2006 - 01 - 02);
const MINUTES_PER_DAY: usize = 1440;
/// The regular session, in minutes of the UTC day.
pub(crate) const SESSION_OPEN: u16 = 14 * 60 + 30;
pub(crate) const SESSION_CLOSE: u16 = 21 * 60;

/// A price with cents, as a `Decimal`, written to JSON as a number.
pub(crate) fn money(v: f64) -> Decimal {
    Decimal::from_f64(v.max(0.01))
        .unwrap_or(Decimal::ONE)
        .round_dp(2)
}

/// A decimal as a JSON number (prices and quantities here have few decimals, so the
/// shortest float text is the decimal's own).
pub(crate) fn number(d: Decimal) -> Value {
    match d.normalize().to_f64() {
        Some(f) if d.fract().is_zero() && d.abs() < Decimal::from(1_000_000_000_000i64) => {
            json!(f as i64)
        }
        Some(f) => json!(f),
        None => json!(0),
    }
}

/// Uniform in [0, 1) from a seed.
fn unit(x: u64) -> f64 {
    (splitmix(x) >> 11) as f64 / (1u64 << 53) as f64
}

/// Roughly normal, mean 0, sd 1 (the sum of four uniforms).
fn normal(x: u64) -> f64 {
    let s: f64 = (0..4).map(|i| unit(x.wrapping_add(i * 0x9e37_79b9))).sum();
    (s - 2.0) * (3.0f64).sqrt()
}

/// The price model of a seeded sandbox, with its caches (kept per symbol: one market
/// serves one seed).
#[derive(Debug, Default)]
pub(crate) struct Market {
    /// Daily closes per symbol, from [`FIRST_DAY`].
    closes: HashMap<String, Vec<f64>>,
    /// Minute prices of recently used (symbol, day)s.
    days: HashMap<(String, i64), Vec<f64>>,
}

impl Market {
    fn symbol_seed(seed: u64, symbol: &str) -> u64 {
        seed ^ stable_hash(symbol)
    }

    /// The close of day `day` (days since [`FIRST_DAY`]).
    fn close(&mut self, seed: u64, symbol: &str, day: i64) -> f64 {
        let s = Self::symbol_seed(seed, symbol);
        let closes = self
            .closes
            .entry(symbol.to_owned())
            .or_insert_with(|| vec![20.0 + (s % 480) as f64 + (s % 97) as f64 / 100.0]);
        let day = day.max(0) as usize;
        while closes.len() <= day {
            let prev = closes[closes.len() - 1];
            let z = normal(s ^ (closes.len() as u64).wrapping_mul(0xa24b_aed4_963e_e407));
            // A slight pull back toward the start keeps twenty years in a sane range.
            let pull = (closes[0] / prev).ln() * 0.002;
            closes.push((prev * (0.012 * z + pull).exp()).max(1.0));
        }
        closes[day]
    }

    /// The minute prices of day `day`: a bridge from the previous close to the close.
    fn day(&mut self, seed: u64, symbol: &str, day: i64) -> &[f64] {
        let key = (symbol.to_owned(), day);
        if !self.days.contains_key(&key) {
            if self.days.len() > 64 {
                self.days.clear();
            }
            let open = self.close(seed, symbol, day - 1);
            let close = self.close(seed, symbol, day);
            let s =
                Self::symbol_seed(seed, symbol) ^ (day as u64).wrapping_mul(0x5851_f42d_4c95_7f2d);
            let mut walk = Vec::with_capacity(MINUTES_PER_DAY + 1);
            let mut w = 0.0;
            walk.push(0.0);
            for i in 0..MINUTES_PER_DAY {
                w += normal(s.wrapping_add(i as u64));
                walk.push(w);
            }
            let end = walk[MINUTES_PER_DAY];
            let scale = open * 0.0006;
            let prices = (0..=MINUTES_PER_DAY)
                .map(|i| {
                    let f = i as f64 / MINUTES_PER_DAY as f64;
                    let bridge = walk[i] - f * end;
                    (open + f * (close - open) + bridge * scale).max(0.5)
                })
                .collect();
            self.days.insert(key.clone(), prices);
        }
        self.days.get(&key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The price at `t`: the minute bar's open at its first second, moving in a straight
    /// line to its close over the minute (so quotes move second by second and always
    /// stay inside the bar).
    pub(crate) fn price(&mut self, seed: u64, symbol: &str, t: OffsetDateTime) -> Decimal {
        let (day, minute) = day_minute(t);
        let prices = self.day(seed, symbol, day);
        let open = prices.get(minute).copied().unwrap_or(1.0);
        let close = prices.get(minute + 1).copied().unwrap_or(open);
        let second = f64::from(t.to_offset(time::UtcOffset::UTC).second());
        money(open + (close - open) * second / 60.0)
    }

    /// The minute bar starting at `t` (a whole minute).
    pub(crate) fn minute_bar(&mut self, seed: u64, symbol: &str, t: OffsetDateTime) -> Bar {
        let (day, minute) = day_minute(t);
        let s = Market::symbol_seed(seed, symbol);
        let prices = self.day(seed, symbol, day);
        let open = prices.get(minute).copied().unwrap_or(1.0);
        let close = prices.get(minute + 1).copied().unwrap_or(open);
        let wiggle = open * 0.0004 * unit(s ^ (t.unix_timestamp() as u64));
        Bar {
            t,
            o: money(open),
            h: money(open.max(close) + wiggle),
            l: money(open.min(close) - wiggle),
            c: money(close),
            v: 100 + splitmix(s ^ t.unix_timestamp() as u64) % 9_900,
        }
    }

    /// The bar of `timeframe` starting at `t`, aggregated from minute bars (or, for a
    /// day, from the day's path).
    pub(crate) fn bar(&mut self, seed: u64, symbol: &str, t: OffsetDateTime, tf: Timeframe) -> Bar {
        match tf {
            Timeframe::Minute => self.minute_bar(seed, symbol, t),
            Timeframe::Day => {
                let (day, _) = day_minute(t);
                let open = self.close(seed, symbol, day - 1);
                let close = self.close(seed, symbol, day);
                let path = self.day(seed, symbol, day);
                let high = path.iter().copied().fold(f64::MIN, f64::max);
                let low = path.iter().copied().fold(f64::MAX, f64::min);
                let s = Market::symbol_seed(seed, symbol);
                Bar {
                    t,
                    o: money(open),
                    h: money(high),
                    l: money(low),
                    c: money(close),
                    v: 1_000_000 + splitmix(s ^ day as u64) % 9_000_000,
                }
            }
            _ => {
                let minutes = tf.minutes();
                let mut bar = self.minute_bar(seed, symbol, t);
                for i in 1..minutes {
                    let next = self.minute_bar(seed, symbol, t + Duration::minutes(i));
                    bar.h = bar.h.max(next.h);
                    bar.l = bar.l.min(next.l);
                    bar.c = next.c;
                    bar.v += next.v;
                }
                bar
            }
        }
    }
}

/// Days since [`FIRST_DAY`] and the minute of that UTC day.
fn day_minute(t: OffsetDateTime) -> (i64, usize) {
    let t = t.to_offset(time::UtcOffset::UTC);
    let day = (t.date() - FIRST_DAY).whole_days();
    let minute = usize::from(t.hour()) * 60 + usize::from(t.minute());
    (day, minute)
}

/// An OHLCV bar.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bar {
    pub t: OffsetDateTime,
    pub o: Decimal,
    pub h: Decimal,
    pub l: Decimal,
    pub c: Decimal,
    pub v: u64,
}

impl Bar {
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "t": rfc3339(self.t),
            "o": number(self.o),
            "h": number(self.h),
            "l": number(self.l),
            "c": number(self.c),
            "v": self.v,
        })
    }
}

/// A bar size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timeframe {
    Minute,
    FiveMinutes,
    Hour,
    Day,
}

impl Timeframe {
    pub(crate) fn parse(s: &str) -> Option<Timeframe> {
        match s {
            "1Min" => Some(Timeframe::Minute),
            "5Min" => Some(Timeframe::FiveMinutes),
            "1Hour" => Some(Timeframe::Hour),
            "1Day" => Some(Timeframe::Day),
            _ => None,
        }
    }

    pub(crate) fn minutes(self) -> i64 {
        match self {
            Timeframe::Minute => 1,
            Timeframe::FiveMinutes => 5,
            Timeframe::Hour => 60,
            Timeframe::Day => 1440,
        }
    }

    /// The first bar start at or after `t` that is in the session (weekdays; for
    /// intraday bars, 14:30 to 21:00 UTC).
    pub(crate) fn next_start(self, t: OffsetDateTime) -> OffsetDateTime {
        let mut t = align(t, self);
        for _ in 0..20 {
            let weekday = !matches!(t.weekday(), Weekday::Saturday | Weekday::Sunday);
            if self == Timeframe::Day {
                if weekday {
                    return t;
                }
                t = start_of_day(t) + Duration::days(1);
                continue;
            }
            let minute = u16::from(t.hour()) * 60 + u16::from(t.minute());
            if weekday && (SESSION_OPEN..SESSION_CLOSE).contains(&minute) {
                return t;
            }
            t = if weekday && minute < SESSION_OPEN {
                start_of_day(t) + Duration::minutes(i64::from(SESSION_OPEN))
            } else {
                start_of_day(t) + Duration::days(1) + Duration::minutes(i64::from(SESSION_OPEN))
            };
        }
        t
    }
}

fn start_of_day(t: OffsetDateTime) -> OffsetDateTime {
    t.replace_time(Time::MIDNIGHT)
}

/// `t` rounded up to the timeframe's grid (minutes from midnight UTC; whole days).
fn align(t: OffsetDateTime, tf: Timeframe) -> OffsetDateTime {
    let t = t.to_offset(time::UtcOffset::UTC);
    let whole = t
        .replace_nanosecond(0)
        .unwrap_or(t)
        .replace_second(0)
        .unwrap_or(t);
    let mut aligned = if tf == Timeframe::Day {
        start_of_day(whole)
    } else {
        let minute = i64::from(whole.hour()) * 60 + i64::from(whole.minute());
        let rem = minute % tf.minutes();
        whole - Duration::minutes(rem)
    };
    if aligned < t {
        aligned += Duration::minutes(tf.minutes());
    }
    aligned
}

/// A quote at `t`: the price, a bid a cent below, an ask a cent above.
pub(crate) fn quote(
    market: &mut Market,
    seed: u64,
    symbol: &str,
    t: OffsetDateTime,
    offset: Decimal,
) -> Value {
    let price = (market.price(seed, symbol, t) + offset).max(Decimal::new(1, 2));
    let cent = Decimal::new(1, 2);
    let s = Market::symbol_seed(seed, symbol) ^ t.unix_timestamp() as u64;
    json!({
        "symbol": symbol,
        "price": number(price),
        "bid": number((price - cent).max(cent)),
        "ask": number(price + cent),
        "bid_size": 100 + splitmix(s) % 900,
        "ask_size": 100 + splitmix(s ^ 1) % 900,
        "timestamp": rfc3339(t),
    })
}

/// An order book of `depth` levels each side around the price at `t`.
pub(crate) fn orderbook(
    market: &mut Market,
    seed: u64,
    symbol: &str,
    t: OffsetDateTime,
    depth: usize,
    offset: Decimal,
) -> Value {
    let price = (market.price(seed, symbol, t) + offset).max(Decimal::new(1, 2));
    let s = Market::symbol_seed(seed, symbol) ^ t.unix_timestamp() as u64;
    let level = |i: usize, side: i64| {
        let p = price + Decimal::new(side * (i as i64 + 1), 2);
        json!({"price": number(p.max(Decimal::new(1, 2))), "size": 100 + splitmix(s ^ (i as u64) ^ side as u64) % 2_000})
    };
    json!({
        "symbol": symbol,
        "timestamp": rfc3339(t),
        "bids": (0..depth).map(|i| level(i, -1)).collect::<Vec<_>>(),
        "asks": (0..depth).map(|i| level(i, 1)).collect::<Vec<_>>(),
    })
}

/// The last `limit` trades before `t`, one every 7 seconds.
pub(crate) fn trades(
    market: &mut Market,
    seed: u64,
    symbol: &str,
    t: OffsetDateTime,
    limit: usize,
    offset: Decimal,
) -> Vec<Value> {
    (0..limit)
        .map(|i| {
            let at = t - Duration::seconds(7 * i as i64);
            let s = Market::symbol_seed(seed, symbol) ^ at.unix_timestamp() as u64;
            let price = (market.price(seed, symbol, at) + offset).max(Decimal::new(1, 2));
            json!({
                "id": format!("t_{:x}", splitmix(s) & 0xffff_ffff_ffff),
                "symbol": symbol,
                "price": number(price),
                "size": 1 + splitmix(s ^ 7) % 500,
                "timestamp": rfc3339(at),
            })
        })
        .collect()
}

const HEADLINES: &[&str] = &[
    "{s} shares move as traders weigh the outlook",
    "Analysts revisit targets for {s}",
    "{s} announces a product update",
    "Options activity picks up in {s}",
    "{s} in focus ahead of the sector report",
];

/// News items about `symbol`, one every 6 hours back from `before`, newest first;
/// every fourth is an earnings report.
pub(crate) fn news(
    seed: u64,
    symbol: &str,
    before: OffsetDateTime,
    n: usize,
) -> Vec<(OffsetDateTime, Value)> {
    let six = 6 * 3600;
    let last = before.unix_timestamp() - before.unix_timestamp().rem_euclid(six);
    (0..n as i64)
        .map(|i| {
            let ts = last - i * six;
            let at = OffsetDateTime::from_unix_timestamp(ts).unwrap_or(before);
            let s = seed ^ stable_hash(symbol) ^ ts as u64;
            let earnings = (ts / six) % 4 == 0;
            let headline = if earnings {
                format!("{symbol} reports quarterly earnings")
            } else {
                HEADLINES[(splitmix(s) % HEADLINES.len() as u64) as usize].replace("{s}", symbol)
            };
            let mut item = json!({
                "id": format!("news_{:x}", splitmix(s) & 0xffff_ffff_ffff),
                "kind": if earnings { "earnings" } else { "news" },
                "headline": headline,
                "summary": format!("A sandbox item about {symbol}."),
                "source": "sandbox wire",
                "symbols": [symbol],
                "url": format!("https://news.example/{symbol}/{ts}"),
                "created_at": rfc3339(at),
            });
            if earnings {
                let estimate = money(0.5 + unit(s) * 3.0);
                item["earnings"] = json!({
                    "fiscal_period": format!("Q{} {}", (u8::from(at.month()) - 1) / 3 + 1, at.year()),
                    "eps_estimate": number(estimate),
                    "eps_actual": number(money(estimate.to_f64().unwrap_or(1.0) * (0.85 + unit(s ^ 3) * 0.3))),
                });
            }
            (at, item)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn prices_are_deterministic_and_sane_over_twenty_years() {
        let mut a = Market::default();
        let mut b = Market::default();
        let t = time::macros::datetime!(2026-03-02 15:04 UTC);
        assert_eq!(a.price(1, "AAPL", t), b.price(1, "AAPL", t));
        // (A market caches per symbol: one market, one seed, as in a sandbox.)
        assert_ne!(a.price(1, "AAPL", t), Market::default().price(2, "AAPL", t));
        let mut day = time::macros::datetime!(2006-01-03 15:00 UTC);
        while day < t {
            let p = a.price(1, "MSFT", day);
            assert!(
                p > Decimal::ZERO && p < Decimal::from(100_000),
                "{p} at {day}"
            );
            day += Duration::days(91);
        }
    }

    #[test]
    fn sessions_and_bars() {
        let mut m = Market::default();
        // Saturday morning: the next minute bar is Monday at the open.
        let sat = time::macros::datetime!(2026-02-28 09:00 UTC);
        assert_eq!(
            Timeframe::Minute.next_start(sat),
            time::macros::datetime!(2026-03-02 14:30 UTC)
        );
        let t = time::macros::datetime!(2026-03-02 15:00 UTC);
        let five = m.bar(1, "AAPL", t, Timeframe::FiveMinutes);
        assert!(five.l <= five.o && five.o <= five.h && five.l <= five.c && five.c <= five.h);
        assert_eq!(
            Timeframe::Minute.next_start(t + Duration::seconds(1)),
            t + Duration::minutes(1)
        );
        assert_eq!(Timeframe::Hour.next_start(t), t);
    }

    #[test]
    fn numbers_are_written_exactly() {
        assert_eq!(number(Decimal::new(18723, 2)).to_string(), "187.23");
        assert_eq!(number(Decimal::new(100, 0)).to_string(), "100");
        assert_eq!(number(Decimal::new(5, 1)).to_string(), "0.5");
    }
}
