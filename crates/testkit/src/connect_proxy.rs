//! An HTTP `CONNECT` proxy over a socket, as a company network has: it opens a tunnel to
//! the host and port asked for and copies bytes both ways; it can ask for credentials
//! (407) and records what each client asked for and sent. Like a company's proxy, it
//! resolves names the client cannot: a host under `.test` (`sandbox.test:8080`) is
//! this machine (`127.0.0.1`, same port).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What one client asked the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The `CONNECT` target, `host:port`.
    pub target: String,
    /// The `Proxy-Authorization` header, if any.
    pub authorization: Option<String>,
    /// Every header line, as sent.
    pub head: String,
}

/// A running proxy (it stops with the test process).
pub struct ConnectProxy {
    url: String,
    asked: Arc<Mutex<Vec<Asked>>>,
}

impl ConnectProxy {
    /// A proxy that asks for `Proxy-Authorization: Basic <basic>` when `basic` is given
    /// (407 otherwise), and tunnels every `CONNECT`.
    pub fn start(basic: Option<&str>) -> ConnectProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let asked: Arc<Mutex<Vec<Asked>>> = Arc::default();
        let record = asked.clone();
        let wanted = basic.map(|b| format!("Basic {b}"));
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let (record, wanted) = (record.clone(), wanted.clone());
                std::thread::spawn(move || serve(client, &record, wanted.as_deref()));
            }
        });
        ConnectProxy { url, asked }
    }

    /// Its URL (`http://127.0.0.1:port`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The URL with credentials (`http://user:password@127.0.0.1:port`).
    pub fn url_with(&self, user: &str, password: &str) -> String {
        self.url
            .replacen("http://", &format!("http://{user}:{password}@"), 1)
    }

    /// What every client asked, in order.
    pub fn asked(&self) -> Vec<Asked> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

fn serve(mut client: TcpStream, record: &Mutex<Vec<Asked>>, wanted: Option<&str>) {
    let _ = client.set_read_timeout(Some(Duration::from_secs(10)));
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match client.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
        if head.len() > 16 * 1024 {
            return;
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.lines();
    let request = lines.next().unwrap_or_default().to_owned();
    let authorization = lines.find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("proxy-authorization")
            .then(|| v.trim().to_owned())
    });
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if let Ok(mut asked) = record.lock() {
        asked.push(Asked {
            target: target.to_owned(),
            authorization: authorization.clone(),
            head: head.clone(),
        });
    }
    if method != "CONNECT" {
        let _ = client.write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n");
        return;
    }
    if let Some(wanted) = wanted
        && authorization.as_deref() != Some(wanted)
    {
        let _ = client.write_all(
            b"HTTP/1.1 407 Proxy Authentication Required\r\n\
              proxy-authenticate: Basic realm=\"corp\"\r\ncontent-length: 0\r\n\r\n",
        );
        return;
    }
    let reached = match target.rsplit_once(':') {
        Some((host, port)) if host.ends_with(".test") => format!("127.0.0.1:{port}"),
        _ => target.to_owned(),
    };
    let Ok(server) = TcpStream::connect(reached) else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n");
        return;
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .is_err()
    {
        return;
    }
    let _ = client.set_read_timeout(None);
    let (Ok(mut c2), Ok(mut s2)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let mut server = server;
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut c2, &mut server);
        let _ = server.shutdown(Shutdown::Both);
    });
    let _ = std::io::copy(&mut s2, &mut client);
    let _ = client.shutdown(Shutdown::Both);
    let _ = up.join();
}
