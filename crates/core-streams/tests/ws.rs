//! The reconnecting stream against a real local WebSocket server written here
//! (tungstenite's server side, plain and TLS): pings both ways, a mute server, server
//! closes, a dropped connection, refused upgrades, messages longer than one read, an
//! oversized message, a slow caller.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use core_http::config::{Backoff, Secret};
use core_streams::{Inbound, Protocol, ReconnectPolicy, Stream, StreamConfig, StreamItem, WsError};
use tungstenite::protocol::CloseFrame;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::{Message, WebSocket};

// ---- a small protocol: channels, acks, quotes (lossy) and fills (lossless) ----

#[derive(Debug, Clone, PartialEq)]
enum Event {
    Quote(u64),
    Fill(u64),
}

#[derive(Default)]
struct Test {
    channels: Vec<String>,
}

impl Protocol for Test {
    type Event = Event;
    type Subscription = String;

    fn subscribe(&mut self, channel: &String) -> Vec<String> {
        self.channels.push(channel.clone());
        vec![format!(r#"{{"action":"subscribe","channel":"{channel}"}}"#)]
    }

    fn unsubscribe(&mut self, channel: &String) -> Vec<String> {
        self.channels.retain(|c| c != channel);
        vec![format!(
            r#"{{"action":"unsubscribe","channel":"{channel}"}}"#
        )]
    }

    fn replay(&self) -> Vec<String> {
        self.channels
            .iter()
            .map(|c| format!(r#"{{"action":"subscribe","channel":"{c}"}}"#))
            .collect()
    }

    fn decode(&mut self, frame: &str, out: &mut Vec<Inbound<Event>>) {
        let v: serde_json::Value = serde_json::from_str(frame).unwrap_or_default();
        let n = v["n"].as_u64().unwrap_or_default();
        out.extend(match v["type"].as_str() {
            Some("subscribed") => Some(Inbound::Ack),
            Some("refused") => Some(Inbound::Refused("no such channel".into())),
            Some("quote") => Some(Inbound::lossy(Event::Quote(n)).on_channel("quotes")),
            Some("fill") => Some(Inbound::lossless(Event::Fill(n)).on_channel("fills")),
            _ => None,
        });
    }
}

fn subscribed(channels: &[&str]) -> Test {
    Test {
        channels: channels.iter().map(|c| (*c).to_owned()).collect(),
    }
}

// ---- the server ----

type Ws = WebSocket<TcpStream>;
type TlsWs = WebSocket<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>;

/// A server whose `script` runs each connection (with its index); it records what it
/// read from clients.
struct Server {
    url: String,
    connections: Arc<AtomicUsize>,
    received: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(
        script: impl Fn(&mut Ws, usize, &Mutex<Vec<String>>) + Send + Sync + 'static,
    ) -> Server {
        Self::start_raw(move |stream, i, received| {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
            let Ok(mut ws) = tungstenite::accept(stream) else {
                return;
            };
            script(&mut ws, i, received);
        })
    }

    fn start_raw(
        handle: impl Fn(TcpStream, usize, &Mutex<Vec<String>>) + Send + Sync + 'static,
    ) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("ws://{}/stream", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let received: Arc<Mutex<Vec<String>>> = Arc::default();
        let handle = Arc::new(handle);
        let (count, log) = (connections.clone(), received.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let i = count.fetch_add(1, Ordering::SeqCst);
                let (handle, log) = (handle.clone(), log.clone());
                thread::spawn(move || handle(stream, i, &log));
            }
        });
        Server {
            url,
            connections,
            received,
        }
    }

    /// A `wss://` server: each connection's TLS handshake made with `tls`, then `script`
    /// run on its WebSocket (with the connection's index).
    fn start_tls(
        tls: Arc<rustls::ServerConfig>,
        script: impl Fn(&mut TlsWs, usize) + Send + Sync + 'static,
    ) -> Server {
        let mut server = Self::start_raw(move |stream, i, _| {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
            let conn = rustls::ServerConnection::new(tls.clone()).unwrap();
            let Ok(mut ws) = tungstenite::accept(rustls::StreamOwned::new(conn, stream)) else {
                return;
            };
            script(&mut ws, i);
        });
        server.url = server.url.replacen("ws://", "wss://", 1);
        server
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn received(&self) -> Vec<String> {
        self.received.lock().unwrap().clone()
    }
}

/// Reads one message, recording text and control frames; `None` when the socket ends.
fn read(ws: &mut Ws, log: &Mutex<Vec<String>>) -> Option<Message> {
    match ws.read() {
        Ok(m) => {
            let entry = match &m {
                Message::Text(t) => t.as_str().to_owned(),
                Message::Ping(_) => "<ping>".into(),
                Message::Pong(_) => "<pong>".into(),
                Message::Close(_) => "<close>".into(),
                _ => "<other>".into(),
            };
            log.lock().unwrap().push(entry);
            Some(m)
        }
        Err(tungstenite::Error::Io(e))
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Some(Message::Frame(tungstenite::protocol::frame::Frame::ping(
                Vec::new(),
            )))
        }
        Err(_) => None,
    }
}

/// Acknowledges every subscribe message until `then` says to stop.
fn ack_all(ws: &mut Ws, log: &Mutex<Vec<String>>, expected: usize) {
    let mut acked = 0;
    while acked < expected {
        match read(ws, log) {
            Some(Message::Text(t)) if t.contains("subscribe") => {
                ws.send(Message::text(r#"{"type":"subscribed"}"#)).unwrap();
                acked += 1;
            }
            Some(_) => {}
            None => return,
        }
    }
}

fn send<S: std::io::Read + std::io::Write>(ws: &mut WebSocket<S>, kind: &str, n: u64) {
    let _ = ws.send(Message::text(format!(r#"{{"type":"{kind}","n":{n}}}"#)));
}

/// Answers each subscription on `ws` with `subscribed`, then a fill numbered `n`, until
/// the connection ends.
fn subscribed_then_fill<S: std::io::Read + std::io::Write>(ws: &mut WebSocket<S>, n: u64) {
    while let Ok(m) = ws.read() {
        if m.is_text() {
            let _ = ws.send(Message::text(r#"{"type":"subscribed"}"#));
            send(ws, "fill", n);
        }
    }
}

/// Fast settings for tests: reconnect at once, tick often.
fn config(url: &str) -> StreamConfig {
    StreamConfig::new(url)
        .tick(Duration::from_millis(20))
        .reconnect(fast_reconnect())
}

fn fast_reconnect() -> ReconnectPolicy {
    let mut policy = ReconnectPolicy::default();
    policy.backoff = Backoff::new(Duration::from_millis(5), Duration::from_millis(20), 1.0);
    policy.cooldown = Duration::from_millis(600);
    policy
}

fn next(stream: &mut Stream<Test>) -> StreamItem<Event> {
    stream
        .next_timeout(Duration::from_secs(10))
        .expect("an item in time")
        .expect("not an error")
}

// ---- the tests ----

#[test]
fn events_flow_and_pings_are_answered_both_ways() {
    let server = Server::start(|ws, _, log| {
        ack_all(ws, log, 1);
        ws.send(Message::Ping(b"hi".to_vec().into())).unwrap();
        send(ws, "fill", 1);
        // Keep reading: the client's own ping arrives after its quiet period.
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(3) {
            if read(ws, log).is_none() {
                return;
            }
        }
    });
    let mut stream = Stream::connect(
        config(&server.url).ping_after(Duration::from_millis(300)),
        subscribed(&["fills"]),
    )
    .unwrap();
    assert_eq!(next(&mut stream), StreamItem::Event(Event::Fill(1)));
    let started = Instant::now();
    while !server.received().iter().any(|r| r == "<ping>") {
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            server.received()
        );
        thread::sleep(Duration::from_millis(20));
    }
    let received = server.received();
    assert!(received.contains(&"<pong>".to_owned()), "{received:?}");
    assert_eq!(received[0], r#"{"action":"subscribe","channel":"fills"}"#);
    stream.close();
    assert!(server.received().contains(&"<close>".to_owned()));
    assert!(stream.is_closed());
    assert_eq!(stream.stats().reconnects, 0);
}

#[test]
fn a_dropped_connection_reconnects_and_replays_the_subscriptions() {
    let server = Server::start(|ws, i, log| {
        ack_all(ws, log, 2);
        send(ws, "fill", i as u64);
        if i == 0 {
            // Dropped without a close frame, as a network failure would.
            thread::sleep(Duration::from_millis(50));
            return;
        }
        while read(ws, log).is_some() {}
    });
    let mut stream =
        Stream::connect(config(&server.url), subscribed(&["fills", "quotes"])).unwrap();
    assert_eq!(next(&mut stream), StreamItem::Event(Event::Fill(0)));
    match next(&mut stream) {
        StreamItem::Reconnected { gap, attempts } => {
            assert!(gap < Duration::from_secs(5));
            assert_eq!(attempts, 1);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(next(&mut stream), StreamItem::Event(Event::Fill(1)));
    let subscribes = server
        .received()
        .iter()
        .filter(|r| r.contains("subscribe"))
        .count();
    assert_eq!(subscribes, 4, "both subscriptions replayed");
    assert_eq!(stream.stats().reconnects, 1);
}

#[test]
fn subscriptions_made_while_disconnected_are_sent_on_reconnect() {
    let server = Server::start(|ws, i, log| {
        if i == 0 {
            ack_all(ws, log, 1);
            thread::sleep(Duration::from_millis(100));
            return;
        }
        ack_all(ws, log, 2);
        while read(ws, log).is_some() {}
    });
    let mut slow = fast_reconnect();
    slow.backoff = Backoff::new(Duration::from_millis(400), Duration::from_millis(400), 0.0);
    let mut stream =
        Stream::connect(config(&server.url).reconnect(slow), subscribed(&["fills"])).unwrap();
    // Wait for the drop, then subscribe during the outage.
    let started = Instant::now();
    while stream.stats().connected {
        assert!(started.elapsed() < Duration::from_secs(5));
        thread::sleep(Duration::from_millis(10));
    }
    stream.subscribe("quotes".into());
    assert!(matches!(next(&mut stream), StreamItem::Reconnected { .. }));
    let received = server.received();
    assert!(
        received.iter().any(|r| r.contains(r#""channel":"quotes""#)),
        "{received:?}"
    );
}

#[test]
fn a_mute_server_is_declared_dead() {
    let server = Server::start(|ws, i, log| {
        ack_all(ws, log, 1);
        if i == 0 {
            // Mute: no frames, no pongs (nothing is read), the socket stays open.
            thread::sleep(Duration::from_secs(5));
            return;
        }
        send(ws, "fill", 7);
        while read(ws, log).is_some() {}
    });
    let started = Instant::now();
    let mut stream = Stream::connect(
        config(&server.url)
            .ping_after(Duration::from_millis(200))
            .dead_after(Duration::from_millis(800)),
        subscribed(&["fills"]),
    )
    .unwrap();
    assert!(matches!(next(&mut stream), StreamItem::Reconnected { .. }));
    assert!(started.elapsed() >= Duration::from_millis(800));
    assert_eq!(next(&mut stream), StreamItem::Event(Event::Fill(7)));
    assert_eq!(server.connections(), 2);
}

#[test]
fn a_stale_channel_reconnects_when_asked_to_watch_it() {
    let server = Server::start(|ws, i, log| {
        ack_all(ws, log, 1);
        if i == 0 {
            // Pongs flow, but no quote ever comes.
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(3) {
                if read(ws, log).is_none() {
                    return;
                }
            }
            return;
        }
        send(ws, "quote", 1);
        while read(ws, log).is_some() {}
    });
    let mut stream = Stream::connect(
        config(&server.url)
            .ping_after(Duration::from_millis(100))
            .stale_after("quotes", Duration::from_millis(500)),
        subscribed(&["quotes"]),
    )
    .unwrap();
    assert!(matches!(next(&mut stream), StreamItem::Reconnected { .. }));
    assert_eq!(next(&mut stream), StreamItem::Event(Event::Quote(1)));
}

#[test]
fn server_close_codes_are_classified() {
    // A restart (1012) reconnects.
    let server = Server::start(|ws, i, log| {
        ack_all(ws, log, 1);
        if i == 0 {
            let _ = ws.close(Some(CloseFrame {
                code: CloseCode::Restart,
                reason: "restarting".into(),
            }));
            let _ = ws.flush();
            thread::sleep(Duration::from_millis(100));
            return;
        }
        send(ws, "fill", 2);
        while read(ws, log).is_some() {}
    });
    let mut stream = Stream::connect(config(&server.url), subscribed(&["fills"])).unwrap();
    assert!(matches!(next(&mut stream), StreamItem::Reconnected { .. }));
    assert_eq!(next(&mut stream), StreamItem::Event(Event::Fill(2)));

    // A policy violation (1008) ends the stream with the code and reason.
    let server = Server::start(|ws, _, log| {
        ack_all(ws, log, 1);
        let _ = ws.close(Some(CloseFrame {
            code: CloseCode::Policy,
            reason: "too many connections".into(),
        }));
        let _ = ws.flush();
        thread::sleep(Duration::from_millis(200));
    });
    let mut stream = Stream::connect(config(&server.url), subscribed(&["fills"])).unwrap();
    match stream.next_timeout(Duration::from_secs(10)) {
        Some(Err(e))
            if matches!(
                e.downcast_ref::<WsError>(),
                Some(WsError::Closed { code: 1008, reason }) if reason == "too many connections"
            ) => {}
        other => panic!("{other:?}"),
    }
    assert!(stream.next_timeout(Duration::from_secs(2)).is_none());
    assert!(stream.is_closed());
    assert_eq!(server.connections(), 1);
}

fn refuse(
    status: u16,
    body: &str,
) -> impl Fn(TcpStream, usize, &Mutex<Vec<String>>) + Send + Sync + 'static {
    let answer = format!(
        "HTTP/1.1 {status} Refused\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    move |mut stream: TcpStream, _, _| {
        use std::io::{BufRead, BufReader, Write};
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
            line.clear();
        }
        let _ = stream.write_all(answer.as_bytes());
    }
}

#[test]
fn an_upgrade_refused_with_401_is_a_clear_error() {
    let server = Server::start_raw(refuse(
        401,
        r#"{"error":{"code":"unauthorized","message":"unknown key sk_live_secret_key"}}"#,
    ));
    let config =
        config(&server.url).auth("authorization", Secret::new("Bearer sk_live_secret_key"));
    let err = Stream::connect(config, subscribed(&[])).unwrap_err();
    match err.downcast_ref::<WsError>() {
        Some(WsError::Unauthorized { status, message }) => {
            assert_eq!(*status, 401);
            assert!(message.contains("unknown key"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.connections(), 1);
}

#[test]
fn an_upgrade_refused_with_429_waits_the_cooldown() {
    let server = Server::start_raw(|stream, i, log| {
        if i == 1 {
            refuse(429, r#"{"error":{"code":"connection_limit"}}"#)(stream, i, log);
            return;
        }
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let Ok(mut ws) = tungstenite::accept(stream) else {
            return;
        };
        ack_all(&mut ws, log, 1);
        if i == 0 {
            return; // dropped: the client reconnects, and is refused once
        }
        send(&mut ws, "fill", 3);
        while read(&mut ws, log).is_some() {}
    });
    let started = Instant::now();
    let mut stream = Stream::connect(config(&server.url), subscribed(&["fills"])).unwrap();
    match next(&mut stream) {
        StreamItem::Reconnected { attempts, .. } => assert_eq!(attempts, 2),
        other => panic!("{other:?}"),
    }
    // The cool-down (600 ms here), not the 5-20 ms backoff, separated the attempts.
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(next(&mut stream), StreamItem::Event(Event::Fill(3)));
    assert_eq!(server.connections(), 3);
}

#[test]
fn an_oversized_message_ends_the_stream_with_a_clear_error() {
    let server = Server::start(|ws, _, log| {
        ack_all(ws, log, 1);
        let _ = ws.send(Message::text(format!(
            r#"{{"type":"fill","pad":"{}"}}"#,
            "x".repeat(4096)
        )));
        thread::sleep(Duration::from_millis(500));
    });
    let mut stream = Stream::connect(
        config(&server.url).max_message_size(1024),
        subscribed(&["fills"]),
    )
    .unwrap();
    match stream.next_timeout(Duration::from_secs(10)) {
        Some(Err(e))
            if matches!(
                e.downcast_ref::<WsError>(),
                Some(WsError::MessageTooLarge { limit: 1024, .. })
            ) => {}
        other => panic!("{other:?}"),
    }
}

/// A fill padded to `size` bytes, its number last, so that only the whole message
/// decodes to it.
fn padded_fill(n: u64, size: usize) -> String {
    let head = r#"{"type":"fill","pad":""#;
    let tail = format!(r#"","n":{n}}}"#);
    format!("{head}{}{tail}", "x".repeat(size - head.len() - tail.len()))
}

#[test]
fn messages_longer_than_one_read_arrive_whole_once_and_in_order() {
    // The stream reads 16 KiB at a time: a 1 MiB message written in slices that do not
    // line up with that, one of 48 KiB in three fragments, then a short one.
    let server = Server::start(|ws, _, log| {
        ack_all(ws, log, 1);
        let big = testkit::hostile_ws::frame(1, true, padded_fill(1, 1 << 20).as_bytes());
        let fragmented = padded_fill(2, 48 * 1024);
        let (a, rest) = fragmented.as_bytes().split_at(10_000);
        let (b, c) = rest.split_at(30_000);
        let mut bytes = big;
        bytes.extend(testkit::hostile_ws::frame(1, false, a));
        bytes.extend(testkit::hostile_ws::frame(0, false, b));
        bytes.extend(testkit::hostile_ws::frame(0, true, c));
        bytes.extend(testkit::hostile_ws::frame(
            1,
            true,
            br#"{"type":"fill","n":3}"#,
        ));
        let socket = ws.get_mut();
        for slice in bytes.chunks(7_001) {
            if std::io::Write::write_all(socket, slice).is_err() {
                return;
            }
        }
        while read(ws, log).is_some() {}
    });
    let mut stream = Stream::connect(config(&server.url), subscribed(&["fills"])).unwrap();
    let fills: Vec<StreamItem<Event>> = (0..3).map(|_| next(&mut stream)).collect();
    assert_eq!(fills, [1, 2, 3].map(|n| StreamItem::Event(Event::Fill(n))));
    // Nothing read twice, nothing left over as another event or an error.
    assert!(
        stream.next_timeout(Duration::from_millis(200)).is_none(),
        "{:?}",
        stream.stats()
    );
    assert_eq!(server.connections(), 1);
}

#[test]
fn a_slow_caller_loses_quotes_counted_but_never_a_fill() {
    let server = Server::start(|ws, _, log| {
        ack_all(ws, log, 2);
        for n in 0..500 {
            send(ws, "quote", n);
            if n % 100 == 0 {
                send(ws, "fill", n);
            }
        }
        while read(ws, log).is_some() {}
    });
    let drops = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut stream = Stream::connect(
        config(&server.url)
            .lossy_capacity(50)
            .observer(Drops(drops.clone())),
        subscribed(&["quotes", "fills"]),
    )
    .unwrap();
    // The caller is busy while everything arrives.
    let started = Instant::now();
    while stream.stats().received < 505 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            stream.stats()
        );
        thread::sleep(Duration::from_millis(20));
    }
    let mut quotes = Vec::new();
    let mut fills = Vec::new();
    while let Some(Ok(StreamItem::Event(e))) = stream.next_timeout(Duration::from_millis(200)) {
        match e {
            Event::Quote(n) => quotes.push(n),
            Event::Fill(n) => fills.push(n),
        }
    }
    assert_eq!(fills, [0, 100, 200, 300, 400]);
    assert_eq!(quotes.len(), 50);
    assert_eq!(
        quotes,
        (450..500).collect::<Vec<_>>(),
        "the newest quotes are kept"
    );
    assert_eq!(stream.stats().dropped, 450);
    // An observer was told of every drop: the counts add up, the last total is all.
    let told = drops.lock().unwrap().clone();
    assert_eq!(told.iter().map(|(c, _)| c).sum::<u64>(), 450, "{told:?}");
    assert_eq!(told.last().map(|(_, t)| *t), Some(450));
}

/// Records the drops a stream reports.
struct Drops(Arc<std::sync::Mutex<Vec<(u64, u64)>>>);

impl core_http::config::Observer for Drops {
    fn stream(&self, event: &core_http::config::StreamEvent) {
        if let core_http::config::StreamEvent::Dropped { count, total } = event {
            self.0.lock().unwrap().push((*count, *total));
        }
    }
}

#[test]
fn a_refused_subscription_is_an_error_item_and_the_stream_goes_on() {
    let server = Server::start(|ws, _, log| {
        loop {
            match read(ws, log) {
                Some(Message::Text(t)) if t.contains("nope") => {
                    ws.send(Message::text(r#"{"type":"refused"}"#)).unwrap();
                    send(ws, "fill", 9);
                }
                Some(_) => {}
                None => return,
            }
        }
    });
    let mut stream = Stream::connect(config(&server.url), subscribed(&[])).unwrap();
    stream.subscribe("nope".into());
    match stream.next_timeout(Duration::from_secs(10)) {
        Some(Err(e))
            if matches!(
                e.downcast_ref::<WsError>(),
                Some(WsError::Server(m)) if m.contains("no such channel")
            ) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(next(&mut stream), StreamItem::Event(Event::Fill(9)));
}

#[test]
fn a_closed_port_is_a_connect_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/stream", listener.local_addr().unwrap());
    drop(listener);
    let err = Stream::connect(config(&url), subscribed(&[])).unwrap_err();
    assert!(
        matches!(err.downcast_ref::<WsError>(), Some(WsError::Connect(_))),
        "{err:?}"
    );
}

#[test]
fn wss_to_a_local_tls_server_with_a_test_root() {
    let (ca, tls) = testkit::tls::local_root_and_server();
    let server = Server::start_tls(tls, |ws, _| subscribed_then_fill(ws, 5));
    let url = server.url.clone();
    let client = core_http::HttpClient::builder()
        .base_url("https://127.0.0.1")
        .api_key("sk_test_tls")
        .root_certificates_pem(ca.as_bytes())
        .unwrap()
        .build()
        .unwrap();
    let config = core_streams::stream_config(&client, &url)
        .unwrap()
        .tick(Duration::from_millis(20));
    let mut stream = Stream::connect(config, subscribed(&["fills"])).unwrap();
    assert_eq!(next(&mut stream), StreamItem::Event(Event::Fill(5)));

    // Without the test root the same server is refused, and nothing is retried.
    let plain = core_http::HttpClient::builder()
        .base_url("https://127.0.0.1")
        .build()
        .unwrap();
    let err = Stream::connect(
        core_streams::stream_config(&plain, &url).unwrap(),
        subscribed(&[]),
    )
    .unwrap_err();
    assert!(
        matches!(err.downcast_ref::<WsError>(), Some(WsError::Connect(m)) if m.contains("TLS")),
        "{err:?}"
    );
}

#[test]
fn a_reconnect_resumes_the_tls_session_of_the_clients_one_configuration() {
    use rustls::HandshakeKind;
    let (ca, tls) = testkit::tls::local_root_and_server();
    // Each connection's handshake, as the server saw it. The first connection sends one
    // fill and is cut; the next sends another.
    let kinds: Arc<Mutex<Vec<Option<HandshakeKind>>>> = Arc::default();
    let seen = Arc::clone(&kinds);
    let server = Server::start_tls(tls, move |ws, i| {
        seen.lock()
            .unwrap()
            .push(ws.get_ref().conn.handshake_kind());
        while let Ok(m) = ws.read() {
            if m.is_text() {
                let _ = ws.send(Message::text(r#"{"type":"subscribed"}"#));
                send(ws, "fill", i as u64 + 1);
                if i == 0 {
                    return;
                }
            }
        }
    });
    let url = server.url.clone();
    let client = core_http::HttpClient::builder()
        .base_url("https://127.0.0.1")
        .root_certificates_pem(ca.as_bytes())
        .unwrap()
        .build()
        .unwrap();
    let config = core_streams::stream_config(&client, &url)
        .unwrap()
        .tick(Duration::from_millis(20))
        .reconnect(fast_reconnect());
    let mut stream = Stream::connect(config, subscribed(&["fills"])).unwrap();
    let mut fills = Vec::new();
    while fills.len() < 2 {
        match stream.next_timeout(Duration::from_secs(10)) {
            Some(Ok(StreamItem::Event(Event::Fill(n)))) => fills.push(n),
            Some(Ok(_)) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(fills, [1, 2]);
    // The second connection resumed the first one's session: the stream kept the
    // client's configuration (and its session cache) rather than making a new one.
    assert_eq!(
        *kinds.lock().unwrap(),
        [Some(HandshakeKind::Full), Some(HandshakeKind::Resumed)]
    );
}

#[test]
fn the_stream_config_follows_the_https_rule_and_hides_the_key() {
    let client = core_http::HttpClient::builder()
        .base_url("https://api.example.com")
        .api_key("sk_live_very_secret")
        .build()
        .unwrap();
    assert!(core_streams::stream_config(&client, "ws://api.example.com/stream").is_err());
    let config = core_streams::stream_config(&client, "wss://api.example.com/stream").unwrap();
    assert!(!format!("{config:?}").contains("very_secret"));
    assert!(core_streams::stream_config(&client, "ws://127.0.0.1:9/stream").is_ok());
}

#[test]
fn wss_presents_the_client_certificate_to_a_gateway_that_asks() {
    use rcgen::{CertificateParams, DnType, IsCa, KeyPair, SanType};
    let authority = |name: &str| {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        (cert, key)
    };
    let (ca, ca_key) = authority("servers");
    let (clients, clients_key) = authority("clients");
    let mut leaf_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    leaf_params.subject_alt_names = vec![SanType::IpAddress("127.0.0.1".parse().unwrap())];
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = leaf_params.signed_by(&leaf_key, &ca, &ca_key).unwrap();
    let client_key = KeyPair::generate().unwrap();
    let client_cert = CertificateParams::new(Vec::<String>::new())
        .unwrap()
        .signed_by(&client_key, &clients, &clients_key)
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(clients.der().clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let tls = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_client_cert_verifier(verifier)
            .with_single_cert(
                vec![leaf.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
            )
            .unwrap(),
    );
    let server = Server::start_tls(tls, |ws, _| subscribed_then_fill(ws, 7));
    let url = server.url.clone();
    let builder = || {
        core_http::HttpClient::builder()
            .base_url("https://127.0.0.1")
            .root_certificates_pem(ca.pem().as_bytes())
            .unwrap()
    };
    let client = builder()
        .client_certificate_pem(
            client_cert.pem().as_bytes(),
            client_key.serialize_pem().as_bytes(),
        )
        .unwrap()
        .build()
        .unwrap();
    let config = core_streams::stream_config(&client, &url)
        .unwrap()
        .tick(Duration::from_millis(20));
    let mut stream = Stream::connect(config, subscribed(&["fills"])).unwrap();
    assert_eq!(next(&mut stream), StreamItem::Event(Event::Fill(7)));
    stream.close();

    // Without the certificate the gateway ends the handshake: no event ever comes.
    let without = builder().build().unwrap();
    let config = core_streams::stream_config(&without, &url)
        .unwrap()
        .tick(Duration::from_millis(20))
        .reconnect({
            let mut p = core_streams::ReconnectPolicy::default();
            p.max_attempts = Some(1);
            p
        });
    match Stream::connect(config, subscribed(&["fills"])) {
        Err(_) => {}
        Ok(mut stream) => {
            let item = stream.next_timeout(Duration::from_secs(5));
            assert!(!matches!(item, Some(Ok(StreamItem::Event(_)))), "{item:?}");
        }
    }
}

/// A server that records each upgrade's `authorization` and keeps the stream open until
/// the client leaves.
#[allow(clippy::result_large_err)] // tungstenite's callback type
fn recording_upgrades() -> (Server, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let server = Server::start_raw(move |stream, _, _| {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let log = log.clone();
        let callback =
            move |req: &tungstenite::handshake::server::Request,
                  resp: tungstenite::handshake::server::Response| {
                let value = req
                    .headers()
                    .get("authorization")
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                    .unwrap_or_default();
                log.lock().unwrap().push(value);
                Ok(resp)
            };
        let Ok(mut ws) = tungstenite::accept_hdr(stream, callback) else {
            return;
        };
        while ws.read().is_ok() {}
    });
    (server, seen)
}

#[test]
fn a_streams_key_and_token_are_the_bytes_given_or_fetched_after_a_refresh_too() {
    use testkit::hostile::{Act, Hostile};
    let (server, seen) = recording_upgrades();
    let key = "sk_live_stream_0123456789";
    let client = core_http::HttpClient::builder()
        .base_url("http://127.0.0.1:9")
        .api_key(key)
        .build()
        .unwrap();
    let stream = Stream::connect(
        core_streams::stream_config(&client, &server.url).unwrap(),
        subscribed(&[]),
    );
    drop(stream.unwrap());
    // OAuth: a call's 401 refreshes the token to the same string; the stream's upgrade
    // carries that string, as the calls before and after it do.
    let token = "tok_stream_SAME_0123456789";
    let body = format!(r#"{{"access_token":"{token}","expires_in":3600}}"#);
    let tokens = Hostile::scripted(vec![Act::json(200, &body)]);
    let api = Hostile::scripted(vec![
        Act::json(200, "{}"),
        Act::json(401, r#"{"error":"expired"}"#),
        Act::json(200, "{}"),
    ]);
    let oauth = core_http::HttpClient::builder()
        .base_url(api.url())
        .auth(core_http::config::Auth::oauth2(
            core_http::config::OAuth2Config::new(
                format!("{}/token", tokens.url()),
                "id",
                "cs_0123456789",
            ),
        ))
        .build()
        .unwrap();
    oauth.get("/v1/x").send().unwrap();
    oauth.get("/v1/x").send().unwrap();
    let stream = Stream::connect(
        core_streams::stream_config(&oauth, &server.url).unwrap(),
        subscribed(&[]),
    );
    drop(stream.unwrap());
    oauth.get("/v1/x").send().unwrap();
    assert_eq!(tokens.seen().len(), 2, "fetched, then refreshed once");
    assert_eq!(
        *seen.lock().unwrap(),
        [format!("Bearer {key}"), format!("Bearer {token}")]
    );
    for request in api.requests() {
        assert!(
            request.contains(&format!("authorization: Bearer {token}\r\n")),
            "{request}"
        );
    }
}
