//! The webhook listener on a port open to the internet: while peers hold connections
//! open and silent, trickle their heads byte by byte, or announce bodies they never
//! send, a signed delivery is still answered `200` at its first try, within a second,
//! on one thread and in bounded memory. Also what RFC 9112 asks of a server (one `Host`,
//! a `Content-Length` of digits alone, `100 Continue`), and a wrong secret made visible.
//!
//! One test in this file (its own process under nextest, and the only listener of this
//! binary), so that the threads it counts are the listener's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use core_webhooks::{Envelope, Listener};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// The listener's threads (named `webhook-...`) in this process.
fn listener_threads() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|name| name.starts_with("webhook-"))
        })
        .count()
}

/// This process's resident memory, in bytes (0 where /proc is not there).
fn resident() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?.to_owned();
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// A signed delivery of event `n`, as a Standard Webhooks sender writes it.
fn delivery(n: usize) -> Vec<u8> {
    let body = format!(
        r#"{{"type":"post.published","timestamp":"2026-12-01T00:00:00Z","data":{{"n":{n}}}}}"#
    );
    let headers =
        core_webhooks::signed_headers(SECRET, &format!("msg_attack_{n}"), body.as_bytes()).unwrap();
    let mut request = format!(
        "POST /hooks HTTP/1.1\r\nHost: receiver\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    request.into_bytes()
}

/// Sends `bytes` on a new connection and reads the answer's status: the status and the
/// time it took (0 when the connection failed or no answer came in 5 s).
fn send(addr: SocketAddr, bytes: &[u8]) -> (u16, Duration) {
    let started = Instant::now();
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
        return (0, started.elapsed());
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.write_all(bytes);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    (status_of(&answer), started.elapsed())
}

fn status_of(answer: &[u8]) -> u16 {
    String::from_utf8_lossy(answer)
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// What an attack holds open while deliveries are sent.
struct Attack {
    name: &'static str,
    /// Opens the attack's connections (and threads that feed them, if any).
    open: fn(SocketAddr) -> Vec<TcpStream>,
}

/// Connections that send nothing.
fn silent(addr: SocketAddr, count: usize) -> Vec<TcpStream> {
    (0..count)
        .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok())
        .collect()
}

/// Connections that send the start of a head, one byte at a time, a byte every 100 ms
/// (a slowloris), for as long as the test lasts.
fn slowloris(addr: SocketAddr, count: usize) -> Vec<TcpStream> {
    let streams = silent(addr, count);
    let feeds: Vec<TcpStream> = streams.iter().filter_map(|s| s.try_clone().ok()).collect();
    std::thread::spawn(move || {
        let head = b"POST /hooks HTTP/1.1\r\nHost: receiver\r\nX-Padding: ";
        let mut feeds = feeds;
        for i in 0.. {
            let byte = head.get(i).copied().unwrap_or(b'a');
            feeds.retain_mut(|s| s.write_all(&[byte]).is_ok());
            if feeds.is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    streams
}

/// Connections whose head announces a body of 1 MiB, then send 64 KiB of it and stall.
fn short_bodies(addr: SocketAddr, count: usize) -> Vec<TcpStream> {
    let mut streams = silent(addr, count);
    let head = b"POST /hooks HTTP/1.1\r\nHost: receiver\r\ncontent-length: 1048576\r\n\r\n";
    let part = vec![b'{'; 64 * 1024];
    for s in &mut streams {
        let _ = s.write_all(head);
        let _ = s.write_all(&part);
    }
    streams
}

const ATTACKS: &[Attack] = &[
    Attack {
        name: "16 silent connections",
        open: |a| silent(a, 16),
    },
    Attack {
        name: "a 300-connection slowloris",
        open: |a| slowloris(a, 300),
    },
    Attack {
        name: "32 connections whose Content-Length exceeds their body",
        open: |a| short_bodies(a, 32),
    },
    Attack {
        name: "1,000 silent connections opened at once",
        open: |a| silent(a, 1000),
    },
];

#[test]
fn signed_deliveries_are_answered_at_once_whatever_other_peers_do() {
    let mut listener = Listener::<Envelope>::bind("127.0.0.1:0", SECRET).unwrap();
    let addr = listener.local_addr();
    let rss_before = resident();
    let mut n = 0;
    for attack in ATTACKS {
        let held = (attack.open)(addr);
        assert!(
            held.len() >= 16,
            "{}: only {} connections",
            attack.name,
            held.len()
        );
        let mut times = Vec::new();
        for _ in 0..20 {
            n += 1;
            let (status, took) = send(addr, &delivery(n));
            assert_eq!(
                status, 200,
                "{}: delivery {n} at its first try",
                attack.name
            );
            times.push(took);
        }
        times.sort();
        let p99 = times[times.len() - 1];
        assert!(
            p99 < Duration::from_secs(1),
            "{}: the slowest of 20 deliveries took {p99:?}",
            attack.name
        );
        // Every delivery reached the script, once.
        for _ in 0..20 {
            let event = listener
                .next_timeout(Duration::from_secs(2))
                .expect("each delivery is handed over")
                .unwrap();
            assert_eq!(event.event_type, "post.published");
        }
        assert!(listener.next_timeout(Duration::from_millis(20)).is_none());
        assert_eq!(
            listener_threads(),
            1,
            "{}: one thread, whatever the connections",
            attack.name
        );
        drop(held);
    }
    // Bounded memory: the connections that announced 1 MiB held what they sent, no more.
    let grew = resident().saturating_sub(rss_before);
    assert!(grew < 64 * 1024 * 1024, "resident memory grew {grew} bytes");
    let stats = listener.stats();
    assert_eq!(stats.delivered, 80, "{stats:?}");
    assert!(
        stats.dropped > 0,
        "slow and silent peers were dropped: {stats:?}"
    );

    // What RFC 9112 asks of a server, on the same listener.
    let body = br#"{"type":"post.published","data":{}}"#;
    let signed = core_webhooks::signed_headers(SECRET, "msg_rfc", body).unwrap();
    let with = |host: &str, length: &str, extra: &str| -> Vec<u8> {
        let mut r = format!("POST /hooks HTTP/1.1\r\n{host}content-length: {length}\r\n{extra}");
        for (k, v) in &signed {
            r.push_str(&format!("{k}: {v}\r\n"));
        }
        r.push_str("\r\n");
        let mut bytes = r.into_bytes();
        bytes.extend_from_slice(body);
        bytes
    };
    let len = body.len().to_string();
    for (what, request, want) in [
        ("no Host", with("", &len, ""), 400),
        ("two Hosts", with("Host: a\r\nHost: b\r\n", &len, ""), 400),
        (
            "Content-Length: +N",
            with("Host: a\r\n", &format!("+{len}"), ""),
            400,
        ),
        (
            "two Content-Lengths",
            with("Host: a\r\ncontent-length: 1\r\n", &len, ""),
            400,
        ),
        (
            "an expectation it cannot meet",
            with("Host: a\r\n", &len, "expect: magic\r\n"),
            417,
        ),
    ] {
        assert_eq!(send(addr, &request).0, want, "{what}");
    }
    // `Expect: 100-continue`: the sender is told to go on at once, then answered.
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let request = with("Host: a\r\n", &len, "expect: 100-continue\r\n");
    let head_end = request.len() - body.len();
    stream.write_all(&request[..head_end]).unwrap();
    let mut answer = [0u8; 64];
    let started = Instant::now();
    let got = stream.read(&mut answer).unwrap();
    assert!(
        String::from_utf8_lossy(&answer[..got]).starts_with("HTTP/1.1 100 Continue\r\n\r\n"),
        "{:?}",
        String::from_utf8_lossy(&answer[..got])
    );
    assert!(started.elapsed() < Duration::from_millis(200));
    stream.write_all(body).unwrap();
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    assert_eq!(status_of(&rest), 200);
    assert!(listener.next_timeout(Duration::from_secs(2)).is_some());

    // A wrong secret is not silent: every refusal is counted as a signature refusal.
    let forged = {
        let body = br#"{"type":"post.published","data":{}}"#;
        let other = "whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=";
        let headers = core_webhooks::signed_headers(other, "msg_forged", body).unwrap();
        let mut r = format!(
            "POST /hooks HTTP/1.1\r\nHost: a\r\ncontent-length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            r.push_str(&format!("{k}: {v}\r\n"));
        }
        r.push_str("\r\n");
        let mut bytes = r.into_bytes();
        bytes.extend_from_slice(body);
        bytes
    };
    let before = listener.stats().refused_signature;
    for _ in 0..3 {
        assert_eq!(send(addr, &forged).0, 401);
    }
    assert_eq!(listener.stats().refused_signature, before + 3);
    assert!(listener.next_timeout(Duration::from_millis(20)).is_none());
    drop(listener);
    // Stopping ends the thread at once.
    let stopped = Instant::now();
    while listener_threads() > 0 && stopped.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(listener_threads(), 0);
}

/// A secret written without its `=` padding (as the Standard Webhooks reference library
/// accepts it) is the same secret: a listener bound with it takes a delivery signed with
/// the padded form, and one bound with the padded form takes a delivery signed with it.
#[test]
fn an_unpadded_secret_is_the_same_secret_over_a_socket() {
    let padded = "whsec_QUJDREVGR0hJSktMTU5PUA==";
    let unpadded = padded.trim_end_matches('=');
    for (listen_with, sign_with) in [(unpadded, padded), (padded, unpadded)] {
        let mut listener = Listener::<Envelope>::bind("127.0.0.1:0", listen_with).unwrap();
        let body = br#"{"type":"post.published","data":{}}"#;
        let headers = core_webhooks::signed_headers(sign_with, "msg_pad", body).unwrap();
        let mut request = format!(
            "POST /hooks HTTP/1.1\r\nHost: a\r\ncontent-length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        assert_eq!(
            send(listener.local_addr(), &bytes).0,
            200,
            "bound with {listen_with}, signed with {sign_with}"
        );
        let event = listener
            .next_timeout(Duration::from_secs(2))
            .expect("handed over")
            .unwrap();
        assert_eq!(event.event_type, "post.published");
    }
}
