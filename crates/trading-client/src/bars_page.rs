//! A page of history bars read in one pass over its bytes, for the shape the service
//! sends: `{"bars": [{"t", "o", "h", "l", "c", "v"?}, ...], "next_page_token", ...}`.
//! Each price's digits go straight into a `Decimal` (no copy of its text, no allocation),
//! where the `serde` path captures each one's text first to read it exactly.
//!
//! It reads only what it is sure of ([`core_http::scan`]): any other shape (escapes in a
//! string, another key in a bar, a value of another type, a duplicate key, a price or
//! time that does not read) returns `None`, and the page is read by `serde` as before,
//! with its errors. A property test checks that whatever this reads, `serde` reads the
//! same.

use crate::markets::Bar;
use crate::money;
use core_http::scan::Scanner;

/// The bars and the next page's token, or `None` to leave the page to `serde`.
#[inline]
pub(crate) fn read(body: &[u8]) -> Option<(Vec<Bar>, Option<String>)> {
    let mut p = Scanner::from_bytes(body)?;
    let mut bars = None;
    let mut token = None;
    let mut seen_token = false;
    let mut more = p.object()?;
    while more {
        match p.key()? {
            b"bars" if bars.is_none() => bars = Some(read_bars(&mut p)?),
            b"next_page_token" if !seen_token => {
                seen_token = true;
                token = read_token(&mut p)?;
            }
            b"bars" | b"next_page_token" => return None,
            // Other members (the symbol, the timeframe): skipped when they are plain.
            _ => p.scalar()?,
        }
        more = p.next_member()?;
    }
    p.at_end().then_some(())?;
    Some((bars?, token))
}

/// The next page's token: a string (valid UTF-8) or `null`.
#[inline]
fn read_token(p: &mut Scanner<'_>) -> Option<Option<String>> {
    Some(p.optional(Scanner::str)?.map(str::to_owned))
}

#[inline]
fn read_bars(p: &mut Scanner<'_>) -> Option<Vec<Bar>> {
    let mut bars = Vec::new();
    let mut more = p.array()?;
    while more {
        bars.push(read_bar(p)?);
        more = p.next_element()?;
    }
    Some(bars)
}

/// A volume: plain digits within 64 bits, or `null`.
#[inline]
fn volume(p: &mut Scanner<'_>) -> Option<Option<u64>> {
    p.optional(Scanner::u64)
}

#[inline]
fn read_bar(p: &mut Scanner<'_>) -> Option<Bar> {
    let (mut t, mut o, mut h, mut l, mut c, mut v) = (None, None, None, None, None, None);
    let mut more = p.object()?;
    while more {
        match p.key()? {
            b"t" if t.is_none() => t = Some(core_http::timestamp::parse(p.str()?).ok()?),
            b"o" if o.is_none() => o = Some(money::scan(p)?),
            b"h" if h.is_none() => h = Some(money::scan(p)?),
            b"l" if l.is_none() => l = Some(money::scan(p)?),
            b"c" if c.is_none() => c = Some(money::scan(p)?),
            b"v" if v.is_none() => v = Some(volume(p)?),
            _ => return None,
        }
        more = p.next_member()?;
    }
    Some(Bar {
        symbol: None,
        t: t?,
        o: o?,
        h: h?,
        l: l?,
        c: c?,
        v: v.flatten(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rust_decimal::Decimal;

    /// What the `serde` path reads.
    fn slow(body: &[u8]) -> Result<(Vec<Bar>, Option<String>), serde_json::Error> {
        #[derive(serde::Deserialize)]
        struct BarList {
            #[serde(deserialize_with = "core_http::de::or_default")]
            bars: Vec<Bar>,
            #[serde(default)]
            next_page_token: Option<String>,
        }
        serde_json::from_slice::<BarList>(body).map(|p| (p.bars, p.next_page_token))
    }

    #[test]
    fn the_services_page_is_read_in_one_pass_as_serde_reads_it() {
        let body = br#"{"bars":[{"c":69.19,"h":69.21,"l":69.17,"o":69.19,"t":"2026-03-02T14:30:00Z","v":1011},{"c":"69.2","h":69.21,"l":69.19,"o":69.19,"t":"2026-03-02T14:31:00.5Z","v":null}],"next_page_token":"t1772461920","symbol":"AAPL","timeframe":"1Min"}"#;
        let fast = read(body).expect("the common shape is read");
        assert_eq!(fast, slow(body).unwrap());
        assert_eq!(fast.0[1].c, Decimal::new(692, 1));
        assert_eq!(fast.0[1].v, None);
    }

    #[test]
    fn anything_else_is_left_to_serde() {
        for body in [
            &br#"{"bars":[{"t":"2026-03-02T14:30:00Z","o":1,"h":1,"l":1,"c":1,"x":2}]}"#[..],
            br#"{"bars":[{"t":"2026-03-02T14:30:00Z","o":1,"h":1,"l":1}]}"#,
            br#"{"bars":[{"t":"2026-03-02T14:30:00Z","o":1,"h":1,"l":1,"c":1,"c":2}]}"#,
            br#"{"bars":[],"bars":[]}"#,
            br#"{"bars":null}"#,
            br#"{"next_page_token":"a"}"#,
            br#"{"bars":[],"next_page_token":"a\u0062"}"#,
            br#"{"bars":[{"t":"2026-03-02T14:30:00Z","o":01,"h":1,"l":1,"c":1}]}"#,
            br#"{"bars":[{"t":"2026-03-02T14:30:00Z","o":1,"h":1,"l":1,"c":1,"v":1.0}]}"#,
            br#"{"bars":[{"t":"not a time","o":1,"h":1,"l":1,"c":1}]}"#,
            br#"{"bars":[{"t":"2026-03-02T14:30:00Z","o":1e999,"h":1,"l":1,"c":1}]}"#,
            br#"{"bars":[],"meta":{"a":1}}"#,
            br#"{"bars":[]} x"#,
            br#"{"bars":[],}"#,
        ] {
            assert!(read(body).is_none(), "{}", String::from_utf8_lossy(body));
        }
    }

    /// Mostly prices as the service writes them, sometimes odd ones (which either path
    /// may refuse: then the reader must leave the page to `serde`).
    fn price() -> impl Strategy<Value = String> {
        let odd = prop::sample::select(vec![
            "-0.5",
            "1e3",
            "1.5E-2",
            "0.000000000000000000000000000001",
            "79228162514264337593543950336",
            "\" 12 \"",
            "true",
            "null",
            "\"\"",
            "-0",
            "0.10",
        ])
        .prop_map(str::to_owned);
        prop_oneof![
            12 => (0u64..100_000, 0u32..6).prop_map(|(m, s)| Decimal::new(m as i64, s).to_string()),
            4 => (0u64..100_000, 0u32..6).prop_map(|(m, s)| format!("\"{}\"", Decimal::new(m as i64, s))),
            1 => odd,
        ]
    }

    fn bar() -> impl Strategy<Value = String> {
        (
            prop_oneof![
                6 => (0u32..60).prop_map(|m| format!("\"2026-03-02T14:{m:02}:00Z\"")),
                2 => Just("\"2026-03-02T14:30:00.123+02:00\"".to_owned()),
                1 => Just("\"2026-02-30T14:30:00Z\"".to_owned()),
                1 => Just("1772461920".to_owned()),
            ],
            [price(), price(), price(), price()],
            prop_oneof![
                3 => Just(None),
                6 => (0u64..1_000_000).prop_map(|v| Some(v.to_string())),
                2 => Just(Some("null".to_owned())),
                1 => Just(Some("-1".to_owned())),
                1 => Just(Some("18446744073709551616".to_owned())),
                1 => Just(Some("\"7\"".to_owned())),
                1 => Just(Some("7.0".to_owned())),
            ],
            prop::sample::select(vec!["", " ", "\n  "]),
            any::<bool>(),
        )
            .prop_map(|(t, [o, h, l, c], v, ws, reversed)| {
                let mut members = vec![
                    format!("\"t\":{ws}{t}"),
                    format!("\"o\":{o}"),
                    format!("\"h\":{ws}{h}"),
                    format!("\"l\":{l}"),
                    format!("\"c\":{c}"),
                ];
                if let Some(v) = v {
                    members.push(format!("\"v\":{v}"));
                }
                if reversed {
                    members.reverse();
                }
                format!("{{{ws}{}{ws}}}", members.join(&format!(",{ws}")))
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Whatever the one-pass reader reads, `serde` reads the same (about four pages
        /// in ten are read in one pass, a third of them with several bars).
        #[test]
        fn what_is_read_in_one_pass_is_what_serde_reads(
            bars in prop::collection::vec(bar(), 0..6),
            token in prop_oneof![Just("null".to_owned()), Just("\"t1\"".to_owned()), Just("\"\"".to_owned())],
            extra in prop_oneof![Just(String::new()), Just(",\"symbol\":\"AAPL\"".to_owned()), Just(",\"n\":1.5".to_owned())],
        ) {
            let body = format!("{{\"bars\":[{}],\"next_page_token\":{token}{extra}}}", bars.join(","));
            if let Some(fast) = read(body.as_bytes()) {
                prop_assert_eq!(Some(fast), slow(body.as_bytes()).ok(), "{}", body);
            }
        }
    }
}
