//! Webhooks received by a sync script: the sandbox delivers to a `webhooks::listen`
//! listener (social and e-signature), which hands over each authentic delivery once,
//! typed; a bad signature, a replayed delivery, a body over the limit and requests that
//! are not deliveries are answered and never handed over.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use sandbox::{DeliveryStatus, Sandbox};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OTHER_SECRET: &str = "whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=";

/// Sends one raw request; the answer's status.
fn post(addr: SocketAddr, headers: &[(String, String)], body: &[u8]) -> u16 {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut request = format!(
        "POST /hooks HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let _ = stream.write_all(request.as_bytes());
    let _ = stream.write_all(body);
    status_of(&mut stream)
}

fn status_of(stream: &mut TcpStream) -> u16 {
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    text.split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Waits until the sandbox made at least one attempt of every delivery to `receiver`.
fn attempted(sandbox: &Sandbox, receiver: &str) -> Vec<sandbox::Delivery> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mine: Vec<_> = sandbox
            .deliveries()
            .into_iter()
            .filter(|d| d.receiver_id == receiver)
            .collect();
        if (!mine.is_empty() && mine.iter().all(|d| d.attempts > 0)) || Instant::now() > deadline {
            return mine;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn social_events_delivered_by_the_sandbox_are_handed_over_once_and_typed() {
    use social_client::posts::{NewPost, Platform};
    use social_client::webhooks::{self, Event};
    let sandbox = e2e::sandbox().unwrap();
    let mut listener = webhooks::listen("127.0.0.1:0", SECRET).unwrap();
    let url = format!("http://{}/hooks", listener.local_addr());
    let good = sandbox.add_webhook_with(&url, SECRET, &["post.published"]);
    // A second endpoint the sandbox signs with another secret: every one of its
    // deliveries fails verification here.
    let forged = sandbox.add_webhook_with(&url, OTHER_SECRET, &["post.published"]);
    let client = social_client::Client::new(sandbox.social().url(), sandbox.api_key()).unwrap();
    let posts = client
        .posts()
        .create(&NewPost::new("Live now", [Platform::Mastodon]))
        .unwrap();
    let event = listener
        .next_timeout(Duration::from_secs(20))
        .expect("the sandbox's delivery arrives")
        .unwrap();
    match event {
        Event::PostPublished(post) => assert_eq!(post.id, posts[0].id),
        other => panic!("{other:?}"),
    }
    let delivered = attempted(&sandbox, &good.id);
    assert_eq!(delivered[0].status, DeliveryStatus::Delivered);
    let refused = attempted(&sandbox, &forged.id);
    assert_eq!(refused[0].last_status, Some(401), "{refused:?}");
    // Nothing else was handed over: not the forged delivery, nor its retries.
    assert!(listener.next_timeout(Duration::from_millis(300)).is_none());
}

#[test]
fn a_replayed_delivery_is_answered_but_handed_over_once() {
    use social_client::webhooks::{self, Event};
    let mut listener = webhooks::listen("127.0.0.1:0", SECRET).unwrap();
    let body = br#"{"type":"post.published","timestamp":"2026-03-02T09:00:00Z","data":{"id":"post_1","content":"hi","status":"published"}}"#;
    let headers = core_webhooks::signed_headers(SECRET, "msg_replayed", body).unwrap();
    assert_eq!(post(listener.local_addr(), &headers, body), 200);
    assert_eq!(
        post(listener.local_addr(), &headers, body),
        200,
        "a redelivery is acknowledged"
    );
    let first = listener
        .next_timeout(Duration::from_secs(5))
        .unwrap()
        .unwrap();
    assert!(matches!(first, Event::PostPublished(ref p) if p.id.as_str() == "post_1"));
    assert!(
        listener.next_timeout(Duration::from_millis(300)).is_none(),
        "the replay is not handed over again"
    );
    // Another id with the same body is another delivery.
    let again = core_webhooks::signed_headers(SECRET, "msg_other", body).unwrap();
    assert_eq!(post(listener.local_addr(), &again, body), 200);
    assert!(listener.next_timeout(Duration::from_secs(5)).is_some());
}

#[test]
fn what_is_not_an_authentic_delivery_is_refused_and_never_handed_over() {
    use social_client::webhooks;
    let mut listener = webhooks::listen("127.0.0.1:0", SECRET).unwrap();
    let addr = listener.local_addr();
    let body = br#"{"type":"post.published","data":{"id":"post_2"}}"#;
    // Signed with another secret.
    let forged = core_webhooks::signed_headers(OTHER_SECRET, "msg_1", body).unwrap();
    assert_eq!(post(addr, &forged, body), 401);
    // Signed, then altered.
    let signed = core_webhooks::signed_headers(SECRET, "msg_2", body).unwrap();
    assert_eq!(
        post(
            addr,
            &signed,
            br#"{"type":"post.published","data":{"id":"post_3"}}"#
        ),
        401
    );
    // No signature headers.
    assert_eq!(post(addr, &[], body), 400);
    // A body over the limit (1 MiB), refused unread.
    let big = vec![b' '; 2 * 1024 * 1024];
    let signed_big = core_webhooks::signed_headers(SECRET, "msg_3", &big).unwrap();
    assert_eq!(post(addr, &signed_big, &big), 413);
    // Not a POST.
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /hooks HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    assert_eq!(status_of(&mut stream), 405);
    // A request that never arrives whole is given up on, and the listener goes on.
    let mut slow = TcpStream::connect(addr).unwrap();
    slow.write_all(b"POST /hooks HTTP/1.1\r\ncontent-length: 10\r\n\r\nab")
        .unwrap();
    assert!(listener.next_timeout(Duration::from_millis(300)).is_none());
    let good = core_webhooks::signed_headers(SECRET, "msg_4", body).unwrap();
    assert_eq!(post(addr, &good, body), 200);
    assert!(listener.next_timeout(Duration::from_secs(10)).is_some());
    drop(slow);
    // The secret shows nowhere.
    assert!(!format!("{listener:?}").contains("MfKQ9r8G"));
}

#[test]
fn esign_events_delivered_by_the_sandbox_reach_the_listener() {
    use esign_client::documents::{DocumentSource, NewSigner, SendDocument};
    use esign_client::webhooks::{self, Event};
    let sandbox = e2e::sandbox().unwrap();
    let mut listener = webhooks::listen("127.0.0.1:0", SECRET).unwrap();
    sandbox.add_webhook_with(
        &format!("http://{}/", listener.local_addr()),
        SECRET,
        &["document.completed"],
    );
    let client = esign_client::Client::new(sandbox.esign().url(), sandbox.api_key()).unwrap();
    let document = client
        .documents()
        .send(
            &SendDocument::new(DocumentSource::bytes(
                "c.pdf",
                b"%PDF-1.4\n%%EOF\n".to_vec(),
            ))
            .signer(NewSigner::new("Ada Lovelace", "ada@example.com")),
        )
        .unwrap();
    sandbox.esign().sign(document.id.as_str(), None).unwrap();
    match listener
        .next_timeout(Duration::from_secs(20))
        .unwrap()
        .unwrap()
    {
        Event::Completed(done) => assert_eq!(done.id, document.id),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unusable_secret_is_refused_when_binding() {
    let err = social_client::webhooks::listen("127.0.0.1:0", "not base64 !").unwrap_err();
    assert_eq!(err.kind(), core_http::ErrorKind::Config, "{err}");
}

#[test]
fn when_the_caller_stops_reading_deliveries_are_refused_503_never_accepted_and_lost() {
    let mut listener = social_client::webhooks::listen("127.0.0.1:0", SECRET).unwrap();
    let addr = listener.local_addr();
    let body = br#"{"type":"post.published","data":{"id":"post_q"}}"#;
    for n in 0..core_webhooks::QUEUE {
        let headers = core_webhooks::signed_headers(SECRET, &format!("msg_q{n}"), body).unwrap();
        assert_eq!(post(addr, &headers, body), 200, "delivery {n} is queued");
    }
    let over = core_webhooks::signed_headers(SECRET, "msg_over", body).unwrap();
    assert_eq!(
        post(addr, &over, body),
        503,
        "the queue is full: come back later"
    );
    // Each queued delivery is handed over; the refused one was not kept, so when the
    // service delivers it again it is taken, once.
    for _ in 0..core_webhooks::QUEUE {
        assert!(listener.next_timeout(Duration::from_secs(5)).is_some());
    }
    assert_eq!(post(addr, &over, body), 200);
    assert!(listener.next_timeout(Duration::from_secs(5)).is_some());
    assert!(listener.next_timeout(Duration::from_millis(200)).is_none());
}

#[test]
fn a_head_of_hundreds_of_headers_is_taken_and_a_request_cut_short_is_told_400() {
    use social_client::webhooks;
    let mut listener = webhooks::listen("127.0.0.1:0", SECRET).unwrap();
    let addr = listener.local_addr();
    let body = br#"{"type":"post.published","data":{"id":"post_9"}}"#;
    // 500 headers a proxy might add, 13 KB of head under the documented 16 KiB.
    let mut headers = core_webhooks::signed_headers(SECRET, "msg_many", body).unwrap();
    headers.extend((0..500).map(|i| (format!("x-forwarded-{i:03}"), "0123456789".into())));
    assert_eq!(post(addr, &headers, body), 200);
    assert!(listener.next_timeout(Duration::from_secs(10)).is_some());
    // More than the documented 1,024 headers: 431.
    let mut headers = core_webhooks::signed_headers(SECRET, "msg_more", body).unwrap();
    headers.extend((0..1_100).map(|i| (format!("h{i}"), "1".into())));
    assert_eq!(post(addr, &headers, body), 431);
    // A sender that half-closes before its Content-Length has come is told 400.
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"POST /hooks HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nonly part")
        .unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let started = Instant::now();
    assert_eq!(status_of(&mut stream), 400);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(listener.next_timeout(Duration::from_millis(100)).is_none());
}
