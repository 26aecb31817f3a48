//! A shaped link for tests and benchmarks: a TCP relay on loopback that adds a round
//! trip's delay and caps the bandwidth in each direction, in userspace (no root, no
//! kernel module), so that a benchmark measures what a user tens of milliseconds and
//! tens of megabits away meets.
//!
//! Each direction of each connection is a pipe: a reader thread takes what the sender
//! wrote, in chunks of up to 16 KiB, and stamps each chunk with when its last bit would
//! leave a link of the given rate (after the chunks before it) plus half the round trip;
//! a writer thread hands it on at that moment. So a lone small message arrives half a
//! round trip later, and a stream of bytes at the link's rate. The pipe holds at most
//! 256 chunks (4 MiB) in flight, so a fast sender is held back as TCP would hold it.
//! A connection through the relay costs a round trip to open, as a real one does (the
//! relay answers the client's SYN at once, then holds the first bytes each way).
//!
//! ```
//! use std::io::{Read, Write};
//! use std::time::{Duration, Instant};
//! let echo = std::net::TcpListener::bind("127.0.0.1:0")?;
//! let target = echo.local_addr()?;
//! std::thread::spawn(move || {
//!     let (mut s, _) = echo.accept().unwrap();
//!     let mut buf = [0u8; 4];
//!     s.read_exact(&mut buf).unwrap();
//!     s.write_all(&buf).unwrap();
//! });
//! let link = service_clients_testkit::link::Link::start(target, service_clients_testkit::link::Shape::new(Duration::from_millis(40), 50_000_000));
//! let mut s = std::net::TcpStream::connect(link.addr())?;
//! let started = Instant::now();
//! s.write_all(b"ping")?;
//! let mut back = [0u8; 4];
//! s.read_exact(&mut back)?;
//! assert!(started.elapsed() >= Duration::from_millis(40));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// What the link does to the bytes crossing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// The round trip's delay: half of it each way.
    pub rtt: Duration,
    /// The bandwidth of each direction, in bits per second.
    pub bits_per_second: u64,
}

impl Shape {
    /// A link with this round trip and this rate each way.
    pub fn new(rtt: Duration, bits_per_second: u64) -> Shape {
        Shape {
            rtt,
            bits_per_second: bits_per_second.max(1),
        }
    }

    /// How long `bytes` take to cross at the link's rate.
    pub fn transfer(&self, bytes: u64) -> Duration {
        Duration::from_secs_f64(bytes as f64 * 8.0 / self.bits_per_second as f64)
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ms round trip, {} Mbit/s each way",
            self.rtt.as_millis(),
            self.bits_per_second as f64 / 1e6
        )
    }
}

/// What crossed a link so far.
#[derive(Debug, Default)]
struct Counts {
    connections: AtomicUsize,
    up: AtomicU64,
    down: AtomicU64,
}

/// A running link to one target. Dropping it stops taking connections (those open
/// end when either side closes).
#[derive(Debug)]
pub struct Link {
    addr: SocketAddr,
    shape: Shape,
    counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
}

impl Link {
    /// Relays every connection made to [`addr`](Self::addr) to `target`, shaped.
    pub fn start(target: SocketAddr, shape: Shape) -> Link {
        let listener = TcpListener::bind("127.0.0.1:0").expect("cannot listen");
        let addr = listener.local_addr().expect("no address");
        let counts = Arc::new(Counts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, stopped) = (counts.clone(), stop.clone());
        thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::Acquire) {
                    return;
                }
                let Ok(client) = client else { continue };
                seen.connections.fetch_add(1, Ordering::SeqCst);
                let seen = seen.clone();
                thread::spawn(move || relay(client, target, shape, &seen));
            }
        });
        Link {
            addr,
            shape,
            counts,
            stop,
        }
    }

    /// Where to connect: `127.0.0.1:port`.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The link's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// How many connections were made through it.
    pub fn connections(&self) -> usize {
        self.counts.connections.load(Ordering::SeqCst)
    }

    /// Bytes carried (client to target, target to client).
    pub fn bytes(&self) -> (u64, u64) {
        (
            self.counts.up.load(Ordering::SeqCst),
            self.counts.down.load(Ordering::SeqCst),
        )
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the accept loop so that it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn relay(client: TcpStream, target: SocketAddr, shape: Shape, counts: &Arc<Counts>) {
    let Ok(server) = TcpStream::connect(target) else {
        return;
    };
    let _ = (client.set_nodelay(true), server.set_nodelay(true));
    let (Ok(client2), Ok(server2)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    // The connection's opening round trip: the relay accepted at once, so the first
    // bytes each way wait for it (the SYN, SYN-ACK a real link would have carried).
    let opened = Instant::now() + shape.rtt;
    let up = counts.clone();
    let down = counts.clone();
    let a = thread::spawn(move || pipe(client, server2, shape, opened, &up.up));
    pipe(server, client2, shape, opened, &down.down);
    let _ = a.join();
}

/// How much sooner than asked a thread wakes from its sleep, then yields until the
/// moment: a sleep oversleeps by a few hundred microseconds on a busy machine (twice a
/// round trip), which would add a millisecond to every call measured through the link.
const EARLY: Duration = Duration::from_millis(1);

/// Waits until `at`: asleep for most of it, yielding for the last [`EARLY`].
fn until(at: Instant) {
    let now = Instant::now();
    if at > now + EARLY {
        thread::sleep(at - now - EARLY);
    }
    while Instant::now() < at {
        thread::yield_now();
    }
}

/// One direction: `from`'s bytes written to `to` as the link would deliver them.
fn pipe(mut from: TcpStream, mut to: TcpStream, shape: Shape, opened: Instant, count: &AtomicU64) {
    let (tx, rx) = mpsc::sync_channel::<(Instant, Vec<u8>)>(256);
    let writer = thread::spawn(move || {
        for (at, chunk) in rx {
            until(at);
            if to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
    let half = shape.rtt / 2;
    // When the link finishes sending what it was given so far.
    let mut free_at = opened;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        count.fetch_add(n as u64, Ordering::SeqCst);
        free_at = free_at.max(Instant::now()) + shape.transfer(n as u64);
        if tx.send((free_at + half, buf[..n].to_vec())).is_err() {
            break;
        }
    }
    drop(tx);
    let _ = writer.join();
}
