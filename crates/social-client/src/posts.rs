//! Posts: create (now or scheduled, one post per platform), list a page, iterate all.

use crate::client::Client;
use core_http::{
    Error, Result,
    pagination::{OffsetPages, OffsetPaginator},
};

pub use crate::models::{ListPosts, MAX_PAGE_SIZE, NewPost, Platform, Post, PostId, PostStatus};

/// The posts resource: `client.posts()`.
#[derive(Debug, Clone, Copy)]
pub struct Posts<'a> {
    client: &'a Client,
}

impl<'a> Posts<'a> {
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
    pub fn iter_from(&self, params: &ListPosts) -> OffsetPaginator<Post> {
        let client = self.client.clone();
        OffsetPaginator::over(self.client.http(), params, MAX_PAGE_SIZE, move |p| {
            client.posts().list(p)
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
    pub fn pages(&self, params: &ListPosts) -> OffsetPages<Post> {
        let client = self.client.clone();
        OffsetPages::over(self.client.http(), params, MAX_PAGE_SIZE, move |p| {
            client.posts().list(p)
        })
    }
}

/// The post `id` among the user's posts, read page by page under the list's own rules (a
/// page the service sends again ends it as [`Error::ListCutShort`], so a list that
/// ignores `offset` is not read for ever); `None`: not listed. All the pages fit in
/// `http`'s timeout together (a wait's reading is cut to the time left).
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

/// Reached from the client.
impl Client {
    /// Posts: create, list, iterate.
    ///
    /// ```
    /// let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// let posts = client.posts();
    /// # let _ = posts;
    /// # Ok::<(), social_client::Error>(())
    /// ```
    pub fn posts(&self) -> Posts<'_> {
        Posts::new(self)
    }
}
