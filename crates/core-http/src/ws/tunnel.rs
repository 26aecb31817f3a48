//! A stream through an HTTP proxy: `CONNECT host:port`, then TLS and the upgrade inside
//! the tunnel, all within the connection's deadline.

use std::io::{self, Read, Write};

use super::WsError;
use super::conn::{Failure, Next};
use crate::proxy::ProxyRoute;

/// The longest answer head a proxy may send.
const MAX_HEAD: usize = 16 * 1024;

/// Asks the proxy on `socket` for a tunnel to `host:port`; `Ok` once it answered 200.
/// The credentials go in `Proxy-Authorization` and never into an error.
pub(super) fn open(
    socket: &mut (impl Read + Write),
    route: &ProxyRoute,
    host: &str,
    port: u16,
) -> Result<(), Failure> {
    let proxy = route.address();
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let mut request = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
    if let Some(auth) = route.authorization() {
        request.push_str("Proxy-Authorization: ");
        request.push_str(auth.expose());
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    let sent = socket
        .write_all(request.as_bytes())
        .and_then(|()| socket.flush());
    drop(request);
    sent.map_err(|e| lost(&proxy, &e))?;
    // The answer's head, read a byte at a time: nothing of the tunnel is read past it.
    let mut head = Vec::with_capacity(256);
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match socket.read(&mut byte) {
            Ok(0) => {
                return Err(refused(
                    None,
                    format!("the proxy {proxy} closed the connection before answering CONNECT"),
                    Next::Retry,
                ));
            }
            Ok(_) => head.push(byte[0]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(lost(&proxy, &e)),
        }
        if head.len() > MAX_HEAD {
            return Err(refused(
                None,
                format!("the proxy {proxy} sent an answer head over {MAX_HEAD} bytes"),
                Next::Retry,
            ));
        }
    }
    let head = String::from_utf8_lossy(&head);
    let status_line = head.lines().next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok());
    match status {
        Some(200..=299) => Ok(()),
        Some(407) => Err(refused(
            Some(407),
            format!(
                "the proxy {proxy} wants credentials (407): {}",
                if route.authorization().is_some() {
                    "those given were refused"
                } else {
                    "give them in the proxy URL, http://user:password@host:port"
                }
            ),
            Next::Stop,
        )),
        Some(s @ (403 | 405 | 501)) => Err(refused(
            Some(s),
            format!("the proxy {proxy} refused a tunnel to {authority} ({s})"),
            Next::Stop,
        )),
        Some(s) => Err(refused(
            Some(s),
            format!("the proxy {proxy} could not open a tunnel to {authority} ({s})"),
            Next::Retry,
        )),
        None => Err(refused(
            None,
            format!("the proxy {proxy} answered CONNECT with something that is not HTTP"),
            Next::Retry,
        )),
    }
}

fn refused(status: Option<u16>, message: String, next: Next) -> Failure {
    Failure {
        error: WsError::ProxyRefused { status, message },
        next,
    }
}

fn lost(proxy: &str, e: &io::Error) -> Failure {
    if matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    ) {
        Failure {
            error: WsError::Timeout(format!("the proxy {proxy} did not answer CONNECT in time")),
            next: Next::Retry,
        }
    } else {
        Failure {
            error: WsError::Connect(format!("the proxy {proxy}: {e}")),
            next: Next::Retry,
        }
    }
}
