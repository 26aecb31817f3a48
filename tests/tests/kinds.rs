//! Every error has a kind, in all six crates: a refusal before sending, a connection
//! refused, a timeout, an answer that does not decode, a stream refused with 401 or
//! closed by the server, a webhook that fails verification. A caller can match on
//! `e.kind()` alone and miss none of them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use core_http::{Error, ErrorKind};
use testkit::hostile::{Act, Hostile, refused_url};
use testkit::hostile_ws::WsServer;

const KEY: &str = "sk_test_KINDS_SECRET_KEY";

fn check(what: &str, result: Result<impl std::fmt::Debug, Error>, kind: ErrorKind) {
    match result {
        Err(e) => {
            assert_eq!(e.kind(), kind, "{what}: {e:?}");
            assert!(!e.to_string().contains(KEY), "{what}: {e}");
        }
        Ok(v) => panic!("{what}: expected an error of kind {kind:?}, got {v:?}"),
    }
}

#[test]
fn refusals_before_sending_are_invalid_input_in_every_crate() {
    let url = "https://api.example.com";
    let social = social_client::Client::new(url, KEY).unwrap();
    check(
        "social: a post for no platform",
        social.posts().create(&social_client::posts::NewPost::new(
            "hi",
            Vec::<social_client::posts::Platform>::new(),
        )),
        ErrorKind::InvalidInput,
    );
    let esign = esign_client::Client::new(url, KEY).unwrap();
    check(
        "esign: a document with no signer",
        esign
            .documents()
            .send(&esign_client::documents::SendDocument::new(
                esign_client::documents::DocumentSource::bytes("a.pdf", b"%PDF-1.4".to_vec()),
            )),
        ErrorKind::InvalidInput,
    );
    let vision = vision_client::Client::new(url, KEY).unwrap();
    check(
        "vision: no image",
        vision
            .analyses()
            .detect(&vision_client::analyses::DetectRequest::new("")),
        ErrorKind::InvalidInput,
    );
    let projects = projects_client::Client::new(url, KEY).unwrap();
    check(
        "projects: a page of 500",
        projects
            .projects()
            .list(&projects_client::projects::ListProjects::new().limit(500)),
        ErrorKind::InvalidInput,
    );
    let trading = trading_client::Client::new(url, KEY).unwrap();
    check(
        "trading: zero shares",
        trading
            .orders()
            .place(&trading_client::orders::OrderRequest::market(
                "AAPL",
                trading_client::orders::Side::Buy,
                trading_client::orders::Amount::Qty(trading_client::Decimal::ZERO),
            )),
        ErrorKind::InvalidInput,
    );
    let worlds = worlds_client::Client::new(url, KEY).unwrap();
    check(
        "worlds: a world with no name",
        worlds
            .worlds()
            .create(&worlds_client::worlds::NewWorld::new("", "space")),
        ErrorKind::InvalidInput,
    );
    check(
        "a client without a base URL",
        projects_client::Client::builder().api_key(KEY).build(),
        ErrorKind::Config,
    );
}

#[test]
fn transport_failures_have_kinds() {
    let refused = refused_url();
    let client = projects_client::Client::builder()
        .base_url(&refused)
        .api_key(KEY)
        .max_retries(0)
        .build()
        .unwrap();
    check(
        "a refused connection",
        client
            .projects()
            .list(&projects_client::projects::ListProjects::new()),
        ErrorKind::Connection,
    );
    let stall = Hostile::scripted(vec![Act::stall(Duration::from_secs(5))]);
    let client = projects_client::Client::builder()
        .base_url(stall.url())
        .api_key(KEY)
        .max_retries(0)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    check(
        "a stalled answer",
        client
            .projects()
            .list(&projects_client::projects::ListProjects::new()),
        ErrorKind::Timeout,
    );
    let html = Hostile::scripted(vec![Act::answer(
        200,
        &[("content-type", "text/html")],
        "<html>maintenance</html>",
    )]);
    let client = vision_client::Client::new(html.url(), KEY).unwrap();
    check(
        "an HTML page for JSON",
        client
            .analyses()
            .detect(&vision_client::analyses::DetectRequest::new(
                "https://example.com/a.jpg",
            )),
        ErrorKind::Decode,
    );
}

fn refuses_with_401() -> WsServer {
    WsServer::start(|_, peer| {
        if peer.read_head().is_some() {
            peer.write(
                b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: 24\r\n\r\n{\"message\":\"bad key\"}   ",
            );
        }
    })
}

/// The stream's first error: from opening it, or its first item.
fn first_error<E: std::fmt::Debug>(
    opened: Result<impl Iterator<Item = Result<E, Error>>, Error>,
) -> Result<E, Error> {
    let mut stream = opened?;
    match stream.next() {
        Some(item) => item,
        None => panic!("the stream ended with no error"),
    }
}

#[test]
fn stream_errors_have_the_kind_of_what_happened() {
    let ws = refuses_with_401();
    let trading = trading_client::Client::new("http://127.0.0.1:9", KEY)
        .unwrap()
        .with_stream_url(ws.url());
    check(
        "trading: a 401 on the upgrade",
        first_error(trading.stream()),
        ErrorKind::Unauthorized,
    );
    let ws = refuses_with_401();
    let worlds = worlds_client::Client::new("http://127.0.0.1:9", KEY)
        .unwrap()
        .with_stream_url(ws.url());
    check(
        "worlds: a 401 on the upgrade",
        first_error(worlds.stream()),
        ErrorKind::Unauthorized,
    );
    // A policy close ends the stream: Closed.
    let ws = WsServer::start(|_, peer| {
        if peer.accept() {
            // Close 1008 (policy violation), reason "no".
            peer.write(&testkit::hostile_ws::frame(0x8, true, b"\x03\xf0no"));
            std::thread::sleep(Duration::from_millis(300));
        }
    });
    let worlds = worlds_client::Client::new("http://127.0.0.1:9", KEY)
        .unwrap()
        .with_stream_url(ws.url());
    let mut realtime = worlds.stream().unwrap();
    let err = loop {
        match realtime.next_timeout(Duration::from_secs(5)) {
            Some(Err(e)) => break e,
            Some(Ok(_)) => continue,
            None => panic!("no error after a policy close"),
        }
    };
    assert_eq!(err.kind(), ErrorKind::Closed, "{err:?}");
}

#[test]
fn webhook_failures_have_kinds() {
    let (secret, mut headers, body) = social_client::webhooks::example_delivery();
    for (name, value) in headers.iter_mut() {
        if name == "webhook-signature" {
            *value = "v1,AAAA".into();
        }
    }
    let err = social_client::webhooks::verify_and_parse(&secret, &headers, &body).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Webhook, "{err:?}");
    let (secret, headers, body) = esign_client::webhooks::example_delivery();
    let err = esign_client::webhooks::verify_and_parse("not base64!", &headers, &body).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config, "{err:?}");
    let _ = secret;
}
