//! Making one WebSocket connection: TCP within the connect timeout, TLS with the
//! client's own rustls configuration, the handshake with the auth header; and what a
//! failure means (stop, retry, or retry after the cool-down).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use log::debug;
use tungstenite::client::IntoClientRequest;
use tungstenite::handshake::HandshakeError;
use tungstenite::http::{HeaderName, HeaderValue};
use tungstenite::protocol::WebSocketConfig;

use super::{StreamConfig, WsError};
use crate::url::{Origin, strip_query};

/// The socket under the WebSocket: plain TCP or TLS over it.
pub(crate) enum Transport {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Transport {
    fn tcp(&self) -> &TcpStream {
        match self {
            Transport::Plain(s) => s,
            Transport::Tls(s) => s.get_ref(),
        }
    }

    /// Sets how long one read may block: the connection thread's tick.
    pub(crate) fn set_read_timeout(&self, timeout: Duration) {
        let _ = self
            .tcp()
            .set_read_timeout(Some(timeout.max(Duration::from_millis(1))));
    }

    /// Closes the socket at once, without a close handshake.
    pub(crate) fn shutdown(&self) {
        let _ = self.tcp().shutdown(std::net::Shutdown::Both);
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

impl From<Failure> for crate::Error {
    fn from(f: Failure) -> Self {
        crate::Error::WebSocket(f.error)
    }
}

fn fail(error: WsError, next: Next) -> Failure {
    Failure { error, next }
}

/// Connects, within the config's connect timeout for TCP, TLS and the handshake.
pub(crate) fn connect(config: &StreamConfig) -> Result<Socket, Failure> {
    let started = Instant::now();
    let url = &config.url;
    let shown = strip_query(url).to_owned();
    let (tls, as_http) = if let Some(rest) = url.strip_prefix("wss://") {
        (true, format!("https://{rest}"))
    } else if let Some(rest) = url.strip_prefix("ws://") {
        (false, format!("http://{rest}"))
    } else {
        return Err(fail(
            WsError::Connect(format!("{shown} is not a ws:// or wss:// URL")),
            Next::Stop,
        ));
    };
    let origin =
        Origin::parse(&as_http).map_err(|e| fail(WsError::Connect(e.to_string()), Next::Stop))?;
    let host = origin
        .host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();

    let addrs: Vec<SocketAddr> = (host.as_str(), origin.port)
        .to_socket_addrs()
        .map_err(|e| {
            fail(
                WsError::Connect(format!("could not resolve {host}: {e}")),
                Next::Retry,
            )
        })?
        .collect();
    let mut last = None;
    let mut tcp = None;
    for addr in addrs {
        let left = config.connect_timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        match TcpStream::connect_timeout(&addr, left) {
            Ok(s) => {
                tcp = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let tcp = tcp.ok_or_else(|| match last {
        Some(e) if e.kind() == io::ErrorKind::TimedOut => fail(
            WsError::Timeout(format!("connecting to {host}")),
            Next::Retry,
        ),
        Some(e) => fail(WsError::Connect(format!("{host}: {e}")), Next::Retry),
        None => fail(
            WsError::Timeout(format!("connecting to {host}")),
            Next::Retry,
        ),
    })?;
    let _ = tcp.set_nodelay(true);
    let left = config
        .connect_timeout
        .saturating_sub(started.elapsed())
        .max(Duration::from_millis(1));
    let _ = tcp.set_read_timeout(Some(left));
    let _ = tcp.set_write_timeout(Some(left));

    let transport = if tls {
        let client_config = config
            .roots
            .rustls_config()
            .map_err(|e| fail(WsError::Connect(e.to_string()), Next::Stop))?;
        let server_name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|e| fail(WsError::Connect(format!("{host}: {e}")), Next::Stop))?;
        let session = rustls::ClientConnection::new(client_config, server_name)
            .map_err(|e| fail(WsError::Connect(format!("TLS: {e}")), Next::Stop))?;
        Transport::Tls(Box::new(rustls::StreamOwned::new(session, tcp)))
    } else {
        Transport::Plain(tcp)
    };

    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|e| fail(WsError::Connect(format!("{shown}: {e}")), Next::Stop))?;
    let headers = request.headers_mut();
    for (name, value) in &config.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.insert(n, v);
        }
    }
    if let Some((name, value)) = &config.auth {
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| fail(WsError::Connect(format!("auth header: {e}")), Next::Stop))?;
        let mut v = HeaderValue::from_str(value.expose()).map_err(|_| {
            fail(
                WsError::Connect("the auth header's value is not valid".into()),
                Next::Stop,
            )
        })?;
        v.set_sensitive(true);
        headers.insert(n, v);
    }
    let ws_config = WebSocketConfig::default()
        .max_message_size(Some(config.max_message_size))
        .max_frame_size(Some(config.max_message_size))
        .max_write_buffer_size(config.max_write_buffer.max(256 * 1024));

    debug!("stream: connecting to {shown}");
    match tungstenite::client::client_with_config(request, transport, Some(ws_config)) {
        Ok((socket, _response)) => {
            socket.get_ref().set_read_timeout(config.tick);
            let _ = socket
                .get_ref()
                .tcp()
                .set_write_timeout(Some(Duration::from_secs(10)));
            debug!("stream: connected to {shown} in {:?}", started.elapsed());
            Ok(socket)
        }
        Err(HandshakeError::Interrupted(_)) => Err(fail(
            WsError::Timeout(format!("the handshake with {shown}")),
            Next::Retry,
        )),
        Err(HandshakeError::Failure(e)) => Err(handshake_failure(e, config, &shown)),
    }
}

/// What a failed handshake means.
fn handshake_failure(e: tungstenite::Error, config: &StreamConfig, shown: &str) -> Failure {
    match e {
        tungstenite::Error::Http(response) => {
            let status = response.status().as_u16();
            let body = response.body().as_deref().unwrap_or_default();
            let content_type = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok());
            let parsed = crate::error::parse_error_body(status, content_type, body);
            let message = config.redact.apply(parsed.message);
            match status {
                401 | 403 => fail(WsError::Unauthorized { status, message }, Next::Stop),
                429 | 406 => fail(WsError::Refused { status, message }, Next::Cooldown),
                500..=599 => fail(WsError::Refused { status, message }, Next::Retry),
                _ => fail(WsError::Refused { status, message }, Next::Stop),
            }
        }
        tungstenite::Error::Io(io) => io_failure(io, shown),
        tungstenite::Error::Tls(t) => fail(WsError::Connect(format!("TLS: {t}")), Next::Stop),
        other => fail(
            WsError::Protocol(format!("the handshake with {shown}: {other}")),
            Next::Retry,
        ),
    }
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
        _ => fail(WsError::Io(format!("{shown}: {io}")), Next::Retry),
    }
}

impl crate::tls::RootCertificates {
    /// A rustls client configuration trusting these roots, built with the ring provider
    /// explicitly (no process-wide default provider is needed or set).
    pub(crate) fn rustls_config(&self) -> crate::Result<Arc<rustls::ClientConfig>> {
        let mut roots = rustls::RootCertStore::empty();
        match self {
            crate::tls::RootCertificates::Mozilla => {
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            }
            crate::tls::RootCertificates::Custom(ders) => {
                for der in ders.iter() {
                    roots
                        .add(rustls::pki_types::CertificateDer::from(der.clone()))
                        .map_err(|e| crate::Error::config(format!("a root certificate: {e}")))?;
                }
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| crate::Error::config(format!("TLS: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Arc::new(config))
    }
}
