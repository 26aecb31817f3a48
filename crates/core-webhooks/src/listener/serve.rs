//! The listener's thread: one readiness loop over the listening socket and every
//! connection, each read as its bytes arrive and held to its deadlines.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use super::head::{Head, MAX_HEAD, Status, answer_bytes, read_head};
use super::receive::{Counters, Receiving};
use crate::WebhookEvent;

/// The most connections held open at once; a newcomer past it closes the one idle the
/// longest.
const MAX_CONNECTIONS: usize = 512;

/// How long a request's head may take to arrive whole, from its connection.
const HEAD_TIME: Duration = Duration::from_secs(2);

/// How long a whole request may take to arrive, from its connection.
const REQUEST_TIME: Duration = Duration::from_secs(10);

/// How long an answer may take to be written.
const ANSWER_TIME: Duration = Duration::from_secs(2);

/// How long, and how much, a refused request's unread body is read and dropped, so that
/// closing does not reset the connection before the sender reads the answer.
const DRAIN_TIME: Duration = Duration::from_secs(1);
const DRAIN_MAX: usize = 8 * 1024 * 1024;

/// The most bytes held, in all, for the requests being read.
const BUFFERED_MAX: usize = 64 * 1024 * 1024;

/// The listening socket's token, and the stop signal's.
const ACCEPT: Token = Token(usize::MAX - 1);
pub(super) const STOP: Token = Token(usize::MAX - 2);

/// Where a connection's request stands.
enum Phase {
    /// Reading the head.
    Head,
    /// Reading a body of `length` bytes, which starts at `start` in the buffer.
    Body {
        headers: Vec<(String, String)>,
        start: usize,
        length: usize,
    },
    /// Writing the answer; then closing, or draining what the sender still sends.
    Answer {
        out: Vec<u8>,
        written: usize,
        drain: bool,
        since: Instant,
    },
    /// Reading and dropping what the sender still sends, until it closes or `until`.
    Drain { until: Instant, drained: usize },
}

/// One connection.
struct Conn {
    stream: TcpStream,
    /// Its place in the table (its token).
    slot: usize,
    accepted: Instant,
    /// When a byte last arrived (or the connection was accepted).
    last_in: Instant,
    buf: Vec<u8>,
    phase: Phase,
}

impl Conn {
    /// When this connection's time is up.
    fn deadline(&self) -> Instant {
        match &self.phase {
            Phase::Head => self.accepted + HEAD_TIME,
            Phase::Body { .. } => self.accepted + REQUEST_TIME,
            Phase::Answer { since, .. } => *since + ANSWER_TIME,
            Phase::Drain { until, .. } => *until,
        }
    }

    /// Still reading its request (so closing it drops a request).
    fn reading(&self) -> bool {
        matches!(self.phase, Phase::Head | Phase::Body { .. })
    }
}

/// The listener's thread: a readiness loop over the listening socket and every
/// connection.
pub(super) struct Loop<E> {
    poll: Poll,
    socket: TcpListener,
    receiving: Receiving<E>,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    open: usize,
    buffered: usize,
}

impl<E: WebhookEvent> Loop<E> {
    pub(super) fn new(poll: Poll, socket: TcpListener, receiving: Receiving<E>) -> Self {
        Loop {
            poll,
            socket,
            receiving,
            conns: Vec::new(),
            free: Vec::new(),
            open: 0,
            buffered: 0,
        }
    }

    pub(super) fn run(mut self, stop: &AtomicBool) {
        if let Err(e) = self
            .poll
            .registry()
            .register(&mut self.socket, ACCEPT, Interest::READABLE)
        {
            log::warn!("webhook listener: cannot wait for connections: {e}");
            return;
        }
        let mut events = Events::with_capacity(256);
        // Set when accepting failed for want of descriptors: try again shortly.
        let mut retry_accept = false;
        loop {
            let timeout = self.next_timeout(retry_accept);
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    log::warn!("webhook listener: stopped: {e}");
                    return;
                }
            }
            if stop.load(Ordering::SeqCst) {
                return;
            }
            if retry_accept {
                retry_accept = self.accept();
            }
            for event in events.iter() {
                match event.token() {
                    ACCEPT => retry_accept = self.accept(),
                    STOP => {}
                    Token(slot) => self.ready(slot),
                }
            }
            self.expire(core_http::service::now());
        }
    }

    /// How long the next wait may be: until the first connection's time is up (none
    /// open: as long as it takes, so an idle listener never wakes).
    fn next_timeout(&self, retry_accept: bool) -> Option<Duration> {
        let now = core_http::service::now();
        let first = self
            .conns
            .iter()
            .flatten()
            .map(Conn::deadline)
            .min()
            .map(|d| d.saturating_duration_since(now));
        match (first, retry_accept) {
            (Some(d), true) => Some(d.min(Duration::from_millis(10))),
            (None, true) => Some(Duration::from_millis(10)),
            (d, false) => d,
        }
    }

    /// Accepts every waiting connection. `true` when it had to stop for want of file
    /// descriptors with connections still waiting (try again soon).
    fn accept(&mut self) -> bool {
        loop {
            match self.socket.accept() {
                Ok((stream, _)) => self.add(stream),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // Out of descriptors (EMFILE, ENFILE): make room, and try again.
                    if self.evict_idlest() {
                        continue;
                    }
                    log::debug!("webhook listener: cannot accept: {e}");
                    return true;
                }
            }
        }
    }

    /// Takes a new connection in (closing the one idle the longest when all are taken)
    /// and reads what it already sent.
    fn add(&mut self, mut stream: TcpStream) {
        if self.open >= MAX_CONNECTIONS {
            self.evict_idlest();
        }
        let slot = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        if self
            .poll
            .registry()
            .register(&mut stream, Token(slot), Interest::READABLE)
            .is_err()
        {
            self.free.push(slot);
            return;
        }
        let now = core_http::service::now();
        self.conns[slot] = Some(Conn {
            stream,
            slot,
            accepted: now,
            last_in: now,
            buf: Vec::new(),
            phase: Phase::Head,
        });
        self.open += 1;
        // Readiness is reported on changes: what arrived before registration is read now.
        self.ready(slot);
    }

    /// Closes the connection still reading its request that has waited longest without
    /// a byte: `false` when there is none.
    fn evict_idlest(&mut self) -> bool {
        let idlest = self
            .conns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.as_ref().filter(|c| c.reading()).map(|c| (c.last_in, i)))
            .min();
        match idlest {
            Some((_, slot)) => {
                Counters::add(&self.receiving.counters.dropped);
                self.close(slot);
                true
            }
            None => false,
        }
    }

    fn close(&mut self, slot: usize) {
        if let Some(mut conn) = self.conns.get_mut(slot).and_then(Option::take) {
            self.buffered = self.buffered.saturating_sub(conn.buf.len());
            let _ = self.poll.registry().deregister(&mut conn.stream);
            let _ = conn.stream.shutdown(Shutdown::Both);
            self.open -= 1;
            self.free.push(slot);
        }
    }

    /// Closes (or answers `408`) every connection whose time is up.
    fn expire(&mut self, now: Instant) {
        for slot in 0..self.conns.len() {
            let Some(conn) = &self.conns[slot] else {
                continue;
            };
            if conn.deadline() > now {
                continue;
            }
            if conn.reading() {
                log::debug!("webhook listener: a request did not arrive in time (408)");
                Counters::add(&self.receiving.counters.dropped);
                // A last word, if the socket takes it at once; then closed.
                let _ = (&conn.stream).write(&answer_bytes(Status(408, None)));
            }
            self.close(slot);
        }
    }

    /// The connection in `slot` may be read or written.
    fn ready(&mut self, slot: usize) {
        let Some(mut conn) = self.conns.get_mut(slot).and_then(Option::take) else {
            return;
        };
        let keep = match conn.phase {
            Phase::Answer { .. } => self.write_answer(&mut conn),
            Phase::Drain { .. } => drain_rest(&mut conn),
            Phase::Head | Phase::Body { .. } => self.read_request(&mut conn),
        };
        // Put back first: closing it (or making room for it) finds it in its place.
        self.conns[slot] = Some(conn);
        if !keep {
            self.close(slot);
        }
    }

    /// Reads what arrived and moves the request on. `false` to close the connection.
    fn read_request(&mut self, conn: &mut Conn) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let room = match &conn.phase {
                Phase::Head => MAX_HEAD + 1 - conn.buf.len().min(MAX_HEAD + 1),
                Phase::Body { start, length, .. } => start + length - conn.buf.len(),
                _ => return true,
            };
            if room == 0 {
                break;
            }
            let want = room.min(chunk.len());
            match conn.stream.read(&mut chunk[..want]) {
                // The sender stopped sending (a half-close) before its request was
                // whole: told so, if it still reads.
                Ok(0) if !conn.buf.is_empty() => {
                    log::debug!("webhook listener: a request ended before its length (400)");
                    Counters::add(&self.receiving.counters.refused_request);
                    return self.answer(conn, Status(400, None), false);
                }
                Ok(0) => return false,
                Ok(n) => {
                    if !self.make_room(n, conn) {
                        Counters::add(&self.receiving.counters.dropped);
                        return false;
                    }
                    conn.buf.extend_from_slice(&chunk[..n]);
                    self.buffered += n;
                    conn.last_in = core_http::service::now();
                    if !self.advance(conn) {
                        return false;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        self.advance(conn)
    }

    /// Keeps the bytes held under [`BUFFERED_MAX`] for `n` more of `conn`'s: the slowest
    /// other request being read is dropped first. `false` when no room can be made.
    fn make_room(&mut self, n: usize, conn: &Conn) -> bool {
        while self.buffered + n > BUFFERED_MAX {
            let now = core_http::service::now();
            // The slowest: fewest bytes per second since its connection.
            let slowest = self
                .conns
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    let c = c.as_ref().filter(|c| c.reading() && !c.buf.is_empty())?;
                    let secs = now.saturating_duration_since(c.accepted).as_secs_f64();
                    Some((c.buf.len() as f64 / secs.max(1e-3), i))
                })
                .min_by(|a, b| a.0.total_cmp(&b.0));
            match slowest {
                Some((rate, slot)) => {
                    let own = conn.buf.len() as f64
                        / now
                            .saturating_duration_since(conn.accepted)
                            .as_secs_f64()
                            .max(1e-3);
                    if own < rate {
                        return false;
                    }
                    Counters::add(&self.receiving.counters.dropped);
                    self.close(slot);
                }
                None => return false,
            }
        }
        true
    }

    /// Moves the request on with what it holds: the head checked, the body complete,
    /// the answer started. `false` to close the connection.
    fn advance(&mut self, conn: &mut Conn) -> bool {
        if let Phase::Head = conn.phase {
            match read_head(&conn.buf, self.receiving.max_body) {
                Head::Partial => return true,
                Head::Refuse(status, why) => {
                    log::debug!("webhook listener: refused a request ({status}: {why})");
                    Counters::add(&self.receiving.counters.refused_request);
                    return self.answer(conn, Status(status, None), true);
                }
                Head::Delivery {
                    headers,
                    start,
                    length,
                    expects_continue,
                } => {
                    if expects_continue && conn.buf.len() < start + length {
                        let _ = conn.stream.write(b"HTTP/1.1 100 Continue\r\n\r\n");
                    }
                    conn.phase = Phase::Body {
                        headers,
                        start,
                        length,
                    };
                }
            }
        }
        if let Phase::Body {
            headers,
            start,
            length,
        } = &conn.phase
            && conn.buf.len() >= start + length
        {
            let status = self
                .receiving
                .take(headers, &conn.buf[*start..start + length]);
            return self.answer(conn, status, false);
        }
        true
    }

    /// Starts answering `status`; `drain`: the sender may still be sending a body that
    /// was not read. `false` to close the connection.
    fn answer(&mut self, conn: &mut Conn, status: Status, drain: bool) -> bool {
        self.buffered = self.buffered.saturating_sub(conn.buf.len());
        conn.buf = Vec::new();
        conn.phase = Phase::Answer {
            out: answer_bytes(status),
            written: 0,
            drain,
            since: core_http::service::now(),
        };
        let _ = self.poll.registry().reregister(
            &mut conn.stream,
            Token(conn.slot),
            Interest::READABLE | Interest::WRITABLE,
        );
        self.write_answer(conn)
    }

    /// Writes what is left of the answer. `false` to close the connection.
    fn write_answer(&mut self, conn: &mut Conn) -> bool {
        let Phase::Answer {
            out,
            written,
            drain,
            ..
        } = &mut conn.phase
        else {
            return true;
        };
        let drains = *drain;
        while *written < out.len() {
            match conn.stream.write(&out[*written..]) {
                Ok(0) => return false,
                Ok(n) => *written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        let _ = conn.stream.flush();
        let _ = conn.stream.shutdown(Shutdown::Write);
        if !drains {
            return false;
        }
        conn.phase = Phase::Drain {
            until: core_http::service::now() + DRAIN_TIME,
            drained: 0,
        };
        drain_rest(conn)
    }
}

/// Reads and drops what the sender still sends. `false` once it is done (closed, or
/// over the limit).
fn drain_rest(conn: &mut Conn) -> bool {
    let Phase::Drain { drained, .. } = &mut conn.phase else {
        return true;
    };
    let mut sink = [0u8; 16 * 1024];
    loop {
        match conn.stream.read(&mut sink) {
            Ok(0) => return false,
            Ok(n) => {
                *drained += n;
                if *drained >= DRAIN_MAX {
                    return false;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}
