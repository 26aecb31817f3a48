//! The glue to `ureq`: running one HTTP exchange with the call's timeouts, reading a
//! body under a size cap and the call's deadline, sending a streamed body of an exact
//! length, and turning `ureq`'s errors into ours with what they mean for a retry.

use std::io::{self, Read};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::error::Error;
use crate::net::ConnectError;
use crate::time::bounded;

/// How a request's answer is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Read the whole body into memory, all within the call's timeout.
    Buffered,
    /// Hand the body back unread (downloads): the timeout bounds the wait for the answer,
    /// then each read.
    Streaming,
}

/// The timeouts of one exchange.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    /// For connecting (resolving, TCP, the tunnel, TLS).
    pub(crate) connect: Duration,
    /// What is left of the call's budget.
    pub(crate) remaining: Duration,
    /// For each read of a streamed body.
    pub(crate) per_read: Duration,
}

/// Runs one exchange, its budget passed down as `ureq`'s timeouts: in buffered mode the
/// whole exchange, body included, must fit in `remaining`; in streaming mode everything
/// up to the answer's headers must, then each read of the body `per_read`.
pub(crate) fn run<S: ureq::AsSendBody>(
    agent: &ureq::Agent,
    request: ureq::http::Request<S>,
    mode: Mode,
    t: Timeouts,
) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
    let remaining = bounded(t.remaining);
    let connect = Some(bounded(t.connect.min(remaining)));
    let configured = agent.configure_request(request).timeout_connect(connect);
    let configured = match mode {
        Mode::Buffered => configured.timeout_global(Some(remaining)),
        // A download takes as long as it takes: the agent's whole-call timeout is off,
        // each read has its own.
        Mode::Streaming => configured
            .timeout_global(None)
            .timeout_send_request(Some(remaining))
            .timeout_send_body(Some(remaining))
            .timeout_recv_response(Some(remaining))
            .timeout_per_read(Some(bounded(t.per_read))),
    };
    agent.run(configured.build())
}

/// Why reading a body stopped early.
pub(crate) enum BodyError {
    /// It is longer than the cap.
    TooLarge,
    /// The call's time ran out.
    Timeout,
    /// The connection failed.
    Io(io::Error),
    /// The body does not decode as its `Content-Encoding` says (what failed, in words,
    /// naming the encoding).
    Encoding(String),
}

/// The decoder's failure inside `e`, when a compressed body did not decode: a claimed
/// encoding the body does not use, a truncated stream, a bad checksum.
pub(crate) fn encoding_failure(e: &io::Error) -> Option<String> {
    #[cfg(feature = "compression")]
    if let Some(failure) = e
        .get_ref()
        .and_then(|i| i.downcast_ref::<crate::encoding::Undecodable>())
    {
        return Some(failure.to_string());
    }
    match e.get_ref()?.downcast_ref::<ureq::Error>()? {
        ureq::Error::Io(io) => encoding_failure(io),
        _ => None,
    }
}

/// Reads a body that is bounded by the exchange's own global timeout (buffered mode),
/// up to `cap` bytes as decoded.
pub(crate) fn read_capped(body: crate::encoding::Incoming, cap: u64) -> Result<Vec<u8>, BodyError> {
    let body = match body.plain() {
        Ok(mut plain) => {
            return plain
                .with_config()
                .limit(cap)
                .read_to_vec()
                .map_err(|e| match e {
                    ureq::Error::BodyExceedsLimit(_) => BodyError::TooLarge,
                    ureq::Error::Io(io) => io_failure(io),
                    other => io_failure(other.into_io()),
                });
        }
        Err(decoded) => decoded,
    };
    let mut out = Vec::new();
    match read_up_to(&mut body.into_reader(), cap.saturating_add(1), &mut out) {
        Ok(()) if out.len() as u64 > cap => Err(BodyError::TooLarge),
        Ok(()) => Ok(out),
        Err(e) => Err(io_failure(e)),
    }
}

/// What a failed read of a body means: the encoding's failure, the call's time run
/// out, or the connection's.
fn io_failure(e: io::Error) -> BodyError {
    if let Some(message) = encoding_failure(&e) {
        return BodyError::Encoding(message);
    }
    let e = match e.get_ref().and_then(|i| i.downcast_ref::<ureq::Error>()) {
        Some(ureq::Error::Timeout(_)) => return BodyError::Timeout,
        _ => e,
    };
    if is_timeout(&e) {
        BodyError::Timeout
    } else {
        BodyError::Io(e)
    }
}

/// Reads up to `cap` bytes of a body whose connection has only a per-read timeout
/// (an error answer in streaming mode), giving up after `within`: the read runs on a
/// helper thread, so a server trickling bytes cannot hold the call past its budget.
/// On time-out the helper is left to end at its next per-read timeout.
#[cold]
#[inline(never)]
pub(crate) fn read_within(
    body: crate::encoding::Incoming,
    cap: u64,
    within: Duration,
) -> Result<Vec<u8>, BodyError> {
    // A one-value hand-off: a `Mutex` and `Condvar` (already in every build) rather than
    // a channel, whose generic code is large for the one value this carries.
    let slot: Arc<Slot> = Arc::default();
    let helper = Arc::clone(&slot);
    let spawned = std::thread::Builder::new()
        .name("core-http-error-body".into())
        .spawn(move || {
            let mut out = Vec::new();
            let result =
                read_up_to(&mut body.into_reader(), cap.saturating_add(1), &mut out).map(|()| out);
            let (value, ready) = &*helper;
            if let Ok(mut value) = value.lock() {
                *value = Some(result);
                ready.notify_one();
            }
        });
    if spawned.is_err() {
        return Err(BodyError::Io(io::Error::other(
            "could not start a thread to read the error body",
        )));
    }
    let (value, ready) = &*slot;
    let result = value.lock().ok().and_then(|guard| {
        ready
            .wait_timeout_while(guard, within, |v| v.is_none())
            .ok()
            .and_then(|(mut guard, _)| guard.take())
    });
    match result {
        Some(Ok(bytes)) if bytes.len() as u64 > cap => Err(BodyError::TooLarge),
        Some(Ok(bytes)) => Ok(bytes),
        Some(Err(e)) => {
            let e = unwrap_stream_error(e);
            if is_timeout(&e) {
                Err(BodyError::Timeout)
            } else {
                Err(BodyError::Io(e))
            }
        }
        None => Err(BodyError::Timeout),
    }
}

/// What the error-body reader hands back, and the signal that it has.
type Slot = (Mutex<Option<io::Result<Vec<u8>>>>, Condvar);

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

/// Reads `reader` to its end, or until `out` holds `limit` bytes; what arrived before a
/// failed read stays in `out`. For error bodies (a cold path): one copy of the loop for
/// every reader, rather than the standard `read_to_end`'s generic code for each.
pub(crate) fn read_up_to(reader: &mut dyn Read, limit: u64, out: &mut Vec<u8>) -> io::Result<()> {
    let mut chunk = [0u8; 8192];
    loop {
        let room = limit.saturating_sub(out.len() as u64);
        if room == 0 {
            return Ok(());
        }
        let want = chunk.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        match reader.read(&mut chunk[..want]) {
            Ok(0) => return Ok(()),
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A streamed request body that must be exactly as long as the `Content-Length` sent
/// with it: a reader that ends early or runs long fails the attempt instead of sending a
/// body that disagrees with its header.
pub(crate) struct ExactLength {
    pub(crate) inner: Box<dyn Read + Send>,
    pub(crate) left: u64,
}

impl Read for ExactLength {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the request body is longer than its announced length",
                )),
            };
        }
        let cap = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..cap])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the request body ended {} bytes short of its announced length",
                    self.left
                ),
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Maps a `ureq` error to ours, each saying how far the request got
/// ([`Error::delivery`]). `elapsed` is the time spent on the call so far.
#[cold]
#[inline(never)]
pub(crate) fn map_error(e: ureq::Error, elapsed: Duration) -> Error {
    use ureq::Timeout as T;
    match e {
        ureq::Error::Timeout(T::Connect | T::Resolve) => Error::Timeout {
            elapsed,
            delivery: crate::Delivery::NotSent,
        },
        ureq::Error::Timeout(_) => Error::Timeout {
            elapsed,
            delivery: crate::Delivery::MayHaveBeenProcessed,
        },
        ureq::Error::RequireHttpsOnly(m) | ureq::Error::BadUri(m) => Error::config(m),
        ureq::Error::Http(err) => Error::config(err.to_string()),
        // No connection was made: nothing reached the service.
        ureq::Error::Other(e) if e.is::<ConnectError>() => match e.downcast::<ConnectError>() {
            Ok(connect) => connect_failed(*connect, elapsed),
            Err(e) => Error::Connect {
                message: e.to_string(),
                delivery: crate::Delivery::NotSent,
            },
        },
        ureq::Error::Io(io) => map_io(io, elapsed),
        other => Error::Io {
            delivery: crate::Delivery::MayHaveBeenProcessed,
            source: io::Error::other(other.to_string()),
        },
    }
}

/// A connection that was not made, as the call's failure: nothing was sent.
fn connect_failed(e: ConnectError, elapsed: Duration) -> Error {
    let delivery = crate::Delivery::NotSent;
    match e {
        ConnectError::TimedOut { .. } => Error::Timeout { elapsed, delivery },
        // The proxy did not open the tunnel: the request never left. Its 401, 403 or
        // 407 are never retried (a proxy may lock an account after failed logins).
        ConnectError::Proxy(refusal) => Error::Proxy {
            proxy: refusal.proxy,
            status: refusal.status,
            message: refusal.message,
        },
        // A certificate or the protocol: it will not heal on a retry.
        ConnectError::Tls { .. } => Error::Tls {
            message: e.to_string(),
        },
        other => Error::Connect {
            message: other.to_string(),
            delivery,
        },
    }
}

fn map_io(io: io::Error, elapsed: Duration) -> Error {
    // A server that refuses the TLS handshake after the client finished its part (TLS
    // 1.3: a client certificate it will not take) says so on the first read: the
    // request was never processed, and a retry will not change the certificate.
    if let Some(tls) = io
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .filter(|e| {
            matches!(
                e,
                rustls::Error::AlertReceived(_)
                    | rustls::Error::InvalidCertificate(_)
                    | rustls::Error::NoCertificatesPresented
                    | rustls::Error::PeerIncompatible(_)
            )
        })
    {
        return Error::Tls {
            message: format!("the server refused the connection: {tls}"),
        };
    }
    match io.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Error::Timeout {
            elapsed,
            delivery: crate::Delivery::MayHaveBeenProcessed,
        },
        _ => Error::Io {
            delivery: crate::Delivery::MayHaveBeenProcessed,
            source: io,
        },
    }
}

/// Turns an error from a streamed body (ureq wraps its own errors in `io::Error`) into a
/// plain `io::Error` with a clear kind.
pub(crate) fn unwrap_stream_error(e: io::Error) -> io::Error {
    let is_timeout = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ureq::Error>())
        .is_some_and(|u| matches!(u, ureq::Error::Timeout(_)));
    if is_timeout {
        io::Error::new(io::ErrorKind::TimedOut, "timed out reading the body")
    } else {
        e
    }
}

/// Checks a header name and value before they are sent.
pub(crate) fn check_header(name: &str, value: &str) -> crate::Result<()> {
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !name_ok {
        return Err(Error::config(format!("invalid header name {name:?}")));
    }
    match crate::masks::header_value_problem(value.as_bytes()) {
        None | Some("is empty") => Ok(()),
        // Never shown: the header may carry a credential.
        Some(problem) => Err(Error::config(format!(
            "the value of header {name:?} {problem}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, Read};

    use super::read_up_to;

    /// Gives its parts one read each (an `Err` part as that error), then ends.
    struct Parts(Vec<io::Result<&'static [u8]>>);

    impl Read for Parts {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            match self.0.remove(0) {
                Ok(part) => {
                    let n = part.len().min(buf.len());
                    buf[..n].copy_from_slice(&part[..n]);
                    if n < part.len() {
                        self.0.insert(0, Ok(&part[n..]));
                    }
                    Ok(n)
                }
                Err(e) => Err(e),
            }
        }
    }

    #[test]
    fn reading_up_to_a_limit_keeps_what_came_before_a_failure() {
        let interrupted = || Err(io::Error::from(io::ErrorKind::Interrupted));
        let reset = || Err(io::Error::from(io::ErrorKind::ConnectionReset));

        // Interrupted reads are retried; the end ends it.
        let mut out = Vec::new();
        let mut r = Parts(vec![Ok(b"{\"mess"), interrupted(), Ok(b"age\":1}")]);
        read_up_to(&mut r, 100, &mut out).unwrap();
        assert_eq!(out, b"{\"message\":1}");

        // A failure is returned, and what arrived before it stays.
        let mut out = Vec::new();
        let mut r = Parts(vec![Ok(b"half of "), reset(), Ok(b"never read")]);
        let e = read_up_to(&mut r, 100, &mut out).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionReset);
        assert_eq!(out, b"half of ");

        // Never more than the limit, however much is offered, and nothing read past it.
        let mut out = Vec::new();
        let mut r = Parts(vec![Ok(b"0123456789"), Ok(b"abcdef")]);
        read_up_to(&mut r, 12, &mut out).unwrap();
        assert_eq!(out, b"0123456789ab");
        assert_eq!(r.0.len(), 1, "the rest stays unread");

        // A body longer than one chunk of the loop arrives whole.
        let big: &'static [u8] = Box::leak(vec![7u8; 20_000].into_boxed_slice());
        let mut out = Vec::new();
        read_up_to(&mut Parts(vec![Ok(big)]), 1 << 20, &mut out).unwrap();
        assert_eq!(out.len(), 20_000);
    }
}
