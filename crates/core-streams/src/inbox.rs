//! The queue between a stream's thread and its caller: a lossless lane that keeps
//! everything up to its capacity (then says the reader fell behind), a bounded lossy
//! lane that drops its oldest events (counting them), both read in arrival order, and
//! the stream's counters. The connection's thread queues each read's events under one
//! lock; the caller takes everything queued in one swap.

use std::collections::VecDeque;
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

struct State<E> {
    lossless: VecDeque<(u64, Item<E>)>,
    lossy: VecDeque<(u64, Item<E>)>,
    next: u64,
    finished: bool,
    reconnects: u64,
    dropped: u64,
    received: u64,
    last_message: Option<Instant>,
    connected: bool,
    /// A caller waits in [`Inbox::take`]: a push wakes it only then.
    waiting: bool,
    /// The lossless lane filled up: its events are lost until [`Inbox::recovering`].
    behind: bool,
    fell_behind: u64,
    lost: u64,
}

pub(crate) struct Inbox<E> {
    state: Mutex<State<E>>,
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
                received: 0,
                last_message: None,
                connected: true,
                waiting: false,
                behind: false,
                fell_behind: 0,
                lost: 0,
            }),
            ready: Condvar::new(),
            capacity,
            lossless_capacity,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<E>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues one item on a lane.
    pub(crate) fn push(&self, lane: Lane, item: Item<E>) {
        let mut state = self.lock();
        Self::queue(
            &mut state,
            self.capacity,
            self.lossless_capacity,
            lane,
            item,
        );
        self.wake(state);
    }

    /// Queues the items of one read, which arrived at `at`, under one lock. Returns
    /// `false` when the caller has fallen behind on the lossless lane (the connection
    /// is to be dropped).
    pub(crate) fn deliver(&self, items: &mut Vec<(Lane, Item<E>)>, at: Instant) -> bool {
        let mut state = self.lock();
        state.last_message = Some(at);
        for (lane, item) in items.drain(..) {
            Self::queue(
                &mut state,
                self.capacity,
                self.lossless_capacity,
                lane,
                item,
            );
        }
        let behind = state.behind;
        self.wake(state);
        !behind
    }

    fn queue(
        state: &mut State<E>,
        capacity: usize,
        lossless_capacity: usize,
        lane: Lane,
        item: Item<E>,
    ) {
        if state.finished {
            // Closed: nothing more reaches the caller.
            return;
        }
        let seq = state.next;
        state.next += 1;
        let event = matches!(item, Ok(StreamItem::Event(_)));
        if event {
            state.received += 1;
        }
        match lane {
            Lane::Lossless if event && state.behind => state.lost += 1,
            Lane::Lossless if event && state.lossless.len() >= lossless_capacity => {
                // The error takes the place of the first event lost.
                state.behind = true;
                state.fell_behind += 1;
                state.lost += 1;
                state.lossless.push_back((
                    seq,
                    Err(WsError::FellBehind {
                        capacity: lossless_capacity,
                    }),
                ));
            }
            Lane::Lossless => state.lossless.push_back((seq, item)),
            Lane::Lossy => {
                if state.lossy.len() >= capacity {
                    state.lossy.pop_front();
                    state.dropped += 1;
                }
                state.lossy.push_back((seq, item));
            }
        }
    }

    /// Wakes the caller if it waits (a wake costs a system call; a caller busy with
    /// what it took needs none).
    fn wake(&self, mut state: MutexGuard<'_, State<E>>) {
        let waiting = std::mem::take(&mut state.waiting);
        drop(state);
        if waiting {
            self.ready.notify_one();
        }
    }

    /// Records that a frame arrived now.
    pub(crate) fn touched(&self) {
        self.lock().last_message = Some(core_http::service::now());
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
        drop(state);
        self.ready.notify_all();
    }

    /// Whether the stream ended and nothing is left to read.
    pub(crate) fn is_finished(&self) -> bool {
        let state = self.lock();
        state.finished && state.lossless.is_empty() && state.lossy.is_empty()
    }

    /// Lossy events dropped so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    pub(crate) fn stats(&self) -> StreamStats {
        let state = self.lock();
        StreamStats {
            reconnects: state.reconnects,
            dropped: state.dropped,
            received: state.received,
            last_message_age: state.last_message.map(|at| at.elapsed()),
            connected: state.connected,
            fell_behind: state.fell_behind,
            lost: state.lost,
        }
    }

    /// Swaps everything queued into `out` (whose lanes must be empty), waiting until
    /// `deadline` (`None`: as long as it takes) for something to come. `false` on
    /// time-out, or once finished and empty. The swap holds the lock for no time at
    /// all, whatever is queued, so a fast stream's thread never waits for its reader.
    pub(crate) fn take(&self, out: &mut Taken<E>, deadline: Option<Instant>) -> bool {
        let mut state = self.lock();
        loop {
            if !state.lossless.is_empty() || !state.lossy.is_empty() {
                std::mem::swap(&mut state.lossless, &mut out.lossless);
                std::mem::swap(&mut state.lossy, &mut out.lossy);
                return true;
            }
            if state.finished {
                return false;
            }
            state.waiting = true;
            state = match deadline {
                None => self.ready.wait(state).unwrap_or_else(|p| p.into_inner()),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(core_http::service::now());
                    if left.is_zero() {
                        state.waiting = false;
                        return false;
                    }
                    self.ready
                        .wait_timeout(state, left)
                        .map(|(guard, _)| guard)
                        .unwrap_or_else(|p| p.into_inner().0)
                }
            };
        }
    }
}

/// What a reader took: both lanes of the inbox, given out oldest first.
pub(crate) struct Taken<E> {
    lossless: VecDeque<(u64, Item<E>)>,
    lossy: VecDeque<(u64, Item<E>)>,
}

impl<E> Default for Taken<E> {
    fn default() -> Self {
        Taken {
            lossless: VecDeque::new(),
            lossy: VecDeque::new(),
        }
    }
}

impl<E> Taken<E> {
    pub(crate) fn is_empty(&self) -> bool {
        self.lossless.is_empty() && self.lossy.is_empty()
    }

    /// The oldest item of either lane.
    pub(crate) fn pop(&mut self) -> Option<Item<E>> {
        let take_lossless = match (self.lossless.front(), self.lossy.front()) {
            (Some((a, _)), Some((b, _))) => a < b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
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

    fn drain(inbox: &Inbox<u32>) -> Vec<Item<u32>> {
        let mut taken = Taken::default();
        let mut out = Vec::new();
        while inbox.take(
            &mut taken,
            Some(core_http::service::now() + Duration::from_millis(10)),
        ) {
            while let Some(item) = taken.pop() {
                out.push(item);
            }
        }
        out
    }

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
        let got: Vec<u32> = drain(&inbox)
            .into_iter()
            .filter_map(|i| match i {
                Ok(StreamItem::Event(e)) => Some(e),
                _ => None,
            })
            .collect();
        assert_eq!(got, [7, 8, 9, 100, 200, 201, 202, 203, 204]);
        let stats = inbox.stats();
        assert_eq!((stats.dropped, stats.received), (7, 16));
        inbox.finish();
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
        assert!(
            !inbox.deliver(&mut frame, core_http::service::now()),
            "behind"
        );
        assert!(!inbox.recovering(), "nothing read yet");
        let got = drain(&inbox);
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
            drain(&inbox).first(),
            Some(Ok(StreamItem::Reconnected { .. }))
        ));
    }
}
