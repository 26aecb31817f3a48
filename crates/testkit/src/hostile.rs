//! A hostile HTTP server on a raw socket, every byte chosen by the test: it can reset a
//! connection before or after reading the request, stall in the headers or the body,
//! trickle bytes, send truncated, oversized or malformed answers, and redirect anywhere.
//! It records every request it read and how it answered, so a test can count what
//! reached the server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// A request the server read.
#[derive(Debug, Clone)]
pub struct Seen {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path and query.
    pub path: String,
    /// The whole head (request line and headers), as text.
    pub head: String,
    /// The body, as text.
    pub body: String,
    /// Whether the answer given could let the client think the server acted (anything
    /// but a 429 or a 503, which say it did not).
    pub may_have_acted: bool,
    /// When it was read.
    pub at: std::time::Instant,
}

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Act {
    /// Close the connection at once, before reading the request.
    CloseBeforeRead,
    /// Read nothing of the request (a client sending a large body finds its writes
    /// blocked once the socket's buffers are full), stall for this long, then close.
    StallBeforeRead(Duration),
    /// Read the request, then close without answering.
    CloseAfterRead,
    /// Send these bytes (a whole answer) and keep the connection open.
    Send(Vec<u8>),
    /// Read the request's head only, send these bytes (an early `413`), and close with
    /// the body unread: the client's writes meet a reset. Decided before reading.
    AnswerBeforeBody(Vec<u8>),
    /// Send these bytes, then stall for this long, then close.
    SendThenStall(Vec<u8>, Duration),
    /// Wait this long, then send these bytes (a whole answer) and keep the connection
    /// open.
    SendAfter(Duration, Vec<u8>),
    /// Send `head`, then `body` one byte every `every`, then close.
    Trickle {
        /// The bytes sent at once.
        head: Vec<u8>,
        /// The bytes sent one at a time.
        body: Vec<u8>,
        /// The pause before each byte.
        every: Duration,
    },
    /// Send `head`, then `len` bytes of `fill` as fast as the client reads, then close.
    Flood {
        /// The bytes sent first.
        head: Vec<u8>,
        /// How many bytes follow.
        len: u64,
        /// The byte repeated.
        fill: u8,
    },
    /// Send `head`, then `chunk` `times` over (a body far larger than the server holds,
    /// such as a compressed bomb of many gzip members), then close.
    Repeat {
        /// The bytes sent first.
        head: Vec<u8>,
        /// The bytes repeated.
        chunk: Arc<Vec<u8>>,
        /// How many times.
        times: usize,
    },
}

impl Act {
    /// A complete answer with a JSON (or any text) body.
    pub fn answer(status: u16, headers: &[(&str, &str)], body: &str) -> Act {
        Act::Send(raw(status, headers, body.as_bytes()))
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: &str) -> Act {
        Act::answer(status, &[("location", location)], "")
    }

    /// A complete JSON answer.
    pub fn json(status: u16, body: &str) -> Act {
        Act::json_with(status, &[], body)
    }

    /// A complete JSON answer with more headers.
    pub fn json_with(status: u16, headers: &[(&str, &str)], body: &str) -> Act {
        let mut all = vec![("content-type", "application/json")];
        all.extend_from_slice(headers);
        Act::answer(status, &all, body)
    }

    /// A 200 that announces `announced` bytes of JSON, sends only `body`, then closes.
    pub fn truncated(announced: usize, body: &str) -> Act {
        let announced = announced.to_string();
        Act::answer(
            200,
            &[
                ("content-type", "application/json"),
                ("content-length", &announced),
                ("connection", "close"),
            ],
            body,
        )
    }

    /// Read the request, then answer nothing for `pause`, then close.
    pub fn stall(pause: Duration) -> Act {
        Act::SendThenStall(Vec::new(), pause)
    }

    fn may_have_acted(&self) -> bool {
        let status = match self {
            Act::Send(bytes) | Act::SendThenStall(bytes, _) | Act::SendAfter(_, bytes) => {
                status_of(bytes)
            }
            Act::Trickle { head, .. } | Act::Flood { head, .. } | Act::Repeat { head, .. } => {
                status_of(head)
            }
            Act::CloseBeforeRead
            | Act::StallBeforeRead(_)
            | Act::CloseAfterRead
            | Act::AnswerBeforeBody(_) => None,
        };
        !matches!(status, Some(429 | 503))
    }
}

fn status_of(bytes: &[u8]) -> Option<u16> {
    std::str::from_utf8(bytes.get(9..12)?).ok()?.parse().ok()
}

/// The bytes of an answer: status line, headers (a `content-length` is added unless
/// one is given), body.
pub fn raw(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} Hostile\r\n").into_bytes();
    let mut has_length = false;
    for (name, value) in headers {
        has_length |= name.eq_ignore_ascii_case("content-length");
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    if !has_length {
        out.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

/// The parsed request handed to a script.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path and query.
    pub path: String,
    /// How many requests the server read before this one.
    pub index: usize,
    /// The whole head as it came (empty when the script is asked before reading).
    pub head: String,
}

type Script = dyn Fn(&Request) -> Act + Send + Sync;

/// A running hostile server.
pub struct Hostile {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    connections: Arc<AtomicUsize>,
}

impl Hostile {
    /// Starts a server that answers each request as `script` says.
    pub fn start(script: impl Fn(&Request) -> Act + Send + Sync + 'static) -> Hostile {
        let listener = match TcpListener::bind("127.0.0.1:0") {
            Ok(l) => l,
            Err(e) => panic!("cannot listen: {e}"),
        };
        let url = match listener.local_addr() {
            Ok(addr) => format!("http://{addr}"),
            Err(e) => panic!("no address: {e}"),
        };
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let connections: Arc<AtomicUsize> = Arc::default();
        let script: Arc<Script> = Arc::new(script);
        let (log, count) = (seen.clone(), connections.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                count.fetch_add(1, Ordering::SeqCst);
                let (log, script) = (log.clone(), script.clone());
                thread::spawn(move || serve(stream, &*script, &log));
            }
        });
        Hostile {
            url,
            seen,
            connections,
        }
    }

    /// Starts a server that answers its n-th request (counted over every connection)
    /// with `acts[n]`; the last one repeats.
    pub fn scripted(acts: Vec<Act>) -> Hostile {
        Hostile::start(move |r| match acts.get(r.index).or(acts.last()) {
            Some(act) => act.clone(),
            None => Act::CloseAfterRead,
        })
    }

    /// Its base URL (`http://127.0.0.1:port`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request it read.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// How many requests with this method it read.
    pub fn count(&self, method: &str) -> usize {
        self.seen().iter().filter(|s| s.method == method).count()
    }

    /// Every request it read, head and body as one text.
    pub fn requests(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| s.head + &s.body).collect()
    }

    /// The request lines (`POST /x HTTP/1.1`) it read.
    pub fn lines(&self) -> Vec<String> {
        self.seen()
            .iter()
            .map(|s| s.head.lines().next().unwrap_or_default().to_owned())
            .collect()
    }

    /// How many TCP connections it accepted.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

fn serve(stream: TcpStream, script: &Script, log: &Mutex<Vec<Seen>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream);
    loop {
        let index = log.lock().map(|l| l.len()).unwrap_or_default();
        // The script decides before reading whether to reset at once.
        let peek = Request {
            method: String::new(),
            path: String::new(),
            index,
            head: String::new(),
        };
        let before = script(&peek);
        if matches!(before, Act::CloseBeforeRead | Act::StallBeforeRead(_)) {
            if let Ok(mut l) = log.lock() {
                // Counted as seen: the client may have written its request already.
                l.push(Seen {
                    method: "?".into(),
                    path: String::new(),
                    head: String::new(),
                    body: String::new(),
                    may_have_acted: true,
                    at: std::time::Instant::now(),
                });
            }
            if let Act::StallBeforeRead(pause) = before {
                thread::sleep(pause);
            }
            return;
        }
        if let Act::AnswerBeforeBody(bytes) = before {
            let Some(head) = read_head(&mut reader) else {
                return;
            };
            let mut words = head.split_whitespace();
            if let Ok(mut l) = log.lock() {
                l.push(Seen {
                    method: words.next().unwrap_or_default().to_owned(),
                    path: words.next().unwrap_or_default().to_owned(),
                    head: shorten_first_line(head),
                    body: String::new(),
                    may_have_acted: false,
                    at: std::time::Instant::now(),
                });
            }
            let _ = reader.get_mut().write_all(&bytes);
            return;
        }
        let Some((head, body)) = read_request(&mut reader) else {
            return;
        };
        let mut words = head.split_whitespace();
        let method = words.next().unwrap_or_default().to_owned();
        let path = words.next().unwrap_or_default().to_owned();
        let request = Request {
            method: method.clone(),
            path: path.clone(),
            index,
            head: head.clone(),
        };
        let act = script(&request);
        if let Ok(mut l) = log.lock() {
            // A long request line (a 60 KB page token) is kept short, so that what the
            // server records does not weigh on a test of the client's memory.
            let (path, head) = (shorten(path), shorten_first_line(head));
            l.push(Seen {
                method,
                path,
                head,
                body,
                may_have_acted: act.may_have_acted(),
                at: std::time::Instant::now(),
            });
        }
        let stream = reader.get_mut();
        match act {
            Act::CloseBeforeRead
            | Act::StallBeforeRead(_)
            | Act::CloseAfterRead
            | Act::AnswerBeforeBody(_) => return,
            Act::Send(bytes) => {
                if stream.write_all(&bytes).is_err() || says_close(&bytes) {
                    return;
                }
            }
            Act::SendAfter(pause, bytes) => {
                thread::sleep(pause);
                if stream.write_all(&bytes).is_err() || says_close(&bytes) {
                    return;
                }
            }
            Act::SendThenStall(bytes, pause) => {
                let _ = stream.write_all(&bytes);
                let _ = stream.flush();
                thread::sleep(pause);
                return;
            }
            Act::Trickle { head, body, every } => {
                if stream.write_all(&head).is_err() {
                    return;
                }
                for byte in body {
                    thread::sleep(every);
                    if stream.write_all(&[byte]).is_err() {
                        return;
                    }
                }
                return;
            }
            Act::Flood { head, len, fill } => {
                if stream.write_all(&head).is_err() {
                    return;
                }
                let chunk = vec![fill; 64 * 1024];
                let mut left = len;
                while left > 0 {
                    let n = left.min(chunk.len() as u64) as usize;
                    if stream.write_all(&chunk[..n]).is_err() {
                        return;
                    }
                    left -= n as u64;
                }
                return;
            }
            Act::Repeat { head, chunk, times } => {
                if stream.write_all(&head).is_err() {
                    return;
                }
                for _ in 0..times {
                    if stream.write_all(&chunk).is_err() {
                        return;
                    }
                }
                return;
            }
        }
    }
}

/// Whether an answer's head says `connection: close` (the server then closes).
fn says_close(answer: &[u8]) -> bool {
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(answer.len());
    String::from_utf8_lossy(&answer[..end])
        .to_ascii_lowercase()
        .contains("\r\nconnection: close")
}

const KEEP: usize = 1024;

fn shorten(text: String) -> String {
    if text.len() <= KEEP {
        return text;
    }
    let mut cut = KEEP;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    // A new string: truncating would keep the long one's capacity.
    format!("{}...", &text[..cut])
}

fn shorten_first_line(head: String) -> String {
    match head.split_once("\r\n") {
        Some((first, rest)) if first.len() > KEEP => {
            format!("{}\r\n{rest}", shorten(first.to_owned()))
        }
        _ => head,
    }
}

/// Reads one request head and its body (by `Content-Length`).
fn read_head(reader: &mut BufReader<TcpStream>) -> Option<String> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        head.push_str(&line);
        if line == "\r\n" {
            return Some(head);
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, String)> {
    let head = read_head(reader)?;
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len.min(64 * 1024 * 1024)];
    reader.read_exact(&mut body).ok()?;
    Some((head, String::from_utf8_lossy(&body).into_owned()))
}

/// A URL on which nothing listens.
pub fn refused_url() -> String {
    let Ok(listener) = TcpListener::bind("127.0.0.1:0") else {
        return "http://127.0.0.1:9".into();
    };
    match listener.local_addr() {
        Ok(addr) => format!("http://{addr}"),
        Err(_) => "http://127.0.0.1:9".into(),
    }
}
