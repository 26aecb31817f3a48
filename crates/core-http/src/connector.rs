//! What `ureq` runs on: its connector opens a call's connection through the client's one
//! connection stack ([`net`](crate::net): resolve, dial, tunnel, TLS, one deadline), and
//! its transport, [`Wire`], moves the bytes of each exchange within the time `ureq`
//! gives it (the call's budget, passed down as each read's and write's timeout).
//!
//! The wire is also where credentials cross: a request's head carries stand-ins, swapped
//! for the credentials as the bytes reach the socket; what comes back has any echoed
//! credential blanked, and a token endpoint's token replaced by a stand-in, before
//! `ureq` (which logs every byte at `trace`) reads it ([`masks`](crate::masks)).

use std::fmt;
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::Instant;

use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, LazyBuffers, NextTimeout, Transport,
};

use crate::masks::{Scanned, TokenScan};
use crate::net::{Connection, Dialer, Target};

/// How much of each answer is searched for echoed credentials: enough for any head and
/// error body, not a whole download.
const ECHO_SCAN: u64 = 1024 * 1024;

/// `ureq`'s resolver: nothing to do, the connector resolves (within the call's deadline,
/// and not at all for a pooled connection or a host behind the proxy).
#[derive(Debug, Default)]
pub(crate) struct NoResolve;

impl Resolver for NoResolve {
    fn resolve(
        &self,
        _uri: &ureq::http::Uri,
        _config: &ureq::config::Config,
        _timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        Ok(self.empty())
    }
}

/// `ureq`'s connector: a connection through the client's [`Dialer`].
#[derive(Debug)]
pub(crate) struct Connect {
    pub(crate) dialer: Arc<Dialer>,
}

impl Connector<()> for Connect {
    type Out = Wire;

    fn connect(
        &self,
        details: &ConnectionDetails<'_>,
        _chained: Option<()>,
    ) -> Result<Option<Wire>, ureq::Error> {
        let uri = details.uri;
        let tls = uri.scheme_str() == Some("https");
        let target = Target {
            host: uri.host().unwrap_or_default(),
            port: uri.port_u16().unwrap_or(if tls { 443 } else { 80 }),
            tls,
        };
        let deadline = deadline(details.timeout)?.unwrap_or_else(far);
        let conn = self
            .dialer
            .connect(&target, deadline, None)
            .map_err(|e| ureq::Error::Other(Box::new(e)))?;
        Ok(Some(Wire {
            conn,
            buffers: LazyBuffers::new(
                details.config.input_buffer_size(),
                details.config.output_buffer_size(),
            ),
            new_request: true,
            token: None,
            received: 0,
            tail: Vec::new(),
            refused: None,
        }))
    }
}

fn far() -> Instant {
    crate::time::now() + crate::time::FOREVER
}

/// When an I/O given `timeout` must end (`None`: no limit), or the timeout `ureq`
/// reports when it is already up.
fn deadline(timeout: NextTimeout) -> Result<Option<Instant>, ureq::Error> {
    if timeout.after.is_not_happening() {
        return Ok(None);
    }
    if timeout.after.is_zero() {
        return Err(ureq::Error::Timeout(timeout.reason));
    }
    Ok(crate::time::now().checked_add(*timeout.after))
}

/// A call's connection as `ureq`'s transport.
pub(crate) struct Wire {
    conn: Connection,
    buffers: LazyBuffers,
    /// The next bytes written start a request (an answer was read since the last).
    new_request: bool,
    /// The answer to a token request is being read: its token is hidden as it comes.
    token: Option<TokenScan>,
    /// Bytes read of the current answer.
    received: u64,
    /// The end of the bytes read last, to blank a credential cut across two reads.
    tail: Vec<u8>,
    /// The peer stopped taking the request (reset, or closed its side) while it was
    /// being sent: the rest of it is dropped, and the answer the peer may have sent
    /// first (an early `413`) is read; when there is none, this is the call's failure.
    refused: Option<io::Error>,
}

impl fmt::Debug for Wire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wire")
            .field("tls", &self.conn.is_tls())
            .finish_non_exhaustive()
    }
}

/// Whether a failed write means the peer stopped reading the request (it may have
/// answered first).
fn refused_midway(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
    )
}

/// A failed read or write as `ureq` takes it: the time up as its timeout.
fn io_error(e: io::Error, reason: ureq::Timeout) -> ureq::Error {
    if matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    ) {
        ureq::Error::Timeout(reason)
    } else {
        ureq::Error::Io(e)
    }
}

impl Wire {
    /// The stand-ins of `output` swapped for credentials: in its head when it starts a
    /// request, in a token request's body too.
    fn reveal(&mut self, amount: usize) {
        let masks = self.conn.masks.clone();
        let output = &mut self.buffers.output()[..amount];
        let mut client_secret = false;
        if self.new_request {
            self.new_request = false;
            self.received = 0;
            self.tail.clear();
            self.token = None;
            let head = memchr::memmem::find(output, b"\r\n\r\n").map_or(output.len(), |i| i + 4);
            let (head, body) = output.split_at_mut(head);
            client_secret |= masks.reveal(head, true);
            client_secret |= masks.reveal(body, false);
        } else {
            client_secret |= masks.reveal(output, false);
        }
        if client_secret {
            self.token = Some(TokenScan::default());
        }
    }

    /// What was just read (`start..end` of the free input): echoed credentials blanked
    /// in the first [`ECHO_SCAN`] bytes of an answer.
    fn blank(&mut self, start: usize, end: usize) {
        if self.received >= ECHO_SCAN {
            return;
        }
        let masks = self.conn.masks.clone();
        let longest = masks.longest();
        if longest == 0 {
            return;
        }
        let read = &mut self.buffers.input_append_buf()[start..end];
        masks.blank(read, &self.tail);
        let keep = longest.saturating_sub(1);
        self.tail
            .extend_from_slice(&read[read.len().saturating_sub(keep)..]);
        let drop = self.tail.len().saturating_sub(keep);
        self.tail.drain(..drop);
    }
}

impl Transport for Wire {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    /// Writes `amount` bytes, all of them on the connection (none left in TLS's buffer)
    /// by the timeout, however the peer takes them.
    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let timeout = timeout.for_write();
        let until = deadline(timeout)?;
        if self.new_request {
            self.refused = None;
        }
        self.reveal(amount);
        if self.refused.is_some() {
            return Ok(());
        }
        self.conn.socket_mut().set_deadline(until);
        let Wire { conn, buffers, .. } = self;
        match conn
            .write_all(&buffers.output()[..amount])
            .and_then(|()| conn.flush())
        {
            Ok(()) => Ok(()),
            // The peer answered before taking all of the request (an early 413) and
            // closed: what it said is read next, not lost to a blind repeat.
            Err(e) if refused_midway(&e) => {
                self.refused = Some(e);
                Ok(())
            }
            Err(e) => Err(io_error(e, timeout.reason)),
        }
    }

    /// Reads what has come, by the timeout. A token endpoint's answer is read on until
    /// its token is whole, so that none of it is handed on before it is hidden.
    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let timeout = timeout.for_read();
        let until = deadline(timeout)?;
        self.new_request = true;
        self.conn.socket_mut().set_deadline(until);
        let mut total = 0;
        loop {
            let Wire { conn, buffers, .. } = self;
            let room = &mut buffers.input_append_buf()[total..];
            if room.is_empty() {
                break;
            }
            let n = match conn.read(room) {
                // Nothing came before the peer's refusal to read on: the write's
                // failure is the call's.
                Ok(0) | Err(_) if total == 0 && self.refused.is_some() => {
                    let e = self
                        .refused
                        .take()
                        .unwrap_or_else(|| io::ErrorKind::BrokenPipe.into());
                    return Err(io_error(e, timeout.reason));
                }
                read => read.map_err(|e| io_error(e, timeout.reason))?,
            };
            self.blank(total, total + n);
            self.received = self.received.saturating_add(n as u64);
            total += n;
            let more = match &mut self.token {
                Some(scan) if n > 0 => {
                    let masks = self.conn.masks.clone();
                    let read = &mut self.buffers.input_append_buf()[..total];
                    scan.scan(read, &masks) == Scanned::More
                }
                _ => false,
            };
            if !more {
                break;
            }
        }
        self.buffers.input_appended(total);
        Ok(total > 0)
    }

    fn is_open(&mut self) -> bool {
        self.conn.socket().is_open()
    }

    fn is_tls(&self) -> bool {
        self.conn.is_tls()
    }
}
