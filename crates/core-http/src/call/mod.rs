//! One logical call: the request fixed once (`plan.rs`), then attempts until one
//! succeeds or the retry policy says stop, each reported once to the observer. Every
//! wait reads the client's clock, so a test can drive a whole call, waits included, on
//! fake time. The auth header of each attempt (and the token it may fetch) is
//! `token.rs`'s.

mod plan;
mod token;

use serde::de::DeserializeOwned;

use crate::attempt::{self, Answer};
use crate::builder::RequestBuilder;
use crate::error::{Error, Result};
use crate::response::{Response, StreamingResponse};
use crate::time::Deadline;
use crate::wire::Mode;
use plan::{Next, Plan, Tries};

/// Who a call is for: the user (the client's options, headers and rate limit), or the
/// client itself fetching an OAuth token within the user's call that needed it (only its
/// own options, no client headers, no rate-limit wait, no redirect to another origin).
#[derive(Debug, Clone, Copy)]
pub(super) enum Purpose {
    User,
    Token { within: Deadline },
}

impl<'a> RequestBuilder<'a> {
    /// Sends the request, retrying as the policy allows, and returns the success response
    /// with its body read (up to the client's cap). Error statuses become [`Error::Api`].
    pub fn send(self) -> Result<Response> {
        crate::call::send_buffered(self)
    }

    /// Sends a request that removes something (a `DELETE`), ignoring the answer's body.
    ///
    /// One rule for every delete: a `404` that answers a *repeat* of the request, after
    /// an earlier attempt may have reached the server and been acted on (its answer was
    /// lost: a timeout, a reset, a 5xx), is success. The thing is gone, which is what
    /// was asked, and the earlier attempt most likely removed it. A `404` to the first
    /// attempt stays [`ErrorKind::NotFound`](crate::ErrorKind::NotFound): there was
    /// nothing to delete.
    ///
    /// ```no_run
    /// # let client = core_http::HttpClient::builder().base_url("https://api.example.com").build()?;
    /// client.delete("/v1/projects/proj_1").send_delete()?;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn send_delete(self) -> Result<()> {
        match self.send() {
            Ok(_) => Ok(()),
            Err(Error::Api(api)) if api.status == 404 && api.after_possible_delivery => {
                log::debug!(
                    "a repeated delete answered 404 after an earlier attempt may have done it: \
                     taken as done"
                );
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Sends the request and decodes the JSON body of the success response.
    pub fn send_json<T: DeserializeOwned>(self) -> Result<T> {
        self.send()?.json()
    }

    /// Sends the request and decodes a page of an offset/limit list
    /// ([`Response::json_page`](crate::transport::Response::json_page)).
    pub fn send_page<T: DeserializeOwned>(self) -> Result<crate::pagination::Page<T>> {
        self.send()?.json_page()
    }

    /// Sends the request and returns the success response with its body unread, for
    /// downloads. The timeout bounds the wait for the answer and each read of the body,
    /// not the whole transfer.
    pub fn send_streaming(self) -> Result<StreamingResponse> {
        crate::call::send_streaming(self)
    }
}

/// A user's call whose answer is read into memory.
pub(crate) fn send_buffered(rb: RequestBuilder<'_>) -> Result<Response> {
    buffered(execute(rb, Mode::Buffered, Purpose::User)?)
}

/// A token request, within the deadline of the user's call that needed the token.
pub(crate) fn send_token_request(rb: RequestBuilder<'_>, within: Deadline) -> Result<Response> {
    buffered(execute(rb, Mode::Buffered, Purpose::Token { within })?)
}

fn buffered(answer: Answer) -> Result<Response> {
    match answer {
        Answer::Buffered(r) => Ok(r),
        Answer::Streaming(_) => Err(Error::config("internal: unexpected streaming answer")),
    }
}

/// A user's call whose answer is handed over as a stream.
pub(crate) fn send_streaming(rb: RequestBuilder<'_>) -> Result<StreamingResponse> {
    match execute(rb, Mode::Streaming, Purpose::User)? {
        Answer::Streaming(r) => Ok(r),
        Answer::Buffered(_) => Err(Error::config("internal: unexpected buffered answer")),
    }
}

/// Runs a call: its attempts, as the plan's retry rules allow.
fn execute(rb: RequestBuilder<'_>, mode: Mode, purpose: Purpose) -> Result<Answer> {
    let mut plan = Plan::new(rb, mode, purpose)?;
    // A span per call (`tracing` feature), around every attempt and wait.
    #[cfg(feature = "tracing")]
    let _span = crate::observe::call_span(
        plan.call.method.as_str(),
        crate::observe::path_of(&plan.call.url),
    );
    let mut tries = Tries::default();
    let error = loop {
        // A page fetched ahead for a list dropped meanwhile (during a rate-limit wait,
        // a Retry-After, a backoff) is not asked for; no one reads this error.
        if crate::pagination::abandoned() {
            break Error::config("internal: the list this page was fetched for was dropped");
        }
        let auth = match plan.auth(&mut tries) {
            Ok(auth) => auth,
            Err(error) => break error,
        };
        let started = plan.now();
        match attempt::run(&plan.call, auth.as_ref(), tries.retries) {
            Ok(answer) => {
                plan.answered(&tries, started, &answer);
                return Ok(answer);
            }
            Err(failure) => match plan.failed(&mut tries, failure, auth.as_ref(), started) {
                Next::Again => {}
                Next::Stop(error) => break error,
            },
        }
    };
    Err(plan.stopped(&tries, error))
}
