//! A blocking client for the social publishing service: create and schedule posts on
//! several platforms, list them, read engagement analytics, manage connected accounts,
//! and verify webhook events.
//!
//! ```no_run
//! use social_client::{Client, NewPost, Platform};
//!
//! let client = Client::new("https://api.example.com", "sk_live_...")?;
//! let posts = client.posts().create(&NewPost::new("Hello!", [Platform::X, Platform::LinkedIn]))?;
//! for post in client.posts().iter() {
//!     let post = post?;
//!     println!("{} {:?} {}", post.id, post.platform, post.status);
//! }
//! let stats = client.analytics().overview()?;
//! println!("{} impressions, {:.1}% engagement", stats.impressions, stats.engagement_rate * 100.0);
//! # Ok::<(), social_client::Error>(())
//! ```
//!
//! Try it without an account: the workspace's `sandbox` crate emulates the service
//! (`cargo run -p social-client --example social_quickstart`).
//!
//! # Behaviour
//! - **Retries**: reads are retried on connection failures, 408, 429 (after
//!   `Retry-After`) and 5xx, twice by default. Creating a post is retried only when the
//!   server cannot have acted on it (no connection made, 429, 503): the service documents
//!   no idempotency key, so a post is never created twice by a retry.
//! - **Rate limits**: [`Plan`] sets the client-side limiter to the plan's documented
//!   limit (`.rate_limit(Plan::Starter)`, or `SOCIAL_PLAN=starter`).
//! - **Timeouts**: 10 s to connect, 60 s for a whole call, retries included.
//! - **Errors**: [`Error`] carries the status, the server's code and message and the
//!   request id; [`Error::kind`] sorts them (`NotFound`, `RateLimited`, ...).
//! - **Tolerance**: unknown fields are ignored; unknown platforms, statuses and periods
//!   are kept in `Unknown(String)`; lists are accepted wrapped in `{"data"}` or bare, and
//!   the created posts as a list, a single post, or `{"data": post}`.
//! - **Secrets**: the API key is never printed (`Debug` shows `***`), logged or put in a
//!   URL.
//!
//! The wire format and every choice made where the service's document is silent are in
//! the workspace's `docs/social.md`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod accounts;
mod analytics;
mod client;
mod posts;
mod schedule;
#[cfg(feature = "webhooks")]
pub mod webhooks;

pub use accounts::{Account, AccountId, AccountStatus, Accounts};
pub use analytics::{Analytics, AnalyticsOverview, Period};
pub use client::{Client, Plan};
core_http::reexports!();
/// Feature `http`: the `http` crate, whose `HeaderMap` (axum, actix-web and hyper give
/// headers in one) [`webhooks::verify_and_parse`] takes as it is.
#[cfg(feature = "http")]
pub use core_http::http;
pub use posts::{
    ListPosts, MAX_PAGE_SIZE, NewPost, Platform, Post, PostId, PostPage, PostStatus, Posts,
};
pub use schedule::{Schedule, ScheduleEntry, ScheduleId};
pub use time::OffsetDateTime;

/// The workspace README's examples, compiled as doc tests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
