//! Scripts wait for what they started: a document until signed, an order until filled
//! (by polling, and on a stream's events), a post until published; against the sandbox
//! on its own time (each pause of the wait advances the sandbox clock, so a day's wait
//! costs no real time), and against hostile servers: a wait never runs past its deadline
//! and honours `Retry-After`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use core_http::ErrorKind;
use core_http::wait::{Wait, WaitError};
use e2e::{SandboxSleeper, sandbox_time_builder};
use esign_client::documents::{DocumentSource, DocumentStatus, NewSigner, SendDocument};
use rust_decimal::Decimal;
use sandbox::{Sandbox, Service};

fn minutes(n: u64) -> Duration {
    Duration::from_secs(60 * n)
}

fn hours(n: u64) -> Duration {
    Duration::from_secs(3600 * n)
}

fn on_sandbox_time<C: core_http::service::ServiceClient>(
    sandbox: &Arc<Sandbox>,
    service: Service,
) -> (C, Arc<SandboxSleeper>) {
    let (builder, sleeper) = sandbox_time_builder::<C>(sandbox, service, sandbox.api_key());
    (builder.build().unwrap(), sleeper)
}

fn contract() -> SendDocument {
    SendDocument::new(DocumentSource::bytes(
        "contract.pdf",
        b"%PDF-1.4\n%%EOF\n".to_vec(),
    ))
    .signer(NewSigner::new("Ada Lovelace", "ada@example.com"))
}

// ---- e-signature ----

#[test]
fn a_document_is_waited_for_until_everyone_signed_then_downloaded() {
    let sandbox = Arc::new(e2e::sandbox().unwrap());
    let (client, sleeper) = on_sandbox_time::<esign_client::Client>(&sandbox, Service::Esign);
    let sent = client.documents().send(&contract()).unwrap();
    let started = sandbox.now();
    // The sandbox's signers sign 24 hours (sandbox time) after a document is sent.
    let wait = Wait::up_to(hours(48)).interval(minutes(30), hours(2));
    let document = client
        .documents()
        .wait_until_completed(&sent.id, wait)
        .unwrap();
    assert_eq!(document.status, DocumentStatus::Completed);
    let waited = sandbox.now() - started;
    assert!(
        waited >= time::Duration::hours(24) && waited <= time::Duration::hours(27),
        "the wait ended {waited} after it began: at the first reading after the signature"
    );
    let pauses = sleeper.slept();
    assert!(pauses.iter().all(|p| *p <= hours(2)), "{pauses:?}");
    assert!(
        pauses.windows(2).take(3).all(|w| w[1] >= w[0]),
        "pauses grow: {pauses:?}"
    );
    // The natural next line.
    let dir = tempfile::tempdir().unwrap();
    let download = client
        .documents()
        .download_to_path(&document.id, dir.path().join("signed.pdf"))
        .unwrap();
    assert!(download.bytes > 0);
}

#[test]
fn a_declined_document_ends_the_wait_at_once_with_the_document_as_read() {
    let sandbox = Arc::new(e2e::sandbox().unwrap());
    let (client, sleeper) = on_sandbox_time::<esign_client::Client>(&sandbox, Service::Esign);
    let sent = client.documents().send(&contract()).unwrap();
    sandbox.esign().decline(sent.id.as_str(), None).unwrap();
    let err = client
        .documents()
        .wait_until_completed(&sent.id, hours(48))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EndedOtherwise);
    assert!(
        matches!(&err, WaitError::Ended { state, .. } if state == "declined"),
        "{err}"
    );
    assert_eq!(
        err.last().map(|d| &d.status),
        Some(&DocumentStatus::Declined)
    );
    assert!(err.to_string().contains("declined"), "{err}");
    assert!(sleeper.slept().is_empty(), "one reading was enough");
    // As the crate's error, for `?` in a function returning it.
    let as_error: esign_client::Error = err.into();
    assert_eq!(as_error.kind(), ErrorKind::EndedOtherwise);
}

#[test]
fn a_wait_ends_by_its_deadline_with_the_last_reading() {
    let sandbox = Arc::new(e2e::sandbox().unwrap());
    let (client, _) = on_sandbox_time::<esign_client::Client>(&sandbox, Service::Esign);
    let sent = client.documents().send(&contract()).unwrap();
    let started = sandbox.now();
    let wait = Wait::up_to(hours(2)).interval(minutes(10), minutes(30));
    let err = client
        .documents()
        .wait_until_completed(&sent.id, wait)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    match &err {
        WaitError::TimedOut { state, waited, .. } => {
            assert_eq!(state.as_deref(), Some("sent"));
            assert!(*waited <= hours(2), "{waited:?}");
        }
        other => panic!("{other}"),
    }
    assert_eq!(err.last().map(|d| &d.status), Some(&DocumentStatus::Sent));
    assert!(sandbox.now() - started <= time::Duration::hours(2));
}

// ---- trading ----

#[test]
fn a_resting_order_is_waited_for_until_the_price_reaches_it() {
    use trading_client::orders::{OrderRequest, OrderStatus, Side, TimeInForce};
    let sandbox = Arc::new(e2e::sandbox().unwrap());
    let (client, sleeper) = on_sandbox_time::<trading_client::Client>(&sandbox, Service::Trading);
    let price = sandbox.trading().price("AAPL");
    let limit = (price * Decimal::new(95, 2)).round_dp(2);
    let order = client
        .orders()
        .place(
            &OrderRequest::limit("AAPL", Side::Buy, Decimal::from(2), limit)
                .time_in_force(TimeInForce::Gtc),
        )
        .unwrap();
    assert_eq!(order.status, OrderStatus::New);
    // The price falls through the limit; the order fills at the sandbox clock's next
    // move, which the wait's first pause makes.
    sandbox
        .trading()
        .set_price("AAPL", (limit * Decimal::new(99, 2)).round_dp(2));
    let wait = Wait::up_to(hours(1)).interval(minutes(1), minutes(10));
    let filled = client.orders().wait_until_filled(&order.id, wait).unwrap();
    assert_eq!(filled.status, OrderStatus::Filled);
    assert_eq!(filled.filled_qty, Some(Decimal::from(2)));
    assert_eq!(
        sleeper.slept().len(),
        1,
        "read, pause, read: {:?}",
        sleeper.slept()
    );
}

#[test]
fn a_canceled_order_ends_the_wait_and_an_open_one_times_out_with_its_state() {
    use trading_client::orders::{OrderRequest, OrderStatus, Side, TimeInForce};
    let sandbox = Arc::new(e2e::sandbox().unwrap());
    let (client, _) = on_sandbox_time::<trading_client::Client>(&sandbox, Service::Trading);
    let far_below = (sandbox.trading().price("AAPL") / Decimal::from(10)).round_dp(2);
    let limit = OrderRequest::limit("AAPL", Side::Buy, Decimal::from(1), far_below)
        .time_in_force(TimeInForce::Gtc);
    let open = client.orders().place(&limit).unwrap();
    let err = client
        .orders()
        .wait_until_filled(
            &open.id,
            Wait::up_to(minutes(30)).interval(minutes(5), minutes(10)),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert_eq!(err.last().map(|o| o.id.clone()), Some(open.id.clone()));
    client.orders().cancel(&open.id).unwrap();
    let err = client
        .orders()
        .wait_until_filled(&open.id, hours(1))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EndedOtherwise);
    assert_eq!(
        err.into_last().map(|o| o.status),
        Some(OrderStatus::Canceled)
    );
}

#[test]
fn a_wait_on_the_stream_uses_its_events_and_takes_none_from_the_caller() {
    use trading_client::orders::{OrderRequest, OrderStatus, Side, TimeInForce};
    use trading_client::stream::Event;
    let sandbox = Arc::new(e2e::sandbox().unwrap());
    let client = trading_client::Client::new(sandbox.trading().url(), sandbox.api_key()).unwrap();
    let mut stream = client.stream().unwrap();
    stream.subscribe_orders().unwrap();
    let limit = (sandbox.trading().price("AAPL") * Decimal::new(95, 2)).round_dp(2);
    let order = client
        .orders()
        .place(
            &OrderRequest::limit("AAPL", Side::Buy, Decimal::from(3), limit)
                .time_in_force(TimeInForce::Gtc),
        )
        .unwrap();
    sandbox
        .trading()
        .set_price("AAPL", (limit * Decimal::new(99, 2)).round_dp(2));
    // The fill comes on the stream while the wait watches it: a moment after the wait
    // began, the sandbox clock moves and the order fills.
    let mover = {
        let sandbox = sandbox.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            sandbox.advance(Duration::from_secs(60));
        })
    };
    let started = Instant::now();
    let filled = stream
        .wait_until_filled(&order.id, Duration::from_secs(20))
        .unwrap();
    mover.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(filled.status, OrderStatus::Filled);
    // Every event of the order is still the caller's: its fill and its changes, in order.
    let mut fills = 0;
    let mut filled_change = false;
    while let Some(event) = stream.next_timeout(Duration::from_millis(500)) {
        match event.unwrap() {
            Event::Fill(fill) if fill.order_id == order.id => fills += 1,
            Event::Order(o) if o.id == order.id && o.status == OrderStatus::Filled => {
                filled_change = true;
            }
            _ => {}
        }
        if fills > 0 && filled_change {
            break;
        }
    }
    assert_eq!(
        fills, 1,
        "the fill the wait saw pass is still delivered, once"
    );
    assert!(
        filled_change,
        "the order's change to filled is still delivered"
    );
}

// ---- social ----

#[test]
fn a_scheduled_post_is_waited_for_until_published() {
    use social_client::posts::{NewPost, Platform, PostStatus};
    let sandbox = Arc::new(e2e::sandbox().unwrap());
    let (client, _) = on_sandbox_time::<social_client::Client>(&sandbox, Service::Social);
    let at = sandbox.now() + time::Duration::minutes(45);
    let posts = client
        .posts()
        .create(&NewPost::new("Launch", [Platform::Mastodon]).scheduled_at(at))
        .unwrap();
    let wait = Wait::up_to(hours(3)).interval(minutes(5), minutes(20));
    let post = client
        .posts()
        .wait_until_published(&posts[0].id, wait)
        .unwrap();
    assert_eq!(post.status, PostStatus::Published);
    assert!(sandbox.now() >= at);
    assert!(sandbox.now() <= at + time::Duration::minutes(25));
}

// ---- hostile servers ----

/// A server that answers each request with the next of `answers` (the last one again
/// when they run out), or never answers when `answers` is empty; the requests' times.
fn scripted(answers: Vec<String>) -> (String, Arc<Mutex<Vec<Instant>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            let mut length = 0usize;
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            log.lock().unwrap().push(Instant::now());
            let mut stream: TcpStream = reader.into_inner();
            match answers.get(n).or(answers.last()) {
                Some(answer) => {
                    let _ = stream.write_all(answer.as_bytes());
                }
                None => held.push(stream),
            }
        }
    });
    (url, seen)
}

fn answer(status: &str, headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n{body}",
        body.len()
    )
}

const COMPLETED: &str = r#"{"id":"doc_1","status":"completed","signers":[]}"#;

/// Records the pauses asked for, without sleeping.
#[derive(Debug, Default)]
struct Pauses(Mutex<Vec<Duration>>);

impl core_http::config::Sleeper for Pauses {
    fn sleep(&self, duration: Duration) {
        self.0.lock().unwrap().push(duration);
    }
}

#[test]
fn a_wait_never_runs_past_its_deadline_against_a_server_that_never_answers() {
    let (url, seen) = scripted(Vec::new());
    let client = esign_client::Client::builder()
        .base_url(url)
        .api_key("sk_test_WAIT_SECRET")
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client
        .documents()
        .wait_until_completed("doc_1", Wait::up_to(Duration::from_secs(1)))
        .unwrap_err();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "a 1 s wait took {took:?}");
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(!seen.lock().unwrap().is_empty());
    assert!(!format!("{err} {err:?}").contains("WAIT_SECRET"));
}

#[test]
fn a_wait_honours_retry_after_and_never_pauses_past_its_deadline() {
    let limited = answer(
        "429 Too Many Requests",
        "retry-after: 7\r\n",
        r#"{"error":{"code":"rate_limited","message":"slow down"}}"#,
    );
    let (url, seen) = scripted(vec![limited.clone(), answer("200 OK", "", COMPLETED)]);
    let pauses = Arc::new(Pauses::default());
    let client = esign_client::Client::builder()
        .base_url(url)
        .api_key("sk_test")
        .max_retries(0)
        .sleeper(pauses.clone())
        .build()
        .unwrap();
    let document = client
        .documents()
        .wait_until_completed("doc_1", Wait::up_to(Duration::from_secs(60)))
        .unwrap();
    assert_eq!(document.status, DocumentStatus::Completed);
    assert_eq!(seen.lock().unwrap().len(), 2);
    let asked = pauses.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0] >= Duration::from_secs(7),
        "the pause honours Retry-After: {asked:?}"
    );

    // A Retry-After past the deadline: the wait ends now, without sleeping it out.
    let (url, seen) = scripted(vec![limited]);
    let pauses = Arc::new(Pauses::default());
    let client = esign_client::Client::builder()
        .base_url(url)
        .api_key("sk_test")
        .max_retries(0)
        .sleeper(pauses.clone())
        .build()
        .unwrap();
    let err = client
        .documents()
        .wait_until_completed("doc_1", Wait::up_to(Duration::from_secs(3)))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(pauses.0.lock().unwrap().is_empty());
}

#[test]
fn a_wait_ends_at_once_on_a_failure_waiting_cannot_mend() {
    let (url, seen) = scripted(vec![answer(
        "404 Not Found",
        "",
        r#"{"error":{"code":"not_found","message":"no such document"}}"#,
    )]);
    let client = esign_client::Client::builder()
        .base_url(url)
        .api_key("sk_test")
        .build()
        .unwrap();
    let err = client
        .documents()
        .wait_until_completed("doc_1", Wait::up_to(Duration::from_secs(60)))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(matches!(err, WaitError::Call(_)));
    assert_eq!(seen.lock().unwrap().len(), 1);
}
