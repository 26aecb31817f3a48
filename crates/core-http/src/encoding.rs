//! An answer's body as it reads decoded. gzip is ureq's to decode (with the `compression`
//! feature); brotli is core-http's: ureq 3.5's own brotli reader stops at the stream's
//! end marker and never reads the body to its end, so the connection never went back to
//! the pool and every brotli answer cost a new connection (a round trip, and a TLS
//! handshake). Here the decoder runs over ureq's plain body, and once the stream ends
//! the body is read to its end, which lets ureq keep the connection. A body that goes on
//! past what the decoder read ahead of the stream's end is an encoding error (and its
//! connection is not kept).

#[cfg(feature = "compression")]
use std::io;
use std::io::Read;

use ureq::http::HeaderMap;

/// A body as ureq hands it over, with what core-http still has to decode.
pub(crate) struct Incoming {
    body: ureq::Body,
    #[cfg_attr(not(feature = "compression"), allow(dead_code))]
    brotli: bool,
}

impl Incoming {
    /// The body of an answer with these headers; an answer core-http decodes loses its
    /// `Content-Encoding` and `Content-Length` (which counted the encoded bytes), as
    /// ureq's decoded ones do (RFC 9110 §8.7).
    pub(crate) fn new(body: ureq::Body, headers: &mut HeaderMap) -> Self {
        let brotli = cfg!(feature = "compression")
            && headers
                .get(ureq::http::header::CONTENT_ENCODING)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("br"));
        if brotli {
            headers.remove(ureq::http::header::CONTENT_ENCODING);
            headers.remove(ureq::http::header::CONTENT_LENGTH);
        }
        Incoming { body, brotli }
    }

    /// Whether ureq reads it as it is (or decodes it itself).
    pub(crate) fn plain(self) -> Result<ureq::Body, Self> {
        if self.brotli {
            Err(self)
        } else {
            Ok(self.body)
        }
    }

    /// The body, decoded, as a reader.
    pub(crate) fn into_reader(self) -> Box<dyn Read + Send> {
        #[cfg(feature = "compression")]
        if self.brotli {
            return Box::new(Brotli {
                decoder: brotli_decompressor::Decompressor::new(self.body.into_reader(), 4096),
                ended: false,
            });
        }
        Box::new(self.body.into_reader())
    }
}

/// A brotli stream, decoded, that ends only where its body ends.
#[cfg(feature = "compression")]
struct Brotli<R: Read> {
    decoder: brotli_decompressor::Decompressor<R>,
    ended: bool,
}

#[cfg(feature = "compression")]
impl<R: Read> Read for Brotli<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        match self.decoder.read(buf) {
            Ok(0) => {
                // The stream's end: the body's must follow at once.
                let mut probe = [0u8; 1];
                match self.decoder.get_mut().read(&mut probe) {
                    Ok(0) => {
                        self.ended = true;
                        Ok(0)
                    }
                    Ok(_) => Err(failed(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "bytes after the end of the stream",
                    ))),
                    Err(e) => Err(e),
                }
            }
            Ok(n) => Ok(n),
            Err(e) if is_transport(&e) => Err(e),
            Err(e) => Err(failed(e)),
        }
    }
}

/// The decoder's complaint, as ureq words its own decoders' (so that one check,
/// [`crate::wire::encoding_failure`], finds both).
#[cfg(feature = "compression")]
fn failed(e: io::Error) -> io::Error {
    io::Error::other(ureq::Error::Decompress("br", e))
}

/// Whether an error a decoder passed on is the connection's (reset, closed before the
/// announced length, timed out) rather than the encoding's. ureq reports a body that
/// stops short of its `Content-Length` as an `UnexpectedEof` of its own making, and a
/// timeout as its own error inside an `io::Error`; a decoder's own complaints are
/// `InvalidData`, `InvalidInput` or `Other`, or an `UnexpectedEof` of their own words.
#[cfg(feature = "compression")]
pub(crate) fn is_transport(e: &io::Error) -> bool {
    use io::ErrorKind as K;
    if e.get_ref().is_some_and(|inner| inner.is::<ureq::Error>()) {
        return true;
    }
    match e.kind() {
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::TimedOut | K::WouldBlock => {
            true
        }
        K::UnexpectedEof => e.to_string() == "Peer disconnected",
        _ => false,
    }
}
