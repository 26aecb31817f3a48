//! The HTTP-date of a `Retry-After` header (RFC 9110 §5.6.7), read here beside the RFC 3339
//! timestamps of [`timestamp`](crate::timestamp) rather than by one more crate in every
//! client's build: the preferred form (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two
//! obsolete ones a recipient must still accept (`Sunday, 06-Nov-94 08:49:37 GMT` and
//! asctime's `Sun Nov  6 08:49:37 1994`).
//!
//! Choices where the RFC leaves room, the same as the `httpdate` crate's (the tests hold
//! the two to the same answers): the week day must be the date's; a two-digit year below
//! 70 is in the 2000s, else in the 1900s; a date before 1970 or after 9999 is refused.

use std::time::{Duration, SystemTime};

use time::{Date, Month, Weekday};

/// The instant an HTTP-date names, or `None` when `text` is not one.
pub(crate) fn parse(text: &str) -> Option<SystemTime> {
    let b = text.trim().as_bytes();
    let (weekday, rest) = week_day(b)?;
    let fields = match rest.len() {
        // `, 06 Nov 1994 08:49:37 GMT` after a short day name.
        26 if weekday.1 == Form::Short => imf_fixdate(rest)?,
        // `, 06-Nov-94 08:49:37 GMT` after a long day name.
        24 if weekday.1 == Form::Long => rfc850(rest)?,
        // ` Nov  6 08:49:37 1994` after a short day name.
        21 if weekday.1 == Form::Short => asctime(rest)?,
        _ => return None,
    };
    let Fields {
        year,
        month,
        day,
        hour,
        minute,
        second,
    } = fields;
    if !(1970..=9999).contains(&year) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let month = Month::try_from(month).ok()?;
    let date = Date::from_calendar_date(year, month, day).ok()?;
    if date.weekday() != weekday.0 {
        return None;
    }
    let epoch = Date::from_calendar_date(1970, Month::January, 1).ok()?;
    let days = u64::try_from(date.to_julian_day() - epoch.to_julian_day()).ok()?;
    let seconds = days * 86_400 + u64::from(hour) * 3600 + u64::from(minute) * 60;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(seconds + u64::from(second)))
}

/// The parts of a date, before they are checked.
struct Fields {
    year: i32,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
}

/// How the week day was written: `Sun` or `Sunday`.
#[derive(PartialEq, Eq)]
enum Form {
    Short,
    Long,
}

/// The week day at the start of `b`, its form, and what follows it.
fn week_day(b: &[u8]) -> Option<((Weekday, Form), &[u8])> {
    const DAYS: [(&[u8], Weekday); 7] = [
        (b"Monday", Weekday::Monday),
        (b"Tuesday", Weekday::Tuesday),
        (b"Wednesday", Weekday::Wednesday),
        (b"Thursday", Weekday::Thursday),
        (b"Friday", Weekday::Friday),
        (b"Saturday", Weekday::Saturday),
        (b"Sunday", Weekday::Sunday),
    ];
    DAYS.iter().find_map(|(name, day)| {
        if let Some(rest) = b.strip_prefix(*name) {
            Some(((*day, Form::Long), rest))
        } else {
            let rest = b.strip_prefix(&name[..3])?;
            Some(((*day, Form::Short), rest))
        }
    })
}

/// `, 06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(b: &[u8]) -> Option<Fields> {
    if &b[..2] != b", " || b[4] != b' ' || b[8] != b' ' || b[13] != b' ' || &b[22..] != b" GMT" {
        return None;
    }
    let (hour, minute, second) = clock(&b[14..22])?;
    Some(Fields {
        year: i32::from(number(&b[9..13])?),
        month: month(&b[5..8])?,
        day: u8::try_from(number(&b[2..4])?).ok()?,
        hour,
        minute,
        second,
    })
}

/// `, 06-Nov-94 08:49:37 GMT`
fn rfc850(b: &[u8]) -> Option<Fields> {
    if &b[..2] != b", " || b[4] != b'-' || b[8] != b'-' || b[11] != b' ' || &b[20..] != b" GMT" {
        return None;
    }
    let short = i32::from(number(&b[9..11])?);
    let century = if short < 70 { 2000 } else { 1900 };
    let (hour, minute, second) = clock(&b[12..20])?;
    Some(Fields {
        year: century + short,
        month: month(&b[5..8])?,
        day: u8::try_from(number(&b[2..4])?).ok()?,
        hour,
        minute,
        second,
    })
}

/// ` Nov  6 08:49:37 1994`
fn asctime(b: &[u8]) -> Option<Fields> {
    if b[0] != b' ' || b[4] != b' ' || b[7] != b' ' || b[16] != b' ' {
        return None;
    }
    let day = match b[5] {
        b' ' => number(&b[6..7])?,
        _ => number(&b[5..7])?,
    };
    let (hour, minute, second) = clock(&b[8..16])?;
    Some(Fields {
        year: i32::from(number(&b[17..21])?),
        month: month(&b[1..4])?,
        day: u8::try_from(day).ok()?,
        hour,
        minute,
        second,
    })
}

/// `08:49:37`
fn clock(b: &[u8]) -> Option<(u8, u8, u8)> {
    if b[2] != b':' || b[5] != b':' {
        return None;
    }
    let two = |at: usize| u8::try_from(number(&b[at..at + 2])?).ok();
    Some((two(0)?, two(3)?, two(6)?))
}

/// A month's three-letter name, as its number.
fn month(b: &[u8]) -> Option<u8> {
    const NAMES: [&[u8]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let at = NAMES.iter().position(|name| *name == b)?;
    u8::try_from(at + 1).ok()
}

/// Decimal digits only (no sign, no space), as a number.
fn number(b: &[u8]) -> Option<u16> {
    b.iter().try_fold(0u16, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u16::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(secs: u64) -> Option<SystemTime> {
        Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
    }

    #[test]
    fn reads_the_three_forms_of_the_same_instant() {
        // RFC 9110's own example: 1994-11-06T08:49:37Z.
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "  Sun, 06 Nov 1994 08:49:37 GMT ",
        ] {
            assert_eq!(parse(text), at(784_111_777), "{text:?}");
        }
        assert_eq!(parse("Thu, 01 Jan 1970 00:00:00 GMT"), at(0));
        assert_eq!(parse("Fri, 31 Dec 9999 23:59:59 GMT"), at(253_402_300_799));
        // A leap day, and a two-digit year in the 2000s.
        assert_eq!(parse("Thursday, 29-Feb-24 12:00:00 GMT"), at(1_709_208_000));
    }

    #[test]
    fn refuses_what_is_not_a_date() {
        for text in [
            "",
            "7",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Mon, 06 Nov 1994 08:49:37 GMT",
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Nov 1994 08:49:60 GMT",
            "Sun, 06 Nov 1994 8:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT.",
            "Sun, 06 nov 1994 08:49:37 GMT",
            "Wed, 31 Dec 1969 23:59:59 GMT",
            "Sat, 01 Jan 10000 00:00:00 GMT",
            "Sunday, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT",
            "Sun Nov 06 08:49:37 94",
            "Sun, +6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT\u{e9}",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
    }

    proptest! {
        // The same answers as the `httpdate` crate, for every instant it can write and
        // for text shaped like a date but not necessarily one.
        #[test]
        fn reads_what_httpdate_writes(secs in 0u64..253_402_300_800) {
            let t = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
            let imf = httpdate::fmt_http_date(t);
            prop_assert_eq!(parse(&imf), Some(t));
            // The same instant in the two obsolete forms, built from the preferred one
            // (`Sun, 06 Nov 1994 08:49:37 GMT`).
            let (day, month, year, clock) = (&imf[5..7], &imf[8..11], &imf[12..16], &imf[17..25]);
            let asctime = format!("{} {month} {:>2} {clock} {year}", &imf[..3], day.trim_start_matches('0'));
            prop_assert_eq!(parse(&asctime), Some(t), "{}", asctime);
            let long = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
                .into_iter()
                .find(|d| d.starts_with(&imf[..3]))
                .unwrap_or_default();
            let rfc850 = format!("{long}, {day}-{month}-{} {clock} GMT", &year[2..]);
            // Two digits name a year from 1970 to 2069: another century reads as that one.
            if (1970..2070).contains(&year.parse::<u32>().unwrap_or(0)) {
                prop_assert_eq!(parse(&rfc850), Some(t), "{}", rfc850);
            } else {
                prop_assert_ne!(parse(&rfc850), Some(t), "{}", rfc850);
            }
        }

        #[test]
        fn agrees_with_httpdate(text in "(Sun|Mon|Tue|Wed|Thu|Fri|Sat|Sunday|Tuesday)(, | )[0-3 ][0-9][ -](Jan|Feb|Nov|Dec|Xyz)[ -]([0-9]{2}|[0-9]{4}) [0-2][0-9]:[0-6][0-9]:[0-6][0-9]( GMT| [0-9]{4}|)") {
            prop_assert_eq!(parse(&text), httpdate::parse_http_date(&text).ok(), "{:?}", text);
        }
    }
}
