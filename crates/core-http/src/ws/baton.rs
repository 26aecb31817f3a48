//! Who reads the socket: the caller, on its own thread, while it waits in `next`; the
//! connection's thread while the caller is away (answering pings, keeping the timers,
//! queueing what comes), and always while disconnected or closing.
//!
//! A busy stream is read where it is consumed, with no hand-over between threads per
//! event; the connection's thread takes the socket once the caller has been away for
//! [`AWAY`] (up to [`AWAY_AT_MOST`] after steady reading; or at once when the caller
//! hands it over), and gives it back when the
//! caller returns. Nothing polls: between reads the connection's thread waits for bytes
//! on the socket (holding no lock, so the caller takes the socket straight from that
//! wait) or for its next timer; while the caller is in one long read, it sleeps until
//! the caller stops reading. An idle stream wakes only when something is due.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread::Thread;
use std::time::Duration;

/// How long the caller may stay away before the connection's thread reads for it.
pub(crate) const AWAY: Duration = Duration::from_millis(20);

/// The longest the connection's thread waits between two looks at the caller. Each
/// look that finds the caller came back since the last one doubles the wait, from
/// [`AWAY`] up to this; a look that finds it away (and takes the socket) starts again
/// at [`AWAY`]. A busy reader is thus looked at about three times a second instead of
/// fifty: each look wakes a thread, which on a machine of two processors lands in the
/// reader's latency (the quotes' p99 in `docs/benchmarks.md`).
pub(crate) const AWAY_AT_MOST: Duration = Duration::from_millis(320);

/// The connection's thread's memory of the caller between two looks.
#[derive(Debug)]
pub(crate) struct Watch {
    /// The caller's releases at the last look (`None`: no look yet since the thread
    /// last held the socket or slept through a read).
    seen: Option<u64>,
    /// How long the next look waits: [`AWAY`], doubled up to [`AWAY_AT_MOST`] while
    /// the caller keeps coming back.
    wait: Duration,
}

impl Watch {
    pub(crate) fn new() -> Self {
        Watch {
            seen: None,
            wait: AWAY,
        }
    }

    /// Remembers `releases` and waits for the next look: longer when the caller came
    /// back since the last one.
    fn look_again(&mut self, releases: u64) {
        std::thread::park_timeout(self.next_wait(releases));
    }

    /// The wait before the next look, having seen `releases` now.
    fn next_wait(&mut self, releases: u64) -> Duration {
        if self.seen.is_some_and(|seen| seen != releases) {
            self.wait = (self.wait * 2).min(AWAY_AT_MOST);
        }
        self.seen = Some(releases);
        self.wait
    }
}

/// The connection's thread holds the socket (in a turn, connecting or closing).
const WORKER: u8 = 0;
/// The caller holds it but is not reading (between two calls).
const CALLER_IDLE: u8 = 1;
/// The caller is reading it.
const CALLER_READING: u8 = 2;
/// The connection's thread holds it but only waits for bytes (or its next timer),
/// holding no lock: the caller may take it at once.
const WORKER_WAITING: u8 = 3;

/// Where the caller took the socket from ([`Baton::caller_take`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TakenFrom {
    /// It held it itself, idle.
    Idle,
    /// The connection's thread was waiting for bytes.
    Waiting,
}

pub(crate) struct Baton {
    state: AtomicU8,
    /// The caller waits for the socket: the connection's thread gives it back after its
    /// current turn.
    wanted: AtomicBool,
    /// How many times the caller stopped reading: the connection's thread takes the
    /// socket when this has not moved over a whole wait while the caller holds it idle (no
    /// clock reading on the caller's path).
    releases: AtomicU64,
    /// The connection's thread sleeps until the caller's current read ends: the caller
    /// wakes it when it stops reading (the only wake on the caller's path, and only
    /// after a read that outlasted a whole wait).
    asleep: AtomicBool,
    worker: Mutex<Option<Thread>>,
}

impl Baton {
    /// The connection's thread holds the socket first (it replays the subscriptions).
    pub(crate) fn new() -> Self {
        Baton {
            state: AtomicU8::new(WORKER),
            wanted: AtomicBool::new(false),
            releases: AtomicU64::new(0),
            asleep: AtomicBool::new(false),
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

    /// Takes the socket to read it (or to run its commands on it), if the caller holds
    /// it (between two calls) or the connection's thread only waits for bytes; says
    /// where from.
    pub(crate) fn caller_take(&self) -> Option<TakenFrom> {
        [
            (CALLER_IDLE, TakenFrom::Idle),
            (WORKER_WAITING, TakenFrom::Waiting),
        ]
        .into_iter()
        .find(|(from, _)| {
            self.state
                .compare_exchange(*from, CALLER_READING, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        })
        .map(|(_, taken)| taken)
    }

    /// Gives the socket back to the connection's thread's wait for bytes, where the
    /// caller took it from to run its commands: the thread reads what answers them as
    /// soon as it comes.
    pub(crate) fn caller_return(&self) {
        self.state.store(WORKER_WAITING, Ordering::SeqCst);
        if self.asleep.load(Ordering::SeqCst) && self.asleep.swap(false, Ordering::SeqCst) {
            self.unpark();
        }
    }

    /// Stops reading (the caller keeps the socket until it has been away for a whole
    /// wait of the connection's thread, [`AWAY`] up to [`AWAY_AT_MOST`]).
    pub(crate) fn caller_release(&self) {
        // Only the thread holding the socket moves the count (the caller here, the
        // connection's thread in `worker_hand_back`), so no read-modify-write is needed:
        // one barrier per call on the caller's path, the state's store.
        let releases = self.releases.load(Ordering::Relaxed);
        self.releases
            .store(releases.wrapping_add(1), Ordering::Release);
        self.state.store(CALLER_IDLE, Ordering::SeqCst);
        // Ordered after the state's store: a thread that went to sleep before it is
        // woken, one that looks after it sees the caller gone.
        if self.asleep.load(Ordering::SeqCst) && self.asleep.swap(false, Ordering::SeqCst) {
            self.unpark();
        }
    }

    /// Gives the socket to the connection's thread now (a connection that ended, which
    /// it reconnects; a command whose answer it is to read; a close).
    pub(crate) fn caller_hand_over(&self) {
        self.state.store(WORKER, Ordering::SeqCst);
        self.asleep.store(false, Ordering::SeqCst);
        self.unpark();
    }

    /// The caller waits to read: the connection's thread gives the socket back after
    /// its current turn (a turn never waits on the socket).
    pub(crate) fn want(&self) {
        self.wanted.store(true, Ordering::Release);
    }

    // ---- the connection's thread's side ----

    /// Whether the connection's thread holds the socket, taking it when the caller has
    /// been away long enough (it held the socket idle, without reading, over a whole
    /// wait: [`AWAY`], up to [`AWAY_AT_MOST`] while the caller keeps coming back);
    /// otherwise waits and answers `false`, to be asked again. While the caller is in
    /// one read longer than a wait, the thread sleeps until the caller stops reading.
    /// `watch` is this thread's memory of the caller.
    pub(crate) fn worker_turn(&self, watch: &mut Watch) -> bool {
        match self.state.load(Ordering::SeqCst) {
            WORKER => true,
            // Given back by the caller, who ran its commands on it.
            WORKER_WAITING => self.worker_resumes(),
            CALLER_IDLE => {
                let releases = self.releases.load(Ordering::SeqCst);
                if watch.seen == Some(releases) {
                    // Cleared first: a caller that asks from now on is heard.
                    self.wanted.store(false, Ordering::Release);
                    if self
                        .state
                        .compare_exchange(CALLER_IDLE, WORKER, Ordering::SeqCst, Ordering::SeqCst)
                        .is_ok()
                    {
                        *watch = Watch::new();
                        return true;
                    }
                }
                watch.look_again(releases);
                false
            }
            _ => {
                let releases = self.releases.load(Ordering::SeqCst);
                if watch.seen == Some(releases) {
                    // The same read for a whole wait: sleep until the caller stops
                    // reading. Nothing on the caller's path wakes this thread otherwise
                    // (a wake per event, a system call and a thread switch, costs more
                    // than the reading itself).
                    self.asleep.store(true, Ordering::SeqCst);
                    while self.asleep.load(Ordering::SeqCst)
                        && self.state.load(Ordering::SeqCst) == CALLER_READING
                        && self.releases.load(Ordering::SeqCst) == releases
                    {
                        std::thread::park();
                    }
                    self.asleep.store(false, Ordering::SeqCst);
                    // Reads that long are a quiet feed, not a busy reader: look at
                    // the caller again from the shortest wait.
                    *watch = Watch::new();
                } else {
                    watch.look_again(releases);
                }
                false
            }
        }
    }

    /// The connection's thread stops reading to wait for bytes or its next timer: the
    /// caller may take the socket meanwhile.
    pub(crate) fn worker_waits(&self) {
        self.state.store(WORKER_WAITING, Ordering::SeqCst);
    }

    /// The wait is over: `true` when the connection's thread still holds the socket
    /// (the caller did not take it meanwhile, or handed it over).
    pub(crate) fn worker_resumes(&self) -> bool {
        self.state
            .compare_exchange(WORKER_WAITING, WORKER, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
            || self.state.load(Ordering::SeqCst) == WORKER
    }

    /// Whether the caller waits for the socket.
    pub(crate) fn wanted(&self) -> bool {
        self.wanted.load(Ordering::Acquire)
    }

    /// The connection's thread gives the socket back to the waiting caller.
    pub(crate) fn worker_hand_back(&self) {
        self.wanted.store(false, Ordering::Release);
        let releases = self.releases.load(Ordering::Relaxed);
        self.releases
            .store(releases.wrapping_add(1), Ordering::Release);
        self.state.store(CALLER_IDLE, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_wait_doubles_while_the_caller_keeps_coming_back_up_to_its_bound() {
        let mut watch = Watch::new();
        // The first look has nothing to compare with.
        assert_eq!(watch.next_wait(7), AWAY);
        let waits: Vec<Duration> = (8..15).map(|releases| watch.next_wait(releases)).collect();
        assert_eq!(
            waits,
            [ms(40), ms(80), ms(160), ms(320), ms(320), ms(320), ms(320)]
        );
        assert_eq!(AWAY_AT_MOST, ms(320));
    }

    #[test]
    fn a_look_that_finds_the_same_releases_keeps_the_wait() {
        let mut watch = Watch::new();
        watch.next_wait(1);
        assert_eq!(watch.next_wait(2), ms(40));
        // The caller is still in the same read (or the count wrapped to the same
        // value): no doubling.
        assert_eq!(watch.next_wait(2), ms(40));
        assert_eq!(watch.next_wait(3), ms(80));
    }

    #[test]
    fn the_connection_thread_takes_an_idle_socket_after_one_unmoved_wait_and_starts_again() {
        let baton = Baton::new();
        baton.register_worker();
        baton.worker_hand_back();
        let mut watch = Watch::new();
        // The caller reads and stops three times between looks: the thread does not
        // take the socket, and its wait grows.
        for _ in 0..3 {
            assert!(!baton.worker_turn(&mut watch));
            assert_eq!(baton.caller_take(), Some(TakenFrom::Idle));
            baton.caller_release();
        }
        assert_eq!(watch.wait, ms(80));
        // One look later with no release in between: the caller is away.
        assert!(!baton.worker_turn(&mut watch));
        assert!(baton.worker_turn(&mut watch));
        assert_eq!(watch.wait, AWAY);
        assert_eq!(watch.seen, None);
        // The caller cannot take a socket the thread holds.
        assert_eq!(baton.caller_take(), None);
    }
}
