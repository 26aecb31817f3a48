//! The sentences [`Error`](super::Error)'s variants are written with: a wait that timed
//! out, an action that may have been carried out, a duration, a list of failures.

use std::fmt;
use std::time::Duration;

use super::{Error, ItemFailure};

/// What an [`Error::Unsettled`] advises.
pub(super) struct UnsettledAdvice<'a>(pub(super) Option<&'a (&'static str, String)>);

impl fmt::Display for UnsettledAdvice<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some((name, id)) => write!(
                f,
                "it may have been carried out: to repeat it, send it with the same {name} \
                 {id:?} (the service carries out one request per {name})"
            ),
            None => f.write_str(
                "it may have been carried out: look at the service's state before repeating it",
            ),
        }
    }
}

/// What a wait that timed out says (as [`Error::WaitTimedOut`] and [`crate::wait::WaitError`]).
pub(super) struct WaitText<'a> {
    pub(super) what: &'a str,
    pub(super) state: Option<&'a str>,
    pub(super) waited: Duration,
    pub(super) cause: Option<&'a Error>,
}

impl fmt::Display for WaitText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        timed_out_text(f, self.what, self.state, self.waited, self.cause)
    }
}

/// What a wait that timed out says: what it waited for, for how long, the state last
/// read, and its last failure (a pause asked for past the deadline named as such).
pub(crate) fn timed_out_text(
    f: &mut fmt::Formatter<'_>,
    what: &str,
    state: Option<&str>,
    waited: Duration,
    cause: Option<&Error>,
) -> fmt::Result {
    write!(
        f,
        "gave up waiting for {what} after {:.1} s",
        waited.as_secs_f64()
    )?;
    match state {
        Some(state) => write!(f, " (still {state})")?,
        None => write!(f, " (no reading succeeded)")?,
    }
    let Some(cause) = cause else {
        return Ok(());
    };
    match cause
        .api()
        .and_then(|a| a.retry_after.map(|after| (a.status, after)))
    {
        Some((status, after)) => write!(
            f,
            ": the service answered {status} and asked to wait {:.0} s, past the deadline",
            after.as_secs_f64().ceil()
        ),
        None => write!(f, "; the last reading failed: {cause}"),
    }
}

/// A duration as a person reads it: `250 ms`, `1.0 s`, `30 s`, `59 min`, `5 h`,
/// `421 years`.
///
/// ```
/// use std::time::Duration;
/// use core_http::service::rounded;
/// assert_eq!(rounded(Duration::from_millis(250)), "250 ms");
/// assert_eq!(rounded(Duration::from_secs(90)), "90 s");
/// assert_eq!(rounded(Duration::from_secs(3_599)), "60 min");
/// assert_eq!(rounded(Duration::from_secs(7 * 3_600)), "7 h");
/// assert_eq!(rounded(Duration::from_secs(421 * 31_557_600)), "421 years");
/// ```
pub fn rounded(d: Duration) -> String {
    let secs = d.as_secs_f64();
    match secs {
        s if s < 1.0 => format!("{} ms", d.as_millis()),
        s if s < 10.0 => format!("{s:.1} s"),
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 2.0 * 3_600.0 => format!("{:.0} min", s / 60.0),
        s if s < 2.0 * 86_400.0 => format!("{:.0} h", s / 3_600.0),
        s if s < 2.0 * 31_557_600.0 => format!("{:.0} days", s / 86_400.0),
        s => format!("{:.0} years", s / 31_557_600.0),
    }
}

pub(super) fn list_failures(failed: &[ItemFailure]) -> String {
    let mut out = String::new();
    for (i, failure) in failed.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        let _ = std::fmt::Write::write_fmt(&mut out, format_args!("{failure}"));
    }
    out
}
