//! The queue between a stream's thread and its caller: a lossless lane that keeps
//! everything, a bounded lossy lane that drops its oldest events (counting them), both
//! read in arrival order, and the stream's counters.

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
}

type Item<E> = Result<StreamItem<E>, WsError>;

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
}

pub(crate) struct Inbox<E> {
    state: Mutex<State<E>>,
    ready: Condvar,
    capacity: usize,
}

impl<E> Inbox<E> {
    pub(crate) fn new(capacity: usize) -> Self {
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
            }),
            ready: Condvar::new(),
            capacity,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<E>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues an item on a lane.
    pub(crate) fn push(&self, lane: Lane, item: Item<E>) {
        let mut state = self.lock();
        let seq = state.next;
        state.next += 1;
        if matches!(item, Ok(StreamItem::Event(_))) {
            state.received += 1;
        }
        match lane {
            Lane::Lossless => state.lossless.push_back((seq, item)),
            Lane::Lossy => {
                if state.lossy.len() >= self.capacity {
                    state.lossy.pop_front();
                    state.dropped += 1;
                }
                state.lossy.push_back((seq, item));
            }
        }
        drop(state);
        self.ready.notify_one();
    }

    /// Records that a frame arrived now.
    pub(crate) fn touched(&self) {
        self.lock().last_message = Some(Instant::now());
    }

    pub(crate) fn set_connected(&self, connected: bool) {
        self.lock().connected = connected;
    }

    pub(crate) fn reconnected(&self) {
        self.lock().reconnects += 1;
    }

    /// No more items will come.
    pub(crate) fn finish(&self) {
        let mut state = self.lock();
        state.finished = true;
        state.connected = false;
        drop(state);
        self.ready.notify_all();
    }

    pub(crate) fn is_finished(&self) -> bool {
        let state = self.lock();
        state.finished && state.lossless.is_empty() && state.lossy.is_empty()
    }

    pub(crate) fn stats(&self) -> StreamStats {
        let state = self.lock();
        StreamStats {
            reconnects: state.reconnects,
            dropped: state.dropped,
            received: state.received,
            last_message_age: state.last_message.map(|t| t.elapsed()),
            connected: state.connected,
        }
    }

    /// The oldest item of either lane, waiting until `deadline` (`None`: as long as it
    /// takes); `None` on time-out or once finished and empty.
    pub(crate) fn pop(&self, deadline: Option<Instant>) -> Option<Item<E>> {
        let mut state = self.lock();
        loop {
            let take_lossless = match (state.lossless.front(), state.lossy.front()) {
                (Some((a, _)), Some((b, _))) => Some(a < b),
                (Some(_), None) => Some(true),
                (None, Some(_)) => Some(false),
                (None, None) => None,
            };
            match take_lossless {
                Some(true) => return state.lossless.pop_front().map(|(_, item)| item),
                Some(false) => return state.lossy.pop_front().map(|(_, item)| item),
                None if state.finished => return None,
                None => {}
            }
            state = match deadline {
                None => self.ready.wait(state).unwrap_or_else(|p| p.into_inner()),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossy_events_are_dropped_oldest_first_and_counted_lossless_never() {
        let inbox: Inbox<u32> = Inbox::new(3);
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
    }
}
