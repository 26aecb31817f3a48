//! testkit's shaped link, over real sockets: its round trip and its rate in each
//! direction are what it says, so the benchmarks "over a link" measure a link.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use testkit::link::{Link, Shape};

/// A server that reads `up` bytes, then writes `down` bytes, on each connection; and
/// answers each 4-byte ping with its 4 bytes.
fn server(up: usize, down: usize) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let mut s = s.unwrap();
            std::thread::spawn(move || {
                let mut got = vec![0u8; up];
                s.read_exact(&mut got).unwrap();
                s.write_all(&vec![7u8; down]).unwrap();
                let mut ping = [0u8; 4];
                while s.read_exact(&mut ping).is_ok() {
                    s.write_all(&ping).unwrap();
                }
            });
        }
    });
    addr
}

#[test]
fn a_round_trip_takes_the_links_delay_and_opening_a_connection_one_more() {
    let rtt = Duration::from_millis(40);
    let link = Link::start(server(4, 4), Shape::new(rtt, 100_000_000));
    let started = Instant::now();
    let mut s = TcpStream::connect(link.addr()).unwrap();
    s.set_nodelay(true).unwrap();
    s.write_all(b"open").unwrap();
    let mut back = [0u8; 4];
    s.read_exact(&mut back).unwrap();
    let first = started.elapsed();
    let mut pings = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        s.write_all(b"ping").unwrap();
        s.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"ping");
        pings.push(started.elapsed());
    }
    eprintln!("first exchange {first:?}, then {pings:?}");
    assert!(
        first >= rtt * 2 && first < rtt * 2 + Duration::from_millis(30),
        "{first:?}"
    );
    // Each takes the link's delay at least; their median no more than a scheduler's
    // hiccup beyond it (one ping of a busy machine's run can wait a tick or two).
    let mut sorted = pings.clone();
    sorted.sort();
    assert!(sorted[0] >= rtt, "{pings:?}");
    assert!(sorted[2] < rtt + Duration::from_millis(20), "{pings:?}");
    assert!(sorted[4] < rtt * 3, "{pings:?}");
    assert_eq!(link.connections(), 1);
    assert_eq!(link.bytes(), (4 + 20, 4 + 20));
}

#[test]
fn bytes_cross_at_the_links_rate_each_way() {
    let shape = Shape::new(Duration::from_millis(10), 8_000_000);
    // 1 MB up, then 1 MB down: a second each at 8 Mbit/s.
    let mb = 1_000_000;
    let link = Link::start(server(mb, mb), shape);
    let mut s = TcpStream::connect(link.addr()).unwrap();
    let started = Instant::now();
    s.write_all(&vec![1u8; mb]).unwrap();
    let mut down = vec![0u8; mb];
    s.read_exact(&mut down).unwrap();
    let took = started.elapsed();
    let least = shape.transfer(2 * mb as u64) + shape.rtt * 2;
    eprintln!("2 MB through {shape}: {took:?} (the link's limit {least:?})");
    assert!(took >= shape.transfer(2 * mb as u64), "{took:?}");
    assert!(took < least.mul_f64(1.15), "{took:?} against {least:?}");
    assert_eq!(link.bytes(), (mb as u64, mb as u64));
}
