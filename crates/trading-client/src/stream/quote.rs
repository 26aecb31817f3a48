//! A quote, the busiest event of the stream, read in one pass over the frame for the
//! shape the service sends: `{"type": "quote", "symbol", "price", "bid"?, "ask"?,
//! "bid_size"?, "ask_size"?, "timestamp"?}`. Each price's digits go straight into a
//! `Decimal`, where the `serde` path captures each one's text first; and the read path
//! stays small enough for the processor's instruction cache.
//!
//! It reads only what it is sure of ([`core_http::scan`]): another key, a duplicate, a
//! value of another type, an escape in a string, a price or time that does not read,
//! returns `None`, and the frame is read by `serde` as before. A property test checks
//! that whatever this reads, `serde` reads the same.

use core_http::scan::Scanner;

use crate::markets::Quote;
use crate::money;

/// The quote, or `None` to leave the frame to `serde`.
pub(super) fn read(frame: &str) -> Option<Quote> {
    let mut p = Scanner::new(frame);
    let mut kind = false;
    let (mut symbol, mut price, mut bid, mut ask) = (None, None, None, None);
    let (mut bid_size, mut ask_size, mut timestamp) = (None, None, None);
    let mut more = p.object()?;
    while more {
        match p.key()? {
            b"type" if !kind => {
                (p.string()? == b"quote").then_some(())?;
                kind = true;
            }
            b"symbol" if symbol.is_none() => symbol = Some(p.optional(Scanner::str)?),
            b"price" if price.is_none() => price = Some(money::scan(&mut p)?),
            b"bid" if bid.is_none() => bid = Some(p.optional(money::scan)?),
            b"ask" if ask.is_none() => ask = Some(p.optional(money::scan)?),
            b"bid_size" if bid_size.is_none() => bid_size = Some(p.optional(Scanner::u64)?),
            b"ask_size" if ask_size.is_none() => ask_size = Some(p.optional(Scanner::u64)?),
            b"timestamp" if timestamp.is_none() => {
                timestamp = Some(match p.optional(Scanner::str)? {
                    Some(text) => Some(core_http::timestamp::parse(text).ok()?),
                    None => None,
                });
            }
            _ => return None,
        }
        more = p.next_member()?;
    }
    p.at_end().then_some(())?;
    Some(Quote {
        symbol: symbol.flatten().unwrap_or_default().to_owned(),
        price: price?,
        bid: bid.flatten(),
        ask: ask.flatten(),
        bid_size: bid_size.flatten(),
        ask_size: ask_size.flatten(),
        timestamp: timestamp.flatten(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use testkit::arb::{damaged, member, usually};

    const USUAL: &str = r#"{"type":"quote","symbol":"AAPL","price":187.01,"bid":187.00,"ask":"187.02","bid_size":100,"ask_size":200,"timestamp":"2026-03-02T15:04:05Z"}"#;

    fn slow(frame: &str) -> Option<Quote> {
        serde_json::from_str(frame).ok()
    }

    #[test]
    fn the_services_quote_is_read_in_one_pass_as_serde_reads_it() {
        let fast = read(USUAL).expect("the usual shape is read");
        assert_eq!(Some(&fast), slow(USUAL).as_ref());
        assert_eq!(fast.bid.map(|b| b.to_string()).as_deref(), Some("187.00"));
    }

    #[test]
    fn anything_else_is_left_to_serde() {
        for frame in [
            r#"{"type":"quote","symbol":"AAPL","price":1,"x":1}"#,
            r#"{"type":"quote","symbol":"AAPL"}"#,
            r#"{"type":"quote","symbol":"AAPL","price":null}"#,
            r#"{"type":"quote","symbol":"AAPL","price":1,"price":2}"#,
            r#"{"type":"quote","symbol":"A\u0041","price":1}"#,
            r#"{"type":"quote","symbol":"AAPL","price":1,"bid_size":1.0}"#,
            r#"{"type":"quote","symbol":"AAPL","price":1,"timestamp":"soon"}"#,
            r#"{"type":"quote","symbol":"AAPL","price":1} x"#,
            r#"{"type":"trade","symbol":"AAPL","price":1}"#,
        ] {
            assert!(read(frame).is_none(), "{frame}");
        }
    }

    fn price() -> impl Strategy<Value = String> {
        usually(
            prop_oneof![
                3 => (0u64..10_000_000, 0u32..5).prop_map(|(m, s)| rust_decimal::Decimal::new(m as i64, s).to_string()),
                1 => (0u64..10_000_000, 0u32..5).prop_map(|(m, s)| format!("\"{}\"", rust_decimal::Decimal::new(m as i64, s))),
            ],
            vec![
                "null",
                "-0.5",
                "1e3",
                "1.5E-2",
                "79228162514264337593543950336",
                "\" 12 \"",
                "\"\"",
                "true",
                "0.10",
            ],
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Whatever the one-pass reader reads, `serde` reads the same.
        #[test]
        fn what_is_read_in_one_pass_is_what_serde_reads(
            symbol in member("symbol", usually(Just("\"AAPL\"".to_owned()), vec!["null", "\"\"", "7"])),
            price in member("price", price()),
            bid in member("bid", price()),
            ask in member("ask", price()),
            bid_size in member("bid_size", usually((0u64..10_000).prop_map(|n| n.to_string()), vec!["null", "-1", "1.0", "18446744073709551616"])),
            ask_size in member("ask_size", usually((0u64..10_000).prop_map(|n| n.to_string()), vec!["null", "\"7\""])),
            timestamp in member("timestamp", usually(Just("\"2026-03-02T15:04:05.25+01:00\"".to_owned()), vec!["null", "\"soon\"", "5", "\"2026-02-30T15:04:05Z\""])),
            ws in prop::sample::select(vec!["", " ", "\n "]),
            reversed: bool,
        ) {
            let mut members: Vec<String> = [symbol, price, bid, ask, bid_size, ask_size, timestamp].into_iter().flatten().collect();
            if reversed {
                members.reverse();
            }
            members.insert(0, "\"type\":\"quote\"".to_owned());
            let frame = format!("{{{ws}{}{ws}}}", members.join(&format!(",{ws}")));
            if let Some(fast) = read(&frame) {
                prop_assert_eq!(Some(fast), slow(&frame), "{}", frame);
            }
        }

        /// Whatever the bytes (the usual frame cut short or with bytes changed), the
        /// reader answers without panicking, and what it reads `serde` reads the same.
        #[test]
        fn a_damaged_frame_is_never_misread(frame in damaged(USUAL)) {
            if let Some(fast) = read(&frame) {
                prop_assert_eq!(Some(format!("{fast:?}")), slow(&frame).map(|e| format!("{e:?}")), "{}", frame);
            }
        }
    }
}
