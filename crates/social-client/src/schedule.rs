//! The publication schedule: posts waiting for their time.

use core_http::Result;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::client::Client;
use crate::posts::PostId;

core_http::string_id! {
    /// The id of a schedule entry.
    pub struct ScheduleId in schedule;
}

/// A post waiting to be published.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScheduleEntry {
    /// The entry's id.
    pub id: ScheduleId,
    /// The post it publishes.
    pub post_id: PostId,
    /// When it publishes.
    #[serde(with = "core_http::timestamp")]
    pub scheduled_at: OffsetDateTime,
    /// The IANA time zone the post was scheduled in (e.g. `Europe/Paris`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
}

/// The schedule resource: `client.schedule()`.
#[derive(Debug, Clone, Copy)]
pub struct Schedule<'a> {
    client: &'a Client,
}

impl<'a> Schedule<'a> {
    #[inline]
    pub(crate) fn new(client: &'a Client) -> Self {
        Schedule { client }
    }

    /// The scheduled posts, soonest first. `GET /v1/schedule`.
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// for entry in client.schedule().list()? {
    ///     println!("{} at {}", entry.post_id, entry.scheduled_at);
    /// }
    /// # Ok::<(), social_client::Error>(())
    /// ```
    #[inline]
    pub fn list(&self) -> Result<Vec<ScheduleEntry>> {
        self.client.http().get("/v1/schedule").send()?.json_list()
    }
}
