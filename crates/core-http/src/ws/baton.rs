//! Who reads the socket: the caller, on its own thread, while it waits in `next`; the
//! connection's thread while the caller is away (answering pings, keeping the timers,
//! queueing what comes), and always while disconnected or closing.
//!
//! A busy stream is read where it is consumed, with no hand-over between threads per
//! event; the connection's thread takes the socket back once the caller has been away
//! for [`AWAY`], or at once when a command waits (a subscription, a close), and gives
//! it back after its current read when the caller returns.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread::Thread;
use std::time::Duration;

/// How long the caller may stay away before the connection's thread reads for it.
pub(crate) const AWAY: Duration = Duration::from_millis(20);

/// The connection's thread holds the socket.
const WORKER: u8 = 0;
/// The caller holds it but is not reading (between two calls).
const CALLER_IDLE: u8 = 1;
/// The caller is reading it.
const CALLER_READING: u8 = 2;

pub(crate) struct Baton {
    state: AtomicU8,
    /// The caller waits for the socket: the connection's thread gives it back after its
    /// current turn.
    wanted: AtomicBool,
    /// A command waits: the connection's thread takes the socket at once.
    nudged: AtomicBool,
    /// How many times the caller stopped reading: the connection's thread takes the
    /// socket when this has not moved for [`AWAY`] while the caller holds it idle (no
    /// clock reading on the caller's path).
    releases: AtomicU64,
    worker: Mutex<Option<Thread>>,
}

impl Baton {
    /// The connection's thread holds the socket first (it replays the subscriptions).
    pub(crate) fn new() -> Self {
        Baton {
            state: AtomicU8::new(WORKER),
            wanted: AtomicBool::new(false),
            nudged: AtomicBool::new(false),
            releases: AtomicU64::new(0),
            worker: Mutex::new(None),
        }
    }

    fn unpark(&self) {
        if let Some(thread) = self
            .worker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            thread.unpark();
        }
    }

    /// Registers the connection's thread (to be woken).
    pub(crate) fn register_worker(&self) {
        *self.worker.lock().unwrap_or_else(PoisonError::into_inner) = Some(std::thread::current());
    }

    // ---- the caller's side ----

    /// Takes the socket to read it, if the caller holds it (between two calls).
    pub(crate) fn caller_take(&self) -> bool {
        self.state
            .compare_exchange(
                CALLER_IDLE,
                CALLER_READING,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// Stops reading (the caller keeps the socket until it has been away for [`AWAY`]).
    pub(crate) fn caller_release(&self) {
        self.releases.fetch_add(1, Ordering::Release);
        self.state.store(CALLER_IDLE, Ordering::Release);
    }

    /// Gives the socket to the connection's thread now (a connection that ended, which
    /// it reconnects).
    pub(crate) fn caller_hand_over(&self) {
        self.state.store(WORKER, Ordering::Release);
        self.unpark();
    }

    /// The caller waits to read: the connection's thread gives the socket back after
    /// its current turn.
    pub(crate) fn want(&self) {
        self.wanted.store(true, Ordering::Release);
    }

    /// A command waits for the connection's thread: it takes the socket at once.
    pub(crate) fn nudge(&self) {
        self.nudged.store(true, Ordering::Release);
        self.unpark();
    }

    // ---- the connection's thread's side ----

    /// Whether the connection's thread holds the socket, taking it when the caller has
    /// been away long enough (it held the socket idle, without reading, over a whole
    /// wait of [`AWAY`]) or a command waits; otherwise waits (at most `tick`) and
    /// answers `false`, to be asked again. `seen` is this thread's memory of the
    /// caller's releases.
    pub(crate) fn worker_turn(&self, tick: Duration, seen: &mut Option<u64>) -> bool {
        match self.state.load(Ordering::Acquire) {
            WORKER => true,
            CALLER_IDLE => {
                let releases = self.releases.load(Ordering::Acquire);
                let away = *seen == Some(releases);
                if self.nudged.load(Ordering::Acquire) || away {
                    // Cleared first: a caller that asks from now on is heard.
                    self.wanted.store(false, Ordering::Release);
                    if self
                        .state
                        .compare_exchange(CALLER_IDLE, WORKER, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                    {
                        self.nudged.store(false, Ordering::Release);
                        *seen = None;
                        return true;
                    }
                }
                *seen = Some(releases);
                std::thread::park_timeout(AWAY.min(tick));
                false
            }
            _ => {
                *seen = None;
                if self.nudged.load(Ordering::Acquire) {
                    // The caller reads and will run the command itself.
                    self.nudged.store(false, Ordering::Release);
                }
                // The caller reads: this thread looks again after [`AWAY`]. Nothing on
                // the caller's path wakes it (a wake per event, a system call and a
                // thread switch, cost more than the reading itself), and it never
                // interrupts a busy caller.
                std::thread::park_timeout(AWAY.min(tick));
                false
            }
        }
    }

    /// Whether the caller waits for the socket, or a command is waiting (the
    /// connection's thread runs commands itself, so only the first matters to it).
    pub(crate) fn wanted(&self) -> bool {
        self.wanted.load(Ordering::Acquire)
    }

    /// The connection's thread gives the socket back to the waiting caller.
    pub(crate) fn worker_hand_back(&self) {
        self.wanted.store(false, Ordering::Release);
        self.releases.fetch_add(1, Ordering::Release);
        self.state.store(CALLER_IDLE, Ordering::Release);
    }
}
