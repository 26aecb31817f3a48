//! Fault injection: the next N requests matching a method and path get a chosen status,
//! a delay, a dropped connection, or a damaged body.

use serde::{Deserialize, Serialize};

/// What happens to the response of a request that matches a fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultAction {
    /// The request is handled (so its effects happen), then the connection is closed
    /// without any response: the client cannot know whether the server acted.
    Drop,
    /// The request is handled, and the answer's body is replaced by invalid JSON.
    Malformed,
    /// The request is handled, and the connection closes half-way through the body
    /// (the `Content-Length` promises more than arrives).
    Truncated,
    /// The request is handled, and the answer goes out as it is but labelled
    /// `Content-Encoding: gzip`: a gateway that lies about the encoding.
    WrongEncoding,
}

/// A fault to inject, as accepted by `POST /_sandbox/faults`.
///
/// `path` is the path the sandbox sees, service prefix included (`/social/v1/posts`); a
/// trailing `*` matches any path with that prefix. With `status`, the request is not
/// handled at all: the sandbox answers that status (and `Retry-After` when given).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fault {
    /// The HTTP method to match (any when absent).
    #[serde(default)]
    pub method: Option<String>,
    /// The path to match.
    pub path: String,
    /// How many matching requests get the fault. Defaults to 1.
    #[serde(default = "one")]
    pub count: u32,
    /// Answer this status instead of handling the request.
    #[serde(default)]
    pub status: Option<u16>,
    /// With `status`: the `Retry-After` header, in seconds.
    #[serde(default)]
    pub retry_after: Option<u64>,
    /// Wait this long before doing anything else.
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// Damage the answer after handling the request.
    #[serde(default)]
    pub action: Option<FaultAction>,
}

fn one() -> u32 {
    1
}

impl Fault {
    /// A fault on the next request with this method and path (change the count with
    /// [`Fault::times`]); add what it does with the other methods.
    pub fn on(method: &str, path: &str) -> Fault {
        Fault {
            method: Some(method.to_ascii_uppercase()),
            path: path.to_owned(),
            count: 1,
            status: None,
            retry_after: None,
            delay_ms: None,
            action: None,
        }
    }

    /// Applies to the next `count` matching requests.
    pub fn times(mut self, count: u32) -> Fault {
        self.count = count;
        self
    }

    /// Answers `status` without handling the request.
    pub fn status(mut self, status: u16) -> Fault {
        self.status = Some(status);
        self
    }

    /// With [`Fault::status`], sends `Retry-After: seconds`.
    pub fn retry_after(mut self, seconds: u64) -> Fault {
        self.retry_after = Some(seconds);
        self
    }

    /// Waits before answering.
    pub fn delay_ms(mut self, millis: u64) -> Fault {
        self.delay_ms = Some(millis);
        self
    }

    /// Handles the request, then closes the connection without an answer.
    pub fn drop_connection(mut self) -> Fault {
        self.action = Some(FaultAction::Drop);
        self
    }

    /// Handles the request, then answers invalid JSON.
    pub fn malformed_body(mut self) -> Fault {
        self.action = Some(FaultAction::Malformed);
        self
    }

    /// Handles the request, then cuts the answer's body short.
    pub fn truncated_body(mut self) -> Fault {
        self.action = Some(FaultAction::Truncated);
        self
    }

    /// Handles the request, then labels its plain answer `Content-Encoding: gzip`.
    pub fn wrong_encoding(mut self) -> Fault {
        self.action = Some(FaultAction::WrongEncoding);
        self
    }

    pub(crate) fn matches(&self, method: &str, path: &str) -> bool {
        let method_ok = self
            .method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case(method));
        let path_ok = match self.path.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => self.path == path,
        };
        method_ok && path_ok
    }
}

/// The injected faults still waiting for their requests.
#[derive(Debug, Default, Clone)]
pub(crate) struct Faults {
    pending: Vec<Fault>,
}

impl Faults {
    pub(crate) fn add(&mut self, fault: Fault) {
        if fault.count > 0 {
            self.pending.push(fault);
        }
    }

    pub(crate) fn clear(&mut self) {
        self.pending.clear();
    }

    /// The first pending fault for this request, used up by one.
    pub(crate) fn take(&mut self, method: &str, path: &str) -> Option<Fault> {
        let index = self.pending.iter().position(|f| f.matches(method, path))?;
        let fault = &mut self.pending[index];
        fault.count -= 1;
        let taken = fault.clone();
        if fault.count == 0 {
            self.pending.remove(index);
        }
        Some(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_are_used_up_in_order() {
        let mut faults = Faults::default();
        faults.add(Fault::on("post", "/social/v1/posts").status(503).times(2));
        faults.add(Fault::on("GET", "/social/*").delay_ms(5));
        assert!(faults.take("GET", "/social/v1/other").is_some());
        assert!(faults.take("GET", "/social/v1/other").is_none());
        assert_eq!(
            faults
                .take("POST", "/social/v1/posts")
                .and_then(|f| f.status),
            Some(503)
        );
        assert!(faults.take("POST", "/social/v1/posts").is_some());
        assert!(faults.take("POST", "/social/v1/posts").is_none());
    }
}
