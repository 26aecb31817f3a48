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
//! - **The schedule.** Pauses grow from [`Wait::interval`]'s first (0.5 s by default) by
//!   half each time up to its longest (10 s), each up to a tenth longer at random (never
//!   past the longest) so that many scripts do not poll in step; a pause is never
//!   shorter than the schedule's. When
//!   the next reading on schedule would come after the deadline, one last reading is made
//!   half a second before it (if that is at least the first pause away), and the wait
//!   ends after it: a wait that times out makes about `log1.5(timeout / first)` readings,
//!   never a burst at its end. A `Retry-After` the service sends with a 429 or 503
//!   lengthens the pause it follows; one that reaches past the deadline ends the wait at
//!   once, saying so. Every reading goes through the client's rate limiter like any
//!   call.
//! - **Failures.** A reading that fails in a way time can mend (a timeout, a lost
//!   connection, a 5xx, a 429, after the call's own retries) is followed by another
//!   after the pause; any other failure (404, 401, an answer that cannot be read, a
//!   reading of another resource than the one waited for) ends the wait with
//!   [`WaitError::Call`]. A wait that times out says what its last reading showed, and
//!   keeps its last failure ([`WaitError::TimedOut`]'s `cause`): a wait through nothing
//!   but 502s says so.
//! - **Fake time.** Pauses go through the client's [`Sleeper`](crate::config::Sleeper)
//!   and the deadline reads its [`Clock`](crate::config::Clock), so tests run waits
//!   without real sleeps.

use std::fmt;
use std::time::Duration;

use crate::HttpClient;
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
    /// each time up to `longest`, and up to a tenth longer at random (never shorter,
    /// never past `longest`).
    fn pause(&self, n: u32) -> Duration {
        self.pause_with(n, crate::random::unit_f64())
    }

    /// The pause after reading `n`, given `random` in [0, 1).
    fn pause_with(&self, n: u32, random: f64) -> Duration {
        let mut nominal = self.first;
        for _ in 0..n.min(64) {
            nominal = nominal.mul_f64(1.5);
            if nominal >= self.longest {
                break;
            }
        }
        let nominal = nominal.min(self.longest);
        let random = if random.is_finite() {
            random.clamp(0.0, 1.0)
        } else {
            0.0
        };
        nominal
            .saturating_add(nominal.mul_f64(0.1 * random))
            .min(self.longest)
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
        /// The failure of the last reading, when it failed (a 502, a timeout), or the
        /// answer whose `Retry-After` reached past the deadline and so ended the wait.
        cause: Option<Box<Error>>,
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
    /// The deadline passed after `waited`; `last` is the last reading and its state,
    /// `cause` the last reading's failure (or the answer that asked for a pause past the
    /// deadline).
    pub fn timed_out(
        what: String,
        last: Option<(T, String)>,
        waited: Duration,
        cause: Option<Error>,
    ) -> Self {
        let (last, state) = match last {
            Some((value, state)) => (Some(Box::new(value)), Some(state)),
            None => (None, None),
        };
        WaitError::TimedOut {
            what,
            state,
            waited,
            last,
            cause: cause.map(Box::new),
        }
    }

    /// The failure that ended the wait or, for a wait that timed out, the last one it
    /// met (`None`: every reading succeeded).
    pub fn cause(&self) -> Option<&Error> {
        match self {
            WaitError::Call(e) => Some(e),
            WaitError::TimedOut { cause, .. } => cause.as_deref(),
            WaitError::Ended { .. } => None,
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
                    cause: None,
                },
            },
            WaitError::TimedOut {
                what,
                state,
                waited,
                last,
                cause,
            } => WaitError::TimedOut {
                what,
                state,
                waited,
                last: last.and_then(|b| *b).map(Box::new),
                cause,
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
                cause,
                ..
            } => crate::error::timed_out_text(f, what, state.as_deref(), *waited, cause.as_deref()),
            WaitError::Call(e) => write!(f, "{e}"),
        }
    }
}

impl<T: fmt::Debug> std::error::Error for WaitError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WaitError::Call(e) => Some(e),
            WaitError::TimedOut { cause, .. } => cause
                .as_deref()
                .map(|e| e as &(dyn std::error::Error + 'static)),
            WaitError::Ended { .. } => None,
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
                cause,
                ..
            } => Error::WaitTimedOut {
                what,
                state,
                waited,
                cause,
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

/// The time kept for the last reading before the deadline (when the next one on schedule
/// would come after it): half a second, or half of what is left when less.
const LAST_READING: Duration = Duration::from_millis(500);

/// What to do after a reading.
enum After {
    /// Pause this long, then read again.
    Pause(Duration),
    /// Pause this long, then make the last reading.
    Last(Duration),
    /// The wait is over (its deadline, or a pause asked for past it).
    Stop,
}

impl Wait {
    /// What follows reading `n` with `left` before the deadline, the service having asked
    /// for a pause of `asked` (a `Retry-After`), `last` when that was the last reading.
    fn after(&self, n: u32, left: Duration, asked: Option<Duration>, last: bool) -> After {
        let asked = asked.unwrap_or_default();
        if last || asked >= left {
            return After::Stop;
        }
        let pause = self.pause(n).max(asked);
        let keep = LAST_READING.min(left / 2);
        if pause.saturating_add(keep) <= left {
            return After::Pause(pause);
        }
        // The next reading on schedule would come too late: one last one, at the end,
        // if it is still a whole pause away.
        let to_last = left - keep;
        if to_last >= self.first.max(asked) {
            After::Last(to_last)
        } else {
            After::Stop
        }
    }
}

impl HttpClient {
    /// Reads a resource with `read` until `judge` says it reached the state waited for,
    /// within `wait` (see [the module](crate::wait)). `what` names it in errors
    /// ("document doc_1 to be completed"). `read` gets a copy of this client whose
    /// calls end by the wait's deadline; it should check that what it read is what was
    /// asked for (the id), as every call does.
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
        // The last reading's failure, kept for the error if the wait times out.
        let mut failed: Option<Error> = None;
        let mut last_reading = false;
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
                    failed = None;
                    None
                }
                Err(e) => match mendable(&e) {
                    Some(asked) => {
                        log::debug!(
                            "wait: {what}: reading {} failed ({}); reading again",
                            n + 1,
                            e.kind()
                        );
                        failed = Some(e);
                        asked
                    }
                    None => return Err(WaitError::Call(e)),
                },
            };
            match wait.after(n, deadline.remaining(clock.now()), asked, last_reading) {
                After::Pause(pause) => sleeper.sleep(pause),
                After::Last(pause) => {
                    last_reading = true;
                    sleeper.sleep(pause);
                }
                After::Stop => break,
            }
        }
        let waited = clock.now().saturating_duration_since(started);
        Err(WaitError::timed_out(what, last, waited, failed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_by_half_up_to_the_longest_and_are_never_shorter() {
        let wait = Wait::up_to(Duration::from_secs(60))
            .interval(Duration::from_secs(1), Duration::from_secs(3));
        for random in [0.0, 0.5, 0.999] {
            let pauses: Vec<f64> = (0..5)
                .map(|n| wait.pause_with(n, random).as_secs_f64())
                .collect();
            for (got, want) in pauses.iter().zip([1.0, 1.5, 2.25, 3.0, 3.0]) {
                assert!(
                    *got >= want - 1e-9 && *got <= want * 1.1 + 1e-9,
                    "{pauses:?}"
                );
                assert!(*got <= 3.0 + 1e-9, "never past the longest: {pauses:?}");
            }
        }
    }

    /// The readings a wait of `timeout` makes when every one shows "pending" and takes
    /// no time: their times, in seconds from the start.
    fn schedule(wait: &Wait) -> Vec<f64> {
        let mut at = Duration::ZERO;
        let mut times = vec![0.0];
        let mut last = false;
        for n in 0.. {
            match wait.after(n, wait.timeout.saturating_sub(at), None, last) {
                After::Pause(p) => at += p,
                After::Last(p) => {
                    last = true;
                    at += p;
                }
                After::Stop => break,
            }
            times.push(at.as_secs_f64());
        }
        times
    }

    #[test]
    fn a_wait_that_times_out_reads_on_schedule_and_once_at_the_end() {
        let times = schedule(&Wait::up_to(Duration::from_secs(6)));
        // 0, 0.5, 1.25, 2.375, 4.06 (each up to a tenth later), then one last at 5.5.
        assert!((6..=7).contains(&times.len()), "{times:?}");
        assert!(times.iter().all(|t| *t <= 5.5 + 1e-9), "{times:?}");
        let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps.iter().all(|g| *g >= 0.5 - 1e-9),
            "no pause under 0.5 s: {gaps:?}"
        );
        assert!(
            times.iter().filter(|t| **t > 5.0).count() <= 1,
            "one reading in the last second at most: {times:?}"
        );
        // A long wait at the longest pause: about one reading every 10 s.
        let hour = schedule(&Wait::up_to(Duration::from_secs(3600)));
        assert!((360..=370).contains(&hour.len()), "{}", hour.len());
    }

    #[test]
    fn a_pause_asked_for_past_the_deadline_ends_the_wait_and_one_within_it_is_kept() {
        let wait = Wait::up_to(Duration::from_secs(10));
        let left = Duration::from_secs(8);
        assert!(matches!(
            wait.after(0, left, Some(Duration::from_secs(3600)), false),
            After::Stop
        ));
        match wait.after(0, left, Some(Duration::from_secs(3)), false) {
            After::Pause(p) => assert!(p >= Duration::from_secs(3), "{p:?}"),
            _ => panic!("a 3 s pause fits"),
        }
        // Asked for 7.8 s with 8 s left: no reading can come after it in time.
        assert!(matches!(
            wait.after(0, left, Some(Duration::from_millis(7800)), false),
            After::Stop
        ));
    }
}
