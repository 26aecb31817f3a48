//! The socket under a stream: TCP whose reads and writes can be held to a deadline and
//! abandoned at once, plain or under TLS, and read through what is buffered without
//! waiting.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the caller's thread shares with the connection's: a flag that makes every read
/// and write of the connection fail at once, and the socket, so that the caller can shut
/// it down under a read or write that is blocked.
#[derive(Debug, Default)]
pub(crate) struct Abort {
    aborted: AtomicBool,
    socket: Mutex<Option<TcpStream>>,
}

impl Abort {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<TcpStream>> {
        self.socket.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ends the connection now, whatever its thread is doing: the next read or write
    /// fails, and one that is blocked returns.
    pub(crate) fn abort(&self) {
        self.aborted.store(true, Ordering::Release);
        if let Some(socket) = self.lock().take() {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }

    pub(crate) fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    /// Keeps a handle on the current socket (refused once aborted).
    pub(super) fn register(&self, socket: &TcpStream) -> io::Result<()> {
        let mut slot = self.lock();
        if self.is_aborted() {
            let _ = socket.shutdown(Shutdown::Both);
            return Err(aborted());
        }
        *slot = socket.try_clone().ok();
        Ok(())
    }
}

pub(super) fn aborted() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionAborted, "the stream was closed")
}

/// How long one write may block on a live connection.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// A TCP socket whose reads and writes can be held to a deadline (for the upgrade and
/// the close handshake), and which fails at once once aborted.
pub(crate) struct Tcp {
    pub(super) stream: TcpStream,
    pub(super) deadline: Option<Instant>,
    pub(super) abort: Arc<Abort>,
    /// Reads answer `WouldBlock` at once instead of reaching the socket: a caller
    /// reading on through what is already buffered, never waiting.
    pub(super) no_wait: bool,
}

impl Tcp {
    /// How long the next read or write may block, under the deadline.
    fn left(&self) -> io::Result<Option<Duration>> {
        if self.abort.is_aborted() {
            return Err(aborted());
        }
        match self.deadline {
            None => Ok(None),
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the deadline passed",
                    ))
                } else {
                    Ok(Some(left))
                }
            }
        }
    }
}

impl Read for Tcp {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.no_wait {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        if let Some(left) = self.left()? {
            self.stream.set_read_timeout(Some(left))?;
        }
        self.stream.read(buf)
    }
}

impl Write for Tcp {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(left) = self.left()? {
            self.stream.set_write_timeout(Some(left))?;
        }
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

/// The socket under the WebSocket: plain TCP or TLS over it.
pub(crate) enum Transport {
    Plain(Tcp),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, Tcp>>),
}

impl Transport {
    pub(super) fn tcp(&self) -> &Tcp {
        match self {
            Transport::Plain(s) => s,
            Transport::Tls(s) => s.get_ref(),
        }
    }

    pub(super) fn tcp_mut(&mut self) -> &mut Tcp {
        match self {
            Transport::Plain(s) => s,
            Transport::Tls(s) => s.get_mut(),
        }
    }

    /// Holds every read and write to `deadline` (`None`: back to the per-operation
    /// timeouts of a live connection: the read tick and [`WRITE_TIMEOUT`]).
    pub(crate) fn set_deadline(&mut self, deadline: Option<Instant>, tick: Duration) {
        let tcp = self.tcp_mut();
        tcp.deadline = deadline;
        if deadline.is_none() {
            let _ = tcp
                .stream
                .set_read_timeout(Some(tick.max(Duration::from_millis(1))));
            let _ = tcp.stream.set_write_timeout(Some(WRITE_TIMEOUT));
        }
    }

    /// While `on`, reads take only what is already buffered above the socket (a read
    /// that would reach it answers `WouldBlock`).
    pub(crate) fn set_no_wait(&mut self, on: bool) {
        self.tcp_mut().no_wait = on;
    }

    /// How long the next read may wait (the caller's time left, when shorter than the
    /// tick); [`set_deadline`](Self::set_deadline) with `None` restores the tick.
    pub(crate) fn set_read_timeout(&mut self, timeout: Duration) {
        let _ = self
            .tcp_mut()
            .stream
            .set_read_timeout(Some(timeout.max(Duration::from_millis(1))));
    }

    /// Closes the socket at once, without a close handshake.
    pub(crate) fn shutdown(&self) {
        let _ = self.tcp().stream.shutdown(Shutdown::Both);
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.read(buf),
            Transport::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write(buf),
            Transport::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.flush(),
            Transport::Tls(s) => s.flush(),
        }
    }
}

pub(crate) type Socket = tungstenite::WebSocket<Transport>;
