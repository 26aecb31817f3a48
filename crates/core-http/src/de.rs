//! Exact number decoding for fields the documents type as "integer" or "number", and
//! tolerant text for ids and names whose JSON type the documents do not fix.
//!
//! A number may come in any of the forms servers use: a JSON integer, an integral float
//! such as `12.0`, or a numeric string such as `"12"`. What it may never do is change
//! value on the way in. The rules:
//! - a value outside the field's type (a negative count, `2^70` in a `u64`, `5e9` in a
//!   `u32`) is a decode error, never clamped to the type's bounds;
//! - a fractional value in an integer field (`12.5`) is a decode error, never truncated;
//!   an integral float (`12.0`) is read up to 10^15, past which a float may have lost
//!   digits (integers written as integers are exact up to 64 bits; beyond, a decode
//!   error that names the number as approximate, never a rounded figure as if sent);
//! - anything that is not a number (a word, `true`, a list, `NaN`) is a decode error;
//! - `null` and an absent field read as `None` in an `opt_*` field. The non-`opt`
//!   functions refuse `null`: use them only for fields an answer must carry.
//!
//! Use with `#[serde(default, deserialize_with = "core_http::de::opt_u64")]` (or
//! `opt_u32`, `opt_i64`, `opt_f64`), and `u64`, `u32`, `i64`, `f64` for required fields.
//! A count is never given a default of zero: zero is a real answer, and "the server did
//! not say" is `None`.
//!
//! ```
//! #[derive(serde::Deserialize)]
//! struct Counts {
//!     #[serde(default, deserialize_with = "core_http::de::opt_u64")]
//!     followers: Option<u64>,
//!     #[serde(default, deserialize_with = "core_http::de::opt_u32")]
//!     limit: Option<u32>,
//! }
//! let c: Counts = serde_json::from_str(r#"{"followers": 12.0, "limit": "20"}"#)?;
//! assert_eq!((c.followers, c.limit), (Some(12), Some(20)));
//! let c: Counts = serde_json::from_str(r#"{"limit": null}"#)?;
//! assert_eq!((c.followers, c.limit), (None, None));
//! // Out of range, negative, fractional or not a number: an error, never a wrong value.
//! for bad in [r#"{"followers": 1180591620717411303424}"#, r#"{"followers": -3}"#,
//!             r#"{"followers": 1.5}"#, r#"{"limit": "many"}"#, r#"{"limit": 5000000000}"#] {
//!     assert!(serde_json::from_str::<Counts>(bad).is_err(), "{bad}");
//! }
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// Reads `null` as the type's default, like an absent field (pair it with
/// `#[serde(default)]`): `#[serde(default, deserialize_with = "core_http::de::or_default")]`.
/// Only for fields where empty is the true meaning of "absent" (a list of legs, a map
/// of extra properties), never for a number.
pub fn or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A numeric type the readers here can produce, exactly or not at all.
pub trait Number: Sized + Copy {
    /// The type's name, for an error message.
    const NAME: &'static str;
    /// From a JSON integer; `None` when it is outside the type.
    fn from_i128(v: i128) -> Option<Self>;
    /// From a finite JSON float; `None` when it is outside the type or, for an integer
    /// type, not a whole number.
    fn from_f64(v: f64) -> Option<Self>;
}

/// The largest integral float an integer field accepts (exclusive): 10^15. Below 2^53 a
/// whole float is exactly an integer, but serde_json's fast float parser reads all the
/// digits of `1234567890123456.0` as one 17-digit number and may round it; under 10^15 a
/// rounding can only make the value fractional (an error), never another integer.
const EXACT_FLOAT: f64 = 1e15;

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Number for $t {
            const NAME: &'static str = stringify!($t);
            fn from_i128(v: i128) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
            fn from_f64(v: f64) -> Option<Self> {
                // Whole, inside the type, and small enough that the float is the integer
                // that was written: a larger float may have lost digits (serde_json reads
                // an integer below i64::MIN as a rounded float), so it is not trusted as
                // an exact count. Integers written as integers have no such limit.
                let whole = v.fract() == 0.0;
                (whole && v.abs() < EXACT_FLOAT).then(|| <$t>::try_from(v as i64).ok()).flatten()
            }
        }
    )*};
}
integer!(u64, u32, i64);

impl Number for f64 {
    const NAME: &'static str = "f64";
    fn from_i128(v: i128) -> Option<Self> {
        Some(v as f64)
    }
    fn from_f64(v: f64) -> Option<Self> {
        Some(v)
    }
}

/// What a JSON value said about a number: nothing (`null`), a number of the type, or
/// something that cannot be one (with the reason).
enum Read<T> {
    Null,
    Value(T),
    Bad(String),
}

/// What a JSON value held, before it is fitted to a type: read by one visitor for every
/// numeric type, so a program builds serde_json's reader for it once, not once per type.
enum Raw {
    Null,
    Int(i128),
    Float(f64),
    Bad(String),
}

impl Raw {
    /// A numeric string: an integer, else a finite float, else not a number.
    fn from_text(text: &str) -> Raw {
        let v = text.trim();
        if let Ok(i) = v.parse::<i128>() {
            return Raw::Int(i);
        }
        match v.parse::<f64>() {
            Ok(f) if f.is_finite() => Raw::Float(f),
            _ => Raw::Bad(format!(
                "expected a number, found the text {:?}",
                excerpt(v)
            )),
        }
    }

    /// The value as a `T`, exactly, or why it is not one.
    fn fit<T: Number>(self) -> Read<T> {
        match self {
            Raw::Null => Read::Null,
            Raw::Int(i) => from_int(i),
            Raw::Float(f) => from_float(f),
            Raw::Bad(why) => Read::Bad(why),
        }
    }
}

fn from_int<T: Number>(i: i128) -> Read<T> {
    match T::from_i128(i) {
        Some(v) => Read::Value(v),
        None => Read::Bad(out_of_range(&i, T::NAME)),
    }
}

fn from_float<T: Number>(f: f64) -> Read<T> {
    match T::from_f64(f) {
        Some(v) => Read::Value(v),
        None => Read::Bad(not_exact(f, T::NAME)),
    }
}

/// Why a number is out of a type's range.
fn out_of_range(number: &dyn fmt::Display, name: &str) -> String {
    format!("{number} is out of range for {name}")
}

/// Why a finite float is not a value of the type named.
fn not_exact(f: f64, name: &str) -> String {
    if f.fract() != 0.0 {
        format!("{f} is not a whole number ({name})")
    } else if f.abs() >= EXACT_FLOAT {
        // Such a float is no longer the number sent: say so, never print it as if it were.
        format!(
            "a number of about {f:e} is out of range for {name}, or too large to be read exactly"
        )
    } else {
        out_of_range(&f, name)
    }
}

fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(40).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Reads any JSON value as a [`Raw`] number.
struct NumberVisitor;

impl<'de> Visitor<'de> for NumberVisitor {
    type Value = Raw;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }
    fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Int(i128::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw::Int(i128::from(v)))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Raw, E> {
        Ok(Raw::Int(v))
    }
    fn visit_u128<E>(self, v: u128) -> Result<Raw, E> {
        Ok(match i128::try_from(v) {
            Ok(i) => Raw::Int(i),
            // Beyond every type read here.
            Err(_) => Raw::Bad(format!("{v} is out of range")),
        })
    }
    fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
        Ok(if v.is_finite() {
            Raw::Float(v)
        } else {
            Raw::Bad(format!("{v} is not a finite number"))
        })
    }
    fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::from_text(v))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bad(format!("expected a number, found {v}")))
    }
    fn visit_unit<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Raw::Bad("expected a number, found a list".into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Raw::Bad("expected a number, found an object".into()))
    }
}

fn read<'de, D: Deserializer<'de>, T: Number>(d: D) -> Result<Read<T>, D::Error> {
    Ok(d.deserialize_any(NumberVisitor)?.fit())
}

/// A number read exactly: `None` for `null`, a decode error for anything that is not a
/// number of the type (see the module docs). `Exact<u64>` in a field is the same as
/// `Option<u64>` with `deserialize_with = "core_http::de::opt_u64"`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exact<T>(pub Option<T>);

impl<'de, T: Number> Deserialize<'de> for Exact<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match read::<D, T>(d)? {
            Read::Null => Ok(Exact(None)),
            Read::Value(v) => Ok(Exact(Some(v))),
            Read::Bad(why) => Err(de::Error::custom(why)),
        }
    }
}

/// A number read where a bad value must not fail the whole answer: `None` for `null`
/// and for anything that is not a number of the type. Never a clamped or truncated value.
/// For hints only (a token's lifetime), never for a value a caller acts on as data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lenient<T>(pub Option<T>);

impl<'de, T: Number> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match read::<D, T>(d)? {
            Read::Value(v) => Ok(Lenient(Some(v))),
            Read::Null | Read::Bad(_) => Ok(Lenient(None)),
        }
    }
}

/// Reads an `Option<u64>` that describes an answer rather than being it (how long the
/// server took, its latency): `None` for `null` and for anything that is not a `u64` (a
/// negative or fractional figure, text), so that an odd figure never fails the answer it
/// describes. Never a clamped or truncated value. Counts that are the answer, or drive a
/// list (a total, a usage), are read exactly instead ([`opt_u64`]).
pub fn lenient_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(Lenient::<u64>::deserialize(d)?.0)
}

macro_rules! functions {
    ($($t:ident, $opt:ident);*) => {$(
        #[doc = concat!("Reads a required `", stringify!($t), "` exactly (see the module docs): `null` or anything that is not a `", stringify!($t), "` is an error.")]
        pub fn $t<'de, D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
            match read::<D, $t>(d)? {
                Read::Value(v) => Ok(v),
                Read::Null => Err(de::Error::custom(concat!("expected a number (", stringify!($t), "), found null"))),
                Read::Bad(why) => Err(de::Error::custom(why)),
            }
        }

        #[doc = concat!("Reads an `Option<", stringify!($t), ">` exactly (see the module docs): `None` for `null`; an error for anything that is not a `", stringify!($t), "`.")]
        pub fn $opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$t>, D::Error> {
            Ok(Exact::<$t>::deserialize(d)?.0)
        }
    )*};
}
functions!(u64, opt_u64; u32, opt_u32; i64, opt_i64; f64, opt_f64);

/// Reads text whose JSON type the documents do not fix (an id, a name): a JSON string
/// as it is, or a JSON integer of up to 64 bits as its exact decimal digits (`12345`
/// reads as `"12345"`). Anything else (a float, `true`, a list, `null`) is a decode
/// error, and so is an integer beyond 64 bits: JSON readers carry those as floats, whose
/// digits are lost, so a service must send such an id as a string.
pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    d.deserialize_any(TextVisitor)?
        .ok_or_else(|| de::Error::custom("expected a string or an integer, found null"))
}

/// Like [`text`] for a name that may be absent: `null` or an absent field (pair it with
/// `#[serde(default)]`) reads as empty text, the true meaning of "no name".
pub fn text_or_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(d.deserialize_any(TextVisitor)?.unwrap_or_default())
}

/// Like [`text`] for an optional field: `None` for `null`.
pub fn opt_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    d.deserialize_any(TextVisitor)
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an integer")
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_u128<E>(self, v: u128) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        // serde_json reads an integer beyond 64 bits as a float: its digits are gone, so
        // the number is named as approximate, never printed as if it were the one sent.
        if v.fract() == 0.0 && v.abs() >= 9.2e18 {
            return Err(E::custom(format_args!(
                "expected a string or an integer of at most 64 bits, found an integer of \
                 about {v:e}, whose digits cannot be kept: such an id must come as a string"
            )));
        }
        Err(E::custom(format_args!(
            "expected a string or an integer, found the number {v}"
        )))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn exact<T: Number>(json: &str) -> Result<Option<T>, serde_json::Error> {
        serde_json::from_str::<Exact<T>>(json).map(|e| e.0)
    }

    #[test]
    fn every_number_form_reads_exactly() {
        assert_eq!(exact::<u64>("12").unwrap(), Some(12));
        assert_eq!(exact::<u64>("12.0").unwrap(), Some(12));
        assert_eq!(exact::<u64>("\" 12 \"").unwrap(), Some(12));
        assert_eq!(exact::<u64>("\"12.0\"").unwrap(), Some(12));
        assert_eq!(
            exact::<u64>("18446744073709551615").unwrap(),
            Some(u64::MAX)
        );
        assert_eq!(exact::<u32>("4294967295").unwrap(), Some(u32::MAX));
        assert_eq!(exact::<i64>("-5").unwrap(), Some(-5));
        assert_eq!(
            exact::<i64>("-9223372036854775808").unwrap(),
            Some(i64::MIN)
        );
        assert_eq!(exact::<f64>("\"0.25\"").unwrap(), Some(0.25));
        assert_eq!(exact::<u64>("null").unwrap(), None);
    }

    #[test]
    fn a_value_that_would_change_is_an_error() {
        for (json, why) in [
            ("1180591620717411303424", "out of range"),
            ("18446744073709551616", "out of range"),
            ("\"18446744073709551616\"", "out of range"),
            ("-5", "out of range"),
            ("1e30", "out of range"),
            ("12.9", "whole number"),
            ("\"NaN\"", "expected a number"),
            ("\"x\"", "expected a number"),
            ("true", "expected a number"),
            ("[1]", "a list"),
            ("{\"a\":1}", "an object"),
        ] {
            let err = exact::<u64>(json).unwrap_err().to_string();
            assert!(err.contains(why), "{json}: {err}");
        }
        assert!(exact::<u32>("5000000000").is_err());
        assert!(exact::<i64>("9223372036854775808").is_err());
        assert!(exact::<i64>("-9223372036854777856.0").is_err());
    }

    #[test]
    fn lenient_reads_a_bad_value_as_none_never_a_clamp() {
        let lenient = |json: &str| serde_json::from_str::<Lenient<u64>>(json).unwrap().0;
        assert_eq!(lenient("\"3599\""), Some(3599));
        assert_eq!(lenient("-5"), None);
        assert_eq!(lenient("1e30"), None);
        assert_eq!(lenient("\"soon\""), None);
    }

    #[test]
    fn required_numbers_refuse_null() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct T {
            #[serde(deserialize_with = "super::u32")]
            n: u32,
        }
        assert!(serde_json::from_str::<T>(r#"{"n": null}"#).is_err());
        assert!(serde_json::from_str::<T>(r#"{}"#).is_err());
        assert_eq!(serde_json::from_str::<T>(r#"{"n": "7"}"#).unwrap().n, 7);
    }

    #[test]
    fn text_keeps_integers_exactly() {
        #[derive(serde::Deserialize, Debug)]
        struct T {
            #[serde(deserialize_with = "super::text")]
            id: String,
        }
        let read = |json: &str| serde_json::from_str::<T>(json).map(|t| t.id);
        assert_eq!(read(r#"{"id": "ord_1"}"#).unwrap(), "ord_1");
        assert_eq!(read(r#"{"id": 12345}"#).unwrap(), "12345");
        assert_eq!(read(r#"{"id": -7}"#).unwrap(), "-7");
        assert_eq!(
            read(r#"{"id": 18446744073709551615}"#).unwrap(),
            "18446744073709551615"
        );
        for bad in [
            r#"{"id": 1.5}"#,
            r#"{"id": true}"#,
            r#"{"id": null}"#,
            r#"{"id": [1]}"#,
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }
}
