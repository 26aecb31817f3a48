//! A service's session on a [`Stream`]: the service's [`Handler`] turns the stream's
//! items into the caller's events on the caller's thread (de-duplicating, recovering
//! what a reconnect missed), and every blocking method keeps its own timeout, the
//! handler's work included.

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

use super::{Protocol, Stream, StreamItem, StreamStats};
use core_http::Result;
use core_http::wait::{Check, Seen, WaitError};

/// How many events a wait on a stream ([`Session::wait_for`]) holds for the caller
/// before it lets go of market data.
pub const WAIT_HOLDS: usize = 100_000;

/// What a service does with its stream's items, on the caller's thread.
///
/// A handler may have work of its own to do (a recovery after a reconnect that failed
/// and must be tried again): it says when through [`due`](Self::due), and the session
/// calls [`run_due`](Self::run_due) then, giving it the caller's deadline, which the
/// handler must keep (a REST call made there gets no more than the time left).
pub trait Handler<P: Protocol> {
    /// What the caller reads.
    type Event;

    /// One item from the stream: what the caller gets (none, one or several), the first
    /// returned (the caller gets it at once, with no queueing) and any others pushed onto
    /// `out`, in order (`out` is empty when this is called). `stream` is there to send
    /// messages (a resynchronisation request).
    fn item(
        &mut self,
        item: Result<StreamItem<P::Event>>,
        stream: &Stream<P>,
        out: &mut VecDeque<Result<Self::Event>>,
    ) -> Option<Result<Self::Event>>;

    /// When the handler has work to do, if it has any.
    fn due(&self) -> Option<Instant> {
        None
    }

    /// Does the work that is due, finishing by `deadline` (`None`: the caller waits as
    /// long as it takes, so the handler's own limits apply). It must move
    /// [`due`](Self::due) on (to later, or to none).
    fn run_due(
        &mut self,
        deadline: Option<Instant>,
        stream: &Stream<P>,
        out: &mut VecDeque<Result<Self::Event>>,
    ) {
        let _ = (deadline, stream, out);
    }
}

/// A [`Stream`] and the service's [`Handler`]: `next`, `next_timeout`, `is_closed`,
/// `stats` and `close` written once for every service.
pub struct Session<P: Protocol, H: Handler<P>> {
    stream: Stream<P>,
    handler: H,
    out: VecDeque<Result<H::Event>>,
}

impl<P: Protocol, H: Handler<P>> fmt::Debug for Session<P, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("stats", &self.stream.stats())
            .field("queued", &self.out.len())
            .finish_non_exhaustive()
    }
}

impl<P: Protocol, H: Handler<P>> Session<P, H> {
    /// A session of `handler` over `stream`.
    pub fn new(stream: Stream<P>, handler: H) -> Self {
        Session {
            stream,
            handler,
            out: VecDeque::new(),
        }
    }

    /// The stream (to subscribe, send, read its counters).
    pub fn stream(&self) -> &Stream<P> {
        &self.stream
    }

    /// The handler.
    pub fn handler(&self) -> &H {
        &self.handler
    }

    /// The handler, to change it, and the events queued for the caller (to add some, or
    /// drop those of a subscription that ended).
    pub fn handler_mut(&mut self) -> (&mut H, &mut VecDeque<Result<H::Event>>) {
        (&mut self.handler, &mut self.out)
    }

    /// The stream and the handler together, for work that needs both (a subscription
    /// whose confirmation the handler records).
    pub fn parts(&mut self) -> (&Stream<P>, &mut H, &mut VecDeque<Result<H::Event>>) {
        (&self.stream, &mut self.handler, &mut self.out)
    }

    /// The next event, waiting at most `timeout`, the handler's work included; `None`
    /// when none came in time or the stream has ended ([`is_closed`](Self::is_closed)).
    pub fn next_timeout(&mut self, timeout: Duration) -> Option<Result<H::Event>> {
        if let Some(event) = self.out.pop_front() {
            return Some(event);
        }
        // Items already in hand, when the handler has no work due: no clock needed.
        if self.handler.due().is_none() {
            while let Some(item) = self.stream.ready() {
                if let Some(event) = self.handler.item(item, &self.stream, &mut self.out) {
                    return Some(event);
                }
                if let Some(event) = self.out.pop_front() {
                    return Some(event);
                }
            }
        }
        self.next_until(Some(core_http::service::now().checked_add(timeout)))
    }

    /// `deadline`: `None` waits as long as it takes; `Some(None)` is a timeout too far
    /// to represent, the same.
    fn next_until(&mut self, deadline: Option<Option<Instant>>) -> Option<Result<H::Event>> {
        let deadline = deadline.flatten();
        loop {
            if let Some(event) = self.out.pop_front() {
                return Some(event);
            }
            // The clock is read only when the handler has work to come.
            let due = self.handler.due();
            if let Some(due) = due
                && due <= core_http::service::now()
                && !self.stream.is_closed()
            {
                self.handler.run_due(deadline, &self.stream, &mut self.out);
                if self.out.is_empty() && deadline.is_some_and(|d| core_http::service::now() >= d) {
                    return None;
                }
                continue;
            }
            let until = match (deadline, due) {
                (Some(d), Some(u)) => Some(d.min(u)),
                (d, u) => d.or(u),
            };
            match self.stream.next_until(until) {
                Some(item) => {
                    if let Some(event) = self.handler.item(item, &self.stream, &mut self.out) {
                        return Some(event);
                    }
                }
                None if self.stream.is_closed() => return self.out.pop_front(),
                None => {}
            }
            if self.out.is_empty() && deadline.is_some_and(|d| core_http::service::now() >= d) {
                return None;
            }
        }
    }

    /// Reads events until `judge` finds one showing the state waited for, within
    /// `timeout`: [`wait`](core_http::wait)'s rules on a stream instead of polling. `judge`
    /// looks at each item, an event or an error: `None` for one that does not concern
    /// what is waited for, `Some((seen, value))` for one that does
    /// ([`Check::Reached`](core_http::wait::Check) ends the wait with `value`,
    /// [`Check::Ended`](core_http::wait::Check) ends it with [`WaitError::Ended`]); it may read
    /// the resource through REST on an item that says events may have been missed (a
    /// reconnect, an event that could not be read). `last` is a reading made before the
    /// wait (through REST, say): what a wait that times out reports if no event says more.
    ///
    /// **Nothing is taken from the caller.** Every item read meanwhile (the judged ones
    /// and the errors too: an event that could not be read does not end the wait) is
    /// given back: the next reads return them, in order, before anything newer. Held
    /// events are bounded: past [`WAIT_HOLDS`], those `droppable` says may go (market
    /// data, which a reader that falls behind loses too) are let go; the others (fills,
    /// order changes, errors) are always kept. A stream that ends ends the wait with its
    /// last error.
    pub fn wait_for<T>(
        &mut self,
        what: impl Into<String>,
        timeout: Duration,
        last: Option<(T, String)>,
        mut judge: impl FnMut(std::result::Result<&H::Event, &core_http::Error>) -> Option<(Seen, T)>,
        droppable: impl Fn(&H::Event) -> bool,
    ) -> std::result::Result<T, WaitError<T>> {
        let what = what.into();
        let started = core_http::service::now();
        let deadline = started.checked_add(timeout);
        let mut held: VecDeque<Result<H::Event>> = VecDeque::new();
        let mut let_go = 0u64;
        let mut last = last;
        // The last error item, told when the wait times out or the stream ends.
        let mut failed: Option<core_http::Error> = None;
        let outcome = loop {
            let left = deadline.map_or(core_http::service::FOREVER, |d| {
                d.saturating_duration_since(core_http::service::now())
            });
            if left.is_zero() {
                break None;
            }
            let item = match self.next_timeout(left) {
                Some(item) => item,
                None if self.stream.is_closed() => {
                    let closed = failed.take().unwrap_or_else(|| {
                        core_http::Error::from(super::error::WsError::Closed {
                            code: 1006,
                            reason: format!("the stream ended while waiting for {what}"),
                        })
                    });
                    break Some(Err(WaitError::Call(closed)));
                }
                None => continue,
            };
            let judged = match &item {
                Ok(event) => judge(Ok(event)),
                Err(e) => judge(Err(e)),
            };
            match item {
                Ok(event) if held.len() >= WAIT_HOLDS && droppable(&event) => let_go += 1,
                Ok(event) => held.push_back(Ok(event)),
                Err(e) => {
                    // A stream's own errors copy; the item itself goes back to the caller.
                    if let Some(ws) = e.downcast_ref::<super::error::WsError>() {
                        failed = Some(core_http::Error::from(ws.clone()));
                    }
                    held.push_back(Err(e));
                }
            }
            match judged {
                None => {}
                Some((seen, value)) => match seen.check {
                    Check::Reached => break Some(Ok(value)),
                    Check::Ended => {
                        break Some(Err(WaitError::Ended {
                            what: what.clone(),
                            state: seen.state,
                            last: Box::new(value),
                        }));
                    }
                    // Pending, or a kind of reading this version does not know.
                    _ => last = Some((value, seen.state)),
                },
            }
        };
        if let_go > 0 {
            log::warn!(
                "stream: {let_go} market events let go while waiting for {what} (more than {WAIT_HOLDS} held)"
            );
        }
        // Given back before anything newer, in the order they came.
        while let Some(event) = held.pop_back() {
            self.out.push_front(event);
        }
        outcome.unwrap_or_else(|| Err(WaitError::timed_out(what, last, started.elapsed(), failed)))
    }

    /// `true` once the stream has ended and every event has been read.
    pub fn is_closed(&self) -> bool {
        self.out.is_empty() && self.stream.is_closed()
    }

    /// The stream's counters.
    pub fn stats(&self) -> StreamStats {
        self.stream.stats()
    }

    /// Closes the stream (within its close timeout, 5 s by default).
    pub fn close(&mut self) {
        self.stream.close();
    }
}

impl<P: Protocol, H: Handler<P>> Iterator for Session<P, H> {
    type Item = Result<H::Event>;

    /// Waits for the next event; `None` once the stream has ended.
    fn next(&mut self) -> Option<Self::Item> {
        self.next_until(None)
    }
}
