//! Timestamps on the wire: RFC 3339 in, RFC 3339 in UTC with a `Z` suffix out, whatever
//! offset the caller's value had. Use with `#[serde(with = "core_http::timestamp")]`, or
//! `core_http::timestamp::option` for an `Option<OffsetDateTime>`.

use std::fmt::Write as _;

use serde::{Deserialize, Deserializer, Serializer};
use time::{Date, Month, OffsetDateTime, Time, UtcOffset};

/// Why a text is not an RFC 3339 timestamp: the part that is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not an RFC 3339 timestamp: invalid {0}")]
pub struct InvalidTimestamp(&'static str);

/// Formats `t` in UTC with a `Z` suffix (e.g. `2026-01-01T09:00:00Z`; fractional
/// seconds only when there are any, without trailing zeros).
///
/// ```
/// let t = core_http::timestamp::parse("2026-03-04T11:06:07.250+02:00")?;
/// assert_eq!(core_http::timestamp::format(t), "2026-03-04T09:06:07.25Z");
/// # Ok::<(), core_http::timestamp::InvalidTimestamp>(())
/// ```
pub fn format(t: OffsetDateTime) -> String {
    let utc = t.to_offset(UtcOffset::UTC);
    // RFC 3339 holds years 0 to 9999; the Unix timestamp stands in for any other rather
    // than a panic.
    if !(0..=9999).contains(&utc.year()) {
        return utc.unix_timestamp().to_string();
    }
    let mut out = String::with_capacity(30);
    let _ = write!(
        out,
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        utc.year(),
        u8::from(utc.month()),
        utc.day(),
        utc.hour(),
        utc.minute(),
        utc.second()
    );
    let nanos = utc.nanosecond();
    if nanos != 0 {
        let digits = format!("{nanos:09}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

/// Parses an RFC 3339 timestamp: `YYYY-MM-DDTHH:MM:SS`, optional fractional seconds
/// (nanosecond precision; further digits are ignored), then `Z` or `±HH:MM`. `T` and `Z`
/// may be lower case, and a space may separate the date and the time. A leap second
/// (`:60`) is read as the last nanosecond before it, where one can occur (the last
/// second of a month, in UTC).
///
/// ```
/// use core_http::timestamp;
/// let t = timestamp::parse("2026-03-04T09:06:07Z")?;
/// assert_eq!(t.unix_timestamp(), 1_772_615_167);
/// assert!(timestamp::parse("2026-02-30T00:00:00Z").is_err());
/// # Ok::<(), timestamp::InvalidTimestamp>(())
/// ```
pub fn parse(s: &str) -> Result<OffsetDateTime, InvalidTimestamp> {
    let b = s.as_bytes();
    let mut at = 0usize;
    let year = digits(b, &mut at, 4).ok_or(InvalidTimestamp("year"))?;
    literal(b, &mut at, b'-')?;
    let month = digits(b, &mut at, 2).ok_or(InvalidTimestamp("month"))?;
    literal(b, &mut at, b'-')?;
    let day = digits(b, &mut at, 2).ok_or(InvalidTimestamp("day"))?;
    match b.get(at) {
        Some(b'T' | b't' | b' ') => at += 1,
        _ => return Err(InvalidTimestamp("separator")),
    }
    let hour = digits(b, &mut at, 2).ok_or(InvalidTimestamp("hour"))?;
    literal(b, &mut at, b':')?;
    let minute = digits(b, &mut at, 2).ok_or(InvalidTimestamp("minute"))?;
    literal(b, &mut at, b':')?;
    let mut second = digits(b, &mut at, 2).ok_or(InvalidTimestamp("second"))?;
    let mut nanosecond = 0u32;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let first = at;
        let mut scale = 100_000_000u32;
        while let Some(d) = b.get(at).filter(|d| d.is_ascii_digit()) {
            nanosecond += u32::from(d - b'0') * scale;
            scale /= 10;
            at += 1;
        }
        if at == first {
            return Err(InvalidTimestamp("fractional seconds"));
        }
    }
    let offset = offset(b, &mut at)?;
    if at != b.len() {
        return Err(InvalidTimestamp("end: unexpected trailing characters"));
    }
    // A leap second stands for the last nanosecond before it.
    let leap = second == 60;
    if leap {
        second = 59;
        nanosecond = 999_999_999;
    }
    let month = u8::try_from(month)
        .ok()
        .and_then(|m| Month::try_from(m).ok())
        .ok_or(InvalidTimestamp("month"))?;
    let date = Date::from_calendar_date(year as i32, month, day as u8)
        .map_err(|_| InvalidTimestamp("day"))?;
    let time = Time::from_hms_nano(hour as u8, minute as u8, second as u8, nanosecond)
        .map_err(|_| InvalidTimestamp("time"))?;
    let t = OffsetDateTime::new_in_offset(date, time, offset);
    if leap {
        let utc = t.to_offset(UtcOffset::UTC);
        let last_day = utc.month().length(utc.year());
        if !(utc.hour() == 23 && utc.minute() == 59 && utc.second() == 59 && utc.day() == last_day)
        {
            return Err(InvalidTimestamp("second: a leap second only ends a month"));
        }
    }
    Ok(t)
}

/// The offset at `*at` (`Z`, or `+hh:mm` / `-hh:mm`); moves past it.
fn offset(b: &[u8], at: &mut usize) -> Result<UtcOffset, InvalidTimestamp> {
    match b.get(*at) {
        Some(b'Z' | b'z') => {
            *at += 1;
            Ok(UtcOffset::UTC)
        }
        Some(&sign @ (b'+' | b'-')) => {
            *at += 1;
            let hours = digits(b, at, 2)
                .filter(|h| *h <= 23)
                .ok_or(InvalidTimestamp("offset hour"))?;
            literal(b, at, b':')?;
            let minutes = digits(b, at, 2).ok_or(InvalidTimestamp("offset minute"))?;
            let (hours, minutes) = (hours as i8, minutes as i8);
            let (hours, minutes) = if sign == b'-' {
                (-hours, -minutes)
            } else {
                (hours, minutes)
            };
            UtcOffset::from_hms(hours, minutes, 0).map_err(|_| InvalidTimestamp("offset minute"))
        }
        _ => Err(InvalidTimestamp("offset")),
    }
}

/// Exactly `n` ASCII digits at `*at`, as a number; moves past them.
fn digits(b: &[u8], at: &mut usize, n: usize) -> Option<u32> {
    let run = b.get(*at..*at + n)?;
    if !run.iter().all(u8::is_ascii_digit) {
        return None;
    }
    *at += n;
    Some(run.iter().fold(0, |v, d| v * 10 + u32::from(d - b'0')))
}

/// The byte `c` at `*at`; moves past it.
fn literal(b: &[u8], at: &mut usize, c: u8) -> Result<(), InvalidTimestamp> {
    if b.get(*at) == Some(&c) {
        *at += 1;
        Ok(())
    } else {
        Err(InvalidTimestamp("separator"))
    }
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
    use proptest::prelude::*;
    use time::format_description::well_known::Rfc3339;

    proptest! {
        /// Every RFC 3339 text reads as time's own parser reads it, or fails where it fails.
        #[test]
        fn parses_as_time_does(
            year in 0u32..=9999,
            month in 0u32..=13,
            day in 0u32..=32,
            hour in 0u32..=24,
            minute in 0u32..=60,
            second in 0u32..=61,
            fraction in proptest::option::of("[0-9]{1,12}"),
            separator in prop::sample::select(vec!['T', 't', ' ']),
            offset in prop::option::of((any::<bool>(), 0u32..=24, 0u32..=60)),
            lower_z in any::<bool>(),
        ) {
            let mut text = format!("{year:04}-{month:02}-{day:02}{separator}{hour:02}:{minute:02}:{second:02}");
            if let Some(f) = &fraction {
                text.push('.');
                text.push_str(f);
            }
            match offset {
                None => text.push(if lower_z { 'z' } else { 'Z' }),
                Some((minus, h, m)) => {
                    text.push_str(&format!("{}{h:02}:{m:02}", if minus { '-' } else { '+' }));
                }
            }
            let ours = parse(&text).ok();
            let theirs = OffsetDateTime::parse(&text, &Rfc3339).ok();
            prop_assert_eq!(ours, theirs, "{}", text);
        }

        /// Whatever text is read, it is read as time reads it (time also takes any byte
        /// between the date and the time; this parser only `T`, `t` and a space).
        #[test]
        fn accepts_nothing_time_refuses(text in "[0-9T:.Zz+ -]{0,40}") {
            if let Ok(ours) = parse(&text) {
                prop_assert_eq!(Some(ours), OffsetDateTime::parse(&text, &Rfc3339).ok(), "{}", text);
            }
        }

        /// Formatting matches time's RFC 3339 in UTC.
        #[test]
        fn formats_as_time_does(
            seconds in -62_167_219_200i64..253_402_300_799,
            nanos in prop::sample::select(vec![0u32, 1, 10, 500_000_000, 123_456_789, 999_999_999, 120_000_000]),
            offset_minutes in -1439i32..=1439,
        ) {
            let t = OffsetDateTime::from_unix_timestamp(seconds).unwrap()
                .replace_nanosecond(nanos).unwrap()
                .to_offset(UtcOffset::from_whole_seconds(offset_minutes * 60).unwrap());
            let utc = t.to_offset(UtcOffset::UTC);
            prop_assert_eq!(format(t), utc.format(&Rfc3339).unwrap());
        }
    }

    #[test]
    fn writes_utc_with_z_whatever_the_offset() {
        let t = parse("2026-03-04T11:06:07+02:00").unwrap();
        assert_eq!(format(t), "2026-03-04T09:06:07Z");
        let t = parse("2026-03-04T09:06:07.25Z").unwrap();
        assert_eq!(format(t), "2026-03-04T09:06:07.25Z");
        assert!(parse("2026-03-04").is_err());
        // Leap seconds end a month in UTC, whatever offset they are written in.
        for text in [
            "2016-12-31T23:59:60Z",
            "2017-01-01T01:29:60+01:30",
            "2016-12-30T23:59:60Z",
            "2016-12-31T22:59:60Z",
            "2016-12-31T23:59:60.5Z",
        ] {
            assert_eq!(
                parse(text).ok(),
                OffsetDateTime::parse(text, &Rfc3339).ok(),
                "{text}"
            );
        }
        assert!(parse("2016-12-31T23:59:60Z").is_ok());
        assert!(parse("2016-12-30T23:59:60Z").is_err());
    }
}
