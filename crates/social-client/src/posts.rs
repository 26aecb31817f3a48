//! Posts: create (now or scheduled, one post per platform), list a page, iterate all.

use core_http::{
    Error, Result,
    pagination::{OffsetPages, OffsetPaginator},
};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::accounts::AccountId;
use crate::client::Client;

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
/// assert_eq!(post.platforms.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct NewPost {
    /// The text; must not be empty.
    pub content: String,
    /// Where to post; at least one. The service creates one post per platform.
    pub platforms: Vec<Platform>,
    /// When to publish (sent in UTC with a `Z`); `None` publishes now.
    #[serde(
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub scheduled_at: Option<OffsetDateTime>,
}

impl NewPost {
    /// A post to publish now on `platforms`.
    ///
    /// ```
    /// use social_client::posts::{NewPost, Platform};
    /// let post = NewPost::new("Hello", [Platform::X]);
    /// assert!(post.scheduled_at.is_none());
    /// ```
    #[inline]
    pub fn new(content: impl Into<String>, platforms: impl IntoIterator<Item = Platform>) -> Self {
        NewPost {
            content: content.into(),
            platforms: platforms.into_iter().collect(),
            scheduled_at: None,
        }
    }

    /// Publishes at `at` instead of now (the service refuses a time in the past).
    ///
    /// ```
    /// use social_client::posts::{NewPost, Platform};
    /// use social_client::time::{Duration, OffsetDateTime};
    /// let tomorrow = OffsetDateTime::now_utc() + Duration::days(1);
    /// let post = NewPost::new("Tomorrow", [Platform::X]).scheduled_at(tomorrow);
    /// assert_eq!(post.scheduled_at, Some(tomorrow));
    /// ```
    #[inline]
    pub fn scheduled_at(mut self, at: OffsetDateTime) -> Self {
        self.scheduled_at = Some(at);
        self
    }

    #[inline]
    fn validate(&self) -> Result<()> {
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

/// The posts resource: `client.posts()`.
#[derive(Debug, Clone, Copy)]
pub struct Posts<'a> {
    client: &'a Client,
}

impl<'a> Posts<'a> {
    #[inline]
    pub(crate) fn new(client: &'a Client) -> Self {
        Posts { client }
    }

    /// Creates a post (now, or scheduled with [`NewPost::scheduled_at`]) and returns one
    /// post per platform. `POST /v1/posts`.
    ///
    /// Not retried once the request may have reached the server (the service documents
    /// no idempotency key), so a dropped connection never posts twice: the error's
    /// [`may_have_been_processed`](core_http::Error::may_have_been_processed) says
    /// whether to check the list before trying again.
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// use social_client::posts::{NewPost, Platform};
    /// let posts = client.posts().create(&NewPost::new("Launch day!", [Platform::X, Platform::LinkedIn]))?;
    /// for post in &posts {
    ///     println!("{} on {:?}: {}", post.id, post.platform, post.status);
    /// }
    /// # Ok::<(), social_client::Error>(())
    /// ```
    #[inline]
    pub fn create(&self, post: &NewPost) -> Result<Vec<Post>> {
        post.validate()?;
        self.client
            .http()
            .post("/v1/posts")
            .json(post)
            .send()?
            .json_list()
    }

    /// Waits until the post is published, reading your posts again and again
    /// (`GET /v1/posts`, page by page until it is found: the service has no call for one
    /// post) within `wait` (a `Duration`, or a [`Wait`](core_http::wait::Wait) for the
    /// pace): the published post. A post that failed (the platform refused it, its
    /// account was disconnected) ends the wait at once with
    /// [`WaitError::Ended`](core_http::wait::WaitError::Ended), holding it; the deadline
    /// passing first is [`WaitError::TimedOut`](core_http::wait::WaitError::TimedOut)
    /// with the last reading (a post still scheduled). A post not listed yet is waited
    /// for like one not published yet.
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// use std::time::Duration;
    /// let post = client.posts().wait_until_published("post_123", Duration::from_secs(600))?;
    /// println!("{} is {}", post.id, post.status);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn wait_until_published(
        &self,
        id: impl Into<PostId>,
        wait: impl Into<core_http::wait::Wait>,
    ) -> std::result::Result<Post, core_http::wait::WaitError<Post>> {
        use core_http::wait::{Seen, WaitError};
        let id = id.into();
        let found = self.client.http().wait_for(
            format!("post {id} to be published"),
            &wait.into(),
            |http| find_post(http, &id),
            |post: &Option<Post>| match post {
                None => Seen::pending("not listed yet"),
                Some(post) => match &post.status {
                    PostStatus::Published => Seen::reached(&post.status),
                    PostStatus::Failed => Seen::ended(&post.status),
                    other => Seen::pending(other),
                },
            },
        );
        match found {
            Ok(Some(post)) => Ok(post),
            Ok(None) => Err(WaitError::Call(Error::InvalidRequest(format!(
                "post {id} was never listed"
            )))),
            Err(e) => Err(e.flatten()),
        }
    }

    /// One page of posts, oldest first. `GET /v1/posts?limit&offset`.
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// use social_client::posts::ListPosts;
    /// let page = client.posts().list(&ListPosts::new().limit(50).offset(100))?;
    /// println!("{} posts here, {:?} in all", page.data.len(), page.meta.map(|m| m.total));
    /// # Ok::<(), social_client::Error>(())
    /// ```
    #[inline]
    pub fn list(&self, params: &ListPosts) -> Result<core_http::pagination::Page<Post>> {
        self.client
            .http()
            .get("/v1/posts")
            .page(params, MAX_PAGE_SIZE)
            .send_page()
    }

    /// Every post, fetched lazily 100 at a time. Stops at `meta.total`, an empty or
    /// short page, or the first error (yielded as the last item).
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// for post in client.posts().iter() {
    ///     println!("{}", post?.id);
    /// }
    /// # Ok::<(), social_client::Error>(())
    /// ```
    #[inline]
    pub fn iter(&self) -> OffsetPaginator<Post> {
        self.iter_from(&ListPosts::new())
    }

    /// Every post from `params.offset` (default 0), fetched lazily `params.limit` (default
    /// 100) at a time; `next_offset()` tells where to start again later.
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// let mut items = client.posts().iter_from(&social_client::posts::ListPosts::new().offset(200).limit(50));
    /// for item in items.by_ref().take(10) {
    ///     println!("{:?}", item?);
    /// }
    /// println!("go on from offset {}", items.next_offset());
    /// # Ok::<(), social_client::Error>(())
    /// ```
    #[inline]
    pub fn iter_from(&self, params: &ListPosts) -> OffsetPaginator<Post> {
        let client = self.client.clone();
        let size = params.limit.unwrap_or(MAX_PAGE_SIZE);
        OffsetPaginator::boxed(params.offset.unwrap_or(0), size, move |offset, limit| {
            client
                .posts()
                .list(&ListPosts::new().limit(limit).offset(offset))
        })
    }

    /// Page by page from `params` (offset default 0, limit default 100), with each
    /// page's `meta`; the same stopping rules as [`iter`](Self::iter).
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// for page in client.posts().pages(&social_client::posts::ListPosts::new().limit(50)) {
    ///     let page = page?;
    ///     println!("{} items (of {:?})", page.data.len(), page.meta.map(|m| m.total));
    /// }
    /// # Ok::<(), social_client::Error>(())
    /// ```
    #[inline]
    pub fn pages(&self, params: &ListPosts) -> OffsetPages<Post> {
        let client = self.client.clone();
        let size = params.limit.unwrap_or(MAX_PAGE_SIZE);
        OffsetPages::boxed(params.offset.unwrap_or(0), size, move |offset, limit| {
            client
                .posts()
                .list(&ListPosts::new().limit(limit).offset(offset))
        })
    }
}

/// The post `id` among the user's posts, read page by page under the list's own rules (a
/// page the service sends again ends it as [`Error::ListCutShort`], so a list that
/// ignores `offset` is not read for ever); `None`: not listed. All the pages fit in
/// `http`'s timeout together (a wait's reading is cut to the time left).
#[inline]
fn find_post(http: &core_http::HttpClient, id: &PostId) -> Result<Option<Post>> {
    let budget = http.timeout();
    let started = std::time::Instant::now();
    let pages = OffsetPages::starting_at(0, MAX_PAGE_SIZE, |offset, limit| {
        let left = budget.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(Error::Timeout {
                elapsed: started.elapsed(),
                delivery: core_http::Delivery::NotSent,
            });
        }
        http.with_options(&core_http::config::RequestOptions::new().timeout(left))
            .get("/v1/posts")
            .page(&ListPosts::new().limit(limit).offset(offset), MAX_PAGE_SIZE)
            .send_page()
    });
    for page in pages {
        if let Some(post) = page?.data.into_iter().find(|p: &Post| &p.id == id) {
            return Ok(Some(post));
        }
    }
    Ok(None)
}
