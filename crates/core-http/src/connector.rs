//! How the transport connects: TCP, or a `CONNECT` tunnel through the call's proxy, then
//! TLS. The tunnel is opened here (not by ureq's own proxy connector) so that all of
//! it, the proxy's answer included, fits in the call's deadline: ureq re-arms its wait on
//! every byte, so a proxy that trickles its answer could hold a call long past its
//! timeout. A proxy's refusal comes back as a [`Refusal`] naming it.
//!
//! A direct connection is opened here too, as a [`Socket`] rather than ureq's TCP
//! transport, whose write of a request's bytes may wait its timeout again after each
//! part the peer takes: an upload to a server that takes a little and then nothing could
//! end several timeouts late. A [`Socket`]'s write ends by its timeout, however the peer
//! takes the bytes.
//!
//! TLS is rustls driven here, with the client's one configuration (its roots and its
//! certificate, the same as its streams'), rather than ureq's TLS connector: a program
//! then builds ureq without its TLS code and its TLS settings.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use ureq::unversioned::transport::time::{Duration as UreqDuration, Instant as UreqInstant};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, Transport,
    TransportAdapter,
};

use crate::proxy::Proxies;
use crate::tunnel::Refusal;

/// The connector chain of a client's agent: a tunnel through the call's proxy when it
/// has one, else a plain TCP connection; its timeouts set only when they must change
/// ([`steady`](crate::steady)); then TLS for `https`, with `tls`.
pub(crate) fn chain(proxies: Proxies, tls: Arc<ClientConfig>) -> impl Connector {
    ().chain(Tunnels { proxies })
        .chain(crate::steady::Steady)
        .chain(Tls { config: tls })
}

/// TLS over the connection for `https`, with the client's rustls configuration.
#[derive(Debug)]
struct Tls {
    config: Arc<ClientConfig>,
}

impl<In: Transport> Connector<In> for Tls {
    type Out = Either<In, Secured>;

    fn connect(
        &self,
        details: &ConnectionDetails<'_>,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        let Some(transport) = chained else {
            return Ok(None);
        };
        if !details.needs_tls() || transport.is_tls() {
            return Ok(Some(Either::A(transport)));
        }
        handshake(&self.config, details, transport.boxed()).map(|t| Some(Either::B(t)))
    }
}

/// The TLS handshake over `inner`, within what is left of the connection's timeout. A
/// failure of TLS itself (a certificate, the protocol) comes back as an I/O error holding
/// rustls's error, as [`wire`](crate::wire) reads it.
fn handshake(
    config: &Arc<ClientConfig>,
    details: &ConnectionDetails<'_>,
    inner: Box<dyn Transport>,
) -> Result<Secured, ureq::Error> {
    let host = details.uri.host().unwrap_or_default();
    // An IPv6 address is in brackets in a URL, not in the name TLS checks.
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let name = ServerName::try_from(bare.to_owned())
        .map_err(|_| ureq::Error::Tls("the host is not a name TLS can check"))?;
    let mut conn = ClientConnection::new(Arc::clone(config), name)
        .map_err(|e| ureq::Error::Io(io::Error::new(io::ErrorKind::InvalidData, e)))?;
    let mut socket = TransportAdapter::new(inner, Arc::clone(&details.current_time));
    socket.set_timeout(left_to_connect(details));
    // A timeout from the layers below comes back as itself, not as an I/O error.
    conn.complete_io(&mut socket)?;
    Ok(Secured {
        buffers: LazyBuffers::new(
            details.config.input_buffer_size(),
            details.config.output_buffer_size(),
        ),
        stream: StreamOwned::new(conn, socket),
    })
}

/// What is left of the connection's timeout, which started when ureq began connecting.
fn left_to_connect(details: &ConnectionDetails<'_>) -> NextTimeout {
    let mut timeout = details.timeout;
    if let (UreqDuration::Exact(limit), UreqInstant::Exact(began), UreqInstant::Exact(now)) =
        (timeout.after, details.now, (details.current_time)())
    {
        timeout.after = UreqDuration::Exact(limit.saturating_sub(now - began));
    }
    timeout
}

/// A connection with TLS over it.
struct Secured {
    buffers: LazyBuffers,
    stream: StreamOwned<ClientConnection, TransportAdapter>,
}

impl fmt::Debug for Secured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secured").finish_non_exhaustive()
    }
}

impl Transport for Secured {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    /// Encrypts and sends `amount` bytes, all of them on the connection (none left in
    /// rustls's buffer) when it returns.
    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.stream.sock.set_timeout(timeout);
        let output = &self.buffers.output()[..amount];
        self.stream.write_all(output)?;
        self.stream.flush()?;
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.stream.sock.set_timeout(timeout);
        let input = self.buffers.input_append_buf();
        let amount = self.stream.read(input)?;
        self.buffers.input_appended(amount);
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        self.stream.sock.get_mut().is_open()
    }

    fn is_tls(&self) -> bool {
        true
    }
}

/// Opens a call's connection, directly or through a tunnel to its proxy, within the
/// call's deadline.
#[derive(Debug)]
struct Tunnels {
    proxies: Proxies,
}

impl<In: Transport> Connector<In> for Tunnels {
    type Out = Either<In, Box<dyn Transport>>;

    fn connect(
        &self,
        details: &ConnectionDetails<'_>,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        if let Some(transport) = chained {
            return Ok(Some(Either::A(transport)));
        }
        // A call goes through a proxy when it was configured with one (then ureq has
        // not resolved the target: the proxy does).
        let Some(proxy) = details.config.proxy() else {
            return direct(details).map(|socket| Some(Either::B(Box::new(socket) as _)));
        };
        let uri = details.uri;
        let secure = uri.scheme_str() == Some("https");
        let host = uri.host().unwrap_or_default();
        let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
        let Some(route) = self.proxies.route_for(secure, host) else {
            return Err(other(refusal(
                &format!("{}:{}", proxy.host(), proxy.port()),
                "internal: the call's proxy is not the client's".into(),
            )));
        };
        let deadline = deadline(details);
        let address = route.address();
        let addrs = details
            .resolver
            .resolve(proxy.uri(), details.config, details.timeout)
            .map_err(|_| {
                other(refusal(
                    &address,
                    format!("could not resolve the proxy {address}"),
                ))
            })?;
        let stream = dial(addrs.iter(), deadline, &address).map_err(other)?;
        let _ = stream.set_nodelay(details.config.no_delay());
        crate::tunnel::open(
            &mut Deadlined {
                stream: &stream,
                deadline,
            },
            route,
            host,
            port,
        )
        .map_err(other)?;
        // The transport sets its own timeouts from here; none of ours is left behind.
        let _ = stream.set_read_timeout(None);
        let _ = stream.set_write_timeout(None);
        Ok(Some(Either::B(Box::new(Socket::new(stream, details)))))
    }
}

/// A TCP connection to the call's server (whose addresses ureq has resolved), within
/// the connection's timeout: the first address that answers.
fn direct(details: &ConnectionDetails<'_>) -> Result<Socket, ureq::Error> {
    let stream =
        crate::dial::dial(details.addrs.iter(), deadline(details), || false).map_err(|last| {
            match last {
                Some(e) => ureq::Error::Io(e),
                None => ureq::Error::Timeout(details.timeout.reason),
            }
        })?;
    let _ = stream.set_nodelay(details.config.no_delay());
    Ok(Socket::new(stream, details))
}

/// When a connection must be open by: the connection's timeout from now.
fn deadline(details: &ConnectionDetails<'_>) -> Instant {
    Instant::now()
        .checked_add(*details.timeout.after)
        .unwrap_or_else(far_future)
}

/// A TCP connection to the proxy, by `deadline`.
fn dial<'a>(
    addrs: impl Iterator<Item = &'a std::net::SocketAddr>,
    deadline: Instant,
    address: &str,
) -> Result<TcpStream, Refusal> {
    crate::dial::dial(addrs, deadline, || false).map_err(|last| {
        let mut failed = refusal(
            address,
            match &last {
                Some(e) => format!("could not connect to the proxy {address}: {e}"),
                None => format!("could not connect to the proxy {address} in time"),
            },
        );
        failed.timed_out = last.is_none();
        failed
    })
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(60 * 60 * 24 * 365)
}

fn refusal(proxy: &str, message: String) -> Refusal {
    Refusal {
        status: None,
        message,
        proxy: proxy.to_owned(),
        retry: true,
        timed_out: false,
    }
}

fn other(refusal: Refusal) -> ureq::Error {
    ureq::Error::Other(Box::new(refusal))
}

/// A socket whose every read and write ends by `deadline`.
struct Deadlined<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
}

impl Deadlined<'_> {
    fn left(&self) -> io::Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the deadline passed",
            ));
        }
        Ok(left)
    }
}

impl Read for Deadlined<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.set_read_timeout(Some(self.left()?))?;
        let mut stream = self.stream;
        stream.read(buf)
    }
}

impl Write for Deadlined<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream.set_write_timeout(Some(self.left()?))?;
        let mut stream = self.stream;
        stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut stream = self.stream;
        stream.flush()
    }
}

/// A TCP connection, direct or through a proxy's tunnel, as ureq's transport: plain
/// bytes to the service (TLS goes on top of it, by the next connector).
#[derive(Debug)]
struct Socket {
    stream: TcpStream,
    buffers: LazyBuffers,
    /// The socket's timeouts as last set, so each is set only when it changes.
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
}

/// The time an I/O may take, or the timeout ureq reports when it is already up.
fn budget(timeout: NextTimeout) -> Result<Option<Duration>, ureq::Error> {
    if timeout.after.is_zero() {
        return Err(ureq::Error::Timeout(timeout.reason));
    }
    Ok(timeout.not_zero().map(|d| *d))
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

impl Socket {
    /// The transport over `stream` (connected, no timeouts of ours left on it), with
    /// the buffers the call's configuration asks for.
    fn new(stream: TcpStream, details: &ConnectionDetails<'_>) -> Self {
        Socket {
            stream,
            buffers: LazyBuffers::new(
                details.config.input_buffer_size(),
                details.config.output_buffer_size(),
            ),
            read_timeout: None,
            write_timeout: None,
        }
    }
}

impl Transport for Socket {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    /// Writes `amount` bytes by the timeout: each write after the first waits only what
    /// is left of it (a write that the peer takes in part returns when its time is up,
    /// and must not start the wait over).
    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let timeout = timeout.for_write();
        let wanted = budget(timeout)?;
        let ends = wanted.and_then(|t| Instant::now().checked_add(t));
        let Socket {
            stream,
            buffers,
            write_timeout,
            ..
        } = self;
        let mut output = &buffers.output()[..amount];
        let mut first = true;
        while !output.is_empty() {
            // The first write waits the timeout as given (the socket's already, most
            // often); a later one what is left of it.
            let limit = match ends {
                Some(ends) if !first => {
                    let left = ends.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(ureq::Error::Timeout(timeout.reason));
                    }
                    Some(left)
                }
                _ => wanted,
            };
            if limit != *write_timeout {
                stream.set_write_timeout(limit)?;
                *write_timeout = limit;
            }
            first = false;
            match (&*stream).write(output) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
                Ok(n) => output = &output[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if timed_out(&e) => return Err(ureq::Error::Timeout(timeout.reason)),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let timeout = timeout.for_read();
        let wanted = budget(timeout)?;
        if wanted != self.read_timeout {
            self.stream.set_read_timeout(wanted)?;
            self.read_timeout = wanted;
        }
        let mut stream = &self.stream;
        let input = self.buffers.input_append_buf();
        let read = loop {
            match stream.read(input) {
                Ok(n) => break n,
                // A handled signal is not a lost connection.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if timed_out(&e) => return Err(ureq::Error::Timeout(timeout.reason)),
                Err(e) => return Err(e.into()),
            }
        };
        self.buffers.input_appended(read);
        Ok(read > 0)
    }

    fn is_open(&mut self) -> bool {
        // An idle pooled connection is open when a read would wait: nothing arrived and
        // the peer has not closed it.
        if self.stream.set_nonblocking(true).is_err() {
            return false;
        }
        let mut byte = [0u8; 1];
        let open = matches!(
            self.stream.peek(&mut byte),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock
        );
        let _ = self.stream.set_nonblocking(false);
        open
    }
}
