//! Helpers shared by the core-http integration tests: a sleeper that records instead of
//! sleeping, a manual clock, and a raw TCP server for the failures mockito cannot produce
//! (stalls, dropped connections, truncated bodies) and for counting connections.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use core_http::{Clock, Sleeper};

/// Records every requested sleep and, when given a clock, advances it instead of waiting.
#[derive(Debug, Default)]
pub struct RecordingSleeper {
    pub slept: Mutex<Vec<Duration>>,
    pub clock: Option<Arc<ManualClock>>,
}

impl RecordingSleeper {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
    pub fn with_clock(clock: Arc<ManualClock>) -> Arc<Self> {
        Arc::new(RecordingSleeper {
            slept: Mutex::default(),
            clock: Some(clock),
        })
    }
    pub fn slept(&self) -> Vec<Duration> {
        self.slept.lock().unwrap().clone()
    }
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, d: Duration) {
        self.slept.lock().unwrap().push(d);
        if let Some(c) = &self.clock {
            c.advance(d);
        }
    }
}

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct ManualClock(Mutex<Instant>);

impl ManualClock {
    pub fn new() -> Arc<Self> {
        Arc::new(ManualClock(Mutex::new(Instant::now())))
    }
    pub fn advance(&self, d: Duration) {
        *self.0.lock().unwrap() += d;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.0.lock().unwrap()
    }
}

/// What the raw server does with one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Send these bytes (a whole HTTP response) and keep the connection open.
    Raw(String),
    /// Read the request, then send nothing for this long, then close.
    Stall(Duration),
    /// Read the request, then close the connection without answering.
    Drop,
    /// Send `head`, then `body` one byte every `every`, then close.
    Trickle {
        head: String,
        body: Vec<u8>,
        every: Duration,
    },
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Reply {
        Reply::Raw(format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        ))
    }
    /// A redirect with this status to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::Raw(format!(
            "HTTP/1.1 {status} X\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n"
        ))
    }

    /// A JSON answer with extra header lines (each `name: value`).
    pub fn json_with(status: u16, headers: &[&str], body: &str) -> Reply {
        let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
        Reply::Raw(format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n{body}",
            body.len()
        ))
    }

    /// Announces `announced` bytes but sends only `body`, then closes.
    pub fn truncated(announced: usize, body: &str) -> Reply {
        Reply::Raw(format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {announced}\r\nconnection: close\r\n\r\n{body}"
        ))
    }
}

/// A minimal HTTP/1.1 server over a real socket that answers from a script (the last
/// reply repeats), records request heads, and counts TCP connections.
pub struct RawServer {
    pub url: String,
    pub requests: Arc<Mutex<Vec<String>>>,
    pub connections: Arc<AtomicUsize>,
}

impl RawServer {
    pub fn start(script: Vec<Reply>) -> RawServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let served = Arc::new(AtomicUsize::new(0));
        let (r, c) = (requests.clone(), connections.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                c.fetch_add(1, Ordering::SeqCst);
                let (r, script, served) = (r.clone(), script.clone(), served.clone());
                thread::spawn(move || serve(stream, &script, &r, &served));
            }
        });
        RawServer {
            url,
            requests,
            connections,
        }
    }

    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// The request lines (`POST /x HTTP/1.1`) seen so far.
    pub fn lines(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| r.lines().next().unwrap_or_default().to_owned())
            .collect()
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

fn serve(stream: TcpStream, script: &[Reply], log: &Mutex<Vec<String>>, served: &AtomicUsize) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let Some(head) = read_request(&mut reader) else {
            return;
        };
        log.lock().unwrap().push(head);
        let i = served.fetch_add(1, Ordering::SeqCst);
        let reply = script[i.min(script.len() - 1)].clone();
        match reply {
            Reply::Raw(bytes) => {
                if reader.get_mut().write_all(bytes.as_bytes()).is_err() {
                    return;
                }
                if bytes.contains("connection: close") {
                    return;
                }
            }
            Reply::Stall(d) => {
                thread::sleep(d);
                return;
            }
            Reply::Drop => return,
            Reply::Trickle { head, body, every } => {
                let stream = reader.get_mut();
                if stream.write_all(head.as_bytes()).is_err() {
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
        }
    }
}

/// Reads one request head and its body (by Content-Length); returns both as text.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<String> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).ok()?;
    Some(head + &String::from_utf8_lossy(&body))
}

/// A port on which nothing listens.
pub fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}
