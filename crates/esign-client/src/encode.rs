//! Base64 encoding as a reader: the document is encoded while the request body is
//! written, a few kilobytes at a time, never as a second copy of the whole file.

use std::io::{self, Read};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// The length of the standard (padded) base64 encoding of `n` bytes.
pub(crate) fn encoded_len(n: u64) -> u64 {
    n.div_ceil(3) * 4
}

/// Raw bytes read per step: a multiple of 3, so only the last step pads.
const STEP: usize = 48 * 1024;

/// Reads `inner` and yields its standard base64 encoding.
pub(crate) struct Base64Reader<R> {
    inner: R,
    raw: Vec<u8>,
    encoded: Vec<u8>,
    at: usize,
    done: bool,
}

impl<R: Read> Base64Reader<R> {
    pub(crate) fn new(inner: R) -> Self {
        Base64Reader {
            inner,
            raw: vec![0; STEP],
            encoded: Vec::with_capacity(STEP / 3 * 4),
            at: 0,
            done: false,
        }
    }

    /// Reads the next step of raw bytes (a full step unless the input ends) and encodes
    /// it.
    fn refill(&mut self) -> io::Result<()> {
        let mut filled = 0;
        while filled < STEP {
            match self.inner.read(&mut self.raw[filled..]) {
                Ok(0) => {
                    self.done = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.encoded.clear();
        self.encoded.resize(encoded_len(filled as u64) as usize, 0);
        let written = STANDARD
            .encode_slice(&self.raw[..filled], &mut self.encoded)
            .map_err(io::Error::other)?;
        self.encoded.truncate(written);
        self.at = 0;
        Ok(())
    }
}

impl<R: Read> Read for Base64Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.encoded.len() {
            if self.done {
                return Ok(0);
            }
            self.refill()?;
        }
        let n = buf.len().min(self.encoded.len() - self.at);
        buf[..n].copy_from_slice(&self.encoded[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A reader that hands out at most 7 bytes at a time.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(7).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn matches_the_one_shot_encoding_at_every_size() {
        for len in [0, 1, 2, 3, 4, STEP - 1, STEP, STEP + 1, 3 * STEP + 2] {
            let data: Vec<u8> = (0..len).map(|i| (i * 31 % 256) as u8).collect();
            let mut out = String::new();
            Base64Reader::new(Trickle(&data))
                .read_to_string(&mut out)
                .unwrap();
            assert_eq!(out, STANDARD.encode(&data), "length {len}");
            assert_eq!(out.len() as u64, encoded_len(len as u64));
        }
    }
}
