//! The publication schedule: posts waiting for their time.

use crate::client::Client;
use core_http::Result;

pub use crate::models::{ScheduleEntry, ScheduleId};

/// The schedule resource: `client.schedule()`.
#[derive(Debug, Clone, Copy)]
pub struct Schedule<'a> {
    client: &'a Client,
}

impl<'a> Schedule<'a> {
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
    pub fn list(&self) -> Result<Vec<ScheduleEntry>> {
        self.client.http().get("/v1/schedule").send()?.json_list()
    }
}

/// Reached from the client.
impl Client {
    /// The publication schedule.
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// for entry in client.schedule().list()? {
    ///     println!("{} at {}", entry.post_id, entry.scheduled_at);
    /// }
    /// # Ok::<(), social_client::Error>(())
    /// ```
    pub fn schedule(&self) -> Schedule<'_> {
        Schedule::new(self)
    }
}
