//! The market's clock (open now? next open and close) and its calendar (trading days,
//! early closes).

use core_http::Result;
use serde::{Deserialize, Deserializer};
use time::{Date, OffsetDateTime};

use crate::client::Client;

/// Whether the market is open, and when it next opens and closes.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct MarketClock {
    /// The service's time now.
    #[serde(deserialize_with = "core_http::timestamp::deserialize")]
    pub timestamp: OffsetDateTime,
    /// Whether the market is open now.
    pub is_open: bool,
    /// When it next opens.
    #[serde(deserialize_with = "core_http::timestamp::deserialize")]
    pub next_open: OffsetDateTime,
    /// When it next closes (today's close while it is open).
    #[serde(deserialize_with = "core_http::timestamp::deserialize")]
    pub next_close: OffsetDateTime,
}

/// One trading day.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct TradingDay {
    /// The day.
    #[serde(deserialize_with = "iso_date")]
    pub date: Date,
    /// When it opens.
    #[serde(deserialize_with = "core_http::timestamp::deserialize")]
    pub open: OffsetDateTime,
    /// When it closes.
    #[serde(deserialize_with = "core_http::timestamp::deserialize")]
    pub close: OffsetDateTime,
    /// Whether it closes early.
    #[serde(default)]
    pub early_close: bool,
}

fn iso_date<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Date, D::Error> {
    let text = String::deserialize(d)?;
    parse_date(&text).ok_or_else(|| serde::de::Error::custom(format!("{text:?} is not a date")))
}

fn parse_date(text: &str) -> Option<Date> {
    let mut parts = text.splitn(3, '-');
    let year = parts.next()?.parse().ok()?;
    let month: u8 = parts.next()?.parse().ok()?;
    let day = parts.next()?.parse().ok()?;
    Date::from_calendar_date(year, month.try_into().ok()?, day).ok()
}

fn format_date(date: Date) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    )
}

#[derive(Deserialize)]
struct Days {
    #[serde(deserialize_with = "core_http::de::or_default")]
    days: Vec<TradingDay>,
}

/// The market clock and calendar: `client.clock()`.
#[derive(Debug, Clone, Copy)]
pub struct ClockHandle<'a> {
    client: &'a Client,
}

impl<'a> ClockHandle<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        ClockHandle { client }
    }

    /// Open now? Next open and close. `GET /v1/clock`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let clock = client.clock().get()?;
    /// if clock.is_open {
    ///     println!("open until {}", clock.next_close);
    /// } else {
    ///     println!("opens at {}", clock.next_open);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn get(&self) -> Result<MarketClock> {
        self.client.http().get("/v1/clock").send_json()
    }

    /// The trading days from `start` to `end` (both included, at most 366 days), each
    /// with its open and close and whether it closes early. `GET /v1/calendar?start&end`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::time::{Date, Month};
    /// let (start, end) = (
    ///     Date::from_calendar_date(2026, Month::December, 21).expect("a date"),
    ///     Date::from_calendar_date(2026, Month::December, 31).expect("a date"),
    /// );
    /// for day in client.clock().calendar(start, end)? {
    ///     println!("{} {} to {}{}", day.date, day.open, day.close, if day.early_close { " (early)" } else { "" });
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn calendar(&self, start: Date, end: Date) -> Result<Vec<TradingDay>> {
        if end < start {
            return Err(core_http::Error::InvalidRequest(
                "the calendar's end is on or after its start".into(),
            ));
        }
        let days: Days = self
            .client
            .http()
            .get("/v1/calendar")
            .query("start", format_date(start))
            .query("end", format_date(end))
            .send_json()?;
        Ok(days.days)
    }
}

/// Reached from the client.
impl Client {
    /// The market's clock (open now? next open and close) and calendar.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// println!("open: {}", client.clock().get()?.is_open);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn clock(&self) -> ClockHandle<'_> {
        ClockHandle::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_and_write_as_iso() {
        let d = parse_date("2026-12-24");
        assert_eq!(d.map(format_date).as_deref(), Some("2026-12-24"));
        assert!(parse_date("2026-13-01").is_none());
        assert!(parse_date("24/12/2026").is_none());
    }
}
