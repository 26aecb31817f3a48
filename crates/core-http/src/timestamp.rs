//! Timestamps on the wire: RFC 3339 in, RFC 3339 in UTC with a `Z` suffix out, whatever
//! offset the caller's value had. Use with `#[serde(with = "core_http::timestamp")]`, or
//! `core_http::timestamp::option` for an `Option<OffsetDateTime>`.

use serde::{Deserialize, Deserializer, Serializer};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Formats `t` in UTC with a `Z` suffix (e.g. `2026-01-01T09:00:00Z`).
pub fn format(t: OffsetDateTime) -> String {
    let utc = t.to_offset(time::UtcOffset::UTC);
    // Formatting a UTC date-time between years 0 and 9999 cannot fail; fall back to the
    // Unix timestamp rather than panic on a year the format cannot hold.
    utc.format(&Rfc3339)
        .unwrap_or_else(|_| utc.unix_timestamp().to_string())
}

/// Parses an RFC 3339 timestamp.
pub fn parse(s: &str) -> Result<OffsetDateTime, time::error::Parse> {
    OffsetDateTime::parse(s, &Rfc3339)
}

/// Serializes as [`format()`](fn@format).
pub fn serialize<S: Serializer>(t: &OffsetDateTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format(*t))
}

/// Deserializes an RFC 3339 string.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<OffsetDateTime, D::Error> {
    let raw = <std::borrow::Cow<'de, str>>::deserialize(d)?;
    parse(&raw)
        .map_err(|e| serde::de::Error::custom(format_args!("invalid timestamp {raw:?}: {e}")))
}

/// The same for `Option<OffsetDateTime>` (null or absent is `None`; pair it with
/// `#[serde(default)]`).
pub mod option {
    use super::*;

    /// Serializes `Some` as [`format()`](fn@super::format), `None` as null.
    pub fn serialize<S: Serializer>(t: &Option<OffsetDateTime>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => super::serialize(t, s),
            None => s.serialize_none(),
        }
    }

    /// Deserializes null or an RFC 3339 string.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<OffsetDateTime>, D::Error> {
        let raw = <Option<std::borrow::Cow<'de, str>>>::deserialize(d)?;
        raw.map(|raw| {
            parse(&raw).map_err(|e| {
                serde::de::Error::custom(format_args!("invalid timestamp {raw:?}: {e}"))
            })
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_utc_with_z_whatever_the_offset() {
        let t = parse("2026-03-04T11:06:07+02:00").unwrap();
        assert_eq!(format(t), "2026-03-04T09:06:07Z");
        let t = parse("2026-03-04T09:06:07.25Z").unwrap();
        assert_eq!(format(t), "2026-03-04T09:06:07.25Z");
        assert!(parse("2026-03-04").is_err());
    }
}
