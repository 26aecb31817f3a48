//! Making one WebSocket connection, under one deadline for all of it: the client's
//! connection stack (resolution, TCP, a `CONNECT` tunnel through its proxy, TLS with its
//! configuration) then the HTTP upgrade, written and read here, not by tungstenite, so
//! the auth header goes through no code that logs it; the socket is handed to
//! tungstenite only once upgraded. Also: what a failure means (stop, retry, or retry
//! after the cool-down).

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use log::debug;
use tungstenite::protocol::{Role, WebSocketConfig};

use super::transport::{Live, Socket};
use super::{StreamConfig, WsError};
use core_http::net::{Abort, ConnectError, Connection, Target};
use core_http::service::{Origin, strip_query};

/// How much one read of the connection asks the socket for (tungstenite's read buffer).
/// tungstenite zeroes up to this much of its buffer before every read, the read that
/// finds a frame and the one after it that finds nothing more buffered (and answers at
/// once); at its default of 128 KiB a stream whose frames come one at a time had about
/// 210 KB zeroed per frame (callgrind, 2026-11-28; raw tungstenite, which does not read
/// on, 115 KB), a few µs and the data cache evicted. With 16 KiB the quotes' median
/// latency behind raw's went from 3.6 to 2.0 µs (five runs of each, taking turns), and
/// a read still takes a hundred or so small events.
const READ_CHUNK: usize = 16 * 1024;

/// The largest upgrade answer head read (status line and headers).
const MAX_HEAD: usize = 16 * 1024;
/// The largest refusal body read, for its message.
const MAX_REFUSAL_BODY: usize = 16 * 1024;
/// How long a refusal's body is waited for once its head has come.
const REFUSAL_BODY_WAIT: Duration = Duration::from_secs(2);

/// What to do after a failed connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Give up: the error ends the stream.
    Stop,
    /// Try again after the backoff.
    Retry,
    /// Try again after the cool-down (429, 406: the service keeps the old connection for
    /// a while).
    Cooldown,
}

/// A failed connection attempt.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) error: WsError,
    pub(crate) next: Next,
}

impl From<Failure> for core_http::Error {
    fn from(f: Failure) -> Self {
        core_http::Error::from(f.error)
    }
}

fn fail(error: WsError, next: Next) -> Failure {
    Failure { error, next }
}

/// Where the stream's URL points.
struct Endpoint {
    tls: bool,
    host: String,
    port: u16,
    /// `host[:port]` as written, for the `Host` header.
    authority: String,
    /// The path and query.
    resource: String,
}

fn target(url: &str, shown: &str) -> Result<Endpoint, Failure> {
    let (tls, rest) = if let Some(rest) = url.strip_prefix("wss://") {
        (true, rest)
    } else if let Some(rest) = url.strip_prefix("ws://") {
        (false, rest)
    } else {
        return Err(fail(
            WsError::Connect(format!("{shown} is not a ws:// or wss:// URL")),
            Next::Stop,
        ));
    };
    let as_http = format!("{}://{rest}", if tls { "https" } else { "http" });
    let origin =
        Origin::parse(&as_http).map_err(|e| fail(WsError::Connect(e.to_string()), Next::Stop))?;
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, resource) = rest.split_at(split);
    let resource = match resource.split('#').next().unwrap_or("") {
        "" => "/".to_owned(),
        r if r.starts_with('?') => format!("/{r}"),
        r => r.to_owned(),
    };
    Ok(Endpoint {
        tls,
        host: origin
            .host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
        port: origin.port,
        authority: authority.to_owned(),
        resource,
    })
}

/// Connects: the client's connection stack, then the upgrade, all within the config's
/// connect timeout from now.
pub(crate) fn connect(config: &StreamConfig, abort: &Abort) -> Result<Socket, Failure> {
    let started = core_http::service::now();
    let deadline = started + config.connect_timeout;
    let shown = strip_query(&config.url).to_owned();
    let target = target(&config.url, &shown)?;
    let dialer = config
        .dialer()
        .map_err(|e| fail(WsError::Connect(e.to_string()), Next::Stop))?;
    let mut conn = dialer
        .connect(
            &Target {
                host: &target.host,
                port: target.port,
                tls: target.tls,
            },
            deadline,
            Some(abort),
        )
        .map_err(|e| connect_failure(e, &shown))?;
    debug!("stream: connecting to {shown}");
    let leftover = upgrade(&mut conn, config, &target, &shown, deadline)?;
    let live = Live::new(conn).map_err(|e| io_failure(e, &shown))?;
    let ws_config = WebSocketConfig::default()
        .max_message_size(Some(config.max_message_size))
        .max_frame_size(Some(config.max_message_size))
        .max_write_buffer_size(config.max_write_buffer.max(256 * 1024))
        .read_buffer_size(READ_CHUNK);
    let socket =
        tungstenite::WebSocket::from_partially_read(live, leftover, Role::Client, Some(ws_config));
    debug!("stream: connected to {shown} in {:?}", started.elapsed());
    Ok(socket)
}

/// A connection the stack could not make, as the stream's failure.
fn connect_failure(e: ConnectError, shown: &str) -> Failure {
    match e {
        ConnectError::TimedOut { .. } => fail(WsError::Timeout(e.to_string()), Next::Retry),
        ConnectError::Proxy(r) if r.timed_out => fail(WsError::Timeout(r.message), Next::Retry),
        ConnectError::Proxy(r) => fail(
            WsError::ProxyRefused {
                status: r.status,
                message: r.message,
            },
            if r.retry { Next::Retry } else { Next::Stop },
        ),
        // A certificate or the protocol: it will not heal.
        ConnectError::Tls { .. } => fail(WsError::Connect(format!("{e} ({shown})")), Next::Stop),
        ConnectError::Aborted => fail(WsError::ClosedByCaller, Next::Stop),
        other => fail(WsError::Connect(other.to_string()), Next::Retry),
    }
}

/// A header value that cannot end the header line early.
fn clean(value: &str) -> bool {
    !value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0)
}

/// Sends the upgrade request and reads its answer. Returns the bytes read past the
/// answer's head (the first frames, when the server wrote them at once).
fn upgrade(
    transport: &mut Connection,
    config: &StreamConfig,
    target: &Endpoint,
    shown: &str,
    deadline: Instant,
) -> Result<Vec<u8>, Failure> {
    let key = tungstenite::handshake::client::generate_key();
    send_upgrade(transport, config, target, &key, shown)?;
    let mut buf = read_head(transport, shown)?;
    let head_len = find_head_end(&buf).unwrap_or(buf.len());
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    let status = match response.parse(&buf[..head_len]) {
        Ok(httparse::Status::Complete(_)) => response.code.unwrap_or(0),
        _ => {
            return Err(fail(
                WsError::Protocol(format!("{shown} answered the upgrade with no valid HTTP")),
                Next::Retry,
            ));
        }
    };
    let header = |name: &str| -> Option<String> {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_owned())
    };
    if status == 101 {
        let upgraded = header("upgrade").is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
            && header("connection").is_some_and(|v| {
                v.split(',')
                    .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
            });
        let accepted = header("sec-websocket-accept").as_deref()
            == Some(tungstenite::handshake::derive_accept_key(key.as_bytes()).as_str());
        if !upgraded || !accepted {
            return Err(fail(
                WsError::Protocol(format!(
                    "{shown} answered 101 without a valid WebSocket upgrade"
                )),
                Next::Retry,
            ));
        }
        return Ok(buf.split_off(head_len));
    }
    let content_type = header("content-type");
    let length: Option<usize> = header("content-length").and_then(|v| v.parse().ok());
    let mut body = buf.split_off(head_len);
    read_refusal_body(transport, &mut body, length, deadline);
    Err(refused(config, status, content_type.as_deref(), &body))
}

/// Writes the upgrade request, with the credentials read as they are now (a rotated key,
/// a refreshed token); the request holding them is dropped at once.
fn send_upgrade(
    transport: &mut Connection,
    config: &StreamConfig,
    target: &Endpoint,
    key: &str,
    shown: &str,
) -> Result<(), Failure> {
    let mut request = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: {key}\r\n",
        target.resource, target.authority
    );
    for (name, value) in &config.headers {
        if clean(name) && clean(value) && !name.contains(':') {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    if let Some((name, value)) = &config.auth {
        // Read on every attempt: a rotated key or a refreshed token is used as it is now.
        let value = match value {
            super::config::AuthValue::Fixed(value) => std::borrow::Cow::Borrowed(value),
            super::config::AuthValue::Read(read) => match read() {
                Ok(value) => {
                    // Kept out of every text of this stream from now on.
                    let shown = value.expose();
                    config
                        .redact
                        .remember(shown.strip_prefix("Bearer ").unwrap_or(shown));
                    std::borrow::Cow::Owned(value)
                }
                Err(reason) => {
                    return Err(fail(
                        WsError::Connect(format!("the credentials could not be read: {reason}")),
                        Next::Retry,
                    ));
                }
            },
        };
        if !clean(name) || name.contains(':') || !clean(value.expose()) {
            return Err(fail(
                WsError::Connect("the auth header's name or value is not valid".into()),
                Next::Stop,
            ));
        }
        request.push_str(name);
        request.push_str(": ");
        request.push_str(value.expose());
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    // A credential's stand-in (a token) swapped for it as the bytes go out.
    let mut bytes = request.into_bytes();
    transport.reveal_head(&mut bytes);
    let sent = transport.write_all(&bytes).and_then(|()| transport.flush());
    // The request held the key: it is gone before anything else can see it.
    drop(bytes);
    sent.map_err(|e| io_failure(e, shown))
}

/// The upgrade answer's head and whatever came after it in the same reads.
fn read_head(transport: &mut Connection, shown: &str) -> Result<Vec<u8>, Failure> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while find_head_end(&buf).is_none() {
        if buf.len() > MAX_HEAD {
            return Err(fail(
                WsError::Protocol(format!(
                    "the upgrade answer from {shown} has a head over {MAX_HEAD} bytes"
                )),
                Next::Retry,
            ));
        }
        match transport.read(&mut chunk) {
            Ok(0) => {
                return Err(fail(
                    WsError::Io(format!("{shown} closed the connection during the upgrade")),
                    Next::Retry,
                ));
            }
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) => return Err(io_failure(e, shown)),
        }
    }
    Ok(buf)
}

/// A refused upgrade as the stream's error: the server's message (credentials blanked),
/// and whether to stop, retry, or cool down first.
fn refused(config: &StreamConfig, status: u16, content_type: Option<&str>, body: &[u8]) -> Failure {
    let parsed = core_http::service::parse_error_body(status, content_type, body);
    let message = config.redact.apply(parsed.message);
    match status {
        401 | 403 => fail(WsError::Unauthorized { status, message }, Next::Stop),
        429 | 406 => fail(WsError::Refused { status, message }, Next::Cooldown),
        500..=599 => fail(WsError::Refused { status, message }, Next::Retry),
        _ => fail(WsError::Refused { status, message }, Next::Stop),
    }
}

/// Reads what there is of a refusal's body, for its message: up to its length (or the
/// connection's end), [`MAX_REFUSAL_BODY`] at most, for [`REFUSAL_BODY_WAIT`] at most.
fn read_refusal_body(
    transport: &mut Connection,
    body: &mut Vec<u8>,
    length: Option<usize>,
    deadline: Instant,
) {
    let want = length.unwrap_or(MAX_REFUSAL_BODY).min(MAX_REFUSAL_BODY);
    let wait = core_http::service::now() + REFUSAL_BODY_WAIT;
    transport
        .socket_mut()
        .set_deadline(Some(deadline.min(wait)));
    let mut chunk = [0u8; 1024];
    while body.len() < want {
        match transport.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    body.truncate(want);
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// What an I/O error while connecting means.
pub(crate) fn io_failure(io: io::Error, shown: &str) -> Failure {
    if let Some(tls) = io
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        return fail(
            WsError::Connect(format!("TLS with {shown}: {tls}")),
            Next::Stop,
        );
    }
    match io.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => fail(
            WsError::Timeout(format!("the handshake with {shown}")),
            Next::Retry,
        ),
        io::ErrorKind::ConnectionAborted => fail(WsError::ClosedByCaller, Next::Stop),
        _ => fail(WsError::Io(format!("{shown}: {io}")), Next::Retry),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_keep_the_path_query_and_host_as_written() {
        let t = target("wss://Api.Example.com:8443/ws/v1?x=1#f", "").ok();
        let t = t.as_ref();
        assert_eq!(t.map(|t| t.host.as_str()), Some("api.example.com"));
        assert_eq!(t.map(|t| t.port), Some(8443));
        assert_eq!(
            t.map(|t| t.authority.as_str()),
            Some("Api.Example.com:8443")
        );
        assert_eq!(t.map(|t| t.resource.as_str()), Some("/ws/v1?x=1"));
        let bare = target("ws://[::1]?k=v", "").ok();
        assert_eq!(bare.as_ref().map(|t| t.host.as_str()), Some("::1"));
        assert_eq!(bare.as_ref().map(|t| t.resource.as_str()), Some("/?k=v"));
        assert!(target("http://x/y", "").is_err());
    }

    #[test]
    fn header_values_cannot_split_the_request() {
        assert!(clean("Bearer abc"));
        assert!(!clean("abc\r\nX-Evil: 1"));
        assert!(!clean("a\nb"));
    }
}
