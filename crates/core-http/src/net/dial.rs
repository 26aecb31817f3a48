//! A TCP connection within a deadline: the first of a host's addresses that answers.
//! The same for a call's proxy tunnel and a stream's connection.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::Instant;

/// Connects to the first of `addrs` that answers by `deadline` (each attempt gets what
/// is left of it; `stop()` ends the attempts early). The last error, or `None` when the
/// time ran out before an attempt failed.
pub(crate) fn dial<'a>(
    addrs: impl IntoIterator<Item = &'a SocketAddr>,
    deadline: Instant,
    stop: impl Fn() -> bool,
) -> Result<TcpStream, Option<io::Error>> {
    let mut last = None;
    for addr in addrs {
        let left = deadline.saturating_duration_since(crate::time::now());
        if left.is_zero() || stop() {
            break;
        }
        match TcpStream::connect_timeout(addr, left) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last.filter(|e| e.kind() != io::ErrorKind::TimedOut))
}
