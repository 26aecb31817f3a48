//! An answer's body as it reads decoded (feature `compression`): gzip (flate2 on its
//! pure-Rust backend) and brotli (brotli-decompressor), both decoded here over ureq's
//! plain body, as RFC 9110 §8.4 says: coding names are case-insensitive, `x-gzip` is
//! gzip, and an answer with no body (204, 304, an answer to HEAD, `Content-Length: 0`)
//! has nothing to decode whatever its label. Once a stream ends the body is read to its
//! end, which lets ureq keep the connection (ureq 3.5's own brotli reader stopped at the
//! stream's end marker and never did, so every brotli answer cost a new connection). A
//! body that goes on past the stream's end is an encoding error (and its connection is
//! not kept).

#[cfg(feature = "compression")]
use std::io;
use std::io::Read;

use ureq::http::HeaderMap;

/// A content coding core-http decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coding {
    Gzip,
    Brotli,
}

impl Coding {
    /// The coding a `Content-Encoding` value names (one coding, any case, `identity`
    /// left out), when core-http decodes it.
    #[cfg_attr(not(feature = "compression"), allow(dead_code))]
    fn named(value: &str) -> Option<Coding> {
        let mut codings = value
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case("identity"));
        let coding = codings.next()?;
        if codings.next().is_some() {
            // Two codings applied in turn: not one this client asked for.
            return None;
        }
        if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
            Some(Coding::Gzip)
        } else if coding.eq_ignore_ascii_case("br") {
            Some(Coding::Brotli)
        } else {
            None
        }
    }

    #[cfg(feature = "compression")]
    fn name(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Brotli => "br",
        }
    }
}

/// A body as ureq hands it over, with what core-http still has to decode.
pub(crate) struct Incoming {
    body: ureq::Body,
    #[cfg_attr(not(feature = "compression"), allow(dead_code))]
    coding: Option<Coding>,
}

impl Incoming {
    /// The body of an answer with these headers; an answer core-http decodes loses its
    /// `Content-Encoding` and `Content-Length` (which counted the encoded bytes), as RFC
    /// 9110 §8.7 allows a decoder to.
    pub(crate) fn new(body: ureq::Body, headers: &mut HeaderMap) -> Self {
        let coding = if cfg!(feature = "compression") {
            headers
                .get(ureq::http::header::CONTENT_ENCODING)
                .and_then(|v| v.to_str().ok())
                .and_then(Coding::named)
        } else {
            None
        };
        if coding.is_some() {
            headers.remove(ureq::http::header::CONTENT_ENCODING);
            headers.remove(ureq::http::header::CONTENT_LENGTH);
        }
        Incoming { body, coding }
    }

    /// Whether ureq reads it as it is.
    pub(crate) fn plain(self) -> Result<ureq::Body, Self> {
        if self.coding.is_some() {
            Err(self)
        } else {
            Ok(self.body)
        }
    }

    /// The body, decoded, as a reader.
    pub(crate) fn into_reader(self) -> Box<dyn Read + Send> {
        #[cfg(feature = "compression")]
        if let Some(coding) = self.coding {
            return Box::new(Decoded {
                state: State::Start(self.body.into_reader()),
                coding,
            });
        }
        Box::new(self.body.into_reader())
    }
}

#[cfg(feature = "compression")]
type Plain = ureq::BodyReader<'static>;

/// A compressed body, decoded, that ends only where its body ends.
#[cfg(feature = "compression")]
struct Decoded {
    state: State,
    coding: Coding,
}

#[cfg(feature = "compression")]
enum State {
    /// Nothing read yet: a body with no bytes has nothing to decode.
    Start(Plain),
    Gzip(Box<flate2::read::MultiGzDecoder<Prefixed>>),
    Brotli(Box<brotli_decompressor::Decompressor<Prefixed>>),
    Ended,
}

/// The body with the byte read to see that it has one put back in front.
#[cfg(feature = "compression")]
struct Prefixed {
    first: Option<u8>,
    rest: Plain,
}

#[cfg(feature = "compression")]
impl Read for Prefixed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match (self.first.take(), buf.first_mut()) {
            (Some(b), Some(slot)) => {
                *slot = b;
                Ok(1)
            }
            (first, _) => {
                self.first = first;
                self.rest.read(buf)
            }
        }
    }
}

#[cfg(feature = "compression")]
impl Read for Decoded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if let State::Start(_) = &self.state {
            let State::Start(mut plain) = std::mem::replace(&mut self.state, State::Ended) else {
                return Ok(0);
            };
            let mut first = [0u8; 1];
            if plain.read(&mut first)? == 0 {
                // No body: nothing to decode (RFC 9110 §8.4: a 204 labelled gzip).
                return Ok(0);
            }
            let body = Prefixed {
                first: Some(first[0]),
                rest: plain,
            };
            self.state = match self.coding {
                Coding::Gzip => State::Gzip(Box::new(flate2::read::MultiGzDecoder::new(body))),
                Coding::Brotli => {
                    State::Brotli(Box::new(brotli_decompressor::Decompressor::new(body, 4096)))
                }
            };
        }
        let coding = self.coding.name();
        let read = match &mut self.state {
            State::Gzip(d) => d.read(buf),
            State::Brotli(d) => d.read(buf),
            State::Start(_) | State::Ended => return Ok(0),
        };
        match read {
            Ok(0) => {
                // The stream's end: the body's must follow at once (a gzip reader reads
                // on for another member, so its body has ended already).
                let mut probe = [0u8; 1];
                let more = match &mut self.state {
                    State::Brotli(d) => d.get_mut().read(&mut probe)?,
                    _ => 0,
                };
                self.state = State::Ended;
                if more > 0 {
                    return Err(failed(
                        coding,
                        io::Error::new(
                            io::ErrorKind::InvalidData,
                            "bytes after the end of the stream",
                        ),
                    ));
                }
                Ok(0)
            }
            Ok(n) => Ok(n),
            Err(e) if is_transport(&e) => Err(e),
            Err(e) => Err(failed(coding, e)),
        }
    }
}

/// A body that does not decode as its `Content-Encoding` says, as the decoder said it:
/// carried inside the `io::Error` a read returns, and found there by
/// [`crate::wire::encoding_failure`].
#[cfg(feature = "compression")]
#[derive(Debug)]
pub(crate) struct Undecodable {
    pub(crate) coding: &'static str,
    pub(crate) source: io::Error,
}

#[cfg(feature = "compression")]
impl std::fmt::Display for Undecodable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let coding = self.coding;
        write!(
            f,
            "the answer is labelled Content-Encoding: {coding} but does not decode as \
             {coding} ({})",
            self.source
        )
    }
}

#[cfg(feature = "compression")]
impl std::error::Error for Undecodable {}

#[cfg(feature = "compression")]
fn failed(coding: &'static str, source: io::Error) -> io::Error {
    io::Error::other(Undecodable { coding, source })
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

#[cfg(test)]
mod tests {
    use super::Coding;

    #[test]
    fn coding_names_are_read_as_rfc_9110_says() {
        for (value, want) in [
            ("gzip", Some(Coding::Gzip)),
            ("GZIP", Some(Coding::Gzip)),
            (" x-gzip ", Some(Coding::Gzip)),
            ("X-Gzip", Some(Coding::Gzip)),
            ("br", Some(Coding::Brotli)),
            ("BR", Some(Coding::Brotli)),
            ("identity, gzip", Some(Coding::Gzip)),
            ("identity", None),
            ("", None),
            ("deflate", None),
            ("gzip, br", None),
        ] {
            assert_eq!(Coding::named(value), want, "{value:?}");
        }
    }
}
