//! What a call answered besides its model (status, headers, request id, rate limit), and
//! the builder and escape hatch for calls a crate does not model.

pub use crate::builder::{Raw, RequestBuilder};
pub use crate::client::HttpClient;
pub use crate::headers::{Headers, RateLimitInfo};
pub use crate::method::Method;
pub use crate::request::OpenBody;
pub use crate::response::{Response, StreamingResponse, WithResponse};
