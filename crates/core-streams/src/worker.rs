//! The connection's thread, the one reader (and writer) of the stream's socket: it waits
//! until the socket is ready, the caller wakes it with a command, or its next timer is
//! due (an idle stream costs no wake-ups), and then takes one turn (`turn.rs`); when the
//! connection is lost it reconnects with backoff, replaying the subscriptions, and while
//! it waits it still takes the caller's commands.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::mpsc::{self, TryRecvError};
use std::time::{Duration, Instant};

use log::debug;
use mio::{Events, Interest, Poll, Token, Waker};

use super::conn::{self, Next};
use super::ending::Ended;
use super::inbox::{Inbox, Item};
use super::request::Requests;
use super::transport::Socket;
use super::{Command, Confirm, Inbound, Lane, Protocol, StreamConfig, StreamItem};
use core_http::config::StreamEvent;
use core_http::net::Abort;
use core_http::service::strip_query;

/// The socket's token, and the caller's wake's.
pub(super) const SOCKET: Token = Token(0);
pub(super) const WAKE: Token = Token(1);

/// One live connection and its timers.
pub(super) struct Connected {
    pub(super) socket: Socket,
    pub(super) since: Instant,
    pub(super) last_in: Instant,
    pub(super) last_out: Instant,
    /// Subscription messages sent and not yet acknowledged, and by when they must be.
    pub(super) outstanding: usize,
    pub(super) ack_deadline: Option<Instant>,
    /// After a reconnect: the `Reconnected` item to give once the replay is acknowledged.
    pub(super) announce: Option<(Duration, u32)>,
}

/// The connection's state, owned by its thread.
pub(super) struct Worker<P: Protocol> {
    pub(super) config: StreamConfig,
    pub(super) protocol: P,
    pub(super) inbox: Arc<Inbox<P::Event>>,
    pub(super) commands: mpsc::Receiver<Command<P>>,
    pub(super) poll: Poll,
    pub(super) events: Events,
    /// Held so that the caller's wakes are never lost with a closed descriptor.
    pub(super) _waker: Arc<Waker>,
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
    /// Buffers reused for every turn: what a frame decoded to, what goes to the inbox.
    pub(super) decoded: Vec<Inbound<P::Event>>,
    pub(super) batch: Vec<(Lane, Item<P::Event>)>,
    pub(super) abort: Arc<Abort>,
    /// Lossy events dropped, as last told to the observer.
    pub(super) reported_drops: u64,
}

impl<P: Protocol> Worker<P> {
    /// The thread of a stream whose first connection is made.
    pub(super) fn new(
        config: StreamConfig,
        protocol: P,
        inbox: Arc<Inbox<P::Event>>,
        commands: mpsc::Receiver<Command<P>>,
        (poll, waker): (Poll, Arc<Waker>),
        abort: Arc<Abort>,
    ) -> Self {
        let shown = strip_query(&config.url).to_owned();
        Worker {
            config,
            protocol,
            inbox,
            commands,
            poll,
            events: Events::with_capacity(8),
            _waker: waker,
            pending: VecDeque::new(),
            requests: Requests::default(),
            last_seen: HashMap::new(),
            confirmations: VecDeque::new(),
            shown,
            decoded: Vec::new(),
            batch: Vec::new(),
            abort,
            reported_drops: 0,
        }
    }

    /// Serves the stream until it ends: this connection, then each one after it.
    pub(super) fn run(mut self, first: Socket) {
        let mut attempts = 0;
        let mut ended = match self.start(first, None) {
            Ok(live) => {
                let url = self.shown.clone();
                self.config.observer.stream(StreamEvent::Connected { url });
                self.serve(live, &mut attempts)
            }
            Err(reason) => Ended::Lost(reason, Next::Retry),
        };
        loop {
            match ended {
                Ended::Closed => break,
                Ended::Fatal(error) => {
                    self.requests.connection_lost();
                    debug!("stream {}: ended: {error}", self.shown);
                    self.inbox.push(Lane::Lossless, Err(error));
                    break;
                }
                Ended::Lost(reason, next) => {
                    debug!("stream {}: connection lost: {reason}", self.shown);
                    self.config.observer.stream(StreamEvent::Lost { reason });
                    self.requests.connection_lost();
                    self.inbox.set_connected(false);
                    match self.reconnect(next, core_http::service::now(), attempts) {
                        Some((live, used)) => {
                            attempts = used;
                            ended = self.serve(live, &mut attempts);
                        }
                        None => break,
                    }
                }
            }
        }
        self.requests.ended();
        self.config.observer.stream(StreamEvent::Ended);
        self.inbox.finish();
    }

    /// Serves one connection: a turn whenever the socket is ready, a command comes or a
    /// timer is due, until it ends.
    fn serve(&mut self, mut live: Connected, attempts: &mut u32) -> Ended {
        let registered = self.poll.registry().register(
            live.socket.get_mut().socket_mut(),
            SOCKET,
            Interest::READABLE | Interest::WRITABLE,
        );
        if let Err(e) = registered {
            return Ended::Lost(format!("cannot wait for the socket: {e}"), Next::Retry);
        }
        let ended = loop {
            let turned = self.turn(&mut live, attempts);
            if let Some(ended) = turned.ended {
                break ended;
            }
            // Frames left to read: the next turn at once (the socket says when more
            // comes, not what is left).
            let wait = match turned.drained {
                true => self
                    .next_due(&live)
                    .saturating_duration_since(core_http::service::now()),
                false => Duration::ZERO,
            };
            match self.poll.poll(&mut self.events, Some(wait)) {
                Ok(()) => {}
                // A handled signal is not a lost connection.
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    break Ended::Lost(format!("cannot wait for the socket: {e}"), Next::Retry);
                }
            }
        };
        let _ = self
            .poll
            .registry()
            .deregister(live.socket.get_mut().socket_mut());
        live.socket.get_ref().shutdown();
        ended
    }

    /// Tries to connect again until it works, the caller closes, or an error ends the
    /// stream. Returns the new connection and the attempts made in a row so far.
    fn reconnect(
        &mut self,
        mut next: Next,
        down_since: Instant,
        mut attempts: u32,
    ) -> Option<(Connected, u32)> {
        loop {
            let delay = match next {
                Next::Cooldown => self.config.reconnect.cooldown,
                _ => self
                    .config
                    .reconnect
                    .backoff
                    .delay(attempts, core_http::service::unit_f64()),
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
    /// caller queued meanwhile (written now, flushed by the first turn).
    fn start(
        &mut self,
        socket: Socket,
        announce: Option<(Duration, u32)>,
    ) -> Result<Connected, String> {
        let now = core_http::service::now();
        let mut live = Connected {
            socket,
            since: now,
            last_in: now,
            last_out: now,
            outstanding: 0,
            ack_deadline: None,
            announce,
        };
        self.inbox.set_connected(true);
        self.inbox.touched();
        for message in self.protocol.replay() {
            self.write(&mut live, message).map_err(|e| e.to_string())?;
            live.outstanding += 1;
        }
        if live.outstanding > 0 {
            live.ack_deadline = Some(now + self.config.ack_timeout);
        } else if let Some((lane, item)) = self.announce(&mut live) {
            self.inbox.push(lane, item);
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
    pub(super) fn announce(&mut self, live: &mut Connected) -> Option<(Lane, Item<P::Event>)> {
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

    /// Waits `delay` while disconnected, still taking the caller's commands; `false`
    /// when the caller closed the stream.
    fn wait(&mut self, delay: Duration) -> bool {
        let until = core_http::service::now().checked_add(delay);
        loop {
            loop {
                let command = match self.commands.try_recv() {
                    Ok(command) => command,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return false,
                };
                match command {
                    Command::Subscribe(s, confirm) => {
                        // Recorded now, sent with the replay on the next connection,
                        // whose acknowledgement confirms it.
                        let _ = self.protocol.subscribe(&s);
                        if let Some(confirm) = confirm {
                            self.confirmations.push_back((0, confirm));
                        }
                    }
                    Command::Unsubscribe(s) => {
                        let _ = self.protocol.unsubscribe(&s);
                    }
                    Command::Send(message) => self.pending.push_back(message),
                    Command::Request(request) => self.requests.queue(request),
                    Command::Close => return false,
                }
            }
            if self.abort.is_aborted() {
                return false;
            }
            let left = until.map_or(core_http::service::FOREVER, |u| {
                u.saturating_duration_since(core_http::service::now())
            });
            if left.is_zero() {
                return true;
            }
            // Woken by a command, or the delay is over.
            if let Err(e) = self.poll.poll(&mut self.events, Some(left))
                && e.kind() != std::io::ErrorKind::Interrupted
            {
                std::thread::sleep(left.min(self.config.tick));
            }
        }
    }
}
