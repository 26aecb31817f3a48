//! A blocking webhook receiver for a script: bind an address, and
//! `for event in listener { ... }`. No async runtime, no web framework: the standard
//! library's sockets and the verification this module already has.
//!
//! What it promises:
//! - **Only authentic deliveries reach you.** Each is verified with the endpoint's
//!   secret ([`verify`](super::verify): signature, and a timestamp within 5 minutes)
//!   before anything else; one that fails is answered `401` (a bad signature or
//!   timestamp) or `400` (headers missing or malformed) and never handed over.
//! - **The service is answered at once**, by a thread of the listener's own, whatever
//!   your loop is doing: `200` as soon as a delivery is verified and queued for you.
//!   Deliveries wait in a queue of [`QUEUE`]; when it is full (your loop stopped reading)
//!   the service gets `503` with `Retry-After` and delivers again later: nothing is
//!   accepted that is not kept.
//! - **Redeliveries are dropped.** A delivery whose `webhook-id` was already received is
//!   answered `200` and not handed over again (the last [`REMEMBERED`] ids are kept).
//! - **Bounded.** A body over the limit (1 MiB by default, [`Listener::bind_with`]) is
//!   answered `413` without being read; a head over 16 KiB `431`; a request that does
//!   not arrive whole within 5 s is dropped (`408`). Each request is read on a thread of
//!   its own (so a sender that trickles holds no one up), at most 16 at once (one more
//!   is answered `503`), then its connection is closed (`Connection: close`).
//! - **Anything else** is refused with the right status: a method other than `POST`
//!   (`405`), a body without `Content-Length` (`411`).
//!
//! The secret is never shown: not in `Debug`, nor in any error or log line.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::marker::PhantomData;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use super::{Envelope, WebhookError, WebhookEvent, secret_key, verify};

/// How many verified deliveries wait for the caller before the service is told to come
/// back later (`503`).
pub const QUEUE: usize = 256;

/// How many delivery ids are remembered to drop redeliveries.
pub const REMEMBERED: usize = 10_000;

/// The default largest body accepted.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// How many requests are read at once (each on a thread of its own); one more is
/// answered `503` at once.
const READERS: usize = 16;

/// The longest request head read.
const MAX_HEAD: usize = 16 * 1024;

/// How long one request may take to arrive whole.
const REQUEST_TIME: Duration = Duration::from_secs(5);

/// A blocking listener for a service's webhook deliveries, yielding its typed events
/// (`E`: the service crate's `webhooks::Event`).
///
/// ```
/// use std::time::Duration;
/// use core_http::webhook::{Envelope, Listener};
///
/// let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// let mut listener = Listener::<Envelope>::bind("127.0.0.1:0", secret)?;
/// println!("deliveries to http://{}/", listener.local_addr());
/// // A script loops with `for event in listener.by_ref() { ... }`; here nothing comes.
/// assert!(listener.next_timeout(Duration::from_millis(10)).is_none());
/// # Ok::<(), core_http::Error>(())
/// ```
pub struct Listener<E> {
    addr: SocketAddr,
    events: Receiver<Result<E, WebhookError>>,
    stop: Arc<AtomicBool>,
    _event: PhantomData<fn() -> E>,
}

impl<E> fmt::Debug for Listener<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listener")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// An [`Envelope`] is an event too: the type and data as sent, for a listener that
/// wants them untyped.
impl WebhookEvent for Envelope {
    fn from_envelope(envelope: Envelope) -> Result<Self, WebhookError> {
        Ok(envelope)
    }
}

impl<E: WebhookEvent + Send + 'static> Listener<E> {
    /// Listens on `addr` (`"0.0.0.0:8080"`; port 0 picks a free one, see
    /// [`local_addr`](Self::local_addr)) for deliveries signed with `secret` (the
    /// endpoint's `whsec_...`), with a body limit of 1 MiB.
    pub fn bind(addr: impl ToSocketAddrs, secret: &str) -> crate::Result<Self> {
        Self::bind_with(addr, secret, DEFAULT_MAX_BODY)
    }

    /// As [`bind`](Self::bind), with bodies up to `max_body` bytes.
    pub fn bind_with(
        addr: impl ToSocketAddrs,
        secret: &str,
        max_body: usize,
    ) -> crate::Result<Self> {
        // An unusable secret is found now, not at the first delivery.
        secret_key(secret)?;
        let socket = TcpListener::bind(addr)
            .map_err(|e| crate::Error::Config(format!("cannot listen for webhooks: {e}")))?;
        let addr = socket
            .local_addr()
            .map_err(|e| crate::Error::Config(format!("cannot listen for webhooks: {e}")))?;
        let (sender, events) = sync_channel(QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let receiver = Receiving {
            secret: secret.to_owned(),
            max_body,
            seen: Mutex::default(),
            events: sender,
            stop: stop.clone(),
            reading: AtomicUsize::new(0),
        };
        thread::Builder::new()
            .name("webhook-listener".into())
            .spawn(move || receiver.run(&socket))
            .map_err(|e| crate::Error::Config(format!("cannot start the webhook listener: {e}")))?;
        Ok(Listener {
            addr,
            events,
            stop,
            _event: PhantomData,
        })
    }

    /// Where it listens (the port chosen when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The next event, waiting at most `timeout`; `None` when none came in time. An
    /// `Err` is an authentic delivery (signed with the secret) whose event could not be
    /// read (a known type whose data changed shape): the service was answered `200`,
    /// since delivering it again would not mend it.
    pub fn next_timeout(&mut self, timeout: Duration) -> Option<Result<E, WebhookError>> {
        self.events.recv_timeout(timeout).ok()
    }
}

impl<E> Iterator for Listener<E> {
    type Item = Result<E, WebhookError>;

    /// Waits for the next event (as long as it takes).
    fn next(&mut self) -> Option<Self::Item> {
        self.events.recv().ok()
    }
}

impl<E> Drop for Listener<E> {
    /// Stops listening: the thread ends after the request it is reading, if any, and
    /// the address is free again then.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the thread from `accept` (it sees the flag and ends).
        let _ = TcpStream::connect_timeout(&wake_addr(self.addr), Duration::from_millis(200));
    }
}

/// The address to connect to to reach a listener bound to `addr` (a wildcard address is
/// reached on loopback).
fn wake_addr(addr: SocketAddr) -> SocketAddr {
    let mut to = addr;
    if to.ip().is_unspecified() {
        to.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    to
}

/// The ids of deliveries received, the oldest forgotten first.
#[derive(Default)]
struct Remembered {
    ids: HashSet<String>,
    order: VecDeque<String>,
}

impl Remembered {
    fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    fn insert(&mut self, id: &str) {
        if self.ids.insert(id.to_owned()) {
            self.order.push_back(id.to_owned());
            if self.order.len() > REMEMBERED
                && let Some(oldest) = self.order.pop_front()
            {
                self.ids.remove(&oldest);
            }
        }
    }
}

/// The listener's thread: accepts, reads, verifies, answers, hands over.
struct Receiving<E> {
    secret: String,
    max_body: usize,
    seen: Mutex<Remembered>,
    events: SyncSender<Result<E, WebhookError>>,
    stop: Arc<AtomicBool>,
    /// Requests being read now, each on a thread of its own.
    reading: AtomicUsize,
}

/// A request as read: its headers and body.
struct Request {
    method: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// The status (and reason) a request is refused with.
struct Refusal(u16, &'static str);

impl<E: WebhookEvent + Send + 'static> Receiving<E> {
    fn run(self, socket: &TcpListener) {
        let this = Arc::new(self);
        for connection in socket.incoming() {
            if this.stop.load(Ordering::SeqCst) {
                return;
            }
            let Ok(connection) = connection else {
                // Out of descriptors or an aborted connection: go on after a moment.
                thread::sleep(Duration::from_millis(20));
                continue;
            };
            // Each request is read on a thread of its own, so a sender that trickles
            // cannot hold the others up; at most READERS at once.
            if this.reading.fetch_add(1, Ordering::SeqCst) >= READERS {
                this.reading.fetch_sub(1, Ordering::SeqCst);
                answer(&connection, 503, Some(1));
                continue;
            }
            let reader = this.clone();
            let spawned = thread::Builder::new()
                .name("webhook-delivery".into())
                .spawn(move || {
                    reader.serve(&connection);
                    reader.reading.fetch_sub(1, Ordering::SeqCst);
                });
            if spawned.is_err() {
                this.reading.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// Reads one request, answers it, hands a delivery over.
    fn serve(&self, connection: &TcpStream) {
        let (status, retry_after) = match read_request(connection, self.max_body) {
            Ok(request) => self.take(request),
            Err(Refusal(status, why)) => {
                log::debug!("webhook listener: refused a request ({status}: {why})");
                (status, None)
            }
        };
        answer(connection, status, retry_after);
    }

    /// Verifies a delivery and hands it over: the status to answer.
    fn take(&self, request: Request) -> (u16, Option<u64>) {
        if request.method != "POST" {
            return (405, None);
        }
        let headers = request.headers.as_slice();
        if let Err(e) = verify(&self.secret, headers, &request.body, SystemTime::now()) {
            log::info!("webhook listener: a delivery failed verification: {e}");
            let status = match e {
                WebhookError::MissingHeader(_) | WebhookError::InvalidHeader { .. } => 400,
                _ => 401,
            };
            return (status, None);
        }
        let id = super::WebhookHeaders::header(headers, "webhook-id")
            .unwrap_or_default()
            .to_owned();
        // Held from the check to the hand-over, so two copies of one delivery arriving
        // at once are handed over once.
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.contains(&id) {
            log::debug!("webhook listener: delivery {id} received again; dropped");
            return (200, None);
        }
        let event = serde_json::from_slice::<Envelope>(&request.body)
            .map_err(WebhookError::from)
            .and_then(E::from_envelope);
        match self.events.try_send(event) {
            Ok(()) => {
                seen.insert(&id);
                (200, None)
            }
            Err(TrySendError::Full(_)) => {
                log::warn!(
                    "webhook listener: {QUEUE} deliveries wait to be read; asked the service to come back"
                );
                (503, Some(5))
            }
            Err(TrySendError::Disconnected(_)) => (503, Some(5)),
        }
    }
}

/// Whether a read failed because the request's time ran out.
fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

/// Reads one request, within [`REQUEST_TIME`] and the limits.
fn read_request(connection: &TcpStream, max_body: usize) -> Result<Request, Refusal> {
    let timed = TimedReader {
        stream: connection,
        deadline: Instant::now() + REQUEST_TIME,
    };
    let mut reader = BufReader::new(timed.take(MAX_HEAD as u64));
    let (method, headers) = read_head(&mut reader)?;
    let length = body_length(&method, &headers, max_body)?;
    // What the head's reader holds already is the body's start.
    let mut body = reader.buffer().to_vec();
    body.truncate(length);
    let mut rest = reader.into_inner().into_inner();
    let mut chunk = [0u8; 8192];
    while body.len() < length {
        match rest.read(&mut chunk[..(length - body.len()).min(8192)]) {
            Ok(0) => return Err(Refusal(400, "the body ended early")),
            Ok(n) => body.extend_from_slice(&chunk[..n]),
            Err(e) if timed_out(&e) => {
                return Err(Refusal(408, "the body did not arrive in time"));
            }
            Err(_) => return Err(Refusal(400, "the body could not be read")),
        }
    }
    Ok(Request {
        method,
        headers,
        body,
    })
}

/// The request line's method and the headers (names in lower case), at most
/// [`MAX_HEAD`] bytes.
fn read_head(reader: &mut impl BufRead) -> Result<(String, Vec<(String, String)>), Refusal> {
    let mut line = String::new();
    let mut read_line = |line: &mut String| -> Result<(), Refusal> {
        line.clear();
        match reader.read_line(line) {
            Ok(0) => Err(Refusal(400, "the connection closed in the head")),
            Ok(_) if !line.ends_with('\n') => Err(Refusal(431, "the head is too long")),
            Ok(_) => Ok(()),
            Err(e) if timed_out(&e) => Err(Refusal(408, "the head did not arrive in time")),
            Err(_) => Err(Refusal(400, "the head could not be read")),
        }
    };
    read_line(&mut line)?;
    let method = line.split(' ').next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        read_line(&mut line)?;
        let text = line.trim_end();
        if text.is_empty() {
            return Ok((method, headers));
        }
        let (name, value) = text
            .split_once(':')
            .ok_or(Refusal(400, "a header without a colon"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
}

/// The body's length from `Content-Length` (required on a POST; chunked bodies are
/// refused), within `max_body`.
fn body_length(
    method: &str,
    headers: &[(String, String)],
    max_body: usize,
) -> Result<usize, Refusal> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    if header("transfer-encoding").is_some() {
        return Err(Refusal(411, "a body without Content-Length"));
    }
    let length: usize = match header("content-length") {
        None if method == "POST" => return Err(Refusal(411, "a body without Content-Length")),
        None => 0,
        Some(value) => value
            .parse()
            .map_err(|_| Refusal(400, "a Content-Length that is not a number"))?,
    };
    if length > max_body {
        return Err(Refusal(413, "a body over the limit"));
    }
    Ok(length)
}

/// Reads from the connection, each read bounded by what is left of the request's time.
struct TimedReader<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
}

impl Read for TimedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        let mut stream = self.stream;
        stream.read(buf)
    }
}

/// Answers `status` (with `Retry-After` when given) and closes the connection.
fn answer(connection: &TcpStream, status: u16, retry_after: Option<u64>) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        _ => "Service Unavailable",
    };
    let mut head =
        format!("HTTP/1.1 {status} {reason}\r\ncontent-length: 0\r\nconnection: close\r\n");
    if status == 405 {
        head.push_str("allow: POST\r\n");
    }
    if let Some(seconds) = retry_after {
        head.push_str(&format!("retry-after: {seconds}\r\n"));
    }
    head.push_str("\r\n");
    let _ = connection.set_write_timeout(Some(Duration::from_secs(2)));
    let mut writer = connection;
    let _ = writer.write_all(head.as_bytes());
    let _ = writer.flush();
    // What the sender still sends (a body refused unread) is read and dropped for a
    // moment, so that closing does not reset the connection before it reads the answer.
    let _ = connection.shutdown(std::net::Shutdown::Write);
    if !matches!(status, 411 | 413 | 431) {
        return;
    }
    let until = Instant::now() + Duration::from_secs(1);
    let mut reader = connection;
    let mut sink = [0u8; 16 * 1024];
    let mut drained = 0usize;
    while drained < 8 * 1024 * 1024 {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || connection.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match reader.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n,
        }
    }
}
