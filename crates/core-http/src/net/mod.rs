//! One connection stack for calls, streams and shared budgets: the host resolved
//! (cached, within the deadline, on lookup threads reused from one lookup to the next),
//! the first of its addresses that answers, a `CONNECT` tunnel through the client's
//! proxy for that host, TLS with the client's one configuration; every step held to one
//! deadline on a socket that keeps it. What it gives is a [`Connection`]; the
//! credentials crossing it are the masks' to swap in and out.
//!
//! For crates built on core-http: a [`Dialer`] is what a client connects with, and
//! [`Dialer::connect_direct`] what a store on the network (`core-budgets`' Redis) uses.

mod dial;
mod resolve;
mod socket;
pub(crate) mod tls;
pub(crate) mod tunnel;

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub(crate) use crate::masks::Masks;
pub use socket::Socket;
pub use tunnel::Refusal;

use crate::proxy::Proxies;
use resolve::{ResolveError, Resolver};

/// Where a connection goes.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The host as a URL writes it (an IPv6 address in brackets).
    pub host: &'a str,
    /// The port.
    pub port: u16,
    /// TLS to the host.
    pub tls: bool,
}

impl Target<'_> {
    /// The host without the brackets of an IPv6 address, as TLS and the resolver take it.
    pub fn bare_host(&self) -> &str {
        self.host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(self.host)
    }
}

/// Why no connection was made. Nothing was sent in any case.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConnectError {
    /// The host's name has no address.
    NotFound {
        /// The host.
        host: String,
        /// The resolver's words.
        detail: String,
    },
    /// No address answered: refused, unreachable (the address tried last, `host:port`).
    Dial {
        /// The address tried last.
        address: String,
        /// What it answered.
        source: io::Error,
    },
    /// The deadline passed while `stage` ("resolving", "connecting", the proxy, TLS).
    TimedOut {
        /// What was under way.
        stage: &'static str,
        /// Where to.
        target: String,
    },
    /// The proxy did not open the tunnel.
    Proxy(Refusal),
    /// TLS failed (a certificate, the protocol): trying again will not mend it.
    Tls {
        /// The host.
        host: String,
        /// What failed.
        message: String,
    },
    /// The caller abandoned it ([`Abort`]).
    Aborted,
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::NotFound { host, detail } => {
                write!(f, "could not resolve the host {host} ({detail})")
            }
            ConnectError::Dial { address, source } => write!(f, "{address}: {source}"),
            ConnectError::TimedOut { stage, target } => {
                write!(f, "timed out {stage} {target}")
            }
            ConnectError::Proxy(refusal) => write!(f, "{refusal}"),
            ConnectError::Tls { host, message } => write!(f, "TLS with {host}: {message}"),
            ConnectError::Aborted => f.write_str("the connection was abandoned"),
        }
    }
}

impl std::error::Error for ConnectError {}

/// What lets a caller abandon a connection from another thread: a flag every step
/// reads, and the socket, shut down at once under a read or write that is blocked.
#[derive(Debug, Default)]
pub struct Abort {
    aborted: AtomicBool,
    socket: Mutex<Option<TcpStream>>,
}

impl Abort {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<TcpStream>> {
        self.socket
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Ends the connection now, whatever its thread is doing.
    pub fn abort(&self) {
        self.aborted.store(true, Ordering::Release);
        if let Some(socket) = self.lock().take() {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }

    /// Whether [`Abort::abort`] was called.
    pub fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    /// Keeps a handle on the current socket (refused once aborted).
    pub(crate) fn register(&self, socket: &TcpStream) -> Result<(), ConnectError> {
        let mut slot = self.lock();
        if self.is_aborted() {
            let _ = socket.shutdown(Shutdown::Both);
            return Err(ConnectError::Aborted);
        }
        *slot = socket.try_clone().ok();
        Ok(())
    }
}

/// A connection's bytes: plain, or TLS over it.
pub(crate) enum Io<S: Read + Write> {
    Plain(S),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, S>>),
}

/// An open connection to a service (through its tunnel when there is one): plain or
/// TLS over a socket `S` (a [`Socket`] held to a deadline; for a stream's thread, the
/// same connection moved onto a non-blocking socket with [`Connection::map`]).
pub struct Connection<S: Read + Write = Socket> {
    pub(crate) io: Io<S>,
    pub(crate) masks: Arc<Masks>,
}

impl<S: Read + Write> Connection<S> {
    /// The socket under it.
    pub fn socket(&self) -> &S {
        match &self.io {
            Io::Plain(s) => s,
            Io::Tls(t) => t.get_ref(),
        }
    }

    /// The socket under it, to set its deadline or wait for it to be ready.
    pub fn socket_mut(&mut self) -> &mut S {
        match &mut self.io {
            Io::Plain(s) => s,
            Io::Tls(t) => t.get_mut(),
        }
    }

    /// Whether it is TLS.
    pub fn is_tls(&self) -> bool {
        matches!(self.io, Io::Tls(_))
    }

    /// Swaps the stand-ins of the client's credentials in a request's head for the
    /// credentials, as the head is about to be written (the layers above never held
    /// them).
    pub fn reveal_head(&self, head: &mut [u8]) {
        self.masks.reveal(head, true);
    }

    /// Swaps any of the client's credentials in `read` (just read) for their stand-ins,
    /// before anything else sees it; `tail` keeps the end of what was read before, so
    /// that a credential cut across two reads is hidden too.
    pub fn hide_echoes(&self, read: &mut [u8], tail: &mut Vec<u8>) {
        let longest = self.masks.longest();
        if read.is_empty() || longest == 0 {
            return;
        }
        self.masks.blank(read, tail);
        let keep = longest - 1;
        tail.extend_from_slice(&read[read.len().saturating_sub(keep)..]);
        let drop = tail.len().saturating_sub(keep);
        tail.drain(..drop);
    }

    /// The same connection over another socket (the same bytes, the same TLS state).
    pub fn map<T: Read + Write>(self, f: impl FnOnce(S) -> T) -> Connection<T> {
        let io = match self.io {
            Io::Plain(s) => Io::Plain(f(s)),
            Io::Tls(t) => {
                let rustls::StreamOwned { conn, sock } = *t;
                Io::Tls(Box::new(rustls::StreamOwned::new(conn, f(sock))))
            }
        };
        Connection {
            io,
            masks: self.masks,
        }
    }
}

/// An open connection for a crate built on core-http ([`Dialer::connect_direct`]):
/// TLS or plain, every read and write ending by the deadline it was last given.
pub struct Link(Connection);

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Link")
            .field("tls", &self.0.is_tls())
            .finish_non_exhaustive()
    }
}

impl Link {
    /// Holds every read and write from now on to end within `within`.
    pub fn limit(&mut self, within: std::time::Duration) {
        let deadline = crate::time::now() + crate::time::bounded(within);
        self.0.socket_mut().set_deadline(Some(deadline));
    }
}

impl Read for Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Link {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<S: Read + Write> Read for Connection<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.io {
            Io::Plain(s) => s.read(buf),
            Io::Tls(t) => t.read(buf),
        }
    }
}

impl<S: Read + Write> Write for Connection<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.io {
            Io::Plain(s) => s.write(buf),
            Io::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.io {
            Io::Plain(s) => s.flush(),
            Io::Tls(t) => t.flush(),
        }
    }
}

/// What a client connects with: its resolver, its proxies, its TLS configuration and
/// the masks of its credentials. One per client, for its calls, its streams and its
/// shared budget.
pub struct Dialer {
    resolver: Resolver,
    pub(crate) proxies: Proxies,
    pub(crate) tls: Arc<rustls::ClientConfig>,
    pub(crate) masks: Arc<Masks>,
}

impl std::fmt::Debug for Dialer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dialer")
            .field("proxies", &self.proxies)
            .finish_non_exhaustive()
    }
}

impl Dialer {
    pub(crate) fn new(proxies: Proxies, tls: Arc<rustls::ClientConfig>) -> Self {
        Dialer {
            resolver: Resolver::default(),
            proxies,
            tls,
            masks: Arc::default(),
        }
    }

    /// A connection stack of its own for something built without a client: Mozilla's
    /// roots, no proxy, no client certificate.
    ///
    /// # Errors
    ///
    /// A configuration error when TLS cannot be set up.
    pub fn standalone() -> crate::Result<Dialer> {
        let tls = tls::RootCertificates::default().rustls_config(None)?;
        Ok(Dialer::new(Proxies::default(), tls))
    }

    /// Connects to `target` by `deadline`: through the proxy for it when there is one,
    /// then TLS when it asks for it. `abort`, when given, can end it from another thread.
    /// The socket keeps `deadline` for every read and write until it is given another.
    ///
    /// # Errors
    ///
    /// [`ConnectError`] when no connection was made by then.
    pub fn connect(
        &self,
        target: &Target<'_>,
        deadline: Instant,
        abort: Option<&Abort>,
    ) -> Result<Connection, ConnectError> {
        let via = self.proxies.route_for(target.tls, target.bare_host());
        self.connect_via(target, via, deadline, abort)
    }

    /// [`Dialer::connect`] through `via`, or straight to the target.
    fn connect_via(
        &self,
        target: &Target<'_>,
        via: Option<&crate::proxy::ProxyRoute>,
        deadline: Instant,
        abort: Option<&Abort>,
    ) -> Result<Connection, ConnectError> {
        let host = target.bare_host();
        let stream = self.dial(target, via, deadline, abort)?;
        let _ = stream.set_nodelay(true);
        if let Some(abort) = abort {
            abort.register(&stream)?;
        }
        let mut socket = Socket::new(stream);
        socket.set_deadline(Some(deadline));
        if let Some(route) = via {
            tunnel::open(&mut socket, route, host, target.port).map_err(ConnectError::Proxy)?;
        }
        let io = if target.tls {
            let secured = tls::handshake(&self.tls, host, socket)
                .map_err(|e| handshake_failed(e, target, abort.is_some_and(Abort::is_aborted)))?;
            Io::Tls(Box::new(secured))
        } else {
            Io::Plain(socket)
        };
        Ok(Connection {
            io,
            masks: self.masks.clone(),
        })
    }

    /// Connects to `host:port` within `within`, over TLS (the client's roots) when
    /// `tls`, never through the client's HTTP proxy: for a store on the network. Every
    /// read and write of the link ends by the same deadline until [`Link::limit`] gives
    /// it another.
    ///
    /// # Errors
    ///
    /// Why no connection was made by then (refused, not found, timed out, TLS), in
    /// words.
    pub fn connect_direct(
        &self,
        host: &str,
        port: u16,
        tls: bool,
        within: std::time::Duration,
    ) -> io::Result<Link> {
        let target = Target { host, port, tls };
        let deadline = crate::time::now() + crate::time::bounded(within);
        self.connect_via(&target, None, deadline, None)
            .map(Link)
            .map_err(|e| match e {
                ConnectError::TimedOut { .. } => io::Error::new(io::ErrorKind::TimedOut, e),
                other => io::Error::other(other),
            })
    }

    /// A TCP connection to the first address of the target (or of its proxy `via`)
    /// that answers by `deadline`.
    fn dial(
        &self,
        target: &Target<'_>,
        via: Option<&crate::proxy::ProxyRoute>,
        deadline: Instant,
        abort: Option<&Abort>,
    ) -> Result<TcpStream, ConnectError> {
        let (to_host, to_port) = match via {
            Some(p) => (p.host(), p.port()),
            None => (target.bare_host(), target.port),
        };
        let shown = || format!("{}:{to_port}", bracketed(to_host));
        let unreachable = |p: &crate::proxy::ProxyRoute, message: String, late: bool| {
            let mut refusal = tunnel::unreachable(&p.address(), message);
            refusal.timed_out = late;
            ConnectError::Proxy(refusal)
        };
        let addrs = self
            .resolver
            .resolve(to_host, to_port, deadline)
            .map_err(|e| match (e, via) {
                (ResolveError::NotFound(detail), Some(p)) => unreachable(
                    p,
                    format!("could not resolve the proxy {} ({detail})", p.address()),
                    false,
                ),
                (ResolveError::NotFound(detail), None) => ConnectError::NotFound {
                    host: to_host.to_owned(),
                    detail,
                },
                (ResolveError::TimedOut, _) => ConnectError::TimedOut {
                    stage: "resolving",
                    target: to_host.to_owned(),
                },
            })?;
        let aborted = || abort.is_some_and(Abort::is_aborted);
        dial::dial(&addrs, deadline, aborted).map_err(|last| match (last, via) {
            _ if aborted() => ConnectError::Aborted,
            (Some(source), None) => ConnectError::Dial {
                address: shown(),
                source,
            },
            (None, None) => ConnectError::TimedOut {
                stage: "connecting to",
                target: shown(),
            },
            (Some(e), Some(p)) => unreachable(
                p,
                format!("could not connect to the proxy {}: {e}", p.address()),
                false,
            ),
            (None, Some(p)) => unreachable(
                p,
                format!("could not connect to the proxy {} in time", p.address()),
                true,
            ),
        })
    }
}

/// A TLS handshake that failed, as the connection's failure.
fn handshake_failed(e: tls::HandshakeError, target: &Target<'_>, aborted: bool) -> ConnectError {
    let host = target.bare_host();
    match e {
        tls::HandshakeError::Tls(message) => ConnectError::Tls {
            host: host.to_owned(),
            message,
        },
        tls::HandshakeError::Io(e)
            if matches!(
                e.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
            ) =>
        {
            ConnectError::TimedOut {
                stage: "in the TLS handshake with",
                target: host.to_owned(),
            }
        }
        tls::HandshakeError::Io(_) if aborted => ConnectError::Aborted,
        tls::HandshakeError::Io(source) => ConnectError::Dial {
            address: format!("{}:{}", bracketed(host), target.port),
            source,
        },
    }
}

/// `host` as it is written beside a port: an IPv6 address in brackets.
fn bracketed(host: &str) -> std::borrow::Cow<'_, str> {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]").into()
    } else {
        host.into()
    }
}
