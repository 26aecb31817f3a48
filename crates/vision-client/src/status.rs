//! The service's status and the account's usage.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::Month;

use crate::client::Client;

/// The status resource: `client.status()`.
#[derive(Debug, Clone, Copy)]
pub struct StatusHandle<'a> {
    client: &'a Client,
}

impl<'a> StatusHandle<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        StatusHandle { client }
    }

    /// The service's health and the account's usage. `GET /v2/status`.
    ///
    /// ```no_run
    /// # let client = vision_client::Client::new("https://api.example.com", "sk")?;
    /// let usage = client.status().get()?.usage;
    /// println!("{} of {} calls used, {} left", usage.calls_used, usage.calls_limit, usage.remaining());
    /// # Ok::<(), vision_client::Error>(())
    /// ```
    pub fn get(&self) -> core_http::Result<Status> {
        self.client.http().get("/v2/status").send()?.json_data()
    }
}

core_http::string_enum! {
    /// The service's health. The document gives `operational`; other values are kept.
    pub enum ServiceStatus in status {
        /// Working normally.
        Operational = "operational",
    }
}

/// `GET /v2/status`: health, latency and usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Status {
    /// The service's health (an empty `Unknown` when the server gave none).
    #[serde(default)]
    pub status: ServiceStatus,
    /// The service's current latency, in milliseconds.
    #[serde(
        default,
        deserialize_with = "core_http::de::lenient_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub latency_ms: Option<u64>,
    /// The account's usage in the current period.
    pub usage: Usage,
}

/// The account's usage against its quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Calls made in the period.
    #[serde(deserialize_with = "core_http::de::u64")]
    pub calls_used: u64,
    /// Calls allowed in the period.
    #[serde(deserialize_with = "core_http::de::u64")]
    pub calls_limit: u64,
    /// The period, a calendar month.
    pub period: UsagePeriod,
}

impl Usage {
    /// Calls left in the period (0 when used up or over).
    ///
    /// ```no_run
    /// # let client = vision_client::Client::new("https://api.example.com", "sk")?;
    /// let usage = client.status().get()?.usage;
    /// println!("{} of {} calls left in {}", usage.remaining(), usage.calls_limit, usage.period);
    /// # Ok::<(), vision_client::Error>(())
    /// ```
    pub fn remaining(&self) -> u64 {
        self.calls_limit.saturating_sub(self.calls_used)
    }
}

/// A usage period: a calendar month, written `YYYY-MM` on the wire.
///
/// ```
/// let period: vision_client::status::UsagePeriod = "2026-01".parse().unwrap();
/// assert_eq!(period.year(), 2026);
/// assert_eq!(period.month(), vision_client::time::Month::January);
/// assert_eq!(period.to_string(), "2026-01");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UsagePeriod {
    year: i32,
    month: Month,
}

impl UsagePeriod {
    /// The period of `month` in `year`.
    ///
    /// ```
    /// use vision_client::{time::Month, status::UsagePeriod};
    /// let period = UsagePeriod::new(2026, Month::March);
    /// assert_eq!(period.to_string(), "2026-03");
    /// ```
    pub fn new(year: i32, month: Month) -> Self {
        UsagePeriod { year, month }
    }

    /// The year.
    ///
    /// ```
    /// use vision_client::{time::Month, status::UsagePeriod};
    /// assert_eq!(UsagePeriod::new(2026, Month::March).year(), 2026);
    /// ```
    pub fn year(&self) -> i32 {
        self.year
    }

    /// The month.
    ///
    /// ```
    /// use vision_client::{time::Month, status::UsagePeriod};
    /// assert_eq!(UsagePeriod::new(2026, Month::March).month(), Month::March);
    /// ```
    pub fn month(&self) -> Month {
        self.month
    }
}

impl fmt::Display for UsagePeriod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.year, u8::from(self.month))
    }
}

impl FromStr for UsagePeriod {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("a usage period is YYYY-MM, got {s:?}");
        let (year, month) = s.trim().split_once('-').ok_or_else(bad)?;
        if year.len() != 4 || month.len() != 2 {
            return Err(bad());
        }
        let year: i32 = year.parse().map_err(|_| bad())?;
        let month: u8 = month.parse().map_err(|_| bad())?;
        let month = Month::try_from(month).map_err(|_| bad())?;
        Ok(UsagePeriod { year, month })
    }
}

impl Serialize for UsagePeriod {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for UsagePeriod {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        raw.parse().map_err(serde::de::Error::custom)
    }
}

/// Reached from the client.
impl Client {
    /// The service's health and the account's usage.
    ///
    /// ```no_run
    /// # let client = vision_client::Client::new("https://api.example.com", "sk")?;
    /// let usage = client.status().get()?.usage;
    /// println!("{} of {} calls used", usage.calls_used, usage.calls_limit);
    /// # Ok::<(), vision_client::Error>(())
    /// ```
    pub fn status(&self) -> StatusHandle<'_> {
        StatusHandle::new(self)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn periods_parse_strictly() {
        assert_eq!(
            "1999-12".parse::<UsagePeriod>().unwrap(),
            UsagePeriod::new(1999, Month::December)
        );
        for bad in ["2026-13", "2026-1", "26-01", "2026/01", "", "2026-00"] {
            assert!(bad.parse::<UsagePeriod>().is_err(), "{bad}");
        }
        let usage: Usage =
            serde_json::from_str(r#"{"calls_used": 12, "calls_limit": 10, "period": "2026-02"}"#)
                .unwrap();
        assert_eq!(usage.remaining(), 0);
    }
}
