//! The bars of one range, made once by the sandbox and compressed as it compresses them,
//! served from memory behind the link.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use serde::Deserialize;

use crate::Range;

#[derive(Deserialize)]
#[allow(dead_code)]
pub(crate) struct RawBar {
    t: String,
    o: f64,
    h: f64,
    l: f64,
    pub(crate) c: f64,
    v: u64,
}

#[derive(Deserialize)]
pub(crate) struct RawPage {
    pub(crate) bars: Vec<RawBar>,
    pub(crate) next_page_token: Option<String>,
}

/// One page: plain, brotli and gzip.
pub(crate) type Encoded = [Arc<Vec<u8>>; 3];

/// The pages of one range of bars, by the token that asks for them: plain, brotli and
/// gzip.
pub(crate) struct Pages {
    pub(crate) bodies: Vec<(Option<String>, Encoded)>,
}

impl Pages {
    pub(crate) fn record(url: &str, key: &str, range: Range) -> Pages {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .accept_encoding("")
            .build()
            .into();
        let mut bodies = Vec::new();
        // The same walk as the raw side's, each page kept as it passes.
        crate::raw(url, key, range, |url, auth| {
            let plain = agent
                .get(url)
                .header("authorization", auth)
                .call()
                .unwrap()
                .body_mut()
                .with_config()
                .limit(u64::MAX)
                .read_to_vec()
                .unwrap();
            let mut br = Vec::new();
            {
                let mut w = brotli::CompressorWriter::new(&mut br, 4096, 4, 22);
                w.write_all(&plain).unwrap();
            }
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&plain).unwrap();
            let gz = gz.finish().unwrap();
            bodies.push((
                token_of(url),
                [Arc::new(plain.clone()), Arc::new(br), Arc::new(gz)],
            ));
            plain
        });
        Pages { bodies }
    }

    /// Bytes in all: plain, brotli, gzip.
    pub(crate) fn sizes(&self) -> (usize, usize, usize) {
        let sum = |i: usize| self.bodies.iter().map(|(_, b)| b[i].len()).sum();
        (sum(0), sum(1), sum(2))
    }

    /// A keep-alive server of these pages: the one the `page_token` names, in the
    /// encoding `Accept-Encoding` prefers (brotli, then gzip).
    pub(crate) fn serve(&self) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let bodies = Arc::new(self.bodies.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let bodies = bodies.clone();
                let _ = stream.set_nodelay(true);
                std::thread::spawn(move || {
                    let mut writer = stream.try_clone().unwrap();
                    let mut reader = BufReader::new(stream);
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let token = line.split_whitespace().nth(1).and_then(token_of);
                        let mut accept = String::new();
                        loop {
                            let mut header = String::new();
                            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                                return;
                            }
                            if header == "\r\n" {
                                break;
                            }
                            if let Some(v) =
                                header.to_ascii_lowercase().strip_prefix("accept-encoding:")
                            {
                                accept = v.trim().to_owned();
                            }
                        }
                        let Some((_, body)) = bodies.iter().find(|(t, _)| *t == token) else {
                            let _ = writer
                                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
                            continue;
                        };
                        let (i, encoding) = if accept.contains("br") {
                            (1, "content-encoding: br\r\n")
                        } else if accept.contains("gzip") {
                            (2, "content-encoding: gzip\r\n")
                        } else {
                            (0, "")
                        };
                        let head = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{encoding}content-length: {}\r\n\r\n",
                            body[i].len()
                        );
                        if writer.write_all(head.as_bytes()).is_err()
                            || writer.write_all(&body[i]).is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        addr
    }
}

/// The `page_token` a URL (or a request's target) asks for.
fn token_of(url: &str) -> Option<String> {
    let (_, query) = url.split_once('?')?;
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix("page_token="))
        .map(str::to_owned)
}
