//! One turn on a live connection, on whichever thread reads it: the caller's commands,
//! one read (a frame decoded and handed on, or nothing), the timers; and when the next
//! timer is due.

use std::io;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use log::{debug, trace};
use tungstenite::Message;

use super::conn::Next;
use super::ending::{Ended, closed_by_server, lost_or_fatal};
use super::inbox::{Item, Taken};
use super::worker::{CHECK_EVERY, Live, Worker};
use super::{Inbound, Lane, Protocol, StreamItem, WsError};
use crate::observe::StreamEvent;

impl<P: Protocol> Worker<P> {
    /// When the connection's next timer is due: a ping after silence going out, a mute
    /// connection declared dead, subscriptions unacknowledged, a stale channel.
    pub(super) fn next_due(&self, live: &Live) -> Instant {
        let after = |from: Instant, wait: Duration| {
            from.checked_add(wait)
                .unwrap_or_else(|| self.now + Duration::from_secs(86_400))
        };
        let mut due = after(live.last_out, self.config.ping_after)
            .min(after(live.last_in, self.config.dead_after));
        if let Some(ack) = live.ack_deadline {
            due = due.min(ack);
        }
        for (channel, wait) in &self.config.stale_after {
            let last = self
                .last_seen
                .get(channel.as_str())
                .copied()
                .unwrap_or(live.since)
                .max(live.since);
            due = due.min(after(last, *wait));
        }
        due
    }

    /// One turn on a live connection, on whichever thread reads it: the caller's
    /// commands, one read (a frame, or a time-out that is a tick), the timers. Returns
    /// how the connection ended, if it did.
    ///
    /// `direct`: the caller reads on its own thread and takes what the frame held into
    /// its hands ([`Inbox::deliver`]). The time of the turn is kept in
    /// [`now`](Self::now).
    pub(super) fn turn(
        &mut self,
        live: &mut Live,
        attempts: &mut u32,
        direct: Option<&mut Taken<P::Event>>,
    ) -> Option<Ended> {
        // Commands first (a close must not wait for a read), when there are any.
        if self.commands_waiting.load(Ordering::Acquire) > 0
            && let Some(ended) = self.commands_while_connected(live)
        {
            return Some(ended);
        }
        let read = live.socket.read();
        // One clock reading per turn, for the frame and the timers (none when the caller
        // reads on through what was already buffered).
        let now = if self.reuse_clock {
            self.now
        } else {
            Instant::now()
        };
        self.now = now;
        if let Some(ended) = self.took(live, read, now, direct) {
            return Some(ended);
        }
        if live.behind {
            return Some(self.fell_behind());
        }
        // The timers, the flush and the commands, every few milliseconds: a busy
        // stream's frames do not each pay for them.
        if now < live.next_check {
            return None;
        }
        self.checks(live, attempts, now)
    }

    /// The reader fell behind on the lossless lane: the connection is dropped (and made
    /// again). The rare paths of a turn are kept out of line, so that a busy stream's
    /// read path stays small enough for the processor's instruction cache.
    #[cold]
    #[inline(never)]
    fn fell_behind(&self) -> Ended {
        self.config.observer.stream(StreamEvent::FellBehind {
            capacity: self.config.lossless_capacity,
        });
        Ended::Lost("the reader fell behind".into(), Next::Retry)
    }

    /// What is checked every few milliseconds: drops to report, commands, timers.
    #[inline(never)]
    fn checks(&mut self, live: &mut Live, attempts: &mut u32, now: Instant) -> Option<Ended> {
        live.next_check = now + CHECK_EVERY;
        self.report_drops();
        if let Some(ended) = self.commands_while_connected(live) {
            return Some(ended);
        }
        self.timers(live, attempts, now)
    }

    /// What one read gave: a frame handed on, a control frame noted, the end of the
    /// connection; a time-out is only a tick.
    fn took(
        &mut self,
        live: &mut Live,
        read: Result<Message, tungstenite::Error>,
        now: Instant,
        direct: Option<&mut Taken<P::Event>>,
    ) -> Option<Ended> {
        self.quiet = false;
        match read {
            Ok(Message::Text(text)) => self.frame(live, text.as_str(), now, direct),
            Ok(Message::Binary(bytes)) => match std::str::from_utf8(&bytes) {
                Ok(text) => self.frame(live, text, now, direct),
                Err(_) => {
                    live.last_in = now;
                    debug!(
                        "stream {}: a binary frame that is not UTF-8, skipped",
                        self.shown
                    );
                }
            },
            Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => {
                live.last_in = now;
                self.inbox.touched();
            }
            Ok(Message::Close(frame)) => {
                let _ = live.socket.flush();
                return Some(closed_by_server(frame, &self.config.redact));
            }
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                self.quiet = true;
            }
            Err(e) => return Some(lost_or_fatal(e)),
        }
        None
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

    /// The connection's timers: a ping after silence going out, the flush, a mute
    /// connection declared dead, subscriptions unacknowledged, stale channels, and the
    /// backoff reset once the connection has been healthy long enough.
    fn timers(&mut self, live: &mut Live, attempts: &mut u32, now: Instant) -> Option<Ended> {
        if now.duration_since(live.last_out) >= self.config.ping_after {
            if let Err(e) = live.socket.send(Message::Ping(Vec::new().into())) {
                return Some(lost_or_fatal(e));
            }
            live.last_out = now;
        }
        match live.socket.flush() {
            Ok(()) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Some(lost_or_fatal(e)),
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
            let last = self
                .last_seen
                .get(channel.as_str())
                .copied()
                .unwrap_or(live.since)
                .max(live.since);
            if now.duration_since(last) >= *after {
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

    pub(super) fn write(&self, live: &mut Live, message: String) -> Result<(), tungstenite::Error> {
        trace!(
            "stream {} -> {}",
            self.shown,
            self.config.redact.apply(message.clone())
        );
        live.socket.send(Message::text(message))?;
        live.last_out = Instant::now();
        Ok(())
    }

    fn frame(
        &mut self,
        live: &mut Live,
        text: &str,
        now: Instant,
        direct: Option<&mut Taken<P::Event>>,
    ) {
        live.last_in = now;
        if log::log_enabled!(log::Level::Trace) {
            self.trace_in(text);
        }
        let timers = !self.config.stale_after.is_empty();
        let mut decoded = std::mem::take(&mut self.decoded);
        let mut events = std::mem::take(&mut self.events);
        self.protocol.decode(text, &mut decoded);
        // The caller reading on its own thread with nothing queued before this frame
        // takes its items straight into its hands: no lane, no lock, no wake.
        let mut sink = match direct {
            Some(out) if self.inbox.direct() => Sink::Direct(out),
            _ => Sink::Queue(&mut events),
        };
        for inbound in decoded.drain(..) {
            match inbound {
                Inbound::Event {
                    event,
                    lane,
                    channel,
                } => {
                    if timers && let Some(channel) = channel {
                        self.seen(channel, now);
                    }
                    sink.event(lane, event);
                }
                other => self.control(live, other, &mut sink),
            }
        }
        match sink {
            // The caller notes the time of its last frame once per read.
            Sink::Direct(_) => {}
            // One lock for the whole frame, its arrival time included.
            Sink::Queue(events) => {
                if !self.inbox.deliver(events, now) {
                    live.behind = true;
                }
            }
        }
        self.decoded = decoded;
        self.events = events;
    }

    /// An event of `channel` came (for its staleness timer).
    #[inline(never)]
    fn seen(&mut self, channel: &'static str, now: Instant) {
        self.last_seen.insert(channel, now);
    }

    /// A frame received, in the trace log (credentials blanked).
    #[cold]
    #[inline(never)]
    fn trace_in(&self, text: &str) {
        trace!(
            "stream {} <- {}",
            self.shown,
            self.config.redact.apply(text.to_owned())
        );
    }

    /// A frame's item other than an event: an acknowledgement, a refusal, a message
    /// that could not be read, the answer to a request.
    #[cold]
    #[inline(never)]
    fn control(
        &mut self,
        live: &mut Live,
        inbound: Inbound<P::Event>,
        sink: &mut Sink<'_, P::Event>,
    ) {
        match inbound {
            Inbound::Ack => {
                live.outstanding = live.outstanding.saturating_sub(1);
                if live.outstanding == 0 {
                    live.ack_deadline = None;
                    if let Some((lane, item)) = self.announce(live) {
                        sink.push(lane, item);
                    }
                }
            }
            Inbound::Refused(message) => {
                let message = self.config.redact.apply(message);
                live.outstanding = live.outstanding.saturating_sub(1);
                // The oldest caller still waiting for its own acknowledgement gets
                // the refusal; with nobody waiting, the stream carries it.
                let waiting = self.confirmations.iter().position(|(n, _)| *n > 0);
                match waiting.and_then(|i| self.confirmations.remove(i)) {
                    Some((_, confirm)) => {
                        let _ = confirm.send(Err(WsError::Server(message)));
                    }
                    None => sink.push(Lane::Lossless, Err(WsError::Server(message))),
                }
                if live.outstanding == 0 {
                    live.ack_deadline = None;
                    if let Some((lane, item)) = self.announce(live) {
                        sink.push(lane, item);
                    }
                }
            }
            Inbound::Invalid(message) => {
                let message = self.config.redact.apply(message);
                sink.push(Lane::Lossless, Err(WsError::Undecodable(message)));
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
}

/// Where a frame's items go: straight into the caller's hands, or to be queued.
enum Sink<'a, E> {
    Direct(&'a mut Taken<E>),
    Queue(&'a mut Vec<(Lane, Item<E>)>),
}

impl<E> Sink<'_, E> {
    fn event(&mut self, lane: Lane, event: E) {
        match self {
            Sink::Direct(out) => out.push_direct_event(Ok(StreamItem::Event(event))),
            Sink::Queue(events) => events.push((lane, Ok(StreamItem::Event(event)))),
        }
    }

    fn push(&mut self, lane: Lane, item: Item<E>) {
        match self {
            Sink::Direct(out) => out.push_direct(item),
            Sink::Queue(events) => events.push((lane, item)),
        }
    }
}
