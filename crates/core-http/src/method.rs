//! The HTTP methods a call can use, and what each means for a retry.

use std::fmt;

/// An HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// GET
    Get,
    /// POST
    Post,
    /// PUT
    Put,
    /// PATCH
    Patch,
    /// DELETE
    Delete,
    /// HEAD
    Head,
}

impl Method {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Head => "HEAD",
        }
    }

    /// `true` for replay-safe methods, whose repetition has no further effect (GET,
    /// HEAD, PUT, DELETE).
    pub fn is_replay_safe(self) -> bool {
        matches!(
            self,
            Method::Get | Method::Head | Method::Put | Method::Delete
        )
    }

    /// `true` for methods that ask the server to change something (all but GET and HEAD).
    pub fn is_action(self) -> bool {
        !matches!(self, Method::Get | Method::Head)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
