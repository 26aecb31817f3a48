//! What a request carries besides its method and path: [`RequestOptions`], the
//! overrides users can apply to any call, and the body, kept or reopened for each
//! attempt. (The builder is `builder.rs`.)

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

/// Per-call overrides. Apply them to one call through a service client's
/// `with_options(...)`, which returns a cheap copy of the client that uses them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestOptions {
    /// The whole-call timeout (all attempts and waits), instead of the client's.
    pub(crate) timeout: Option<Duration>,
    /// The connect timeout, instead of the client's.
    pub(crate) connect_timeout: Option<Duration>,
    /// The number of retries, instead of the client's.
    pub(crate) max_retries: Option<u32>,
    /// The `Idempotency-Key` to send on a POST (the same on every attempt). It makes a
    /// POST safe to retry only on a service that de-duplicates by it (see
    /// [`RequestOptions::idempotency_key`]).
    pub(crate) idempotency_key: Option<String>,
    /// Extra headers for the call.
    pub(crate) headers: Vec<(String, String)>,
}

impl RequestOptions {
    /// No overrides.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the whole-call timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the connect timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Sets the number of retries.
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = Some(retries);
        self
    }

    /// Sets the `Idempotency-Key` sent with a POST (the same key on every attempt).
    ///
    /// The key is always sent, but it changes what is retried only on a service that
    /// promises to de-duplicate requests by it (e-signature sends; the builder's
    /// `idempotency_keys(true)` for a server you know honours keys). Elsewhere a POST
    /// that may have reached the server is still never repeated, key or not: a key the
    /// server ignores would not stop a second post.
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// These options with `other`'s set values taking precedence.
    pub(crate) fn merged(&self, other: &RequestOptions) -> RequestOptions {
        let mut headers = self.headers.clone();
        headers.extend(other.headers.iter().cloned());
        RequestOptions {
            timeout: other.timeout.or(self.timeout),
            connect_timeout: other.connect_timeout.or(self.connect_timeout),
            max_retries: other.max_retries.or(self.max_retries),
            idempotency_key: other
                .idempotency_key
                .clone()
                .or_else(|| self.idempotency_key.clone()),
            headers,
        }
    }
}

/// A request body: bytes kept so that every attempt sends the same thing, or a stream
/// opened afresh for each attempt.
#[derive(Clone)]
pub(crate) struct Body {
    pub(crate) content_type: String,
    pub(crate) content: Content,
    /// The body carries credentials (a token request's client secret): it is never sent
    /// to another origin, whatever a redirect says.
    pub(crate) credentials: bool,
}

/// What a body holds.
#[derive(Clone)]
pub(crate) enum Content {
    Bytes(Vec<u8>),
    Stream { open: Arc<OpenBody>, length: u64 },
}

/// Opens a streamed body; called once per attempt.
pub type OpenBody = dyn Fn() -> std::io::Result<Box<dyn Read + Send>> + Send + Sync;

impl Body {
    pub(crate) fn len(&self) -> u64 {
        match &self.content {
            Content::Bytes(bytes) => bytes.len() as u64,
            Content::Stream { length, .. } => *length,
        }
    }

    pub(crate) fn bytes(content_type: &str, bytes: Vec<u8>) -> Body {
        Body {
            content_type: content_type.to_owned(),
            content: Content::Bytes(bytes),
            credentials: false,
        }
    }
}
