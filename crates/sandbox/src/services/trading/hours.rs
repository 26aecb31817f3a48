//! The paper market's hours (a choice of the sandbox; the document shows none): trading
//! days are weekdays but 1 January, 4 July and 25 December; a day trades 14:30 to 21:00
//! UTC (New York's 9:30 to 16:00 outside summer time, summer time left aside), closing
//! early at 18:00 UTC on 3 July and 24 December.

use time::{Date, Duration, Month, OffsetDateTime, Time, Weekday};

/// One trading day: when it opens and closes, and whether it closes early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Session {
    pub(crate) date: Date,
    pub(crate) open: OffsetDateTime,
    pub(crate) close: OffsetDateTime,
    pub(crate) early: bool,
}

/// The session of `date`, if it is a trading day.
pub(crate) fn session(date: Date) -> Option<Session> {
    if matches!(date.weekday(), Weekday::Saturday | Weekday::Sunday) {
        return None;
    }
    let on = |m: Month, d: u8| date.month() == m && date.day() == d;
    if on(Month::January, 1) || on(Month::July, 4) || on(Month::December, 25) {
        return None;
    }
    let early = on(Month::July, 3) || on(Month::December, 24);
    let open = date.with_time(Time::from_hms(14, 30, 0).ok()?).assume_utc();
    let close_time = if early {
        Time::from_hms(18, 0, 0)
    } else {
        Time::from_hms(21, 0, 0)
    };
    let close = date.with_time(close_time.ok()?).assume_utc();
    Some(Session {
        date,
        open,
        close,
        early,
    })
}

/// The first session that has not closed at `now`.
fn current_or_next(now: OffsetDateTime) -> Option<Session> {
    (0..15)
        .filter_map(|d| now.date().checked_add(Duration::days(d)))
        .filter_map(session)
        .find(|s| s.close > now)
}

/// Whether orders may fill at `t`: always on a sandbox whose market never closes
/// ([`crate::SandboxBuilder::market_hours`] off), else only while the market is open.
pub(crate) fn trades_at(keeps_hours: bool, t: OffsetDateTime) -> bool {
    !keeps_hours || clock(t).is_some_and(|(open, _, _)| open)
}

/// Whether the market is open at `now`, and its next open and next close.
pub(crate) fn clock(now: OffsetDateTime) -> Option<(bool, OffsetDateTime, OffsetDateTime)> {
    let current = current_or_next(now)?;
    if current.open <= now {
        let next = current_or_next(current.close)?;
        Some((true, next.open, current.close))
    } else {
        Some((false, current.open, current.close))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn weekdays_trade_but_holidays_and_early_closes_are_kept() {
        // 2026-12-24 is a Thursday (early close), the 25th a Friday (closed).
        let eve = session(datetime!(2026-12-24 0:00 UTC).date());
        assert_eq!(
            eve.map(|s| (s.early, s.close)),
            Some((true, datetime!(2026-12-24 18:00 UTC)))
        );
        assert!(session(datetime!(2026-12-25 0:00 UTC).date()).is_none());
        assert!(
            session(datetime!(2026-12-26 0:00 UTC).date()).is_none(),
            "a Saturday"
        );
        // Thursday evening after an early close: next open Monday the 28th.
        let (open, next_open, next_close) = clock(datetime!(2026-12-24 19:00 UTC)).unwrap_or((
            true,
            datetime!(2000-01-01 0:00 UTC),
            datetime!(2000-01-01 0:00 UTC),
        ));
        assert!(!open);
        assert_eq!(next_open, datetime!(2026-12-28 14:30 UTC));
        assert_eq!(next_close, datetime!(2026-12-28 21:00 UTC));
        let (open, next_open, next_close) =
            clock(datetime!(2026-03-02 15:00 UTC)).unwrap_or((false, next_open, next_close));
        assert!(open);
        assert_eq!(next_close, datetime!(2026-03-02 21:00 UTC));
        assert_eq!(next_open, datetime!(2026-03-03 14:30 UTC));
    }
}
