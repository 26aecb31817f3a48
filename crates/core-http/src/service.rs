//! For crates built on core-http (the service clients): what a service crate tells
//! core-http about itself, and the small helpers every crate uses the same way. Users of
//! a client crate do not need any of it.

use crate::client::HttpClient;
pub use crate::error::{Failure, rounded};
pub use crate::pagination::check_page_size;
pub use crate::random::uuid_v4;
pub use crate::rate_limit::shared::{
    BudgetStore, LONGEST_HOLD, LONGEST_QUEUE, Opening, Scope, SharedBudget, Take, Turn, Unavailable,
};
pub use crate::url::{check_absolute_http, path_segment};

/// What a service crate tells core-http about itself, so that one builder serves every
/// service: `core_http::HttpClient::builder()` is a `ClientBuilder<core_http::HttpClient>`.
pub trait ServiceClient: Sized {
    /// The crate name, for the `User-Agent` header.
    const NAME: &'static str;
    /// The crate version, for the `User-Agent` header.
    const VERSION: &'static str;
    /// The environment variable prefix (`SOCIAL` reads `SOCIAL_API_KEY`, ...).
    const ENV_PREFIX: &'static str;
    /// Whether the service de-duplicates POSTs by their `Idempotency-Key` (as documented,
    /// or as this workspace chose for it): only then does a key make a POST safe to
    /// retry after it may have reached the server. Defaults to `false`.
    const HONOURS_IDEMPOTENCY_KEYS: bool = false;
    /// Whether the service takes OAuth 2.0 client credentials, so that `from_env` reads
    /// `<PREFIX>_CLIENT_ID`, `<PREFIX>_CLIENT_SECRET`, `<PREFIX>_TOKEN_URL` and
    /// `<PREFIX>_SCOPE` when no API key is set. Defaults to `false`.
    const OAUTH: bool = false;
    /// Wraps a configured transport into the service client.
    fn from_http_client(http: HttpClient) -> Self;
}

/// Checks that an answer is about what was asked for: `answered` (the id or symbol the
/// answer carries) is `asked`, exactly (compare symbols in one case). An answer that leaves it out
/// (`""`) cannot contradict the question. Otherwise an [`Error::UnexpectedBody`] naming
/// both: a server that answers for another resource is never read as this one's answer.
///
/// ```
/// use core_http::service::check_answered;
/// assert!(check_answered("order", "ord_1", "ord_1").is_ok());
/// assert!(check_answered("order", "ord_1", "").is_ok());
/// let err = check_answered("order", "ord_1", "ord_9").unwrap_err();
/// assert!(err.to_string().contains("asked for order ord_1, the service answered ord_9"));
/// ```
///
/// [`Error::UnexpectedBody`]: crate::Error::UnexpectedBody
pub fn check_answered(what: &str, asked: &str, answered: &str) -> crate::Result<()> {
    if answered.is_empty() || answered == asked {
        return Ok(());
    }
    Err(crate::Error::UnexpectedBody {
        status: 200,
        message: format!(
            "asked for {what} {asked}, the service answered {answered}: this answer is \
             about another {what}"
        ),
    })
}
