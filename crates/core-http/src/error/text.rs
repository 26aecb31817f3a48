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

/// A duration as a person reads it: `1.0 s`, `30 s`, `250 ms`.
pub(crate) fn rounded(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 1.0 {
        format!("{} ms", d.as_millis())
    } else if secs < 10.0 {
        format!("{secs:.1} s")
    } else {
        format!("{secs:.0} s")
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
