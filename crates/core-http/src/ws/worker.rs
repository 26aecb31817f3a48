//! The connection's thread: it owns the socket while the caller is away, sleeps until
//! the socket has bytes, the caller wakes it or its next timer is due (an idle stream
//! costs no wake-ups), answers pings and sends its own, runs the caller's commands,
//! decodes frames into the inbox, notices death and staleness, and reconnects with
//! backoff, replaying the subscriptions.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use log::debug;

use super::baton::{Baton, Watch};
use super::conn::{self, Next};
use super::ending::Ended;

use super::inbox::Inbox;
use super::request::Requests;
use super::transport::Abort;
use super::transport::Socket;
use super::{Command, Confirm, Inbound, Lane, Protocol, StreamConfig, StreamItem};
use crate::observe::StreamEvent;
use crate::url::strip_query;

/// How often a busy connection looks at its timers, flushes, and reads the caller's
/// commands (a waiting command is read at once, before the next read).
pub(super) const CHECK_EVERY: Duration = Duration::from_millis(5);

/// One live connection.
pub(super) struct Live {
    pub(super) socket: Socket,
    pub(super) since: Instant,
    pub(super) last_in: Instant,
    pub(super) last_out: Instant,
    /// Subscription messages sent and not yet acknowledged, and by when they must be.
    pub(super) outstanding: usize,
    pub(super) ack_deadline: Option<Instant>,
    /// After a reconnect: the `Reconnected` item to give once the replay is acknowledged.
    pub(super) announce: Option<(Duration, u32)>,
    /// The caller fell behind on the lossless lane: the connection is to be dropped.
    pub(super) behind: bool,
    /// When the timers are next looked at.
    pub(super) next_check: Instant,
    /// The same socket, for the connection's thread to wait for bytes on without the
    /// lock ([`Worker::wait_for_bytes`]), and the flag it raises when it changes the
    /// socket's receive timeout.
    pub(super) peek: Arc<TcpStream>,
    pub(super) retimed: Arc<AtomicBool>,
}

impl Live {
    /// Whether the server has already closed the connection (its end waits to be read,
    /// nothing before it), found without blocking: something to send then waits for the
    /// next connection instead of going into one that is gone. The socket is made
    /// non-blocking for the one look (the thread that holds it is this one; a wait on
    /// the other handle that starts meanwhile only wakes early).
    pub(super) fn peer_closed(&self) -> bool {
        if self.peek.set_nonblocking(true).is_err() {
            return false;
        }
        let mut byte = [0u8; 1];
        let closed = match self.peek.peek(&mut byte) {
            Ok(n) => n == 0,
            Err(e) => !matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ),
        };
        let _ = self.peek.set_nonblocking(false);
        closed
    }
}

/// How serving the connection on this thread stopped.
pub(super) enum Served {
    /// The connection ended.
    Ended(Ended),
    /// The caller wants the socket back.
    HandBack,
    /// Nothing to read: wait for bytes on this handle, whose receive timeout ends at
    /// the next timer.
    Wait(Waiting),
}

/// A wait for bytes on the socket, without the lock.
pub(super) struct Waiting {
    peek: Arc<TcpStream>,
    retimed: Arc<AtomicBool>,
    /// The socket's receive timeout: until the next timer.
    timeout: Duration,
}

/// The connection's state, behind one lock: held by whichever thread reads the socket.
pub(super) struct Core<P: Protocol> {
    pub(super) worker: Worker<P>,
    pub(super) live: Option<Live>,
    /// Reconnection attempts made in a row.
    pub(super) attempts: u32,
    /// How the connection ended on the caller's thread, for this thread to act on.
    pub(super) ended: Option<Ended>,
}

impl<P: Protocol> Core<P> {
    /// Acts on how the connection ended: `false` when the stream is over, `true` once
    /// a new connection is up.
    fn after(&mut self, ended: Ended) -> bool {
        match ended {
            Ended::Closed => false,
            Ended::Fatal(error) => {
                self.worker.requests.connection_lost();
                debug!("stream {}: ended: {error}", self.worker.shown);
                self.worker.inbox.push(Lane::Lossless, Err(error));
                false
            }
            Ended::Lost(reason, next) => {
                debug!("stream {}: connection lost: {reason}", self.worker.shown);
                self.worker
                    .config
                    .observer
                    .stream(StreamEvent::Lost { reason });
                if let Some(live) = self.live.take() {
                    live.socket.get_ref().shutdown();
                }
                self.worker.requests.connection_lost();
                self.worker.inbox.set_connected(false);
                let down_since = Instant::now();
                match self.worker.reconnect(next, down_since, self.attempts) {
                    Some((new, used)) => {
                        self.live = Some(new);
                        self.attempts = used;
                        true
                    }
                    None => false,
                }
            }
        }
    }
}

/// What the caller and the connection's thread share.
pub(super) struct Shared<P: Protocol> {
    core: Mutex<Core<P>>,
    pub(super) baton: Baton,
    pub(super) inbox: Arc<Inbox<P::Event>>,
}

impl<P: Protocol> Shared<P> {
    pub(super) fn new(worker: Worker<P>, inbox: Arc<Inbox<P::Event>>) -> Self {
        Shared {
            core: Mutex::new(Core {
                worker,
                live: None,
                attempts: 0,
                ended: None,
            }),
            baton: Baton::new(),
            inbox,
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Core<P>> {
        self.core.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

pub(super) struct Worker<P: Protocol> {
    pub(super) config: StreamConfig,
    pub(super) protocol: P,
    pub(super) inbox: Arc<Inbox<P::Event>>,
    pub(super) commands: mpsc::Receiver<Command<P>>,
    /// Messages the caller sent while disconnected.
    pub(super) pending: VecDeque<String>,
    /// Requests waiting for a connection or for their answer.
    pub(super) requests: Requests,
    /// When each channel last had an event, for the staleness timers.
    pub(super) last_seen: HashMap<&'static str, Instant>,
    /// Callers waiting for their subscription's acknowledgement: how many acks each
    /// still needs (0: settled by the next replay's acknowledgement).
    pub(super) confirmations: VecDeque<(usize, Confirm)>,
    pub(super) shown: String,
    /// Buffers reused for every frame: what it decoded to, what goes to the inbox.
    pub(super) decoded: Vec<Inbound<P::Event>>,
    pub(super) events: Vec<(Lane, super::inbox::Item<P::Event>)>,
    pub(super) abort: Arc<Abort>,
    /// Commands sent and not yet read (counted by the sender before it sends).
    pub(super) commands_waiting: Arc<AtomicUsize>,
    /// The time of the last turn.
    pub(super) now: Instant,
    /// Lossy events dropped, as last told to the observer.
    pub(super) reported_drops: u64,
    /// The caller reads on through what is buffered, without waiting: its turns take
    /// the clock of the first (no time passes in a read that cannot block).
    pub(super) reuse_clock: bool,
    /// The last read found nothing (a time-out, or nothing buffered without waiting).
    pub(super) quiet: bool,
}

impl<P: Protocol> Worker<P> {
    pub(super) fn new(
        config: StreamConfig,
        protocol: P,
        inbox: Arc<Inbox<P::Event>>,
        commands: mpsc::Receiver<Command<P>>,
        commands_waiting: Arc<AtomicUsize>,
        abort: Arc<Abort>,
    ) -> Self {
        let shown = strip_query(&config.url).to_owned();
        Worker {
            config,
            protocol,
            inbox,
            commands,
            pending: VecDeque::new(),
            requests: Requests::default(),
            last_seen: HashMap::new(),
            confirmations: VecDeque::new(),
            shown,
            decoded: Vec::new(),
            events: Vec::new(),
            abort,
            commands_waiting,
            now: Instant::now(),
            reuse_clock: false,
            quiet: false,
            reported_drops: 0,
        }
    }

    /// Serves the stream on its own thread: while the caller is away (or the stream is
    /// connecting, reconnecting or closing) it reads the socket; when the caller comes
    /// to read, it gives the socket back after its current turn (see [`super::baton`]).
    pub(super) fn run(shared: Arc<Shared<P>>, first: Socket) {
        shared.baton.register_worker();
        {
            let mut guard = shared.lock();
            let core = &mut *guard;
            match core.worker.start(first, None) {
                Ok(live) => {
                    core.live = Some(live);
                    let url = core.worker.shown.clone();
                    core.worker
                        .config
                        .observer
                        .stream(StreamEvent::Connected { url });
                }
                Err(reason) => core.ended = Some(Ended::Lost(reason, Next::Retry)),
            }
        }
        let mut watch = Watch::new();
        let mut readable = false;
        loop {
            if !shared.baton.worker_turn(&mut watch) {
                continue;
            }
            let mut guard = shared.lock();
            let core = &mut *guard;
            let served = match (core.ended.take(), core.live.as_mut()) {
                (Some(ended), _) => Served::Ended(ended),
                (None, Some(live)) => core.worker.serve(
                    live,
                    &mut core.attempts,
                    &shared.baton,
                    std::mem::take(&mut readable),
                ),
                (None, None) => Served::Ended(Ended::Lost("not connected".into(), Next::Retry)),
            };
            match served {
                Served::HandBack => {
                    drop(guard);
                    shared.baton.worker_hand_back();
                    shared.inbox.poke();
                }
                Served::Wait(waiting) => {
                    let commands = core.worker.commands_waiting.clone();
                    drop(guard);
                    readable = Self::wait_for_bytes(&shared.baton, &waiting, &commands);
                }
                Served::Ended(ended) => {
                    if !core.after(ended) {
                        break;
                    }
                }
            }
        }
        {
            let mut core = shared.lock();
            core.worker.requests.ended();
            core.worker.config.observer.stream(StreamEvent::Ended);
        }
        shared.inbox.finish();
    }

    /// Tries to connect again until it works, the caller closes, or an error ends the
    /// stream. Returns the new connection and the attempts made in a row so far.
    fn reconnect(
        &mut self,
        mut next: Next,
        down_since: Instant,
        mut attempts: u32,
    ) -> Option<(Live, u32)> {
        loop {
            let delay = match next {
                Next::Cooldown => self.config.reconnect.cooldown,
                _ => self
                    .config
                    .reconnect
                    .backoff
                    .delay(attempts, crate::random::unit_f64()),
            };
            debug!(
                "stream {}: reconnecting in {delay:?} (attempt {})",
                self.shown,
                attempts + 1
            );
            if !self.wait(delay) {
                return None;
            }
            // A caller that fell behind reads half of what waits before more comes.
            while !self.inbox.recovering() {
                if !self.wait(self.config.tick) {
                    return None;
                }
            }
            if self.abort.is_aborted() {
                return None;
            }
            attempts += 1;
            match conn::connect(&self.config, &self.abort) {
                Ok(socket) => {
                    self.inbox.reconnected();
                    let gap = down_since.elapsed();
                    match self.start(socket, Some((gap, attempts))) {
                        Ok(live) => {
                            self.config
                                .observer
                                .stream(StreamEvent::Reconnected { gap, attempts });
                            return Some((live, attempts));
                        }
                        Err(reason) => {
                            debug!("stream {}: lost at once: {reason}", self.shown);
                            next = Next::Retry;
                        }
                    }
                }
                Err(failure) => {
                    debug!("stream {}: reconnect failed: {}", self.shown, failure.error);
                    if failure.next == Next::Stop
                        || self
                            .config
                            .reconnect
                            .max_attempts
                            .is_some_and(|max| attempts >= max)
                    {
                        self.inbox.push(Lane::Lossless, Err(failure.error));
                        return None;
                    }
                    next = failure.next;
                }
            }
        }
    }

    /// Starts using a new connection: replays the subscriptions and sends what the
    /// caller queued meanwhile.
    fn start(&mut self, socket: Socket, announce: Option<(Duration, u32)>) -> Result<Live, String> {
        let now = Instant::now();
        let peek = socket
            .get_ref()
            .tcp()
            .stream
            .try_clone()
            .map_err(|e| format!("cannot share the socket: {e}"))?;
        let socket_retimed = socket.get_ref().tcp().retimed.clone();
        let mut live = Live {
            socket,
            since: now,
            last_in: now,
            last_out: now,
            outstanding: 0,
            ack_deadline: None,
            announce,
            behind: false,
            next_check: now,
            peek: Arc::new(peek),
            retimed: socket_retimed,
        };
        self.inbox.set_connected(true);
        self.inbox.touched();
        for message in self.protocol.replay() {
            self.write(&mut live, message).map_err(|e| e.to_string())?;
            live.outstanding += 1;
        }
        if live.outstanding > 0 {
            live.ack_deadline = Some(now + self.config.ack_timeout);
        } else {
            if let Some((lane, item)) = self.announce(&mut live) {
                self.inbox.push(lane, item);
            }
        }
        while let Some(message) = self.pending.pop_front() {
            self.write(&mut live, message).map_err(|e| e.to_string())?;
        }
        // Written after the replay, so that the service sees the subscriptions first.
        for message in self.requests.take_queued() {
            self.write(&mut live, message).map_err(|e| e.to_string())?;
        }
        Ok(live)
    }

    /// Settles the waiting subscriptions; after a reconnect, returns the `Reconnected`
    /// item, to be queued after whatever came before it.
    pub(super) fn announce(
        &mut self,
        live: &mut Live,
    ) -> Option<(Lane, super::inbox::Item<P::Event>)> {
        // Whatever was subscribed before this connection is now acknowledged.
        for (_, confirm) in self.confirmations.drain(..) {
            let _ = confirm.send(Ok(()));
        }
        let (gap, attempts) = live.announce.take()?;
        debug!("stream {}: reconnected after {gap:?}", self.shown);
        Some((
            Lane::Lossless,
            Ok(StreamItem::Reconnected { gap, attempts }),
        ))
    }

    /// Serves the connection on this thread until it ends, the caller wants to read, or
    /// nothing is left to read ([`Served::Wait`]: the thread then waits for bytes
    /// without the lock). Reads never block here: they take what is buffered, and the
    /// socket once `readable` (a wait found bytes on it).
    fn serve(
        &mut self,
        live: &mut Live,
        attempts: &mut u32,
        baton: &Baton,
        readable: bool,
    ) -> Served {
        live.socket.get_mut().set_polled(true);
        if readable {
            live.socket.get_mut().arm();
        }
        let served = loop {
            if let Some(ended) = self.turn(live, attempts, None) {
                break Served::Ended(ended);
            }
            if baton.wanted() {
                break Served::HandBack;
            }
            if self.quiet {
                let due = self.next_due(live).max(live.next_check);
                let left = due.saturating_duration_since(Instant::now());
                live.socket.get_mut().read_within(left);
                break Served::Wait(Waiting {
                    peek: live.peek.clone(),
                    retimed: live.retimed.clone(),
                    timeout: live.socket.get_ref().tcp().read_timeout.unwrap_or(left),
                });
            }
        };
        live.socket.get_mut().set_polled(false);
        served
    }

    /// Waits, holding no lock, until the socket has bytes (or has ended) or its receive
    /// timeout (the next timer) passes, letting the caller take the socket meanwhile.
    /// `true` when this thread still holds the socket and there are bytes to read.
    fn wait_for_bytes(baton: &Baton, waiting: &Waiting, commands: &AtomicUsize) -> bool {
        baton.worker_waits();
        // A command queued as this thread stopped reading (its sender found the thread
        // busy and left it to it): run it first.
        if commands.load(Ordering::SeqCst) > 0 {
            baton.worker_resumes();
            return false;
        }
        let started = Instant::now();
        let mut byte = [0u8; 1];
        let readable = loop {
            match waiting.peek.peek(&mut byte) {
                // Bytes, or the end of the connection: the read says which.
                Ok(_) => break true,
                // A signal handled meanwhile is not an event: wait on, for what is left
                // of the time (each wait starts the socket's timeout again).
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    let left = waiting.timeout.saturating_sub(started.elapsed());
                    if left.is_zero() {
                        break false;
                    }
                    let _ = waiting.peek.set_read_timeout(Some(left));
                    waiting.retimed.store(true, Ordering::Release);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    break false;
                }
                Err(_) => break true,
            }
        };
        baton.worker_resumes() && readable
    }
}
