//! Waiting until a resource reaches a state: a document signed, an order filled, a post
//! published. One loop for every crate, so a script's next line after "send" or "place"
//! is one call instead of a hand-written poll.
//!
//! [`HttpClient::wait_for`] reads the resource again and again within one deadline and
//! judges each reading ([`Seen`]): the state wanted ends the wait with it; a final state
//! that is not the one wanted ends it early with [`WaitError::Ended`] (holding what was
//! read); the deadline ends it with [`WaitError::TimedOut`] (holding the last reading).
//!
//! - **One deadline.** Each reading's own timeout is cut to the time left, and no pause
//!   runs past the deadline: a wait never ends later than its timeout (plus the time
//!   an answer already on its way takes to be read, bounded by the same cut).
//! - **Backoff.** Pauses grow from [`Wait::interval`]'s first to its longest, with a
//!   little jitter so that many scripts do not poll in step. A `Retry-After` the
//!   service sends with a 429 or 503 is honoured (a longer pause), and every reading
//!   goes through the client's rate limiter like any call.
//! - **Failures.** A reading that fails in a way time can mend (a timeout, a lost
//!   connection, a 5xx, a 429, after the call's own retries) is followed by another
//!   after the pause; any other failure (404, 401, an answer that cannot be read) ends
//!   the wait with [`WaitError::Call`].
//! - **Fake time.** Pauses go through the client's [`Sleeper`](crate::config::Sleeper)
//!   and the deadline reads its [`Clock`](crate::config::Clock), so tests run waits
//!   without real sleeps.

use std::fmt;
use std::time::Duration;

use crate::HttpClient;
use crate::backoff::Backoff;
use crate::error::Error;
use crate::kind::ErrorKind;
use crate::request::RequestOptions;

/// How long a wait may take and how often it looks.
///
/// ```
/// use std::time::Duration;
/// use core_http::wait::Wait;
///
/// let wait = Wait::up_to(Duration::from_secs(600))
///     .interval(Duration::from_secs(2), Duration::from_secs(30));
/// assert_eq!(wait.timeout, Duration::from_secs(600));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Wait {
    /// The whole wait, readings and pauses included.
    pub timeout: Duration,
    /// The pause after the first reading.
    pub first: Duration,
    /// The longest pause: pauses grow by half each time up to it.
    pub longest: Duration,
}

impl Wait {
    /// A wait of at most `timeout`, looking after 0.5 s at first, then less and less
    /// often, at most every 10 s.
    pub fn up_to(timeout: Duration) -> Self {
        Wait {
            timeout,
            first: Duration::from_millis(500),
            longest: Duration::from_secs(10),
        }
    }

    /// Sets the first pause and the longest one.
    pub fn interval(mut self, first: Duration, longest: Duration) -> Self {
        self.first = first;
        self.longest = longest.max(first);
        self
    }

    /// The pause after reading number `n` (0 for the first): `first` growing by half
    /// each time up to `longest`, with 10 % jitter.
    fn pause(&self, n: u32) -> Duration {
        let mut nominal = self.first;
        for _ in 0..n.min(64) {
            nominal = nominal.mul_f64(1.5);
            if nominal >= self.longest {
                break;
            }
        }
        let nominal = nominal.min(self.longest);
        Backoff::new(nominal, nominal, 0.1).delay(0, crate::random::unit_f64())
    }
}

/// A wait of at most this long, at the default pace ([`Wait::up_to`]).
impl From<Duration> for Wait {
    fn from(timeout: Duration) -> Self {
        Wait::up_to(timeout)
    }
}

/// What one reading of the resource shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Check {
    /// The state waited for: the wait ends with the resource.
    Reached,
    /// Not there yet: read again after a pause.
    Pending,
    /// A final state that is not the one waited for (declined, canceled): the wait ends
    /// early with [`WaitError::Ended`].
    Ended,
}

/// A judged reading: what it shows and the state's name (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// What it shows.
    pub check: Check,
    /// The resource's state as the service names it (`"sent"`, `"partially_filled"`).
    pub state: String,
}

impl Seen {
    /// The state waited for.
    pub fn reached(state: impl fmt::Display) -> Self {
        Seen {
            check: Check::Reached,
            state: state.to_string(),
        }
    }

    /// Not there yet.
    pub fn pending(state: impl fmt::Display) -> Self {
        Seen {
            check: Check::Pending,
            state: state.to_string(),
        }
    }

    /// Final, and not the state waited for.
    pub fn ended(state: impl fmt::Display) -> Self {
        Seen {
            check: Check::Ended,
            state: state.to_string(),
        }
    }
}

/// Why a wait ended without the state it waited for.
#[derive(Debug)]
#[non_exhaustive]
pub enum WaitError<T> {
    /// The resource reached a final state other than the one waited for (a document
    /// declined, an order canceled); `last` is the resource as read then.
    Ended {
        /// What was waited for ("document doc_1 to be completed").
        what: String,
        /// The state it ended in.
        state: String,
        /// The resource as read.
        last: Box<T>,
    },
    /// The deadline passed first; `last` is the last reading (none when no reading
    /// succeeded).
    TimedOut {
        /// What was waited for.
        what: String,
        /// The state of the last reading, if any.
        state: Option<String>,
        /// How long the wait lasted.
        waited: Duration,
        /// The last reading.
        last: Option<Box<T>>,
    },
    /// A reading failed in a way waiting does not mend (404, 401, an answer that cannot
    /// be read).
    Call(Error),
}

impl<T> WaitError<T> {
    /// The kind: [`ErrorKind::EndedOtherwise`] for `Ended`, [`ErrorKind::Timeout`] for
    /// `TimedOut`, the call's own for `Call`.
    pub fn kind(&self) -> ErrorKind {
        match self {
            WaitError::Ended { .. } => ErrorKind::EndedOtherwise,
            WaitError::TimedOut { .. } => ErrorKind::Timeout,
            WaitError::Call(e) => e.kind(),
        }
    }

    /// The last reading of the resource, when there was one.
    pub fn last(&self) -> Option<&T> {
        match self {
            WaitError::Ended { last, .. } => Some(last),
            WaitError::TimedOut { last, .. } => last.as_deref(),
            WaitError::Call(_) => None,
        }
    }

    /// The last reading, taken out of the error.
    pub fn into_last(self) -> Option<T> {
        match self {
            WaitError::Ended { last, .. } => Some(*last),
            WaitError::TimedOut { last, .. } => last.map(|b| *b),
            WaitError::Call(_) => None,
        }
    }
}

impl<T> WaitError<T> {
    /// The deadline passed after `waited`; `last` is the last reading and its state.
    pub(crate) fn timed_out(what: String, last: Option<(T, String)>, waited: Duration) -> Self {
        let (last, state) = match last {
            Some((value, state)) => (Some(Box::new(value)), Some(state)),
            None => (None, None),
        };
        WaitError::TimedOut {
            what,
            state,
            waited,
            last,
        }
    }
}

impl<T> WaitError<Option<T>> {
    /// A wait whose readings may find nothing yet (a resource not listed yet) as a wait
    /// for the resource: a last reading that found nothing becomes no last reading.
    pub fn flatten(self) -> WaitError<T> {
        match self {
            WaitError::Ended { what, state, last } => match *last {
                Some(last) => WaitError::Ended {
                    what,
                    state,
                    last: Box::new(last),
                },
                None => WaitError::TimedOut {
                    what,
                    state: Some(state),
                    waited: Duration::ZERO,
                    last: None,
                },
            },
            WaitError::TimedOut {
                what,
                state,
                waited,
                last,
            } => WaitError::TimedOut {
                what,
                state,
                waited,
                last: last.and_then(|b| *b).map(Box::new),
            },
            WaitError::Call(e) => WaitError::Call(e),
        }
    }
}

impl<T> fmt::Display for WaitError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitError::Ended { what, state, .. } => {
                write!(f, "stopped waiting for {what}: it ended {state}")
            }
            WaitError::TimedOut {
                what,
                state,
                waited,
                ..
            } => {
                write!(
                    f,
                    "gave up waiting for {what} after {:.1} s",
                    waited.as_secs_f64()
                )?;
                match state {
                    Some(state) => write!(f, " (still {state})"),
                    None => write!(f, " (no reading succeeded)"),
                }
            }
            WaitError::Call(e) => write!(f, "{e}"),
        }
    }
}

impl<T: fmt::Debug> std::error::Error for WaitError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WaitError::Call(e) => Some(e),
            _ => None,
        }
    }
}

/// A wait's failure as the crate's [`Error`] (so `?` works in a function returning
/// `Result<_, Error>`); the last reading is dropped.
impl<T> From<WaitError<T>> for Error {
    fn from(e: WaitError<T>) -> Self {
        match e {
            WaitError::Call(e) => e,
            WaitError::Ended { what, state, .. } => Error::WaitEnded { what, state },
            WaitError::TimedOut {
                what,
                state,
                waited,
                ..
            } => Error::WaitTimedOut {
                what,
                state,
                waited,
            },
        }
    }
}

/// Whether a reading's failure is one time can mend, and the pause the service asked for.
fn mendable(e: &Error) -> Option<Option<Duration>> {
    match e.kind() {
        ErrorKind::Timeout | ErrorKind::Connection | ErrorKind::Server | ErrorKind::RateLimited => {
            Some(e.api().and_then(|a| a.retry_after))
        }
        _ => None,
    }
}

/// The least time a reading is given: a pause never leaves less than this before the
/// deadline, so the wait's last moments are spent reading, not sleeping.
const LAST_READING: Duration = Duration::from_millis(500);

impl HttpClient {
    /// Reads a resource with `read` until `judge` says it reached the state waited for,
    /// within `wait` (see [the module](crate::wait)). `what` names it in errors
    /// ("document doc_1 to be completed"). `read` gets a copy of this client whose
    /// calls end by the wait's deadline.
    pub fn wait_for<T>(
        &self,
        what: impl Into<String>,
        wait: &Wait,
        mut read: impl FnMut(&HttpClient) -> crate::Result<T>,
        mut judge: impl FnMut(&T) -> Seen,
    ) -> Result<T, WaitError<T>> {
        let what = what.into();
        let clock = &self.inner.config.clock;
        let sleeper = &self.inner.config.sleeper;
        let started = clock.now();
        let deadline = crate::time::Deadline::after(started, wait.timeout);
        let mut last: Option<(T, String)> = None;
        for n in 0u32.. {
            let left = deadline.remaining(clock.now());
            if left.is_zero() {
                break;
            }
            let reader =
                self.with_options(&RequestOptions::new().timeout(self.timeout().min(left)));
            let asked = match read(&reader) {
                Ok(value) => {
                    let seen = judge(&value);
                    log::debug!("wait: {what}: reading {} shows {}", n + 1, seen.state);
                    match seen.check {
                        Check::Reached => return Ok(value),
                        Check::Ended => {
                            return Err(WaitError::Ended {
                                what,
                                state: seen.state,
                                last: Box::new(value),
                            });
                        }
                        Check::Pending => last = Some((value, seen.state)),
                    }
                    None
                }
                Err(e) => match mendable(&e) {
                    Some(asked) => {
                        log::debug!(
                            "wait: {what}: reading {} failed ({}); reading again",
                            n + 1,
                            e.kind()
                        );
                        asked
                    }
                    None => return Err(WaitError::Call(e)),
                },
            };
            let left = deadline.remaining(clock.now());
            let pause = wait.pause(n).max(asked.unwrap_or_default());
            if asked.is_some_and(|a| a >= left) {
                // The service asked for a pause past the deadline: no reading can come.
                break;
            }
            let pause = pause.min(left.saturating_sub(LAST_READING.min(left / 2)));
            if !pause.is_zero() {
                sleeper.sleep(pause);
            }
        }
        let waited = clock.now().saturating_duration_since(started);
        Err(WaitError::timed_out(what, last, waited))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_by_half_up_to_the_longest() {
        let wait = Wait::up_to(Duration::from_secs(60))
            .interval(Duration::from_secs(1), Duration::from_secs(3));
        let nominal: Vec<f64> = (0..5).map(|n| wait.pause(n).as_secs_f64()).collect();
        for (got, want) in nominal.iter().zip([1.0, 1.5, 2.25, 3.0, 3.0]) {
            assert!(
                *got <= want + 1e-9 && *got >= want * 0.9 - 1e-9,
                "{nominal:?}"
            );
        }
    }
}
