//! Reconnecting blocking WebSocket streams (feature `ws`), for services that push events.
//!
//! A [`Stream`] owns one connection through a background thread, so a slow caller never
//! stalls the protocol: the thread answers pings and sends its own after 20 s of quiet,
//! declares the connection dead after 60 s without any inbound frame, reconnects with
//! capped exponential backoff and full jitter (1 s doubling to 30 s, reset after 60 s
//! healthy; a 90 s cool-down after an upgrade refused with 429 or 406), replays the
//! subscriptions and checks they are acknowledged, then yields
//! [`StreamItem::Reconnected`]. The caller reads from a queue with two lanes, both
//! bounded (see below). A [`Session`] puts a service's own handling on top (recovery
//! after a reconnect, de-duplication), on the caller's thread and within the caller's
//! timeout.
//!
//! What the service says on the wire is the service crate's: it implements [`Protocol`]
//! (the subscription messages, decoding frames into its events, recognising
//! acknowledgements) and [`Handler`]. This module knows no service.
//!
//! - **Connect**: one deadline, the connect timeout, over all of it: name resolution,
//!   TCP, TLS (one rustls configuration built with the ring provider and the client's
//!   roots, no process-wide provider), and the HTTP upgrade, on the first connection and
//!   on every reconnect. A server that trickles its answer is cut off at the deadline.
//! - **Close**: [`Stream::close`] and drop return within the close timeout (5 s) in
//!   every state (connecting, upgrading, in the middle of a message, blocked on a write
//!   to a peer that does not read): a close handshake is tried for most of it, then the
//!   socket is shut down from the caller's thread and the connection's thread is left
//!   to end on its own.
//! - **Memory**: messages up to 16 MiB (read 16 KiB at a time), a bounded write buffer.
//!   The lossy lane (market quotes, and messages of a type the service does not know)
//!   keeps 10,000 events and drops the oldest, counted in [`StreamStats::dropped`]. The
//!   lossless lane keeps 10,000 events ([`StreamConfig::lossless_capacity`]): when a
//!   caller that stopped reading lets it fill, the stream gives [`WsError::FellBehind`]
//!   where the loss began, drops the connection, waits for the caller to read half the
//!   lane, and reconnects, so the service's recovery after [`StreamItem::Reconnected`]
//!   rebuilds what was missed.
//! - **Close codes and upgrade answers**: 401/403 and policy or protocol close codes
//!   (1002, 1003, 1007, 1008, 1009, 1010, 1015) end the stream with an error; 1000, 1001,
//!   1006, 1011, 1012, 1013, other codes and 5xx answers reconnect; 429 and 406 reconnect
//!   after the cool-down. A `101` without the right `Sec-WebSocket-Accept` is refused.
//! - **Secrets**: the upgrade request is written by this module, not by tungstenite, so
//!   the auth header reaches no logger of any crate at any level; frame payloads are
//!   logged only at `trace`.

mod baton;
mod client;
mod commands;
mod config;
mod conn;
mod ending;
pub(crate) mod error;
mod inbox;
mod request;
mod session;
mod transport;
mod turn;
mod worker;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::Result;

pub use config::{ReconnectPolicy, StreamConfig};
pub use error::WsError;
pub use inbox::StreamStats;
pub use session::{Handler, Session, WAIT_HOLDS};

/// Which queue an event goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lane {
    /// Never dropped (orders, fills, account changes, world events).
    Lossless,
    /// Bounded; the oldest is dropped when the caller falls behind (market quotes).
    Lossy,
}

/// What a frame from the server held.
#[derive(Debug)]
#[non_exhaustive]
pub enum Inbound<E> {
    /// An event for the caller.
    Event {
        /// The event.
        event: E,
        /// Its queue.
        lane: Lane,
        /// The channel it belongs to, for the optional staleness timers.
        channel: Option<&'static str>,
    },
    /// The server acknowledged one subscription message.
    Ack,
    /// The server refused a subscription (or said something else is wrong): given to
    /// the caller as an error item; the stream goes on.
    Refused(String),
    /// A message the service knows but could not read (a field it needs is missing or
    /// unreadable): given to the caller as [`WsError::Undecodable`] on the lossless
    /// lane, never dropped and never read as a default; the stream goes on.
    Invalid(String),
    /// The server's answer to a request ([`Stream::request`]) with this id: accepted,
    /// with the whole message, or refused with the server's code and reason.
    Reply {
        /// The request's id.
        id: String,
        /// The whole answer (`Ok`), or the refusal's code and reason (`Err`).
        outcome: std::result::Result<String, (String, String)>,
    },
}

impl<E> Inbound<E> {
    /// An event on the lossless lane.
    pub fn lossless(event: E) -> Self {
        Inbound::Event {
            event,
            lane: Lane::Lossless,
            channel: None,
        }
    }

    /// An event on the lossy lane.
    pub fn lossy(event: E) -> Self {
        Inbound::Event {
            event,
            lane: Lane::Lossy,
            channel: None,
        }
    }

    /// The same event, belonging to `channel` (for staleness timers).
    pub fn on_channel(self, name: &'static str) -> Self {
        match self {
            Inbound::Event { event, lane, .. } => Inbound::Event {
                event,
                lane,
                channel: Some(name),
            },
            other => other,
        }
    }
}

/// A service's stream protocol: how to subscribe, and what frames mean. It lives on the
/// connection's thread and keeps the subscription state, which is replayed after every
/// reconnect.
pub trait Protocol: Send + 'static {
    /// The service's events.
    type Event: Send + 'static;
    /// What a caller subscribes to.
    type Subscription: Send + 'static;

    /// Records a subscription; returns the messages that ask the server for it now.
    fn subscribe(&mut self, subscription: &Self::Subscription) -> Vec<String>;

    /// Forgets a subscription; returns the messages that tell the server.
    fn unsubscribe(&mut self, subscription: &Self::Subscription) -> Vec<String>;

    /// The messages that re-create every current subscription on a new connection. Each
    /// is expected to be acknowledged once ([`Inbound::Ack`]).
    fn replay(&self) -> Vec<String>;

    /// Decodes one text (or UTF-8 binary) frame, appending what it held to `out` (a
    /// buffer the connection's thread reuses, so a busy stream allocates none per
    /// frame).
    fn decode(&mut self, frame: &str, out: &mut Vec<Inbound<Self::Event>>);
}

/// What a stream yields besides errors.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamItem<E> {
    /// An event from the server.
    Event(E),
    /// The connection was lost and is back, its subscriptions replayed and acknowledged.
    /// Events sent while it was down may be missing: `gap` is how long it was down.
    Reconnected {
        /// How long the stream was disconnected.
        gap: Duration,
        /// The reconnection attempts it took.
        attempts: u32,
    },
}

/// Where the connection's thread confirms a subscription (acknowledged or refused).
type Confirm = mpsc::Sender<std::result::Result<(), WsError>>;

/// How many frames the caller reads on, without waiting, through what is already
/// buffered when it reads the socket itself: enough to spare the lock, the clock and the
/// hand-over for most events of a burst, few enough that the first event of a burst
/// waits only for a few more to be decoded.
const BATCH: usize = 32;

/// A command from the caller to the connection's thread.
enum Command<P: Protocol> {
    Subscribe(P::Subscription, Option<Confirm>),
    Unsubscribe(P::Subscription),
    Send(String),
    Request(request::Request),
    Close,
}

/// A reconnecting stream of a service's events. Iterate it (each item waits), or call
/// [`next_timeout`](Self::next_timeout); [`close`](Self::close) ends it with a close
/// handshake. Dropping it closes it too.
pub struct Stream<P: Protocol> {
    inbox: Arc<inbox::Inbox<P::Event>>,
    /// The connection's state and who reads the socket, shared with its thread.
    shared: Arc<worker::Shared<P>>,
    /// Commands sent and not yet read by the connection.
    commands_waiting: Arc<AtomicUsize>,
    /// Items taken from the inbox in one swap, not yet given to the caller.
    taken: inbox::Taken<P::Event>,
    commands: mpsc::Sender<Command<P>>,
    thread: Option<JoinHandle<()>>,
    /// Disconnected when the connection's thread ends.
    done: mpsc::Receiver<()>,
    abort: Arc<transport::Abort>,
    close_timeout: Duration,
}

impl<P: Protocol> fmt::Debug for Stream<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl<P: Protocol> Stream<P> {
    /// Connects (the first connection is made before this returns, so a refusal is an
    /// error here), sends the protocol's current subscriptions, and starts the
    /// connection's thread.
    pub fn connect(config: StreamConfig, protocol: P) -> Result<Stream<P>> {
        let abort = Arc::new(transport::Abort::default());
        let conn = conn::connect(&config, &abort).map_err(crate::Error::from)?;
        let inbox = Arc::new(inbox::Inbox::new(
            config.lossy_capacity,
            config.lossless_capacity,
        ));
        let (commands, receiver) = mpsc::channel();
        let (finished, done) = mpsc::channel::<()>();
        let close_timeout = config.close_timeout;
        let commands_waiting = Arc::new(AtomicUsize::new(0));
        let worker = worker::Worker::new(
            config,
            protocol,
            inbox.clone(),
            receiver,
            commands_waiting.clone(),
            abort.clone(),
        );
        let shared = Arc::new(worker::Shared::new(worker, inbox.clone()));
        let on_thread = shared.clone();
        let thread = std::thread::Builder::new()
            .name("core-http-stream".into())
            .spawn(move || {
                // Dropped when the thread ends, however it ends: what `close` waits for.
                let _finished = finished;
                worker::Worker::run(on_thread, conn);
            })
            .map_err(|e| crate::Error::config(format!("cannot start the stream's thread: {e}")))?;
        Ok(Stream {
            inbox,
            shared,
            commands_waiting,
            taken: inbox::Taken::default(),
            commands,
            thread: Some(thread),
            done,
            abort,
            close_timeout,
        })
    }

    /// Sends a command to whichever thread holds the connection: counted first, so that
    /// it is read before the next read of the socket, then run at once on this thread
    /// when it can take the socket (see [`run_commands`](Self::run_commands)).
    fn command(&self, command: Command<P>) -> std::result::Result<(), ()> {
        self.commands_waiting.fetch_add(1, Ordering::SeqCst);
        let sent = self.commands.send(command).map_err(|_| {
            self.commands_waiting.fetch_sub(1, Ordering::SeqCst);
        });
        self.run_commands();
        sent
    }

    /// Runs the queued commands on the caller's thread when it can take the socket
    /// (held idle, or the connection's thread only waiting for bytes), then gives the
    /// socket to the connection's thread, which reads what answers them. Otherwise the
    /// connection's thread runs them after its current turn (or on the next
    /// connection): nothing waits for a thread to wake.
    fn run_commands(&self) {
        let shared = &*self.shared;
        let Some(from) = shared.baton.caller_take() else {
            return;
        };
        let mut guard = shared.lock();
        let core = &mut *guard;
        let mut ended = false;
        if core.ended.is_none()
            && let Some(live) = core.live.as_mut()
            && let Some(end) = core.worker.commands_while_connected(live)
        {
            // The connection's thread may be waiting for bytes on it: ended, it must
            // see so at once.
            live.socket.get_ref().shutdown();
            core.ended = Some(end);
            ended = true;
        }
        drop(guard);
        match from {
            baton::TakenFrom::Waiting if !ended => shared.baton.caller_return(),
            _ => shared.baton.caller_hand_over(),
        }
    }

    /// Subscribes (now if connected, and again after every reconnect), without waiting.
    pub fn subscribe(&self, subscription: P::Subscription) {
        let _ = self.command(Command::Subscribe(subscription, None));
    }

    /// Subscribes and waits (at most `timeout`) until the server acknowledged it: from
    /// then on, every event of the subscription is delivered. While disconnected, it
    /// waits for the reconnect's replay to be acknowledged.
    pub fn subscribe_confirmed(
        &self,
        subscription: P::Subscription,
        timeout: Duration,
    ) -> Result<()> {
        let (confirm, confirmed) = mpsc::channel();
        self.command(Command::Subscribe(subscription, Some(confirm)))
            .map_err(|_| crate::Error::WebSocket(WsError::ClosedByCaller))?;
        match confirmed.recv_timeout(timeout) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(crate::Error::WebSocket(e)),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(crate::Error::WebSocket(WsError::Timeout(
                "the subscription was not acknowledged in time".into(),
            ))),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(crate::Error::WebSocket(WsError::ClosedByCaller))
            }
        }
    }

    /// Unsubscribes.
    pub fn unsubscribe(&self, subscription: P::Subscription) {
        let _ = self.command(Command::Unsubscribe(subscription));
    }

    /// Sends a text message as it is (queued while disconnected, sent on the next
    /// connection).
    pub fn send_text(&self, message: impl Into<String>) {
        let _ = self.command(Command::Send(message.into()));
    }

    /// The next item, waiting at most `timeout`. `None` when nothing came in time, or
    /// when the stream has ended ([`is_closed`](Self::is_closed)).
    pub fn next_timeout(&mut self, timeout: Duration) -> Option<Result<StreamItem<P::Event>>> {
        let now = Instant::now();
        self.take(now.checked_add(timeout), Some(now))
    }

    /// The next item, waiting until `deadline` (`None`: as long as it takes); `now`, when
    /// the caller has just read the clock, spares reading it again.
    pub(crate) fn next_until(
        &mut self,
        deadline: Option<Instant>,
        now: Option<Instant>,
    ) -> Option<Result<StreamItem<P::Event>>> {
        self.take(deadline, now)
    }

    /// The next item already in the caller's hands, if any: no wait, no clock, no lock.
    pub(crate) fn ready(&mut self) -> Option<Result<StreamItem<P::Event>>> {
        self.taken
            .pop()
            .map(|item| item.map_err(crate::Error::WebSocket))
    }

    fn take(
        &mut self,
        deadline: Option<Instant>,
        now: Option<Instant>,
    ) -> Option<Result<StreamItem<P::Event>>> {
        if self.taken.is_empty() && !self.fill(deadline, now) {
            return None;
        }
        self.taken
            .pop()
            .map(|item| item.map_err(crate::Error::WebSocket))
    }

    /// Fills `taken`, reading the socket on this thread while it is the caller's to
    /// read (see [`baton`]), or from what the connection's thread queued; `false` on
    /// time-out or once the stream ended.
    fn fill(&mut self, deadline: Option<Instant>, mut now: Option<Instant>) -> bool {
        loop {
            if self.inbox.take_now(&mut self.taken) {
                return true;
            }
            if self.inbox.is_finished() {
                return false;
            }
            let baton = &self.shared.baton;
            if baton.caller_take().is_none() {
                baton.want();
                if baton.caller_take().is_none() {
                    // The connection's thread reads: what it queues, or the socket once
                    // it gives it back after its current turn.
                    if self.inbox.take_all(&mut self.taken, deadline) {
                        return true;
                    }
                    if deadline.is_some_and(|d| Instant::now() >= d) || self.inbox.is_finished() {
                        return false;
                    }
                    now = None;
                    continue;
                }
            }
            self.read_directly(deadline, now.take());
            if !self.taken.is_empty() || self.inbox.take_now(&mut self.taken) {
                return true;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
        }
    }

    /// Reads the socket on the caller's thread (which holds it) until something comes
    /// or `deadline` passes; a connection that ends is handed to the connection's
    /// thread, which reconnects. `now`: the clock as the caller read it, if it just did.
    fn read_directly(&mut self, deadline: Option<Instant>, mut now: Option<Instant>) {
        let shared = &*self.shared;
        let taken = &mut self.taken;
        let mut guard = shared.lock();
        let core = &mut *guard;
        let Some(live) = core.live.as_mut() else {
            drop(guard);
            shared.baton.caller_hand_over();
            return;
        };
        // Frames read on without waiting after the first, and how many events the
        // caller held after the last.
        let (mut batch, mut before) = (0, 0);
        // The arrival of the last frame read here, noted once for the stats.
        let first_in = live.last_in;
        loop {
            // A read never outlasts the caller's time, nor the connection's next timer
            // (and waits no less: an idle stream wakes only when something is due).
            if batch == 0 {
                let now = now.take().unwrap_or_else(Instant::now);
                let due = core.worker.next_due(live);
                let until = deadline.map_or(due, |d| d.min(due));
                let left = until.saturating_duration_since(now);
                if left.is_zero() && deadline.is_some_and(|d| d <= now) {
                    break;
                }
                live.socket.get_mut().read_within(left);
            }
            let ended = core
                .worker
                .turn(live, &mut core.attempts, Some(&mut *taken));
            if let Some(ended) = ended {
                if batch > 0 {
                    live.socket.get_mut().set_no_wait(false);
                    core.worker.reuse_clock = false;
                }
                // The connection's thread may still be waiting for bytes on it.
                live.socket.get_ref().shutdown();
                core.ended = Some(ended);
                drop(guard);
                shared.inbox.touched();
                shared.inbox.count_received(taken.counted());
                shared.baton.caller_hand_over();
                return;
            }
            let got = taken.len();
            if got > 0 || shared.inbox.has_items() {
                // Read on through what is already buffered, without waiting and
                // without the clock, up to `BATCH` frames: the caller takes the next
                // events from its hands, with no lock, no clock and no hand-over.
                if batch == 0 {
                    live.socket.get_mut().set_no_wait(true);
                    core.worker.reuse_clock = true;
                } else if got == before {
                    break;
                }
                batch += 1;
                before = got;
                if batch >= BATCH || shared.inbox.has_items() {
                    break;
                }
            }
        }
        if batch > 0 {
            live.socket.get_mut().set_no_wait(false);
            core.worker.reuse_clock = false;
        }
        let last_in = live.last_in;
        drop(guard);
        if last_in != first_in {
            shared.inbox.took_directly(last_in);
        }
        shared.inbox.count_received(taken.counted());
        shared.baton.caller_release();
    }

    /// `true` once the stream has ended (closed by the caller, or a fatal error) and
    /// every item has been read.
    pub fn is_closed(&self) -> bool {
        self.taken.is_empty() && self.inbox.is_finished()
    }

    /// The stream's counters: reconnects, dropped lossy events, age of the last message.
    pub fn stats(&self) -> StreamStats {
        self.inbox.stats()
    }

    /// Closes the stream within the close timeout (5 s by default), whatever the
    /// connection is doing: a close handshake for most of the time, then the socket is
    /// shut down and the connection's thread left to end on its own. Items already
    /// received can still be read.
    pub fn close(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        let started = Instant::now();
        // Run here when this thread can take the socket (the close handshake, held to
        // `GRACEFUL` of the budget), else by the connection's thread.
        let _ = self.command(Command::Close);
        // Most of the budget for the close handshake, the rest for abandoning the
        // socket.
        let graceful = self
            .close_timeout
            .mul_f64(0.8)
            .saturating_sub(started.elapsed());
        let ended = match self.done.recv_timeout(graceful) {
            Err(mpsc::RecvTimeoutError::Disconnected) => true,
            _ => {
                self.abort.abort();
                let left = self.close_timeout.saturating_sub(started.elapsed());
                matches!(
                    self.done.recv_timeout(left),
                    Err(mpsc::RecvTimeoutError::Disconnected)
                )
            }
        };
        if ended {
            let _ = thread.join();
        } else {
            // Blocked where nothing can reach it (a TCP connect, a name lookup): it ends
            // by its own timeout, and nothing it does from now on reaches the caller.
            log::debug!("stream: its thread did not end within the close timeout; left");
        }
        self.inbox.finish();
    }
}

impl<P: Protocol> Iterator for Stream<P> {
    type Item = Result<StreamItem<P::Event>>;

    /// Waits for the next item; `None` once the stream has ended.
    fn next(&mut self) -> Option<Self::Item> {
        self.take(None, None)
    }
}

impl<P: Protocol> Drop for Stream<P> {
    fn drop(&mut self) {
        self.close();
    }
}
