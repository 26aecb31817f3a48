//! A TCP proxy between the clients and the sandbox that injects the faults of a
//! connection: cut it, stall it (nothing passes either way, past the client's
//! dead-connection limit), or cut it in the middle of a frame (half of the next chunk
//! from the server, then the end).
//!
//! The proxy runs in the sandbox's process, not the soak's: its two threads per
//! connection (thousands over a long soak) would otherwise grow the allocator's
//! per-thread arenas of the process whose memory the soak watches, which is the
//! clients'. The soak tells it what to do one line at a time on that process's input
//! ([`Remote`]), and waits for its answer.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One proxied connection.
struct Pair {
    client: TcpStream,
    server: TcpStream,
    /// Half of the next chunk from the server, then the end.
    half_write: Arc<AtomicBool>,
}

#[derive(Default)]
struct State {
    pairs: Vec<Pair>,
    /// Until when nothing passes (a stall).
    stalled_until: Option<Instant>,
}

/// The proxy: forwards every connection to `target`.
pub struct Proxy {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    pub connections: Arc<AtomicU64>,
}

impl Proxy {
    pub fn start(target: SocketAddr) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let state: Arc<Mutex<State>> = Arc::default();
        let connections = Arc::new(AtomicU64::new(0));
        let (st, count) = (state.clone(), connections.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(target) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                count.fetch_add(1, Ordering::Relaxed);
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let half = Arc::new(AtomicBool::new(false));
                if let (Ok(c1), Ok(s1), Ok(c2), Ok(s2)) = (
                    client.try_clone(),
                    server.try_clone(),
                    client.try_clone(),
                    server.try_clone(),
                ) {
                    pump(c1, s1, st.clone(), None);
                    pump(s2, c2, st.clone(), Some(half.clone()));
                }
                let mut state = st.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                state.pairs.retain(|p| p.client.peer_addr().is_ok());
                state.pairs.push(Pair {
                    client,
                    server,
                    half_write: half,
                });
            }
        });
        Ok(Proxy {
            addr,
            state,
            connections,
        })
    }

    /// Cuts every connection now.
    pub fn cut(&self) -> usize {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = state.pairs.len();
        for p in state.pairs.drain(..) {
            let _ = p.client.shutdown(Shutdown::Both);
            let _ = p.server.shutdown(Shutdown::Both);
        }
        n
    }

    /// Nothing passes either way for `d` (the connections stay open).
    pub fn stall(&self, d: Duration) {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .stalled_until = Some(Instant::now() + d);
    }

    /// Each connection ends in the middle of what the server sends next.
    pub fn half_write(&self) {
        for p in &self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pairs
        {
            p.half_write.store(true, Ordering::Relaxed);
        }
    }
}

/// Serves the proxy's commands, one a line on standard input, each answered by a line
/// on standard output, until the input ends: `cut`, `stall <ms>`, `half`, `count`.
pub fn serve_commands(proxy: &Proxy) {
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let answer = match line.split_once(' ').unwrap_or((line.as_str(), "")) {
            ("cut", _) => proxy.cut().to_string(),
            ("stall", ms) => {
                proxy.stall(Duration::from_millis(ms.parse().unwrap_or(0)));
                "ok".to_owned()
            }
            ("half", _) => {
                proxy.half_write();
                "ok".to_owned()
            }
            ("count", _) => proxy.connections.load(Ordering::Relaxed).to_string(),
            _ => "unknown".to_owned(),
        };
        if writeln!(out, "{answer}")
            .and_then(|()| out.flush())
            .is_err()
        {
            break;
        }
    }
}

/// The proxy in the sandbox's process, as the soak drives it.
pub struct Remote {
    /// Where the clients connect.
    pub addr: SocketAddr,
    /// None once closed.
    io: Mutex<
        Option<(
            std::process::ChildStdin,
            BufReader<std::process::ChildStdout>,
        )>,
    >,
}

impl Remote {
    pub fn new(
        addr: SocketAddr,
        input: std::process::ChildStdin,
        output: BufReader<std::process::ChildStdout>,
    ) -> Remote {
        Remote {
            addr,
            io: Mutex::new(Some((input, output))),
        }
    }

    /// Sends one command and waits for its answer (empty if the process is gone).
    fn say(&self, command: &str) -> String {
        let mut io = self
            .io
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut answer = String::new();
        let Some((input, output)) = &mut *io else {
            return answer;
        };
        if writeln!(input, "{command}")
            .and_then(|()| input.flush())
            .is_ok()
        {
            let _ = output.read_line(&mut answer);
        }
        answer.trim().to_owned()
    }

    /// Ends the proxy's process (with the sandbox): its input closes.
    pub fn close(&self) {
        self.io
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
    }

    /// Cuts every connection now.
    pub fn cut(&self) {
        self.say("cut");
    }

    /// Nothing passes either way for `d` (the connections stay open).
    pub fn stall(&self, d: Duration) {
        self.say(&format!("stall {}", d.as_millis()));
    }

    /// Each connection ends in the middle of what the server sends next.
    pub fn half_write(&self) {
        self.say("half");
    }

    /// The connections made through the proxy so far.
    pub fn connections(&self) -> u64 {
        self.say("count").parse().unwrap_or(0)
    }
}

/// Copies `from` to `to` on a thread, holding what it read while stalled; with `half`,
/// writes half of a chunk and ends both when asked.
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    state: Arc<Mutex<State>>,
    half: Option<Arc<AtomicBool>>,
) {
    std::thread::spawn(move || {
        // On the thread's own stack, given back to the system when the connection ends:
        // thousands of connections' buffers on the heap would stay in the allocator's
        // per-thread caches and blur the resident memory the soak watches, which is the
        // streams', not this proxy's.
        let mut buf = [0u8; 64 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            loop {
                let until = state
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .stalled_until;
                match until {
                    Some(t) if Instant::now() < t => std::thread::sleep(Duration::from_millis(20)),
                    _ => break,
                }
            }
            if let Some(h) = &half
                && h.load(Ordering::Relaxed)
                && n > 1
            {
                let _ = to.write_all(&buf[..n / 2]);
                let _ = to.shutdown(Shutdown::Both);
                let _ = from.shutdown(Shutdown::Both);
                break;
            }
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
}
