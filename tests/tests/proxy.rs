//! Through a company's proxy: REST calls and streams both reach the sandbox through an
//! HTTP CONNECT proxy over a socket (`testkit::connect_proxy`); NO_PROXY hosts go
//! directly; the proxy's credentials go only to it and show nowhere; a proxy that
//! refuses is a clear error within the call's time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use core_http::ws::WsError;
use testkit::connect_proxy::ConnectProxy;
use worlds_client::{Client, Event};

fn sandbox_host(sandbox: &sandbox::Sandbox) -> String {
    let url = sandbox.worlds().url();
    let rest = url.trim_start_matches("http://");
    rest.split('/').next().unwrap().to_owned()
}

fn through(sandbox: &sandbox::Sandbox, proxy: &str, bypass: &[&str]) -> Client {
    Client::builder()
        .base_url(sandbox.worlds().url())
        .api_key(sandbox.api_key())
        .proxy(proxy, bypass)
        .build()
        .unwrap()
}

#[test]
fn calls_and_streams_both_go_through_the_proxy() {
    let sandbox = e2e::sandbox().unwrap();
    let proxy = ConnectProxy::start(None);
    let client = through(&sandbox, proxy.url(), &[]);
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    assert!(!client.worlds().users(plaza.as_str()).unwrap().is_empty());
    let mut realtime = client.realtime().unwrap();
    realtime.join(plaza.as_str()).unwrap();
    assert!(matches!(
        realtime.next_timeout(Duration::from_secs(10)),
        Some(Ok(Event::Joined { .. }))
    ));
    let asked = proxy.asked();
    let host = sandbox_host(&sandbox);
    // One tunnel for the REST calls (kept alive), one for the stream, both to the
    // sandbox's host and port.
    assert!(asked.len() >= 2, "{asked:?}");
    assert!(asked.iter().all(|a| a.target == host), "{asked:?}");
    assert!(asked.iter().all(|a| a.authorization.is_none()));
}

#[test]
fn no_proxy_hosts_are_reached_directly() {
    let sandbox = e2e::sandbox().unwrap();
    let proxy = ConnectProxy::start(None);
    let client = through(&sandbox, proxy.url(), &["example.com", "127.0.0.1"]);
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    client.worlds().users(plaza.as_str()).unwrap();
    let mut realtime = client.realtime().unwrap();
    realtime.join(plaza.as_str()).unwrap();
    assert!(proxy.asked().is_empty(), "{:?}", proxy.asked());
    // And a client told to use no proxy at all uses none.
    let direct = Client::builder()
        .base_url(sandbox.worlds().url())
        .api_key(sandbox.api_key())
        .no_proxy()
        .build()
        .unwrap();
    direct.worlds().users(plaza.as_str()).unwrap();
    assert!(proxy.asked().is_empty());
}

#[test]
fn proxy_credentials_go_only_to_the_proxy_and_show_nowhere() {
    let sandbox = e2e::sandbox().unwrap();
    // "corp:s3cret-proxy-pw" in base64.
    let proxy = ConnectProxy::start(Some("Y29ycDpzM2NyZXQtcHJveHktcHc="));
    let client = through(&sandbox, &proxy.url_with("corp", "s3cret-proxy-pw"), &[]);
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    client.worlds().users(plaza.as_str()).unwrap();
    let mut realtime = client.realtime().unwrap();
    realtime.join(plaza.as_str()).unwrap();
    let asked = proxy.asked();
    assert!(asked.len() >= 2);
    assert!(
        asked
            .iter()
            .all(|a| a.authorization.as_deref() == Some("Basic Y29ycDpzM2NyZXQtcHJveHktcHc="))
    );
    for shown in [format!("{client:?}"), format!("{realtime:?}")] {
        assert!(!shown.contains("s3cret-proxy-pw"), "{shown}");
        assert!(!shown.contains("Y29ycDpzM2NyZXQtcHJveHktcHc"), "{shown}");
    }
}

#[test]
fn a_proxy_that_refuses_is_a_clear_error_in_time_that_shows_no_secret() {
    let sandbox = e2e::sandbox().unwrap();
    let proxy = ConnectProxy::start(Some("Y29ycDpzM2NyZXQtcHJveHktcHc="));
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    for url in [proxy.url().to_owned(), proxy.url_with("corp", "wrong-pw-9")] {
        let client = through(&sandbox, &url, &[]);
        let started = Instant::now();
        let err = client.worlds().users(plaza.as_str()).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        let text = format!("{err} {err:?}");
        // Never sent (the tunnel never opened), and not retried: a 407 will not heal.
        assert!(!err.may_have_been_processed(), "{text}");
        assert!(
            text.contains("407") || text.to_lowercase().contains("proxy"),
            "{text}"
        );
        assert!(!text.contains("wrong-pw-9"), "{text}");
        let started = Instant::now();
        let err = client.realtime().unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        match &err {
            core_http::Error::WebSocket(WsError::ProxyRefused {
                status: Some(407),
                message,
            }) => assert!(!message.contains("wrong-pw-9"), "{message}"),
            other => panic!("{other:?}"),
        }
    }
    // A proxy that closes the connection without answering: a clear error, in time.
    let closing = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closing_url = format!("http://{}", closing.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in closing.incoming() {
            drop(conn);
        }
    });
    let client = Client::builder()
        .base_url(sandbox.worlds().url())
        .api_key(sandbox.api_key())
        .proxy(closing_url.as_str(), &[])
        .max_retries(0)
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.worlds().users(plaza.as_str()).unwrap_err();
    // The proxy's name is in the error; whether the request left is not known to the
    // client here (a broken pipe), so it says it may have been processed.
    assert!(err.to_string().contains("proxy"), "{err}");
    match client.realtime().unwrap_err() {
        core_http::Error::WebSocket(WsError::ProxyRefused {
            status: None,
            message,
        }) => {
            assert!(message.contains("closed"), "{message}");
        }
        core_http::Error::WebSocket(WsError::Connect(message)) => {
            assert!(message.contains("proxy"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));

    // A proxy that is not there: an error naming it, within the connect timeout.
    let client = Client::builder()
        .base_url(sandbox.worlds().url())
        .api_key(sandbox.api_key())
        .proxy("http://127.0.0.1:9", &[])
        .connect_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let started = Instant::now();
    assert!(client.realtime().is_err());
    assert!(client.worlds().users(plaza.as_str()).is_err());
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// The environment's proxy, for calls and streams: run in a child process (the
/// variables are the process's), this test binary again with the helper below.
#[test]
fn https_proxy_and_no_proxy_from_the_environment_are_honoured() {
    let sandbox = e2e::sandbox().unwrap();
    let proxy = ConnectProxy::start(None);
    let run = |no_proxy: &str| {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "env_proxy_in_a_child",
                "--ignored",
                "--nocapture",
            ])
            .env("HTTPS_PROXY", proxy.url())
            .env("NO_PROXY", no_proxy)
            .env("E2E_WORLDS_URL", sandbox.worlds().url())
            .env("E2E_WORLDS_KEY", sandbox.api_key())
            .env(
                "E2E_WORLDS_PLAZA",
                sandbox.worlds().plaza(sandbox.api_key()),
            )
            .status()
            .unwrap()
    };
    // NO_PROXY names the sandbox's host: nothing goes through the proxy.
    assert!(run("example.com, 127.0.0.1").success());
    assert!(proxy.asked().is_empty(), "{:?}", proxy.asked());
    // Otherwise a call and a stream both do.
    assert!(run("example.com").success());
    let asked = proxy.asked();
    assert!(asked.len() >= 2, "{asked:?}");
    assert!(asked.iter().all(|a| a.target == sandbox_host(&sandbox)));
}

/// The child of the test above (ignored on its own): a client built with no proxy
/// setting makes a call and opens a stream.
#[test]
#[ignore = "run by https_proxy_and_no_proxy_from_the_environment_are_honoured"]
fn env_proxy_in_a_child() {
    let var = |k: &str| std::env::var(k).expect("run by its parent test");
    let client = Client::new(var("E2E_WORLDS_URL"), var("E2E_WORLDS_KEY")).unwrap();
    let plaza = var("E2E_WORLDS_PLAZA");
    client.worlds().users(plaza.as_str()).unwrap();
    let mut realtime = client.realtime().unwrap();
    realtime.join(plaza.as_str()).unwrap();
}
