//! How a connection ends: what a close frame or an I/O error means for the stream
//! (retry, or stop with an error). (The close handshake is the close command's, in
//! `commands.rs`.)

use tungstenite::protocol::CloseFrame;

use super::WsError;
use super::conn::Next;

/// Close codes after which reconnecting is pointless: the server says the client broke
/// the protocol or a policy.
pub(super) const FATAL_CLOSE_CODES: &[u16] = &[1002, 1003, 1007, 1008, 1009, 1010, 1015];

/// The share of the close timeout the close handshake may take; the caller's thread
/// waits a little longer before it abandons the socket.
pub(super) const GRACEFUL: f64 = 0.6;

/// How a connected period ended.
pub(super) enum Ended {
    /// The caller closed the stream.
    Closed,
    /// An error that ends the stream.
    Fatal(WsError),
    /// The connection was lost; reconnect after the backoff or the cool-down.
    Lost(String, Next),
}

/// What the server's close frame means. Its reason is the server's text: the client's
/// credentials are blanked out of it before it is logged, observed or put in an error.
#[cold]
pub(super) fn closed_by_server(
    frame: Option<CloseFrame>,
    redact: &core_http::service::Redactor,
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
#[cold]
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
