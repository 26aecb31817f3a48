//! A blocking webhook receiver for a script: bind an address, and
//! `for event in listener { ... }`. No async runtime, no web framework: one thread of
//! its own reads every connection as its bytes arrive (`mio`'s readiness loop), so a
//! port open to the internet keeps answering signed deliveries whatever other peers do.
//!
//! What it promises:
//! - **Only authentic deliveries reach you.** Each is verified with the endpoint's
//!   secret ([`verify`](super::verify): signature, and a timestamp within 5 minutes)
//!   before anything else; one that fails is answered `401` (a bad signature or
//!   timestamp) or `400` (headers missing or malformed) and never handed over. Refusals
//!   are counted ([`Listener::stats`]), and a signature that never matches is logged as a
//!   warning (at the first refusal, then at the 2nd, 4th, 8th...): a wrong secret is not
//!   a silent loop.
//! - **The service is answered at once**, whatever your loop is doing: `200` as soon as
//!   a delivery is verified and queued for you. Deliveries wait in a queue of [`QUEUE`];
//!   when it is full (your loop stopped reading) the service gets `503` with
//!   `Retry-After` and delivers again later: nothing is accepted that is not kept.
//! - **Redeliveries are dropped.** A delivery whose `webhook-id` was already received is
//!   answered `200` and not handed over again (the last [`REMEMBERED`] ids are kept).
//! - **Peers that are slow, silent or lying cannot lock deliveries out.** No connection
//!   holds a thread: the one thread reads whichever connection has bytes. A request's
//!   head must arrive whole within 2 s of its connection, the whole request within 10 s
//!   ([`408`] otherwise, and the connection is closed). At most 512 connections are held
//!   open at once: a newcomer when all are taken closes the one that has waited longest
//!   without sending a byte, so a flood of idle connections makes room for a delivery
//!   instead of refusing it. The bodies being read hold 64 MiB at most in all (the
//!   slowest one is dropped to make room); each is read only as its bytes arrive, never
//!   allocated from its `Content-Length`.
//! - **HTTP/1.1 as RFC 9112 has it.** A body over the limit (1 MiB by default,
//!   [`Listener::bind_with`]) is answered `413` without being read; a head over 16 KiB,
//!   or of more than 1,024 headers (as many as fit in 16 KiB at 16 bytes each; a
//!   delivery has a dozen), `431`; a method other than `POST` `405`; a body without
//!   `Content-Length` (or with `Transfer-Encoding`) `411`; an HTTP/1.1 request without
//!   exactly one `Host`, a `Content-Length` that is not digits alone or given twice, a
//!   malformed head, a request whose sender stops sending (a half-close) before its
//!   `Content-Length` has come, `400`; `Expect: 100-continue` is answered
//!   `100 Continue` at once (another expectation `417`). Every answer closes its
//!   connection (`Connection: close`).
//!
//! What it needs in front of it: nothing for a script's endpoint. It is not a defence
//! against a flood of connections from many addresses faster than it can accept them
//! (a SYN flood, say): that is the network's to stop (a load balancer or a reverse
//! proxy), as for any server.
//!
//! The secret is never shown: not in `Debug`, nor in any error or log line.
//!
//! [`408`]: https://www.rfc-editor.org/rfc/rfc9110#status.408

mod head;
mod receive;
mod serve;

use std::fmt;
use std::io;
use std::marker::PhantomData;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread;
use std::time::Duration;

use mio::net::TcpListener;
use mio::{Poll, Waker};

use super::{Envelope, WebhookError, WebhookEvent, secret_key};
pub use receive::ListenerStats;
use receive::{Counters, Receiving};
use serve::{Loop, STOP};

/// How many verified deliveries wait for the caller before the service is told to come
/// back later (`503`).
pub const QUEUE: usize = 256;

/// How many delivery ids are remembered to drop redeliveries.
pub const REMEMBERED: usize = 10_000;

/// The default largest body accepted.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// A blocking listener for a service's webhook deliveries, yielding its typed events
/// (`E`: the service crate's `webhooks::Event`).
///
/// ```
/// use std::time::Duration;
/// use core_webhooks::{Envelope, Listener};
///
/// let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// let mut listener = Listener::<Envelope>::bind("127.0.0.1:0", secret)?;
/// println!("deliveries to http://{}/", listener.local_addr());
/// // A script loops with `for event in listener.by_ref() { ... }`; here nothing comes.
/// assert!(listener.next_timeout(Duration::from_millis(10)).is_none());
/// assert_eq!(listener.stats().delivered, 0);
/// # Ok::<(), core_http::Error>(())
/// ```
pub struct Listener<E> {
    addr: SocketAddr,
    events: Receiver<Result<E, WebhookError>>,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    counters: Arc<Counters>,
    _event: PhantomData<fn() -> E>,
}

impl<E> fmt::Debug for Listener<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listener")
            .field("addr", &self.addr)
            .field("stats", &self.counters.read())
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
    pub fn bind(addr: impl ToSocketAddrs, secret: &str) -> core_http::Result<Self> {
        Self::bind_with(addr, secret, DEFAULT_MAX_BODY)
    }

    /// As [`bind`](Self::bind), with bodies up to `max_body` bytes.
    pub fn bind_with(
        addr: impl ToSocketAddrs,
        secret: &str,
        max_body: usize,
    ) -> core_http::Result<Self> {
        // An unusable secret is found now, not at the first delivery.
        secret_key(secret)?;
        let cannot =
            |e: io::Error| core_http::Error::Config(format!("cannot listen for webhooks: {e}"));
        let socket = bind_first(addr).map_err(cannot)?;
        let addr = socket.local_addr().map_err(cannot)?;
        let poll = Poll::new().map_err(cannot)?;
        let waker = Arc::new(Waker::new(poll.registry(), STOP).map_err(cannot)?);
        let (sender, events) = sync_channel(QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(Counters::default());
        let receiver = Receiving::new(secret, max_body, sender, counters.clone());
        let stopping = stop.clone();
        // The thread holds the waker too: closed before the thread read its wake, its
        // event would be lost with it.
        let held = waker.clone();
        thread::Builder::new()
            .name("webhook-listener".into())
            .spawn(move || {
                Loop::new(poll, socket, receiver).run(&stopping);
                drop(held);
            })
            .map_err(|e| {
                core_http::Error::Config(format!("cannot start the webhook listener: {e}"))
            })?;
        Ok(Listener {
            addr,
            events,
            stop,
            waker,
            counters,
            _event: PhantomData,
        })
    }
}

impl<E> Listener<E> {
    /// Where it listens (the port chosen when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// What it has done so far: deliveries handed over, redeliveries dropped, refusals
    /// (a bad signature counted apart), deliveries turned away while the queue was full,
    /// connections dropped.
    pub fn stats(&self) -> ListenerStats {
        self.counters.read()
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
    /// Stops listening: the thread closes every connection and ends at once, and the
    /// address is free again then.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
    }
}

/// Binds the first of `addr`'s addresses that can be bound.
fn bind_first(addr: impl ToSocketAddrs) -> io::Result<TcpListener> {
    let mut last = io::Error::new(io::ErrorKind::InvalidInput, "no address to listen on");
    for addr in addr.to_socket_addrs()? {
        match std::net::TcpListener::bind(addr) {
            Ok(socket) => {
                socket.set_nonblocking(true)?;
                return Ok(TcpListener::from_std(socket));
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}
