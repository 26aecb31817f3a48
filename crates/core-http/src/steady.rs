//! The socket's timeouts set only when they must change. ureq sets a socket's read and
//! write timeouts to what is left of the call's time before each read and write, which
//! is a little less on every call: two `setsockopt` system calls a call, for a timeout
//! that has not really changed. This layer, between the socket (plain or through a
//! proxy's tunnel) and TLS, passes the socket the timeout it already has whenever that
//! is safe:
//!
//! - a read waits at most what is left: the timeout it has is kept when it is no later
//!   than that; a read it ends early (the caller had more time) is made again with what
//!   is left, so a call still times out exactly when its time is up, never before;
//! - a write (which cannot be made again: part of it may have gone) keeps the timeout it
//!   has only when that is no later than what is left and at most 1 % short of it.
//!
//! It also keeps each read and write within the deadline of the call being made on this
//! thread ([`CallDeadline`]), so that a buffered call needs no timeout of ureq's own (whose
//! bookkeeping costs more than the rest of the layer): what is left is the earlier of
//! ureq's timeout and the call's.

use std::cell::Cell;
use std::time::{Duration, Instant};

// A timeout this long (a year, the longest any of ours is) is as good as none.
use crate::time::FOREVER;

use ureq::Timeout;
use ureq::unversioned::transport::time::Duration as UreqDuration;
use ureq::unversioned::transport::{Buffers, ConnectionDetails, Connector, NextTimeout, Transport};

thread_local! {
    /// The deadline of the call this thread is making, when one is set.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The deadline of the call this thread is making, for every read and write of its
/// connection (the call's exchange and its body are read on the calling thread), until
/// this is dropped; the one set before (a call within a call) then applies again.
pub(crate) struct CallDeadline {
    previous: Option<Instant>,
}

impl CallDeadline {
    /// Sets the deadline `left` from now.
    pub(crate) fn within(left: Duration) -> CallDeadline {
        let previous = DEADLINE.get();
        DEADLINE.set(Instant::now().checked_add(left));
        CallDeadline { previous }
    }
}

impl Drop for CallDeadline {
    fn drop(&mut self) {
        DEADLINE.set(self.previous);
    }
}

/// What is left of ureq's `timeout` and the call's deadline, whichever ends first: the
/// time, why it would end, and when (`None`: not before the time is read again).
fn left(timeout: NextTimeout) -> (Duration, Timeout, Option<Instant>) {
    let theirs = *timeout.after;
    let Some(deadline) = DEADLINE.get() else {
        return (theirs, timeout.reason, None);
    };
    let now = Instant::now();
    let ours = deadline.saturating_duration_since(now);
    if ours <= theirs {
        (ours, Timeout::Global, Some(deadline))
    } else {
        (theirs, timeout.reason, now.checked_add(theirs))
    }
}

/// The layer in the connector chain.
#[derive(Debug, Default)]
pub(crate) struct Steady;

impl<In: Transport> Connector<In> for Steady {
    type Out = SteadyTransport<In>;

    fn connect(
        &self,
        _details: &ConnectionDetails<'_>,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        Ok(chained.map(|inner| SteadyTransport {
            inner,
            read: None,
            write: None,
        }))
    }
}

/// A transport whose socket timeouts change only when they must.
#[derive(Debug)]
pub(crate) struct SteadyTransport<T> {
    inner: T,
    /// The read and write timeouts last passed to the socket.
    read: Option<Duration>,
    write: Option<Duration>,
}

/// A timeout of `after`, for `reason` (the per-read and per-write limits applied).
fn with_after(reason: Timeout, after: Duration) -> NextTimeout {
    NextTimeout {
        after: UreqDuration::Exact(after),
        reason,
        per_read: None,
        per_write: None,
    }
}

impl<T: Transport> SteadyTransport<T> {
    /// A read the socket's older, shorter timeout ended early: made again with what is
    /// left until `deadline`, until the time is up.
    #[cold]
    #[inline(never)]
    fn read_on(&mut self, reason: Timeout, deadline: Option<Instant>) -> Result<bool, ureq::Error> {
        // No instant that far off: as good as no timeout.
        let Some(deadline) = deadline else {
            self.read = Some(FOREVER);
            return self.inner.await_input(with_after(reason, FOREVER));
        };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ureq::Error::Timeout(reason));
            }
            self.read = Some(left);
            match self.inner.await_input(with_after(reason, left)) {
                Err(ureq::Error::Timeout(_)) => continue,
                other => return other,
            }
        }
    }
}

impl<T: Transport> Transport for SteadyTransport<T> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let (wanted, reason, _) = left(timeout.for_write());
        if wanted.is_zero() {
            return Err(ureq::Error::Timeout(reason));
        }
        if wanted >= FOREVER {
            self.write = None;
            return self.inner.transmit_output(amount, timeout.for_write());
        }
        let given = match self.write {
            Some(had) if had <= wanted && wanted - had <= wanted / 100 => had,
            _ => wanted,
        };
        self.write = Some(given);
        self.inner
            .transmit_output(amount, with_after(reason, given))
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let (wanted, reason, deadline) = left(timeout.for_read());
        if wanted.is_zero() {
            return Err(ureq::Error::Timeout(reason));
        }
        if wanted >= FOREVER {
            self.read = None;
            return self.inner.await_input(timeout.for_read());
        }
        let given = match self.read {
            Some(had) if had <= wanted => had,
            _ => wanted,
        };
        // When the read may end before its time (the socket's timeout is shorter), what
        // is left is measured from now.
        let deadline = match deadline {
            None if given < wanted => Instant::now().checked_add(wanted),
            known => known,
        };
        self.read = Some(given);
        match self.inner.await_input(with_after(reason, given)) {
            // Ended by a shorter timeout the socket had, when there was more time.
            Err(ureq::Error::Timeout(_)) if given < wanted => self.read_on(reason, deadline),
            Err(ureq::Error::Timeout(_)) => Err(ureq::Error::Timeout(reason)),
            other => other,
        }
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}
