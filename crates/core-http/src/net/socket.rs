//! A TCP socket held to a deadline it is given: every read and write ends by it, however
//! the peer sends or takes the bytes, and a signal handled meanwhile (`Interrupted`) is
//! never a lost connection. The one place a socket's timeouts are set: each only when
//! the one it has would end too late or too early, so a busy connection does not pay a
//! system call per read for a timeout that has hardly changed.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A connected TCP stream and the deadline its reads and writes keep.
#[derive(Debug)]
pub struct Socket {
    stream: TcpStream,
    /// When the next read or write must end by (`None`: as long as it takes).
    deadline: Option<Instant>,
    /// The receive and send timeouts last set on the socket.
    read_set: Option<Duration>,
    write_set: Option<Duration>,
}

/// The timeout a socket operation gets when `left` remains: the one already `set` when
/// it ends no later than `left` and no earlier than half of it (the operation is made
/// again with what is left if it ends early), else `left` itself.
fn keep_or(set: Option<Duration>, left: Duration) -> Option<Duration> {
    match set {
        Some(t) if t <= left && t >= left / 2 => None,
        _ => Some(left.max(Duration::from_millis(1))),
    }
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

impl Socket {
    /// A socket over `stream`, connected, with no deadline yet.
    pub(crate) fn new(stream: TcpStream) -> Self {
        Socket {
            stream,
            deadline: None,
            read_set: None,
            write_set: None,
        }
    }

    /// Holds every read and write to `deadline` from now on (`None`: none).
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// The stream, to hand over (a stream's connection goes non-blocking).
    pub fn into_stream(self) -> TcpStream {
        self.stream
    }

    /// Whether an idle connection is still open: nothing arrived and the peer has not
    /// closed it.
    pub fn is_open(&self) -> bool {
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

    /// What is left before the deadline: `Ok(None)` without one, an error once it passed.
    fn left(&self) -> io::Result<Option<Duration>> {
        let Some(deadline) = self.deadline else {
            return Ok(None);
        };
        let left = deadline.saturating_duration_since(crate::time::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the deadline passed",
            ));
        }
        Ok(Some(left))
    }
}

impl Socket {
    /// Sets the receive (`read`) or send timeout for an operation now: what is left of
    /// the deadline, unless the one set already fits; none without a deadline.
    fn arm(&mut self, read: bool) -> io::Result<()> {
        let set = if read { self.read_set } else { self.write_set };
        let wanted = match self.left()? {
            Some(left) => match keep_or(set, left) {
                Some(t) => Some(t),
                None => return Ok(()),
            },
            None if set.is_none() => return Ok(()),
            None => None,
        };
        if read {
            self.stream.set_read_timeout(wanted)?;
            self.read_set = wanted;
        } else {
            self.stream.set_write_timeout(wanted)?;
            self.write_set = wanted;
        }
        Ok(())
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            self.arm(true)?;
            match (&self.stream).read(buf) {
                // A handled signal, or a timeout shorter than what is left: again.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if timed_out(&e) && self.deadline.is_some() => {}
                other => return other,
            }
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            self.arm(false)?;
            match (&self.stream).write(buf) {
                Ok(0) if !buf.is_empty() => return Err(io::ErrorKind::WriteZero.into()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if timed_out(&e) && self.deadline.is_some() => {}
                other => return other,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_is_kept_while_it_ends_between_half_and_all_of_what_is_left() {
        let s = |ms| Some(Duration::from_millis(ms));
        assert_eq!(keep_or(s(900), Duration::from_millis(1000)), None);
        assert_eq!(keep_or(s(500), Duration::from_millis(1000)), None);
        assert_eq!(keep_or(s(400), Duration::from_millis(1000)), s(1000));
        assert_eq!(keep_or(s(1001), Duration::from_millis(1000)), s(1000));
        assert_eq!(keep_or(None, Duration::from_millis(1000)), s(1000));
        assert_eq!(keep_or(None, Duration::ZERO), s(1));
    }
}
