//! One turn on a live connection, on the connection's thread: every frame that has come
//! read and decoded, their events handed to the caller under one lock; the caller's
//! commands; what is waiting to be written flushed; the timers. And when the next timer
//! is due, and the close handshake.

use std::io;
use std::sync::mpsc::TryRecvError;
use std::time::{Duration, Instant};

use log::{debug, trace};
use tungstenite::Message;

use super::conn::Next;
use super::ending::{Ended, GRACEFUL, closed_by_server, lost_or_fatal};
use super::worker::{Connected, SOCKET, Worker};
use super::{Command, Inbound, Lane, Protocol, StreamItem, WsError};
use core_http::config::StreamEvent;

/// The most events read in one turn before they are handed to the caller (so a flood
/// reaches it in pieces, and the commands and timers are not kept waiting).
const BATCH: usize = 1024;

/// What a turn did.
pub(super) struct Turned {
    /// How the connection ended, if it did.
    pub(super) ended: Option<Ended>,
    /// Everything that had come was read: the next turn waits for the socket.
    pub(super) drained: bool,
}

/// Whether a read or write found nothing to do now (the socket not ready).
fn would_block(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(e) if e.kind() == io::ErrorKind::WouldBlock)
}

impl<P: Protocol> Worker<P> {
    /// When the connection's next timer is due: a ping after silence going out, a mute
    /// connection declared dead, subscriptions unacknowledged, a stale channel.
    pub(super) fn next_due(&self, live: &Connected) -> Instant {
        let after = |from: Instant, wait: Duration| {
            from.checked_add(wait)
                .unwrap_or_else(|| core_http::service::now() + core_http::service::FOREVER)
        };
        let mut due = after(live.last_out, self.config.ping_after)
            .min(after(live.last_in, self.config.dead_after));
        if let Some(ack) = live.ack_deadline {
            due = due.min(ack);
        }
        for (channel, wait) in &self.config.stale_after {
            due = due.min(after(self.last_event(channel, live), *wait));
        }
        due
    }

    /// When `channel` last had an event (the connection's start, when none yet).
    fn last_event(&self, channel: &str, live: &Connected) -> Instant {
        self.last_seen
            .get(channel)
            .copied()
            .unwrap_or(live.since)
            .max(live.since)
    }

    /// One turn: what it did ([`Turned`]).
    pub(super) fn turn(&mut self, live: &mut Connected, attempts: &mut u32) -> Turned {
        let (ended, drained) = self.read(live);
        Turned {
            ended: self.after_read(live, attempts, ended),
            drained,
        }
    }

    /// The rest of a turn, once what has come is read.
    fn after_read(
        &mut self,
        live: &mut Connected,
        attempts: &mut u32,
        ended: Option<Ended>,
    ) -> Option<Ended> {
        let now = core_http::service::now();
        if !self.batch.is_empty() && !self.inbox.deliver(&mut self.batch, now) {
            self.config.observer.stream(StreamEvent::FellBehind {
                capacity: self.config.lossless_capacity,
            });
            return Some(Ended::Lost("the reader fell behind".into(), Next::Retry));
        }
        if ended.is_some() {
            return ended;
        }
        self.report_drops();
        if let Some(ended) = self.commands(live) {
            return Some(ended);
        }
        match live.socket.flush() {
            Ok(()) => {}
            Err(e) if would_block(&e) => {}
            Err(e) => return Some(lost_or_fatal(e)),
        }
        self.timers(live, attempts, now)
    }

    /// Reads every frame that has come (up to [`BATCH`] events), decoding each into the
    /// batch for the caller; `true` with it when everything that has come was read (the
    /// socket is waited for only then: it says when more comes, not what is left).
    fn read(&mut self, live: &mut Connected) -> (Option<Ended>, bool) {
        while self.batch.len() < BATCH {
            let message = match live.socket.read() {
                Ok(message) => message,
                Err(e) if would_block(&e) => return (None, true),
                Err(e) => return (Some(lost_or_fatal(e)), true),
            };
            live.last_in = core_http::service::now();
            match message {
                Message::Text(text) => self.frame(live, text.as_str()),
                Message::Binary(bytes) => match std::str::from_utf8(&bytes) {
                    Ok(text) => self.frame(live, text),
                    Err(_) => debug!(
                        "stream {}: a binary frame that is not UTF-8, skipped",
                        self.shown
                    ),
                },
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
                Message::Close(frame) => {
                    let _ = live.socket.flush();
                    return (Some(closed_by_server(frame, &self.config.redact)), true);
                }
            }
        }
        (None, false)
    }

    /// Tells the observer of lossy-lane drops since the last report.
    fn report_drops(&mut self) {
        if !self.config.observer.is_set() {
            return;
        }
        let total = self.inbox.dropped();
        if total > self.reported_drops {
            let count = total - self.reported_drops;
            self.reported_drops = total;
            self.config
                .observer
                .stream(StreamEvent::Dropped { count, total });
        }
    }

    /// The connection's timers: a ping after silence going out, a mute connection
    /// declared dead, subscriptions unacknowledged, stale channels, and the backoff
    /// reset once the connection has been healthy long enough.
    fn timers(&mut self, live: &mut Connected, attempts: &mut u32, now: Instant) -> Option<Ended> {
        if now.duration_since(live.last_out) >= self.config.ping_after {
            match live.socket.send(Message::Ping(Vec::new().into())) {
                Ok(()) => {}
                Err(e) if would_block(&e) => {}
                Err(e) => return Some(lost_or_fatal(e)),
            }
            live.last_out = now;
        }
        if now.duration_since(live.last_in) >= self.config.dead_after {
            return Some(Ended::Lost(
                format!("no frame for {:?}", self.config.dead_after),
                Next::Retry,
            ));
        }
        if live.outstanding > 0 && live.ack_deadline.is_some_and(|d| now >= d) {
            return Some(Ended::Lost(
                "the subscriptions were not acknowledged in time".into(),
                Next::Retry,
            ));
        }
        for (channel, after) in &self.config.stale_after {
            if now.duration_since(self.last_event(channel, live)) >= *after {
                return Some(Ended::Lost(
                    format!("no {channel} event for {after:?}"),
                    Next::Retry,
                ));
            }
        }
        if now.duration_since(live.since) >= self.config.reconnect.healthy_after {
            *attempts = 0;
        }
        None
    }

    /// Writes `message` (flushed now as far as the socket takes it, the rest by the
    /// turns that follow).
    pub(super) fn write(
        &self,
        live: &mut Connected,
        message: String,
    ) -> Result<(), tungstenite::Error> {
        trace!(
            "stream {} -> {}",
            self.shown,
            self.config.redact.apply(message.clone())
        );
        match live.socket.send(Message::text(message)) {
            Ok(()) => {}
            Err(e) if would_block(&e) => {}
            Err(e) => return Err(e),
        }
        live.last_out = core_http::service::now();
        Ok(())
    }

    /// One text frame: decoded, its events put in the batch, its other items acted on.
    fn frame(&mut self, live: &mut Connected, text: &str) {
        if log::log_enabled!(log::Level::Trace) {
            trace!(
                "stream {} <- {}",
                self.shown,
                self.config.redact.apply(text.to_owned())
            );
        }
        let timers = !self.config.stale_after.is_empty();
        let mut decoded = std::mem::take(&mut self.decoded);
        self.protocol.decode(text, &mut decoded);
        for inbound in decoded.drain(..) {
            match inbound {
                Inbound::Event {
                    event,
                    lane,
                    channel,
                } => {
                    if timers && let Some(channel) = channel {
                        self.last_seen.insert(channel, live.last_in);
                    }
                    self.batch.push((lane, Ok(StreamItem::Event(event))));
                }
                other => self.control(live, other),
            }
        }
        self.decoded = decoded;
    }

    /// A frame's item other than an event: an acknowledgement, a refusal, a message
    /// that could not be read, the answer to a request.
    #[cold]
    fn control(&mut self, live: &mut Connected, inbound: Inbound<P::Event>) {
        match inbound {
            Inbound::Ack => self.acknowledged(live),
            Inbound::Refused(message) => {
                let message = self.config.redact.apply(message);
                // The oldest caller still waiting for its own acknowledgement gets the
                // refusal; with nobody waiting, the stream carries it.
                let waiting = self.confirmations.iter().position(|(n, _)| *n > 0);
                match waiting.and_then(|i| self.confirmations.remove(i)) {
                    Some((_, confirm)) => {
                        let _ = confirm.send(Err(WsError::Server(message)));
                    }
                    None => self
                        .batch
                        .push((Lane::Lossless, Err(WsError::Server(message)))),
                }
                self.acknowledged(live);
            }
            Inbound::Invalid(message) => {
                let message = self.config.redact.apply(message);
                self.batch
                    .push((Lane::Lossless, Err(WsError::Undecodable(message))));
            }
            Inbound::Reply { id, outcome } => {
                let outcome = outcome.map_err(|(code, message)| WsError::Rejected {
                    code,
                    message: self.config.redact.apply(message),
                });
                self.requests.answer(&id, outcome);
            }
            Inbound::Event { .. } => {}
        }
    }

    /// One subscription message answered: once all are, the waiting subscriptions are
    /// settled (and a reconnect announced).
    fn acknowledged(&mut self, live: &mut Connected) {
        live.outstanding = live.outstanding.saturating_sub(1);
        if live.outstanding == 0 {
            live.ack_deadline = None;
            if let Some(item) = self.announce(live) {
                self.batch.push(item);
            }
        }
    }

    /// Runs the caller's queued commands on the live connection.
    fn commands(&mut self, live: &mut Connected) -> Option<Ended> {
        loop {
            let command = match self.commands.try_recv() {
                Ok(command) => command,
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => {
                    self.close_handshake(live);
                    return Some(Ended::Closed);
                }
            };
            let result = match command {
                Command::Subscribe(s, confirm) => self.subscribe(live, &s, confirm),
                Command::Unsubscribe(s) => {
                    let messages = self.protocol.unsubscribe(&s);
                    messages.into_iter().try_for_each(|m| self.write(live, m))
                }
                Command::Send(message) => self.write(live, message),
                Command::Request(request) => match self.requests.send_now(request) {
                    Some(message) => self.write(live, message),
                    None => Ok(()),
                },
                Command::Close => {
                    self.close_handshake(live);
                    return Some(Ended::Closed);
                }
            };
            if let Err(e) = result {
                return Some(lost_or_fatal(e));
            }
        }
    }

    /// Subscribes now; `confirm` is told once every message of it is acknowledged (or
    /// by the replay's acknowledgement if the connection is lost first).
    fn subscribe(
        &mut self,
        live: &mut Connected,
        subscription: &P::Subscription,
        confirm: Option<super::Confirm>,
    ) -> Result<(), tungstenite::Error> {
        let messages = self.protocol.subscribe(subscription);
        let count = messages.len();
        for message in messages {
            self.write(live, message)?;
            live.outstanding += 1;
            live.ack_deadline
                .get_or_insert(core_http::service::now() + self.config.ack_timeout);
        }
        if let Some(confirm) = confirm {
            if count == 0 {
                let _ = confirm.send(Ok(()));
            } else {
                self.confirmations.push_back((count, confirm));
            }
        }
        Ok(())
    }

    /// Sends a close frame and waits for the server's, all within [`GRACEFUL`] of the
    /// close timeout (a peer that does not read or answer cannot hold it).
    fn close_handshake(&mut self, live: &mut Connected) {
        let deadline = core_http::service::now() + self.config.close_timeout.mul_f64(GRACEFUL);
        if let Err(e) = live.socket.close(None)
            && !would_block(&e)
        {
            return;
        }
        loop {
            let _ = live.socket.flush();
            match live.socket.read() {
                // The server's close (or its end): done.
                Ok(Message::Close(_)) | Err(tungstenite::Error::ConnectionClosed) => return,
                Ok(_) => continue,
                Err(e) if would_block(&e) => {}
                Err(_) => return,
            }
            let left = deadline.saturating_duration_since(core_http::service::now());
            if left.is_zero() {
                return;
            }
            if self.poll.poll(&mut self.events, Some(left)).is_err()
                || !self.events.iter().any(|e| e.token() == SOCKET)
            {
                // Nothing from the socket in time.
                if core_http::service::now() >= deadline {
                    return;
                }
            }
        }
    }
}
