//! An HTTP `CONNECT` tunnel through a proxy, the same for calls and streams: asked for,
//! its answer read, and what a refusal means. The socket given bounds every read and
//! write by the connection's deadline, so a proxy that trickles its answer fails in time.

use std::io::{self, Read, Write};

use crate::proxy::ProxyRoute;

/// The longest answer head a proxy may send.
const MAX_HEAD: usize = 16 * 1024;

/// Why a tunnel did not open.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refusal {
    /// The proxy's status, when it answered one.
    pub status: Option<u16>,
    /// What happened, naming the proxy (never its credentials), with a hint.
    pub message: String,
    /// The proxy's `host:port`.
    pub proxy: String,
    /// Whether trying again may help: never after 401, 403 or 407 (a proxy may lock an
    /// account after failed logins), nor after a method it does not support.
    pub retry: bool,
    /// The time ran out while the proxy was asked or answered.
    pub timed_out: bool,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Refusal {}

/// Asks the proxy on `socket` for a tunnel to `host:port`; `Ok` once it answered 2xx.
/// The credentials go in `Proxy-Authorization` and never into an error.
pub(crate) fn open(
    socket: &mut (impl Read + Write),
    route: &ProxyRoute,
    host: &str,
    port: u16,
) -> Result<(), Refusal> {
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
    let head = read_head(socket, &proxy)?;
    let status = head
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok());
    match status {
        Some(200..=299) => Ok(()),
        _ => Err(refused(route, &proxy, &authority, status)),
    }
}

/// The proxy's answer head, read a byte at a time: nothing of the tunnel is read past it.
fn read_head(socket: &mut impl Read, proxy: &str) -> Result<String, Refusal> {
    let mut head = Vec::with_capacity(256);
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match socket.read(&mut byte) {
            Ok(0) => {
                return Err(refusal(
                    proxy,
                    None,
                    format!(
                        "the proxy {proxy} closed the connection before answering CONNECT \
                         (is it an HTTP proxy?)"
                    ),
                    true,
                ));
            }
            Ok(_) => head.push(byte[0]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(lost(proxy, &e)),
        }
        if head.len() > MAX_HEAD {
            return Err(refusal(
                proxy,
                None,
                format!("the proxy {proxy} sent an answer head over {MAX_HEAD} bytes"),
                true,
            ));
        }
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// What a proxy's answer other than 2xx means, with a hint.
fn refused(route: &ProxyRoute, proxy: &str, authority: &str, status: Option<u16>) -> Refusal {
    let credentials = if route.authorization().is_some() {
        "it refused the credentials given: check the user and password in the proxy URL"
    } else {
        "give them in the proxy URL, http://user:password@host:port (HTTPS_PROXY, or the \
         builder's proxy)"
    };
    match status {
        Some(s @ (401 | 407)) => refusal(
            proxy,
            Some(s),
            format!("the proxy {proxy} answered {s}: it wants credentials; {credentials}"),
            false,
        ),
        Some(403) => refusal(
            proxy,
            Some(403),
            format!(
                "the proxy {proxy} answered 403: it does not allow a tunnel to {authority} \
                 (ask whoever runs it, or name the host in NO_PROXY if it is reachable \
                 directly)"
            ),
            false,
        ),
        Some(s @ (405 | 501)) => refusal(
            proxy,
            Some(s),
            format!("the proxy {proxy} answered {s}: it does not tunnel (CONNECT)"),
            false,
        ),
        Some(s) => refusal(
            proxy,
            Some(s),
            format!("the proxy {proxy} could not open a tunnel to {authority} ({s})"),
            true,
        ),
        None => refusal(
            proxy,
            None,
            format!("the proxy {proxy} answered CONNECT with something that is not HTTP"),
            true,
        ),
    }
}

/// The proxy could not be reached (or resolved): `message` says how. Worth trying again.
pub(crate) fn unreachable(proxy: &str, message: String) -> Refusal {
    refusal(proxy, None, message, true)
}

fn refusal(proxy: &str, status: Option<u16>, message: String, retry: bool) -> Refusal {
    Refusal {
        status,
        message,
        proxy: proxy.to_owned(),
        retry,
        timed_out: false,
    }
}

fn lost(proxy: &str, e: &io::Error) -> Refusal {
    let timed_out = matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    );
    Refusal {
        status: None,
        message: if timed_out {
            format!("the proxy {proxy} did not answer CONNECT in time")
        } else {
            format!("the proxy {proxy} closed or broke the connection: {e}")
        },
        proxy: proxy.to_owned(),
        retry: true,
        timed_out,
    }
}
