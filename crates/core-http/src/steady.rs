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

use std::time::{Duration, Instant};

use ureq::unversioned::transport::time::Duration as UreqDuration;
use ureq::unversioned::transport::{Buffers, ConnectionDetails, Connector, NextTimeout, Transport};

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

/// `timeout` with `after` in its place (the per-read and per-write limits applied).
fn with_after(timeout: NextTimeout, after: Duration) -> NextTimeout {
    NextTimeout {
        after: UreqDuration::Exact(after),
        reason: timeout.reason,
        per_read: None,
        per_write: None,
    }
}

impl<T: Transport> Transport for SteadyTransport<T> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let timeout = timeout.for_write();
        let Some(wanted) = timeout.not_zero().map(|d| *d) else {
            self.write = None;
            return self.inner.transmit_output(amount, timeout);
        };
        let given = match self.write {
            Some(had) if had <= wanted && wanted - had <= wanted / 100 => had,
            _ => wanted,
        };
        self.write = Some(given);
        self.inner
            .transmit_output(amount, with_after(timeout, given))
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let timeout = timeout.for_read();
        let Some(wanted) = timeout.not_zero().map(|d| *d) else {
            self.read = None;
            return self.inner.await_input(timeout);
        };
        let deadline = Instant::now().checked_add(wanted);
        let mut given = match self.read {
            Some(had) if had <= wanted => had,
            _ => wanted,
        };
        loop {
            self.read = Some(given);
            match self.inner.await_input(with_after(timeout, given)) {
                Err(ureq::Error::Timeout(_)) => {
                    // Ended by the timeout the socket had: again with what is left, if
                    // anything is.
                    let left =
                        deadline.map_or(wanted, |d| d.saturating_duration_since(Instant::now()));
                    if left.is_zero() || given >= wanted {
                        return Err(ureq::Error::Timeout(timeout.reason));
                    }
                    given = left;
                }
                other => return other,
            }
        }
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}
