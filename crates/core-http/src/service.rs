//! For crates built on core-http (the service clients): what a service crate tells
//! core-http about itself, and the small helpers every crate uses the same way. Users of
//! a client crate do not need any of it.

use crate::client::HttpClient;
pub use crate::pagination::check_page_size;
pub use crate::random::uuid_v4;
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
