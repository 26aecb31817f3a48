//! The socket under a live stream: the connection from the client's connection stack,
//! made non-blocking once upgraded and read only by the connection's thread, which waits
//! for it to be ready ([`mio`]). A credential the server echoes is swapped for its
//! stand-in as it is read, before tungstenite (which logs frames at `trace`) sees it.

use std::io::{self, Read, Write};

use core_http::net::Connection;

/// A live stream's connection: non-blocking, plain or TLS.
pub(crate) struct Live {
    conn: Connection<mio::net::TcpStream>,
    /// The end of the bytes read last, to hide an echoed credential cut across reads.
    tail: Vec<u8>,
}

impl Live {
    /// The upgraded connection `conn`, its socket made non-blocking.
    pub(crate) fn new(conn: Connection) -> io::Result<Live> {
        let mut failed = None;
        let conn = conn.map(|socket| {
            let stream = socket.into_stream();
            if let Err(e) = stream.set_nonblocking(true) {
                failed = Some(e);
            }
            mio::net::TcpStream::from_std(stream)
        });
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(Live {
            conn,
            tail: Vec::new(),
        })
    }

    /// The socket, to wait for it to be ready.
    pub(crate) fn socket_mut(&mut self) -> &mut mio::net::TcpStream {
        self.conn.socket_mut()
    }

    /// Closes the socket at once, without a close handshake.
    pub(crate) fn shutdown(&self) {
        let _ = self.conn.socket().shutdown(std::net::Shutdown::Both);
    }
}

impl Read for Live {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // Non-blocking: a read is never interrupted by a signal (it does not wait).
        let n = self.conn.read(buf)?;
        self.conn.hide_echoes(&mut buf[..n], &mut self.tail);
        Ok(n)
    }
}

impl Write for Live {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.conn.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.conn.flush()
    }
}

/// A live stream as tungstenite drives it.
pub(crate) type Socket = tungstenite::WebSocket<Live>;
