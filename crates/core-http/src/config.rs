//! Building and tuning a client: credentials, retries, the rate limit, per-call options,
//! the defaults, the clock and sleeper tests may replace, and the observer that sees
//! every attempt, and [`ClientBuilder`], which takes them all.

pub use crate::auth::{Auth, KeySource, OAuth2Config, Secret};
pub use crate::backoff::Backoff;
pub use crate::observe::{Attempt, BudgetEvent, Observer, StreamEvent};
pub use crate::rate_limit::{RateLimit, WhenUnavailable};
pub use crate::request::RequestOptions;
pub use crate::retry::{MAX_RETRY_AFTER, RetryPolicy};
pub use crate::setup::{
    ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_BODY_SIZE, DEFAULT_TIMEOUT,
};
pub use crate::time::{Clock, Sleeper, SystemClock, ThreadSleeper};
