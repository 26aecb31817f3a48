//! A hostile WebSocket server on a raw socket, every byte written by the test: it can
//! trickle its upgrade answer, refuse the upgrade with any status, send frames whole,
//! fragmented without end or one byte at a time, flood pings and never read, restart its
//! sequence numbers... Each connection runs the test's script on its own thread.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

type Script = dyn Fn(usize, &mut Peer) + Send + Sync;

/// A running server.
pub struct WsServer {
    url: String,
    connections: Arc<AtomicUsize>,
    heads: Arc<Mutex<Vec<String>>>,
}

impl WsServer {
    /// Starts a server that runs `script` on every connection, with the connection's
    /// number (0 for the first).
    pub fn start(script: impl Fn(usize, &mut Peer) + Send + Sync + 'static) -> WsServer {
        let listener = match TcpListener::bind("127.0.0.1:0") {
            Ok(l) => l,
            Err(e) => panic!("cannot listen: {e}"),
        };
        let url = match listener.local_addr() {
            Ok(addr) => format!("ws://{addr}/stream"),
            Err(e) => panic!("no address: {e}"),
        };
        let connections = Arc::new(AtomicUsize::new(0));
        let heads: Arc<Mutex<Vec<String>>> = Arc::default();
        let script: Arc<Script> = Arc::new(script);
        let (count, log) = (connections.clone(), heads.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let n = count.fetch_add(1, Ordering::SeqCst);
                let (script, log) = (script.clone(), log.clone());
                thread::spawn(move || {
                    let mut peer = Peer {
                        stream,
                        key: None,
                        heads: log,
                        pending: Vec::new(),
                    };
                    script(n, &mut peer);
                });
            }
        });
        WsServer {
            url,
            connections,
            heads,
        }
    }

    /// Its URL (`ws://127.0.0.1:port/stream`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How many connections it accepted.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// The upgrade requests it read, each as text.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().map(|h| h.clone()).unwrap_or_default()
    }
}

/// One connection, as the script sees it.
pub struct Peer {
    stream: TcpStream,
    key: Option<String>,
    heads: Arc<Mutex<Vec<String>>>,
    /// Bytes read past what was used.
    pending: Vec<u8>,
}

/// The bytes of a server frame (unmasked) with this opcode (1 text, 2 binary, 0
/// continuation, 8 close, 9 ping, 10 pong).
pub fn frame(opcode: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![if fin { 0x80 } else { 0 } | (opcode & 0x0f)];
    let len = payload.len();
    if len < 126 {
        out.push(len as u8);
    } else if len <= u16::MAX as usize {
        out.push(126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    out.extend_from_slice(payload);
    out
}

impl Peer {
    /// The socket.
    pub fn socket(&mut self) -> &mut TcpStream {
        &mut self.stream
    }

    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 4096];
        match self.stream.read(&mut chunk) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.pending.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }

    /// Reads the upgrade request; `None` if the client went away first.
    pub fn read_head(&mut self) -> Option<String> {
        let _ = self.stream.set_read_timeout(Some(Duration::from_secs(30)));
        let end = loop {
            if let Some(i) = self.pending.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if !self.fill() {
                return None;
            }
        };
        let head: Vec<u8> = self.pending.drain(..end).collect();
        let head = String::from_utf8_lossy(&head).into_owned();
        self.key = head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("sec-websocket-key")
                .then(|| v.trim().to_owned())
        });
        if let Ok(mut heads) = self.heads.lock() {
            heads.push(head.clone());
        }
        Some(head)
    }

    /// The `101` answer to the request read.
    pub fn accept_bytes(&self) -> Vec<u8> {
        let accept = tungstenite::handshake::derive_accept_key(
            self.key.as_deref().unwrap_or_default().as_bytes(),
        );
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
             Sec-WebSocket-Accept: {accept}\r\n\r\n"
        )
        .into_bytes()
    }

    /// Reads the upgrade request and accepts it; `false` if the client went away.
    pub fn accept(&mut self) -> bool {
        if self.read_head().is_none() {
            return false;
        }
        let answer = self.accept_bytes();
        self.write(&answer)
    }

    /// Writes bytes as they are.
    pub fn write(&mut self, bytes: &[u8]) -> bool {
        self.stream
            .write_all(bytes)
            .and_then(|()| self.stream.flush())
            .is_ok()
    }

    /// Writes `bytes` one at a time, `every` apart.
    pub fn trickle(&mut self, bytes: &[u8], every: Duration) -> bool {
        for b in bytes {
            if !self.write(&[*b]) {
                return false;
            }
            thread::sleep(every);
        }
        true
    }

    /// Sends one whole text frame.
    pub fn text(&mut self, text: &str) -> bool {
        self.write(&frame(1, true, text.as_bytes()))
    }

    /// Reads the client's next text message (answering nothing: pings and pongs are
    /// skipped); `None` on close or when the client went away.
    pub fn read_text(&mut self) -> Option<String> {
        loop {
            let (opcode, payload) = self.read_frame()?;
            match opcode {
                1 => return Some(String::from_utf8_lossy(&payload).into_owned()),
                8 => return None,
                _ => continue,
            }
        }
    }

    /// Reads one frame from the client (unmasked): its opcode and payload.
    pub fn read_frame(&mut self) -> Option<(u8, Vec<u8>)> {
        loop {
            if let Some((opcode, payload, used)) = parse_client_frame(&self.pending) {
                self.pending.drain(..used);
                return Some((opcode, payload));
            }
            if !self.fill() {
                return None;
            }
        }
    }

    /// Reads the client's messages until it goes away, answering each text message
    /// with `answer(message)` (frames sent as they are, in order).
    pub fn answer_until_closed(&mut self, answer: impl Fn(&str) -> Vec<String>) {
        while let Some(message) = self.read_text() {
            for reply in answer(&message) {
                if !self.text(&reply) {
                    return;
                }
            }
        }
    }
}

fn parse_client_frame(buf: &[u8]) -> Option<(u8, Vec<u8>, usize)> {
    let b0 = *buf.first()?;
    let b1 = *buf.get(1)?;
    let masked = b1 & 0x80 != 0;
    let mut at = 2;
    let len = match b1 & 0x7f {
        126 => {
            let l = u16::from_be_bytes([*buf.get(2)?, *buf.get(3)?]) as usize;
            at = 4;
            l
        }
        127 => {
            let bytes: [u8; 8] = buf.get(2..10)?.try_into().ok()?;
            at = 10;
            u64::from_be_bytes(bytes) as usize
        }
        l => l as usize,
    };
    let mask: [u8; 4] = if masked {
        let m = buf.get(at..at + 4)?.try_into().ok()?;
        at += 4;
        m
    } else {
        [0; 4]
    };
    let data = buf.get(at..at + len)?;
    let payload: Vec<u8> = data
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ mask[i % 4])
        .collect();
    Some((b0 & 0x0f, payload, at + len))
}
