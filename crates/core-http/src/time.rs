//! Time as the transport sees it: the [`Clock`] every deadline reads, the [`Sleeper`]
//! every wait goes through, and the call's deadline with overflow-free arithmetic. Tests
//! replace the clock and the sleeper to drive a whole call, waits included, on fake time.

use std::fmt;
use std::time::{Duration, Instant};

/// A source of monotonic time, replaceable in tests.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The wall-clock time `clock` says it is: the system's, moved by as much as `clock` is
/// ahead of (or behind) the system's monotonic clock. A test clock moved forward moves it
/// too, so a `Retry-After` date is read against the client's own time.
pub(crate) fn wall_time(clock: &dyn Clock) -> std::time::SystemTime {
    let (wall, real, ours) = (std::time::SystemTime::now(), Instant::now(), clock.now());
    if ours >= real {
        wall.checked_add(ours - real).unwrap_or(wall)
    } else {
        wall.checked_sub(real - ours).unwrap_or(wall)
    }
}

/// The default [`Clock`]: the system's monotonic clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        now()
    }
}

/// The system's monotonic clock: the one place it is read, in core-http and in the crates
/// built on it. A socket's deadline, which the operating system keeps, is on it whatever
/// clock the client was given.
pub fn now() -> Instant {
    Instant::now()
}

/// Sleeps between attempts and while waiting for the rate limiter. Replace it in tests
/// to run without real waits.
pub trait Sleeper: Send + Sync + fmt::Debug {
    /// Blocks the current thread for `duration`.
    fn sleep(&self, duration: Duration);
}

/// The default [`Sleeper`]: `std::thread::sleep`.
#[derive(Debug, Default, Clone, Copy)]
pub struct ThreadSleeper;

impl Sleeper for ThreadSleeper {
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// The longest duration ever handed to the socket layer or the standard library's
/// `Instant` arithmetic. A configured timeout of `Duration::MAX` means "no timeout", but
/// `Instant + Duration::MAX` panics: anything longer than this is treated as this.
pub const FOREVER: Duration = Duration::from_secs(365 * 24 * 3600);

/// When a call must be over, on the client's clock. `None` when the timeout is so long
/// that the instant cannot be represented (the call then has no deadline).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    start: Instant,
    end: Option<Instant>,
}

impl Deadline {
    /// A deadline `timeout` after `start`.
    pub(crate) fn after(start: Instant, timeout: Duration) -> Self {
        Deadline {
            start,
            end: start.checked_add(timeout),
        }
    }

    /// Time left at `now` (zero once passed; [`FOREVER`] without a deadline).
    pub(crate) fn remaining(&self, now: Instant) -> Duration {
        match self.end {
            Some(end) => end.saturating_duration_since(now).min(FOREVER),
            None => FOREVER,
        }
    }

    /// Time since the call started.
    pub(crate) fn elapsed(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.start)
    }
}

/// `d`, capped at [`FOREVER`], for the socket layer.
pub(crate) fn bounded(d: Duration) -> Duration {
    d.min(FOREVER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_timeout_never_overflows() {
        let now = Instant::now();
        let d = Deadline::after(now, Duration::MAX);
        assert_eq!(d.remaining(now), FOREVER);
        let short = Deadline::after(now, Duration::from_secs(2));
        assert_eq!(
            short.remaining(now + Duration::from_secs(1)),
            Duration::from_secs(1)
        );
        assert_eq!(
            short.remaining(now + Duration::from_secs(3)),
            Duration::ZERO
        );
        assert_eq!(
            short.elapsed(now + Duration::from_millis(1500)),
            Duration::from_millis(1500)
        );
        assert_eq!(bounded(Duration::MAX), FOREVER);
    }
}
