//! How a connection ends: the close handshake, and what a close frame or an I/O error
//! means for the stream (retry, or stop with an error).

use std::io;
use std::time::Instant;

use tungstenite::Message;
use tungstenite::protocol::CloseFrame;

use super::Protocol;
use super::WsError;
use super::conn::Next;
use super::worker::{Ended, FATAL_CLOSE_CODES, GRACEFUL, Live, Worker};

/// What the server's close frame means. Its reason is the server's text: the client's
/// credentials are blanked out of it before it is logged, observed or put in an error.
pub(super) fn closed_by_server(
    frame: Option<CloseFrame>,
    redact: &crate::redact::Redactor,
) -> Ended {
    let (code, reason) = match frame {
        Some(f) => (
            u16::from(f.code),
            redact.apply(f.reason.as_str().to_owned()),
        ),
        None => (1005, String::new()),
    };
    if FATAL_CLOSE_CODES.contains(&code) {
        Ended::Fatal(WsError::Closed { code, reason })
    } else {
        Ended::Lost(
            format!("closed by the server with code {code} {reason}"),
            Next::Retry,
        )
    }
}

/// What a read or write error means.
pub(super) fn lost_or_fatal(e: tungstenite::Error) -> Ended {
    use tungstenite::error::{CapacityError, ProtocolError};
    match e {
        tungstenite::Error::Capacity(CapacityError::MessageTooLong { size, max_size }) => {
            Ended::Fatal(WsError::MessageTooLarge {
                size,
                limit: max_size,
            })
        }
        tungstenite::Error::Protocol(ProtocolError::ResetWithoutClosingHandshake)
        | tungstenite::Error::ConnectionClosed
        | tungstenite::Error::AlreadyClosed => {
            Ended::Lost("the connection closed".into(), Next::Retry)
        }
        tungstenite::Error::Io(e) => Ended::Lost(format!("I/O: {e}"), Next::Retry),
        tungstenite::Error::Protocol(p) => Ended::Fatal(WsError::Protocol(p.to_string())),
        tungstenite::Error::Utf8(m) => Ended::Fatal(WsError::Protocol(m)),
        other => Ended::Lost(other.to_string(), Next::Retry),
    }
}

impl<P: Protocol> Worker<P> {
    /// Sends a close frame and waits for the server's, every read and write held to
    /// [`GRACEFUL`] of the close timeout (a peer that does not read cannot hold the
    /// write).
    pub(super) fn close_handshake(&self, live: &mut Live) {
        let deadline = Instant::now() + self.config.close_timeout.mul_f64(GRACEFUL);
        live.socket
            .get_mut()
            .set_deadline(Some(deadline), self.config.tick);
        if live.socket.close(None).is_err() {
            live.socket.get_ref().shutdown();
            return;
        }
        while Instant::now() < deadline {
            match live.socket.read() {
                Ok(Message::Close(_)) => {}
                Ok(_) => continue,
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    continue;
                }
                Err(_) => break,
            }
        }
        live.socket.get_ref().shutdown();
    }
}
