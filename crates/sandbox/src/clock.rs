//! The sandbox clock: a start instant plus whatever the control endpoint added, and
//! (unless frozen) the real time elapsed since the sandbox started.

use std::time::{Duration, Instant};

use time::OffsetDateTime;

/// The latest the clock can be moved to: a century short of year 9999, so every date the
/// services compute from "now" (an order's expiry, a calendar year ahead, a history's
/// end) stays within RFC 3339's years.
pub(crate) const LATEST: OffsetDateTime = time::macros::datetime!(9899-12-31 23:59:59 UTC);

/// The sandbox's notion of "now".
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    start: OffsetDateTime,
    advanced: Duration,
    running_since: Option<Instant>,
}

impl Clock {
    /// A clock that starts at `start` and moves with real time when `running`.
    pub(crate) fn new(start: OffsetDateTime, running: bool) -> Self {
        Clock {
            start,
            advanced: Duration::ZERO,
            running_since: running.then(Instant::now),
        }
    }

    /// The current sandbox time, truncated to whole milliseconds so that it prints the
    /// same way it parses back.
    pub(crate) fn now(&self) -> OffsetDateTime {
        let elapsed = self.running_since.map(|t| t.elapsed()).unwrap_or_default();
        let now = self.start + self.advanced + elapsed;
        let millis = now.millisecond();
        now.replace_nanosecond(u32::from(millis) * 1_000_000)
            .unwrap_or(now)
    }

    /// Moves the clock forward, unless that would take it past [`LATEST`] (then it
    /// stays, and `false` says so).
    pub(crate) fn advance(&mut self, by: Duration) -> bool {
        let Some(advanced) = self.advanced.checked_add(by) else {
            return false;
        };
        let later = time::Duration::try_from(advanced)
            .ok()
            .and_then(|d| self.start.checked_add(d));
        match later {
            Some(later) if later <= LATEST => {
                self.advanced = advanced;
                true
            }
            _ => false,
        }
    }
}

/// RFC 3339 with a `Z` suffix, as every timestamp the sandbox writes.
pub(crate) fn rfc3339(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    let format = if t.millisecond() == 0 {
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z")
    } else {
        time::macros::format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        )
    };
    t.format(&format).unwrap_or_default()
}

/// Parses an RFC 3339 timestamp of the years 0001 to 9999 (in UTC): the years RFC 3339
/// can write, so that every time the sandbox answers with is one a client can read.
pub(crate) fn parse_rfc3339(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
        .ok()
        .filter(|t| within_years(*t))
}

/// Whether `t` falls in the years 0001 to 9999, in UTC.
pub(crate) fn within_years(t: OffsetDateTime) -> bool {
    (1..=9999).contains(&t.to_offset(time::UtcOffset::UTC).year())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frozen_clock_moves_only_when_advanced() {
        let start = time::macros::datetime!(2026-01-01 00:00 UTC);
        let mut clock = Clock::new(start, false);
        assert_eq!(clock.now(), start);
        clock.advance(Duration::from_secs(90));
        assert_eq!(rfc3339(clock.now()), "2026-01-01T00:01:30Z");
    }

    #[test]
    fn timestamps_round_trip() {
        let t = parse_rfc3339("2026-03-04T05:06:07.250+02:00").unwrap();
        assert_eq!(rfc3339(t), "2026-03-04T03:06:07.250Z");
        assert!(parse_rfc3339("tomorrow").is_none());
    }
}
