//! What a newcomer's common mistakes are told, over real sockets: a server that is not
//! there, `https://` to a plain-HTTP server, a read that times out, a download into a
//! folder that does not exist, the environment half set; and what the sandbox program
//! refuses to pretend.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use core_http::{Delivery, ErrorKind};

/// A port on which nothing listens (bound, then closed).
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port
}

#[test]
fn a_server_that_is_not_there_is_named_with_its_port_and_the_attempts_made() {
    let port = closed_port();
    let client = social_client::Client::builder()
        .base_url(format!("http://127.0.0.1:{port}/social"))
        .api_key("sk_test_sandbox")
        .max_retries(2)
        .build()
        .unwrap();
    let err = client
        .posts()
        .list(&social_client::posts::ListPosts::new())
        .unwrap_err();
    let text = err.to_string();
    assert_eq!(err.kind(), ErrorKind::Connection, "{text}");
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
    assert!(text.contains("3 attempts over "), "{text}");
    assert!(!text.contains("may have processed"), "{text}");
}

#[test]
fn https_to_a_plain_http_server_says_to_use_http() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(3).flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 512];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        }
    });
    let client = projects_client::Client::builder()
        .base_url(format!("https://127.0.0.1:{port}/projects"))
        .api_key("sk_test_sandbox")
        .max_retries(0)
        .build()
        .unwrap();
    let err = client
        .projects()
        .list(&projects_client::projects::ListProjects::new())
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("the server answered in plain HTTP"), "{text}");
    assert!(text.contains("use http://"), "{text}");
}

#[test]
fn a_read_that_times_out_is_rounded_and_says_where_to_allow_longer() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            held.push(stream); // read nothing, answer nothing
        }
    });
    let client = vision_client::Client::builder()
        .base_url(format!("http://127.0.0.1:{port}/vision"))
        .api_key("sk_test_sandbox")
        .timeout(Duration::from_millis(600))
        .max_retries(0)
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.status().get().unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    let text = err.to_string();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{text}");
    assert!(text.contains("timed out after 6"), "rounded: {text}");
    assert!(
        !text.contains("ms)") && !text.contains("00000"),
        "rounded: {text}"
    );
    assert!(
        text.contains("timeout(..)") && text.contains("with_options"),
        "{text}"
    );
    assert!(text.contains("_TIMEOUT_SECS"), "{text}");
    // A read changes nothing: no word of "processed" or "carried out".
    assert!(
        !text.contains("processed") && !text.contains("carried out"),
        "{text}"
    );
    assert_eq!(
        seen.load(Ordering::SeqCst),
        1,
        "one attempt reached the server"
    );

    // An action without a key, timed out the same way, says it may have been done and
    // what to do before repeating it.
    let http = core_http::HttpClient::builder()
        .base_url(format!("http://127.0.0.1:{port}"))
        .api_key("sk_test_sandbox")
        .timeout(Duration::from_millis(600))
        .max_retries(0)
        .build()
        .unwrap();
    let err = http
        .post("/v1/things")
        .json(&serde_json::json!({"name": "once"}))
        .send()
        .unwrap_err();
    let text = err.to_string();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{text}");
    assert!(text.contains("it may have been carried out"), "{text}");
    assert!(
        text.contains("look at the service's state before repeating it"),
        "{text}"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 2);
}

#[test]
fn a_download_into_a_missing_folder_is_a_local_error_with_its_path_and_asks_nothing() {
    let sandbox = sandbox::Sandbox::start().unwrap();
    let client = esign_client::Client::new(sandbox.esign().url(), sandbox.api_key()).unwrap();
    let before = sandbox.events().len();
    let missing = std::env::temp_dir()
        .join(format!("no-such-folder-{}", std::process::id()))
        .join("signed.pdf");
    let err = client
        .documents()
        .download_to_path("doc_whatever", &missing)
        .unwrap_err();
    let text = err.to_string();
    assert_eq!(err.kind(), ErrorKind::File, "{text}");
    assert_eq!(err.delivery(), Delivery::NotSent, "{text}");
    assert!(text.contains("no-such-folder-"), "{text}");
    assert!(!text.contains("may have processed"), "{text}");
    assert_eq!(sandbox.events().len(), before);
}

#[test]
fn from_env_with_nothing_set_names_every_missing_variable_in_one_order() {
    let nothing = |_: &str| None;
    let texts = [
        social_client::Client::from_env_with(nothing)
            .unwrap_err()
            .to_string(),
        projects_client::Client::from_env_with(nothing)
            .unwrap_err()
            .to_string(),
        vision_client::Client::from_env_with(nothing)
            .unwrap_err()
            .to_string(),
        trading_client::Client::from_env_with(nothing)
            .unwrap_err()
            .to_string(),
        worlds_client::Client::from_env_with(nothing)
            .unwrap_err()
            .to_string(),
    ];
    for (text, prefix) in texts
        .iter()
        .zip(["SOCIAL", "PROJECTS", "VISION", "TRADING", "WORLDS"])
    {
        assert_eq!(
            text,
            &format!("configuration error: {prefix}_BASE_URL and {prefix}_API_KEY are not set")
        );
    }
    let esign = esign_client::Client::from_env_with(nothing)
        .unwrap_err()
        .to_string();
    assert!(
        esign.starts_with("configuration error: ESIGN_BASE_URL"),
        "{esign}"
    );
    let bad_url = trading_client::Client::from_env_with(|name| match name {
        "TRADING_BASE_URL" => Some("not a url".to_owned()),
        "TRADING_API_KEY" => Some("sk_test_sandbox".to_owned()),
        _ => None,
    })
    .unwrap_err()
    .to_string();
    assert_eq!(
        bad_url.matches("configuration error").count(),
        1,
        "{bad_url}"
    );
    assert!(
        bad_url.contains("TRADING_BASE_URL is not a valid URL"),
        "{bad_url}"
    );
}

#[test]
fn the_sandbox_refuses_what_the_service_would() {
    let sandbox = sandbox::Sandbox::start().unwrap();
    // "hello" is not a PDF.
    let esign = esign_client::Client::new(sandbox.esign().url(), sandbox.api_key()).unwrap();
    let before = sandbox.events().len();
    let err = esign
        .documents()
        .send(
            &esign_client::documents::SendDocument::new(
                esign_client::documents::DocumentSource::bytes("hello.pdf", b"hello".to_vec()),
            )
            .signer(esign_client::documents::NewSigner::new(
                "Ada",
                "ada@example.com",
            )),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BadRequest, "{err}");
    assert!(err.to_string().contains("not a PDF"), "{err}");
    assert_eq!(sandbox.events().len(), before, "no document was made");

    // A post longer than a platform takes is refused; the same text fits another.
    let social = social_client::Client::new(sandbox.social().url(), sandbox.api_key()).unwrap();
    let long = "a".repeat(281);
    let err = social
        .posts()
        .create(&social_client::posts::NewPost::new(
            long.clone(),
            [
                social_client::posts::Platform::X,
                social_client::posts::Platform::LinkedIn,
            ],
        ))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BadRequest, "{err}");
    assert!(err.to_string().contains("x takes at most 280"), "{err}");
    let posts = social
        .posts()
        .create(&social_client::posts::NewPost::new(
            long,
            [social_client::posts::Platform::LinkedIn],
        ))
        .unwrap();
    assert_eq!(posts.len(), 1);
}

#[test]
fn the_sandbox_lists_its_services_and_names_a_port_in_use() {
    let sandbox = sandbox::Sandbox::start().unwrap();
    let text = ureq::get(&format!("{}/", sandbox.url()))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let index: serde_json::Value = serde_json::from_str(&text).unwrap();
    let services = index["services"].as_array().unwrap();
    assert_eq!(services.len(), 6);
    let trading = services.iter().find(|s| s["name"] == "trading").unwrap();
    assert_eq!(trading["base_url"], format!("{}/trading", sandbox.url()));
    assert_eq!(trading["env"]["TRADING_API_KEY"], "sk_test_sandbox");
    assert!(
        trading["plans"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["plan"] == "free" && p["limit"] == "200/min"),
        "{trading}"
    );
    let banner = sandbox.banner();
    assert!(banner.contains(&format!(
        "export TRADING_BASE_URL={}/trading",
        sandbox.url()
    )));

    let port = sandbox.addr().port();
    let err = sandbox::Sandbox::builder().port(port).start().unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    assert!(
        err.to_string().contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
}

#[test]
fn a_market_order_waits_for_the_open_as_the_calendar_says() {
    use trading_client::Decimal;
    use trading_client::orders::{Amount, OrderRequest, OrderStatus, Side};
    // Saturday noon: closed until Monday 14:30 UTC.
    let sandbox = sandbox::Sandbox::builder()
        .frozen_at(time::macros::datetime!(2026-03-07 12:00 UTC))
        .start()
        .unwrap();
    let client = trading_client::Client::new(sandbox.trading().url(), sandbox.api_key()).unwrap();
    let clock = client.clock().get().unwrap();
    assert!(!clock.is_open);
    assert_eq!(
        clock.next_open,
        time::macros::datetime!(2026-03-09 14:30 UTC)
    );
    let order = client
        .orders()
        .place(&OrderRequest::market(
            "AAPL",
            Side::Buy,
            Amount::Qty(Decimal::ONE),
        ))
        .unwrap();
    assert_ne!(order.status, OrderStatus::Filled, "{order:?}");
    // Sunday evening: still closed, still waiting.
    sandbox.advance(Duration::from_secs(30 * 3600));
    let waiting = client.orders().get(&order.id).unwrap();
    assert_ne!(waiting.status, OrderStatus::Filled, "{waiting:?}");
    // Past Monday's open it fills.
    sandbox.advance(Duration::from_secs(21 * 3600));
    let filled = client.orders().get(&order.id).unwrap();
    assert_eq!(filled.status, OrderStatus::Filled, "{filled:?}");
    assert_eq!(filled.filled_qty, Some(Decimal::ONE));

    // An unknown symbol is refused, not quoted.
    let err = client.markets().quote("NOPE123").unwrap_err();
    assert!(
        err.to_string().contains("unknown symbol \"NOPE123\""),
        "{err}"
    );
    let err = client
        .orders()
        .place(&OrderRequest::market(
            "NOPE123",
            Side::Buy,
            Amount::Qty(Decimal::ONE),
        ))
        .unwrap_err();
    assert!(err.to_string().contains("unknown symbol"), "{err}");
}
