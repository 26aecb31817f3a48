//! Reconnecting blocking WebSocket streams for the service clients built on core-http,
//! for services that push events (trading's market data and fills, a world's events).
//! trading-client and worlds-client depend on it and re-export what their users meet.
//!
//! A [`Stream`] owns one connection through a background thread, the one reader and
//! writer of its socket, so a slow caller never stalls the protocol and a hostile server
//! never holds the caller past its deadline: the caller only takes decoded events from
//! the queue, and its commands (subscribe, send, request, close) go to the thread, which
//! a wake makes run them at once. The thread answers pings and sends its own after 20 s
//! of quiet,
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
//! - **Connect**: one deadline, the connect timeout, over all of it: the client's
//!   connection stack (name resolution, TCP, a `CONNECT` tunnel, TLS with its one rustls
//!   configuration) and the HTTP upgrade, on the first connection and on every
//!   reconnect. A server that trickles its answer is cut off at the deadline.
//! - **One reader**: once upgraded the socket is non-blocking, and the thread waits for
//!   it to be ready (`mio`), for a command, or for its next timer (the ping, the dead
//!   connection, an acknowledgement, a stale channel), so an idle stream wakes only for
//!   its timers. A frame trickled a byte at a time holds nobody: the caller's
//!   `next_timeout` returns at its timeout whatever the socket does.
//! - **Close**: [`Stream::close`] and drop return within the close timeout (5 s) in
//!   every state (connecting, upgrading, in the middle of a message, with writes queued
//!   for a peer that does not read): the thread makes the close handshake for most of
//!   it, then the socket is shut down from the caller's thread and the connection's
//!   thread is left to end on its own.
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
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod client;
mod config;
mod conn;
mod ending;
mod error;
mod inbox;
mod request;
mod session;
mod transport;
mod turn;
mod worker;

use std::fmt;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use core_http::Result;

pub use client::{stream_config, websocket_url};
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
    /// Items taken from the inbox in one swap, not yet given to the caller.
    taken: inbox::Taken<P::Event>,
    commands: mpsc::Sender<Command<P>>,
    /// Wakes the connection's thread for a command.
    waker: Arc<mio::Waker>,
    thread: Option<JoinHandle<()>>,
    /// Disconnected when the connection's thread ends.
    done: mpsc::Receiver<()>,
    abort: Arc<core_http::net::Abort>,
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
        let abort = Arc::new(core_http::net::Abort::default());
        let socket = conn::connect(&config, &abort).map_err(core_http::Error::from)?;
        let inbox = Arc::new(inbox::Inbox::new(
            config.lossy_capacity,
            config.lossless_capacity,
        ));
        let cannot = |e: std::io::Error| {
            core_http::Error::Config(format!("cannot start the stream's thread: {e}"))
        };
        let poll = mio::Poll::new().map_err(cannot)?;
        let waker = Arc::new(mio::Waker::new(poll.registry(), worker::WAKE).map_err(cannot)?);
        let (commands, receiver) = mpsc::channel();
        let (finished, done) = mpsc::channel::<()>();
        let close_timeout = config.close_timeout;
        let worker = worker::Worker::new(
            config,
            protocol,
            inbox.clone(),
            receiver,
            (poll, waker.clone()),
            abort.clone(),
        );
        let thread = std::thread::Builder::new()
            .name("core-http-stream".into())
            .spawn(move || {
                // Dropped when the thread ends, however it ends: what `close` waits for.
                let _finished = finished;
                worker.run(socket);
            })
            .map_err(cannot)?;
        Ok(Stream {
            inbox,
            taken: inbox::Taken::default(),
            commands,
            waker,
            thread: Some(thread),
            done,
            abort,
            close_timeout,
        })
    }

    /// Hands a command to the connection's thread and wakes it: it runs it at once (or
    /// on the next connection, while disconnected).
    fn command(&self, command: Command<P>) -> std::result::Result<(), ()> {
        self.commands.send(command).map_err(|_| ())?;
        let _ = self.waker.wake();
        Ok(())
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
            .map_err(|_| core_http::Error::from(WsError::ClosedByCaller))?;
        match confirmed.recv_timeout(timeout) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(core_http::Error::from(e)),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(core_http::Error::from(WsError::Timeout(
                "the subscription was not acknowledged in time".into(),
            ))),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(core_http::Error::from(WsError::ClosedByCaller))
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
        self.next_until(core_http::service::now().checked_add(timeout))
    }

    /// The next item, waiting until `deadline` (`None`: as long as it takes).
    pub(crate) fn next_until(
        &mut self,
        deadline: Option<Instant>,
    ) -> Option<Result<StreamItem<P::Event>>> {
        if self.taken.is_empty() && !self.inbox.take(&mut self.taken, deadline) {
            return None;
        }
        self.ready()
    }

    /// The next item already in the caller's hands, if any: no wait, no lock.
    pub(crate) fn ready(&mut self) -> Option<Result<StreamItem<P::Event>>> {
        self.taken
            .pop()
            .map(|item| item.map_err(core_http::Error::from))
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
        let started = core_http::service::now();
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
                let _ = self.waker.wake();
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
        self.next_until(None)
    }
}

impl<P: Protocol> Drop for Stream<P> {
    fn drop(&mut self) {
        self.close();
    }
}

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
