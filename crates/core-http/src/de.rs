//! Tolerant number decoding for fields the documents type as "integer" or "number":
//! any JSON integer, an integral float such as `12.0`, or a numeric string is accepted,
//! so one odd number never throws away a whole page.
//!
//! Use with `#[serde(default, deserialize_with = "core_http::de::u64")]` (or `u32`,
//! `i64`, `f64`, and `opt_*` for `Option` fields). The rules:
//! - a negative value in an unsigned field reads as 0, a value beyond its range as its
//!   maximum;
//! - a fractional value in an integer field is truncated toward zero;
//! - anything that is not a number (`null`, a word, a list) reads as 0, or `None` for an
//!   `opt_*` field.
//!
//! [`or_default`] reads `null` in any other field as its default.
//!
//! ```
//! #[derive(serde::Deserialize)]
//! struct Counts {
//!     #[serde(default, deserialize_with = "core_http::de::u64")]
//!     followers: u64,
//!     #[serde(default, deserialize_with = "core_http::de::opt_u32")]
//!     limit: Option<u32>,
//! }
//! let c: Counts = serde_json::from_str(r#"{"followers": 12.0, "limit": "20"}"#)?;
//! assert_eq!((c.followers, c.limit), (12, Some(20)));
//! let c: Counts = serde_json::from_str(r#"{"followers": -3, "limit": "many"}"#)?;
//! assert_eq!((c.followers, c.limit), (0, None));
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Reads `null` as the type's default, like an absent field (pair it with
/// `#[serde(default)]`): `#[serde(default, deserialize_with = "core_http::de::or_default")]`.
pub fn or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A number read tolerantly: `None` when the value is not a number at all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lenient<T>(pub Option<T>);

/// A numeric type [`Lenient`] can read.
pub trait Number: Sized + Copy {
    /// From a JSON integer.
    fn from_i128(v: i128) -> Self;
    /// From a JSON float (finite).
    fn from_f64(v: f64) -> Self;
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Number for $t {
            fn from_i128(v: i128) -> Self {
                v.clamp(<$t>::MIN as i128, <$t>::MAX as i128) as $t
            }
            fn from_f64(v: f64) -> Self {
                // `as` saturates at the type's bounds and truncates toward zero.
                v as $t
            }
        }
    )*};
}
integer!(u64, u32, i64);

impl Number for f64 {
    fn from_i128(v: i128) -> Self {
        v as f64
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}

impl<'de, T: Number> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Number> Visitor<'de> for V<T> {
            type Value = Lenient<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Lenient(Some(T::from_i128(i128::from(v)))))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Lenient(Some(T::from_i128(i128::from(v)))))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Lenient(v.is_finite().then(|| T::from_f64(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                let v = v.trim();
                if let Ok(i) = v.parse::<i128>() {
                    return Ok(Lenient(Some(T::from_i128(i))));
                }
                Ok(Lenient(
                    v.parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite())
                        .map(T::from_f64),
                ))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                Lenient::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Lenient(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Lenient(None))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

macro_rules! functions {
    ($($t:ident, $opt:ident);*) => {$(
        #[doc = concat!("Reads a `", stringify!($t), "` tolerantly (see the module docs); 0 when it is not a number.")]
        pub fn $t<'de, D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
            Ok(Lenient::<$t>::deserialize(d)?.0.unwrap_or_default())
        }

        #[doc = concat!("Reads an `Option<", stringify!($t), ">` tolerantly (see the module docs); `None` when it is not a number.")]
        pub fn $opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$t>, D::Error> {
            Ok(Lenient::<$t>::deserialize(d)?.0)
        }
    )*};
}
functions!(u64, opt_u64; u32, opt_u32; i64, opt_i64; f64, opt_f64);

#[cfg(test)]
mod tests {
    use super::*;

    fn read<T: Number>(json: &str) -> Option<T> {
        serde_json::from_str::<Lenient<T>>(json).unwrap().0
    }

    #[test]
    fn every_number_form() {
        assert_eq!(read::<u64>("12"), Some(12));
        assert_eq!(read::<u64>("12.0"), Some(12));
        assert_eq!(read::<u64>("12.9"), Some(12));
        assert_eq!(read::<u64>("-5"), Some(0));
        assert_eq!(read::<u64>("1e30"), Some(u64::MAX));
        assert_eq!(read::<u32>("5000000000"), Some(u32::MAX));
        assert_eq!(read::<i64>("-5"), Some(-5));
        assert_eq!(read::<i64>("\" 42 \""), Some(42));
        assert_eq!(read::<f64>("\"0.25\""), Some(0.25));
        assert_eq!(read::<u64>("\"NaN\""), None);
        for odd in ["null", "true", "\"x\"", "[1]", "{\"a\":1}"] {
            assert_eq!(read::<u64>(odd), None, "{odd}");
        }
    }
}
