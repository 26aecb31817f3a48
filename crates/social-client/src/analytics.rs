//! Engagement analytics.

use crate::client::Client;
use core_http::Result;

pub use crate::models::{AnalyticsOverview, Period};

/// The analytics resource: `client.analytics()`.
#[derive(Debug, Clone, Copy)]
pub struct Analytics<'a> {
    client: &'a Client,
}

impl<'a> Analytics<'a> {
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
    pub fn overview_for(&self, period: Period) -> Result<AnalyticsOverview> {
        self.fetch(Some(period))
    }

    fn fetch(&self, period: Option<Period>) -> Result<AnalyticsOverview> {
        self.client
            .http()
            .get("/v1/analytics/overview")
            .query_opt("period", period)
            .send()?
            .json_data()
    }
}

/// Reached from the client.
impl Client {
    /// Engagement analytics.
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// let stats = client.analytics().overview()?;
    /// println!("{:?} followers", stats.followers);
    /// # Ok::<(), social_client::Error>(())
    /// ```
    pub fn analytics(&self) -> Analytics<'_> {
        Analytics::new(self)
    }
}
