//! Money on the wire: prices, quantities and amounts are `Decimal`s, read from the exact
//! text of a JSON number or string (never through `f64`), and written as the exact
//! decimal text of a JSON number (never in exponent notation). No crate-wide serde
//! feature is involved: reading goes through `serde_json`'s `RawValue`, writing through
//! the small JSON writer here.

use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// Parses a JSON number's or string's text as a decimal, exactly: `None` when it is not
/// a number, or when it has more digits than a `Decimal` holds (28 after the point, about
/// 7.9e28 in all), so that a value is never rounded on the way in.
pub(crate) fn parse(raw: &str) -> Option<Decimal> {
    let text = raw.trim();
    let text = match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) => inner.trim(),
        None => text,
    };
    if text.is_empty() {
        return None;
    }
    if text.contains(['e', 'E']) {
        // `from_scientific` refuses what it cannot hold exactly; check anyway that the
        // digits survived (a mantissa with more digits than 96 bits is cut).
        let value = Decimal::from_scientific(text).ok()?;
        let (mantissa, _) = text.split_once(['e', 'E'])?;
        let significant = |s: &str| {
            s.trim_start_matches(['+', '-'])
                .chars()
                .filter(char::is_ascii_digit)
                .collect::<String>()
                .trim_start_matches('0')
                .trim_end_matches('0')
                .to_owned()
        };
        return (significant(mantissa) == significant(&value.to_string())).then_some(value);
    }
    Decimal::from_str_exact(text).ok()
}

/// Reads a decimal an answer must carry (a quote's price, a fill's quantity): a JSON
/// number or numeric string; `null`, a missing value or anything else is an error rather
/// than a zero someone might trade on.
pub(crate) fn required_decimal<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
    let raw: Box<RawValue> = Box::deserialize(d)?;
    parse(raw.get()).ok_or_else(|| not_a_decimal(raw.get()))
}

fn not_a_decimal<E: serde::de::Error>(raw: &str) -> E {
    E::custom(format_args!(
        "expected a decimal number, found {}",
        excerpt(raw)
    ))
}

/// At most 40 characters of `text`, for an error message.
fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(40).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Reads an optional decimal: `None` for `null` or an absent field; a value that is there
/// but not a number (or not exactly a `Decimal`) is an error, never a `None` or a zero.
pub(crate) fn opt_decimal<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Decimal>, D::Error> {
    let raw: Option<Box<RawValue>> = Option::deserialize(d)?;
    match raw {
        None => Ok(None),
        Some(r) if r.get().trim() == "null" => Ok(None),
        Some(r) => parse(r.get())
            .map(Some)
            .ok_or_else(|| not_a_decimal(r.get())),
    }
}

/// A small JSON object writer whose numbers are decimals written exactly.
#[derive(Debug, Default)]
pub(crate) struct JsonObject {
    out: String,
}

impl JsonObject {
    pub(crate) fn new() -> Self {
        JsonObject {
            out: String::from("{"),
        }
    }

    fn key(&mut self, key: &str) {
        if self.out.len() > 1 {
            self.out.push(',');
        }
        self.out.push_str(&quote(key));
        self.out.push(':');
    }

    /// `"key": "value"`.
    pub(crate) fn string(mut self, key: &str, value: &str) -> Self {
        self.key(key);
        self.out.push_str(&quote(value));
        self
    }

    /// `"key": 12.50`: the decimal's own digits, as a JSON number.
    pub(crate) fn decimal(mut self, key: &str, value: Decimal) -> Self {
        self.key(key);
        self.out.push_str(&number_text(value));
        self
    }

    /// `"key": true`.
    pub(crate) fn boolean(mut self, key: &str, value: bool) -> Self {
        self.key(key);
        self.out.push_str(if value { "true" } else { "false" });
        self
    }

    /// `"key": {...}`.
    pub(crate) fn object(mut self, key: &str, value: JsonObject) -> Self {
        self.key(key);
        self.out.push_str(&value.finish());
        self
    }

    pub(crate) fn finish(mut self) -> String {
        self.out.push('}');
        self.out
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// A decimal as JSON number text: plain digits (a `Decimal` never prints an exponent),
/// trailing zeros kept as given.
pub(crate) fn number_text(value: Decimal) -> String {
    value.to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::str::FromStr;

    #[test]
    fn reads_every_form_exactly() {
        for (raw, want) in [
            ("187.23", "187.23"),
            ("\"187.23\"", "187.23"),
            ("0.1", "0.1"),
            ("123456789.123456789", "123456789.123456789"),
            ("1e-7", "0.0000001"),
            ("2.5E3", "2500"),
            ("-3", "-3"),
        ] {
            assert_eq!(parse(raw).unwrap().to_string(), want, "{raw}");
        }
        for bad in ["", "\"\"", "abc", "null", "[1]"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_decimal_that_would_be_rounded_or_overflow_is_refused() {
        let max = "79228162514264337593543950335";
        assert_eq!(parse(max).unwrap(), Decimal::MAX);
        assert_eq!(parse(&format!("-{max}")).unwrap(), Decimal::MIN);
        let scale_28 = "0.1234567890123456789012345678";
        assert_eq!(parse(scale_28).unwrap().to_string(), scale_28);
        for bad in [
            "79228162514264337593543950336",
            "0.12345678901234567890123456789",
            "1e29",
            "1e-29",
            "1.00000000000000000000000000000001e2",
            "1e400",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn optional_money_is_none_only_when_absent_or_null() {
        #[derive(serde::Deserialize)]
        struct T {
            #[serde(default, deserialize_with = "opt_decimal")]
            cash: Option<Decimal>,
        }
        let read = |json: &str| serde_json::from_str::<T>(json).map(|t| t.cash);
        assert_eq!(read("{}").unwrap(), None);
        assert_eq!(read(r#"{"cash": null}"#).unwrap(), None);
        assert_eq!(
            read(r#"{"cash": "10.50"}"#).unwrap(),
            Some(Decimal::new(1050, 2))
        );
        for bad in [
            r#"{"cash": "ten"}"#,
            r#"{"cash": true}"#,
            r#"{"cash": 1e40}"#,
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn writes_exact_decimal_text_never_exponents() {
        let body = JsonObject::new()
            .string("symbol", "AAPL")
            .decimal("qty", Decimal::new(1, 7))
            .decimal("limit_price", Decimal::new(18_723, 2))
            .decimal("big", Decimal::from_str("12345678901234567890.5").unwrap())
            .object(
                "take_profit",
                JsonObject::new().decimal("limit_price", Decimal::new(200, 0)),
            )
            .finish();
        assert_eq!(
            body,
            r#"{"symbol":"AAPL","qty":0.0000001,"limit_price":187.23,"big":12345678901234567890.5,"take_profit":{"limit_price":200}}"#
        );
        // Valid JSON, whose numbers read back exactly.
        let raw: std::collections::HashMap<String, Box<RawValue>> =
            serde_json::from_str(&body).unwrap();
        assert_eq!(
            parse(raw["big"].get()).unwrap().to_string(),
            "12345678901234567890.5"
        );
    }
}
