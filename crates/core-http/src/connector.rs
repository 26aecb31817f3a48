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

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, Transport,
};

use crate::proxy::Proxies;
use crate::tunnel::Refusal;

/// The connector chain of a client's agent: a tunnel through the call's proxy when it
/// has one, else a plain TCP connection; its timeouts set only when they must change
/// ([`steady`](crate::steady)); then TLS for `https`.
pub(crate) fn chain(proxies: Proxies) -> impl Connector {
    use ureq::unversioned::transport::RustlsConnector;
    ().chain(Tunnels { proxies })
        .chain(crate::steady::Steady)
        .chain(RustlsConnector::default())
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
