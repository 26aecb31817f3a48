//! Engagement analytics.

use core_http::Result;
use serde::{Deserialize, Serialize};

use crate::client::Client;

core_http::string_enum! {
    /// A reporting window.
    pub enum Period in analytics {
        /// The last day.
        Day = "day",
        /// The last 7 days.
        Week = "week",
        /// The last 30 days.
        Month = "month",
        /// The last 365 days.
        Year = "year",
    }
}

/// Engagement figures over a reporting window. Each figure is an `Option`: `None` when the
/// answer does not carry it, never a zero in its place; a figure that is out of its type's
/// range (a negative or 2^70 follower count) or not a number is a decode error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AnalyticsOverview {
    /// Followers across the connected accounts; `None` when the answer does not carry it.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub followers: Option<u64>,
    /// Clicks divided by impressions (0.0 to 1.0); `None` when the answer does not carry it.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_f64",
        skip_serializing_if = "Option::is_none"
    )]
    pub engagement_rate: Option<f64>,
    /// Times the posts were shown; `None` when the answer does not carry it.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub impressions: Option<u64>,
    /// Clicks on the posts; `None` when the answer does not carry it.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub clicks: Option<u64>,
    /// The window the figures cover (empty `Unknown` when the server gave none).
    #[serde(default)]
    pub period: Period,
}

/// The analytics resource: `client.analytics()`.
#[derive(Debug, Clone, Copy)]
pub struct Analytics<'a> {
    client: &'a Client,
}

impl<'a> Analytics<'a> {
    #[inline]
    pub(crate) fn new(client: &'a Client) -> Self {
        Analytics { client }
    }

    /// The overview over the service's default window. `GET /v1/analytics/overview`.
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// let stats = client.analytics().overview()?;
    /// println!("{:?} followers, {:?} impressions", stats.followers, stats.impressions);
    /// # Ok::<(), social_client::Error>(())
    /// ```
    #[inline]
    pub fn overview(&self) -> Result<AnalyticsOverview> {
        self.fetch(None)
    }

    /// The overview over `period`. `GET /v1/analytics/overview?period=...`.
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// use social_client::analytics::Period;
    /// let week = client.analytics().overview_for(Period::Week)?;
    /// println!("{:?} impressions this week", week.impressions);
    /// # Ok::<(), social_client::Error>(())
    /// ```
    #[inline]
    pub fn overview_for(&self, period: Period) -> Result<AnalyticsOverview> {
        self.fetch(Some(period))
    }

    #[inline]
    fn fetch(&self, period: Option<Period>) -> Result<AnalyticsOverview> {
        self.client
            .http()
            .get("/v1/analytics/overview")
            .query_opt("period", period)
            .send()?
            .json_data()
    }
}
