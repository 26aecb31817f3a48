//! The queue between a stream's thread and its caller: a lossless lane that keeps
//! everything up to its capacity (then says the reader fell behind), a bounded lossy
//! lane that drops its oldest events (counting them), both read in arrival order, and
//! the stream's counters.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{Lane, StreamItem, WsError};

/// A stream's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StreamStats {
    /// Connections re-established after a loss.
    pub reconnects: u64,
    /// Lossy events dropped because the caller fell behind.
    pub dropped: u64,
    /// Events received in all.
    pub received: u64,
    /// How long ago the last frame of any kind arrived (`None` before the first).
    pub last_message_age: Option<Duration>,
    /// Whether a connection is up right now.
    pub connected: bool,
    /// Times the caller fell behind on the lossless lane ([`super::WsError::FellBehind`]).
    pub fell_behind: u64,
    /// Lossless events lost while the caller was behind (rebuilt, where the service can,
    /// by its recovery after the reconnect that follows).
    pub lost: u64,
}

pub(crate) type Item<E> = Result<StreamItem<E>, WsError>;

/// How long (in spin-loop hints, a few microseconds) a reader finding the queue empty
/// watches it before it sleeps.
const SPINS: u32 = 4_000;

/// How many queued items end a reader's watch at once.
const GATHER: usize = 32;

struct State<E> {
    lossless: VecDeque<(u64, Item<E>)>,
    lossy: VecDeque<(u64, Item<E>)>,
    next: u64,
    finished: bool,
    reconnects: u64,
    dropped: u64,
    connected: bool,
    /// Readers waiting in [`Inbox::take_all`]: a push wakes one only when there is one.
    waiting: usize,
    /// Wake-ups without items ([`Inbox::poke`]): the socket was handed back.
    pokes: u64,
    /// The lossless lane filled up: its events are lost until [`Inbox::recovering`].
    behind: bool,
    fell_behind: u64,
    lost: u64,
}

pub(crate) struct Inbox<E> {
    state: Mutex<State<E>>,
    /// How many items are queued, readable without the lock.
    queued: AtomicUsize,
    /// No more items will come ([`Inbox::finish`]), readable without the lock.
    done: AtomicBool,
    /// Events received in all, and when the last frame arrived (nanoseconds after
    /// `born`, 0 before the first): kept without the lock, so that the caller's direct
    /// reads take no lock at all.
    received: AtomicU64,
    last_message: AtomicU64,
    born: Instant,
    ready: Condvar,
    capacity: usize,
    lossless_capacity: usize,
}

impl<E> Inbox<E> {
    pub(crate) fn new(capacity: usize, lossless_capacity: usize) -> Self {
        Inbox {
            state: Mutex::new(State {
                lossless: VecDeque::new(),
                lossy: VecDeque::new(),
                next: 0,
                finished: false,
                reconnects: 0,
                dropped: 0,
                connected: true,
                waiting: 0,
                pokes: 0,
                behind: false,
                fell_behind: 0,
                lost: 0,
            }),
            ready: Condvar::new(),
            queued: AtomicUsize::new(0),
            done: AtomicBool::new(false),
            received: AtomicU64::new(0),
            last_message: AtomicU64::new(0),
            born: Instant::now(),
            capacity,
            lossless_capacity,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<E>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues an item on a lane.
    pub(crate) fn push(&self, lane: Lane, item: Item<E>) {
        let mut state = self.lock();
        self.queue(&mut state, lane, item);
        self.wake(state);
    }

    /// Queues the items of one frame that arrived at `at`, under one lock. Returns
    /// `false` when the caller has fallen behind on the lossless lane (the connection
    /// is to be dropped).
    pub(crate) fn deliver(&self, items: &mut Vec<(Lane, Item<E>)>, at: Instant) -> bool {
        self.arrived(at);
        let mut state = self.lock();
        for (lane, item) in items.drain(..) {
            self.queue(&mut state, lane, item);
        }
        let behind = state.behind;
        self.wake(state);
        !behind
    }

    /// Whether the caller, reading on its own thread, may take a frame's events straight
    /// into its hands: nothing is queued before them and the stream is not closed.
    pub(crate) fn direct(&self) -> bool {
        !self.has_items() && !self.done.load(Ordering::Acquire)
    }

    /// Notes a frame the caller read itself, arrived at `at` (no lock; its events are
    /// counted by [`Taken::counted`] once per read).
    pub(crate) fn took_directly(&self, at: Instant) {
        self.arrived(at);
    }

    /// Adds events the caller took straight into its hands.
    pub(crate) fn count_received(&self, events: u64) {
        if events > 0 {
            self.received.fetch_add(events, Ordering::Relaxed);
        }
    }

    fn arrived(&self, at: Instant) {
        let nanos = at.saturating_duration_since(self.born).as_nanos();
        let nanos = u64::try_from(nanos).unwrap_or(u64::MAX).max(1);
        self.last_message.store(nanos, Ordering::Relaxed);
    }

    fn queue(&self, state: &mut State<E>, lane: Lane, item: Item<E>) {
        if state.finished {
            // Closed: nothing more reaches the caller.
            return;
        }
        let seq = state.next;
        state.next += 1;
        let event = matches!(item, Ok(StreamItem::Event(_)));
        if event {
            self.received.fetch_add(1, Ordering::Relaxed);
        }
        match lane {
            Lane::Lossless if event && state.behind => state.lost += 1,
            Lane::Lossless if event && state.lossless.len() >= self.lossless_capacity => {
                // The error takes the place of the first event lost.
                state.behind = true;
                state.fell_behind += 1;
                state.lost += 1;
                let capacity = self.lossless_capacity;
                state
                    .lossless
                    .push_back((seq, Err(WsError::FellBehind { capacity })));
            }
            Lane::Lossless => state.lossless.push_back((seq, item)),
            Lane::Lossy => {
                if state.lossy.len() >= self.capacity {
                    state.lossy.pop_front();
                    state.dropped += 1;
                }
                state.lossy.push_back((seq, item));
            }
        }
    }

    /// Wakes a waiting reader, if any (a wake costs a system call; most pushes find the
    /// reader busy and need none).
    fn wake(&self, state: MutexGuard<'_, State<E>>) {
        self.queued
            .store(state.lossless.len() + state.lossy.len(), Ordering::Release);
        let waiting = state.waiting > 0;
        drop(state);
        if waiting {
            self.ready.notify_one();
        }
    }

    /// Wakes a waiting reader without an item (the socket is its to read).
    pub(crate) fn poke(&self) {
        let mut state = self.lock();
        state.pokes += 1;
        let waiting = state.waiting > 0;
        drop(state);
        if waiting {
            self.ready.notify_all();
        }
    }

    /// Whether anything is queued (without the lock).
    pub(crate) fn has_items(&self) -> bool {
        self.queued.load(Ordering::Acquire) > 0
    }

    /// Records that a frame arrived now.
    pub(crate) fn touched(&self) {
        self.arrived(Instant::now());
    }

    pub(crate) fn set_connected(&self, connected: bool) {
        self.lock().connected = connected;
    }

    pub(crate) fn reconnected(&self) {
        self.lock().reconnects += 1;
    }

    /// Whether the caller, having fallen behind, has read half of the lossless lane, so
    /// that a new connection may start filling it again; clears the fallen-behind state
    /// when it has. `true` at once when the caller was not behind.
    pub(crate) fn recovering(&self) -> bool {
        let mut state = self.lock();
        if state.behind && state.lossless.len() > self.lossless_capacity / 2 {
            return false;
        }
        state.behind = false;
        true
    }

    /// No more items will come.
    pub(crate) fn finish(&self) {
        let mut state = self.lock();
        state.finished = true;
        state.connected = false;
        self.done.store(true, Ordering::Release);
        drop(state);
        self.ready.notify_all();
    }

    pub(crate) fn is_finished(&self) -> bool {
        if !self.done.load(Ordering::Acquire) {
            return false;
        }
        let state = self.lock();
        state.lossless.is_empty() && state.lossy.is_empty()
    }

    /// Lossy events dropped so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    pub(crate) fn stats(&self) -> StreamStats {
        let state = self.lock();
        let last = self.last_message.load(Ordering::Relaxed);
        StreamStats {
            reconnects: state.reconnects,
            dropped: state.dropped,
            received: self.received.load(Ordering::Relaxed),
            last_message_age: (last > 0)
                .then(|| (self.born + Duration::from_nanos(last)).elapsed()),
            connected: state.connected,
            fell_behind: state.fell_behind,
            lost: state.lost,
        }
    }

    /// Swaps everything queued into `out` (whose lanes must be empty) without waiting;
    /// `false` when nothing was queued.
    pub(crate) fn take_now(&self, out: &mut Taken<E>) -> bool {
        if !self.has_items() {
            return false;
        }
        let mut state = self.lock();
        if state.lossless.is_empty() && state.lossy.is_empty() {
            return false;
        }
        std::mem::swap(&mut state.lossless, &mut out.lossless);
        std::mem::swap(&mut state.lossy, &mut out.lossy);
        self.queued.store(0, Ordering::Release);
        true
    }

    /// Swaps everything queued into `out` (whose lanes must be empty), waiting until
    /// `deadline` (`None`: as long as it takes) for something to come. Returns `false`
    /// on time-out, or once finished and empty. The swap holds the lock for no time at
    /// all, whatever is queued, so a fast stream's thread never waits for its reader.
    /// A [`poke`](Self::poke) ends the wait too, answering `false`.
    pub(crate) fn take_all(&self, out: &mut Taken<E>, deadline: Option<Instant>) -> bool {
        let mut state = self.lock();
        let mut watched = false;
        let pokes = state.pokes;
        loop {
            if !state.lossless.is_empty() || !state.lossy.is_empty() {
                std::mem::swap(&mut state.lossless, &mut out.lossless);
                std::mem::swap(&mut state.lossy, &mut out.lossy);
                self.queued.store(0, Ordering::Release);
                return true;
            }
            if state.finished || state.pokes != pokes {
                return false;
            }
            // A busy stream refills the queue within microseconds: watch it for a few
            // microseconds before sleeping, so that neither side pays a wake-up (two
            // system calls) per event; once something is queued, a little longer for
            // more to gather.
            if !watched {
                watched = true;
                drop(state);
                let mut i = 0;
                while i < SPINS {
                    let queued = self.queued.load(Ordering::Acquire);
                    if queued >= GATHER || (queued > 0 && i >= SPINS / 8) {
                        break;
                    }
                    std::hint::spin_loop();
                    i += 1;
                }
                state = self.lock();
                continue;
            }
            state.waiting += 1;
            state = match deadline {
                None => self.ready.wait(state).unwrap_or_else(|p| p.into_inner()),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        state.waiting -= 1;
                        return false;
                    }
                    self.ready
                        .wait_timeout(state, left)
                        .map(|(guard, _)| guard)
                        .unwrap_or_else(|p| p.into_inner().0)
                }
            };
            state.waiting -= 1;
        }
    }

    /// The oldest item of either lane, waiting until `deadline` (`None`: as long as it
    /// takes); `None` on time-out or once finished and empty.
    #[cfg(test)]
    pub(crate) fn pop(&self, deadline: Option<Instant>) -> Option<Item<E>> {
        let mut taken = Taken::default();
        self.take_all(&mut taken, deadline);
        let first = taken.pop();
        // Put back what was not wanted, in front of anything newer.
        let mut state = self.lock();
        for (seq, item) in taken.lossless.into_iter().rev() {
            state.lossless.push_front((seq, item));
        }
        for (seq, item) in taken.lossy.into_iter().rev() {
            state.lossy.push_front((seq, item));
        }
        first
    }
}

/// What a reader took: both lanes of the inbox, given out oldest first, then what it
/// read itself (newer than anything it took from the inbox), in order.
pub(crate) struct Taken<E> {
    lossless: VecDeque<(u64, Item<E>)>,
    lossy: VecDeque<(u64, Item<E>)>,
    direct: VecDeque<Item<E>>,
    /// Events taken straight into the caller's hands and not yet counted in the
    /// inbox's stats.
    uncounted: u64,
}

impl<E> Default for Taken<E> {
    fn default() -> Self {
        Taken {
            lossless: VecDeque::new(),
            lossy: VecDeque::new(),
            direct: VecDeque::new(),
            uncounted: 0,
        }
    }
}

impl<E> Taken<E> {
    pub(crate) fn is_empty(&self) -> bool {
        self.lossless.is_empty() && self.lossy.is_empty() && self.direct.is_empty()
    }

    /// How many items it holds.
    pub(crate) fn len(&self) -> usize {
        self.lossless.len() + self.lossy.len() + self.direct.len()
    }

    /// Takes an item the caller read itself (see [`Inbox::direct`]).
    pub(crate) fn push_direct(&mut self, item: Item<E>) {
        self.direct.push_back(item);
    }

    /// Takes an event the caller read itself, counting it.
    pub(crate) fn push_direct_event(&mut self, item: Item<E>) {
        self.uncounted += 1;
        self.direct.push_back(item);
    }

    /// The events taken directly since the last call (to be added to the stats).
    pub(crate) fn counted(&mut self) -> u64 {
        std::mem::take(&mut self.uncounted)
    }

    /// The oldest item of either lane, then of what the caller read itself.
    pub(crate) fn pop(&mut self) -> Option<Item<E>> {
        let take_lossless = match (self.lossless.front(), self.lossy.front()) {
            (Some((a, _)), Some((b, _))) => a < b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return self.direct.pop_front(),
        };
        let next = if take_lossless {
            self.lossless.pop_front()
        } else {
            self.lossy.pop_front()
        };
        next.map(|(_, item)| item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossy_events_are_dropped_oldest_first_and_counted_lossless_never() {
        let inbox: Inbox<u32> = Inbox::new(3, 100);
        for i in 0..10 {
            inbox.push(Lane::Lossy, Ok(StreamItem::Event(i)));
        }
        inbox.push(Lane::Lossless, Ok(StreamItem::Event(100)));
        for i in 0..5 {
            inbox.push(Lane::Lossless, Ok(StreamItem::Event(200 + i)));
        }
        let soon = Some(Instant::now() + Duration::from_millis(10));
        let mut got = Vec::new();
        while let Some(Ok(StreamItem::Event(e))) = inbox.pop(soon) {
            got.push(e);
        }
        assert_eq!(got, [7, 8, 9, 100, 200, 201, 202, 203, 204]);
        let stats = inbox.stats();
        assert_eq!((stats.dropped, stats.received), (7, 16));
        inbox.finish();
        assert!(inbox.pop(None).is_none());
        assert!(inbox.is_finished());
        inbox.push(Lane::Lossless, Ok(StreamItem::Event(1)));
        assert!(inbox.is_finished(), "nothing is queued once finished");
    }

    #[test]
    fn a_full_lossless_lane_says_so_once_and_loses_until_read() {
        let inbox: Inbox<u32> = Inbox::new(10, 4);
        let mut frame: Vec<(Lane, Item<u32>)> = (0..6)
            .map(|i| (Lane::Lossless, Ok(StreamItem::Event(i))))
            .collect();
        assert!(!inbox.deliver(&mut frame, Instant::now()), "behind");
        assert!(!inbox.recovering(), "nothing read yet");
        let soon = Some(Instant::now() + Duration::from_millis(10));
        let mut got = Vec::new();
        while let Some(item) = inbox.pop(soon) {
            got.push(item);
        }
        assert_eq!(got.len(), 5, "{got:?}");
        assert!(matches!(got[4], Err(WsError::FellBehind { capacity: 4 })));
        assert!(inbox.recovering());
        let stats = inbox.stats();
        assert_eq!((stats.fell_behind, stats.lost, stats.received), (1, 2, 6));
        // A reconnect item is never lost, behind or not.
        inbox.push(
            Lane::Lossless,
            Ok(StreamItem::Reconnected {
                gap: Duration::ZERO,
                attempts: 1,
            }),
        );
        assert!(matches!(
            inbox.pop(soon),
            Some(Ok(StreamItem::Reconnected { .. }))
        ));
    }
}
