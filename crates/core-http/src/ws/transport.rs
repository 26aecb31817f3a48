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

/// How far past the caller's deadline a read may end (see [`Transport::read_within`]).
const SLACK: Duration = Duration::from_millis(1);

/// A TCP socket whose reads and writes can be held to a deadline (for the upgrade and
/// the close handshake), and which fails at once once aborted.
pub(crate) struct Tcp {
    pub(super) stream: TcpStream,
    pub(super) deadline: Option<Instant>,
    pub(super) abort: Arc<Abort>,
    /// Reads answer `WouldBlock` at once instead of reaching the socket: a caller
    /// reading on through what is already buffered, never waiting.
    pub(super) no_wait: bool,
    /// The connection's thread reads only after `poll(2)` said the socket has bytes:
    /// one read of the socket per [`arm`](Transport::arm), then `WouldBlock` (a read
    /// never blocks that thread, so a wake always reaches it).
    pub(super) polled: bool,
    pub(super) armed: bool,
    /// The receive timeout last set on the socket.
    pub(super) read_timeout: Option<Duration>,
    /// Set when the connection's thread changed the receive timeout through its own
    /// handle on the socket ([`read_timeout`](Self::read_timeout) is then not what the
    /// socket has).
    pub(super) retimed: Arc<AtomicBool>,
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
        match self.left()? {
            Some(left) => {
                self.stream.set_read_timeout(Some(left))?;
                self.read_timeout = Some(left);
            }
            None if self.polled => {
                if !self.armed {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                self.armed = false;
            }
            None => {}
        }
        // A signal handled while the read waits is not the end of the connection: the
        // read goes on for what is left of its time (each read starts the socket's
        // timeout again).
        let started = Instant::now();
        loop {
            match self.stream.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    if self.abort.is_aborted() {
                        return Err(aborted());
                    }
                    if let Some(timeout) = self.read_timeout {
                        let left = timeout.saturating_sub(started.elapsed());
                        if left.is_zero() {
                            return Err(io::ErrorKind::TimedOut.into());
                        }
                        self.stream.set_read_timeout(Some(left))?;
                        self.read_timeout = Some(left);
                    }
                }
                other => return other,
            }
        }
    }
}

impl Write for Tcp {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(left) = self.left()? {
            self.stream.set_write_timeout(Some(left))?;
        }
        loop {
            match self.stream.write(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    if self.abort.is_aborted() {
                        return Err(aborted());
                    }
                }
                other => return other,
            }
        }
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
            let tick = tick.max(Duration::from_millis(1));
            let _ = tcp.stream.set_read_timeout(Some(tick));
            tcp.read_timeout = Some(tick);
            let _ = tcp.stream.set_write_timeout(Some(WRITE_TIMEOUT));
        }
    }

    /// While `on`, reads reach the socket only once per [`arm`](Self::arm) (the
    /// connection's thread, which waits in `poll(2)` instead of in a read).
    pub(crate) fn set_polled(&mut self, on: bool) {
        let tcp = self.tcp_mut();
        tcp.polled = on;
        tcp.armed = false;
    }

    /// The socket has bytes: the next read may reach it.
    pub(crate) fn arm(&mut self) {
        self.tcp_mut().armed = true;
    }

    /// While `on`, reads take only what is already buffered above the socket (a read
    /// that would reach it answers `WouldBlock`).
    pub(crate) fn set_no_wait(&mut self, on: bool) {
        self.tcp_mut().no_wait = on;
    }

    /// How long the next read may wait (the caller's time left, when shorter than the
    /// tick); [`set_deadline`](Self::set_deadline) with `None` restores the tick.
    pub(crate) fn set_read_timeout(&mut self, timeout: Duration) {
        let timeout = timeout.max(Duration::from_millis(1));
        let tcp = self.tcp_mut();
        let _ = tcp.stream.set_read_timeout(Some(timeout));
        tcp.read_timeout = Some(timeout);
    }

    /// Makes the next blocking read end by `left` from now, and not much earlier: the
    /// receive timeout is changed only when the one set would overshoot (by more than
    /// [`SLACK`]) or end before half of `left` (a wake-up for nothing), so a busy
    /// caller's reads do not each pay a system call for it.
    pub(crate) fn read_within(&mut self, left: Duration) {
        let current = self.tcp().read_timeout;
        let flag = &self.tcp().retimed;
        let retimed = flag.load(Ordering::Acquire) && flag.swap(false, Ordering::AcqRel);
        let keep = !retimed && current.is_some_and(|t| t <= left + SLACK && t >= left / 2);
        if !keep {
            self.set_read_timeout(left);
        }
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
