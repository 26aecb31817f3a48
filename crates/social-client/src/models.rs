//! The service's models: what its answers hold and what its calls take, apart from
//! the handlers that make the calls (each resource module re-exports its own).

use core_http::{Error, Result};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

// ---- posts ----

core_http::string_id! {
    /// The id of a post.
    pub struct PostId in posts;
}

core_http::string_enum! {
    /// A social network a post can go to. Unknown identifiers are kept as sent, so a
    /// platform added by the service still works.
    pub enum Platform in posts {
        /// X (formerly Twitter; `twitter` is read as this too).
        X = "x" | "twitter",
        /// LinkedIn.
        LinkedIn = "linkedin",
        /// Facebook.
        Facebook = "facebook",
        /// Instagram.
        Instagram = "instagram",
        /// Threads.
        Threads = "threads",
        /// Bluesky.
        Bluesky = "bluesky",
        /// Mastodon.
        Mastodon = "mastodon",
    }
}

core_http::string_enum! {
    /// Where a post stands.
    pub enum PostStatus in posts {
        /// Saved, not scheduled.
        Draft = "draft",
        /// Waiting for its `scheduled_at`.
        Scheduled = "scheduled",
        /// Being sent to the platform.
        Publishing = "publishing",
        /// Live on the platform.
        Published = "published",
        /// The platform refused it, or its account was disconnected.
        Failed = "failed",
    }
}

/// A post on one platform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Post {
    /// Its id.
    pub id: PostId,
    /// The text.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub content: String,
    /// The platform (the document gives it on listed posts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// Where it stands (an empty `Unknown` when the server gave none).
    #[serde(default)]
    pub status: PostStatus,
    /// When it was created.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_at: Option<OffsetDateTime>,
    /// When it is (or was) scheduled to go out.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub scheduled_at: Option<OffsetDateTime>,
    /// When it went live.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub published_at: Option<OffsetDateTime>,
    /// The account it was posted with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<AccountId>,
}

/// A post to create: its text, the platforms, and optionally when to publish.
///
/// ```
/// use social_client::posts::{NewPost, Platform};
/// let post = NewPost::new("Hello", [Platform::X, Platform::LinkedIn]);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct NewPost {
    /// The text; must not be empty.
    pub(crate) content: String,
    /// Where to post; at least one. The service creates one post per platform.
    pub(crate) platforms: Vec<Platform>,
    /// When to publish (sent in UTC with a `Z`); `None` publishes now.
    #[serde(
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) scheduled_at: Option<OffsetDateTime>,
}

impl NewPost {
    /// A post to publish now on `platforms`.
    pub fn new(content: impl Into<String>, platforms: impl IntoIterator<Item = Platform>) -> Self {
        NewPost {
            content: content.into(),
            platforms: platforms.into_iter().collect(),
            scheduled_at: None,
        }
    }

    /// Publishes at `at` instead of now (the service refuses a time in the past).
    pub fn scheduled_at(mut self, at: OffsetDateTime) -> Self {
        self.scheduled_at = Some(at);
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if self.content.trim().is_empty() {
            return Err(Error::InvalidRequest(
                "a post needs non-empty content".into(),
            ));
        }
        if self.platforms.is_empty() {
            return Err(Error::InvalidRequest(
                "a post needs at least one platform".into(),
            ));
        }
        if self.platforms.iter().any(|p| p.as_str().trim().is_empty()) {
            return Err(Error::InvalidRequest(
                "a platform identifier is empty".into(),
            ));
        }
        Ok(())
    }
}

/// Which page of posts to list (`limit` 1 to 100, the service's default 20; `offset`):
/// `ListPosts::new().limit(50).offset(100)`.
pub type ListPosts = core_http::pagination::PageParams;

/// The largest page the service serves.
pub const MAX_PAGE_SIZE: u32 = 100;

// ---- accounts ----

core_http::string_id! {
    /// The id of a connected account.
    pub struct AccountId in accounts;
}

core_http::string_enum! {
    /// Whether an account is linked.
    pub enum AccountStatus in accounts {
        /// Linked and usable.
        Connected = "connected",
        /// Unlinked.
        Disconnected = "disconnected",
    }
}

/// A connected social media account. The document shows only its id; the other fields
/// are what the service is expected to send, and anything else is kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Account {
    /// Its id.
    pub id: AccountId,
    /// The platform it is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// The handle on the platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The name shown on the platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Whether it is linked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<AccountStatus>,
    /// When it was linked.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub connected_at: Option<OffsetDateTime>,
    /// Every other field, as received.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

// ---- analytics ----

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

// ---- schedule ----

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
