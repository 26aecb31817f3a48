//! Through a company's proxy: REST calls and streams both reach the sandbox through an
//! HTTP CONNECT proxy over a socket (`testkit::connect_proxy`); NO_PROXY hosts go
//! directly; the proxy's credentials go only to it and show nowhere; a proxy that
//! refuses is a clear error within the call's time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use core_streams::WsError;
use testkit::connect_proxy::ConnectProxy;
use worlds_client::{Client, stream::Event};

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
    let mut realtime = client.stream().unwrap();
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
    let mut realtime = client.stream().unwrap();
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
    let mut realtime = client.stream().unwrap();
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
        let err = client.stream().unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        match err.downcast_ref::<WsError>() {
            Some(WsError::ProxyRefused {
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
    let err = client.stream().unwrap_err();
    match err.downcast_ref::<WsError>() {
        Some(WsError::ProxyRefused {
            status: None,
            message,
        }) => {
            assert!(message.contains("closed"), "{message}");
        }
        Some(WsError::Connect(message)) => {
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
    assert!(client.stream().is_err());
    assert!(client.worlds().users(plaza.as_str()).is_err());
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// The environment's proxies, for calls and streams, as curl reads them: run in a child
/// process (the variables are the process's), this test binary again with the helper
/// below. The child reaches the sandbox as `sandbox.test`, a name only the proxy
/// resolves (as a company proxy resolves names a laptop cannot); plain `http`, so the
/// proxy for `http` URLs applies.
#[test]
fn the_environments_proxies_are_chosen_by_scheme_and_never_for_loopback() {
    let sandbox = e2e::sandbox().unwrap();
    let proxy = ConnectProxy::start(None);
    let port = sandbox_host(&sandbox)
        .rsplit_once(':')
        .unwrap()
        .1
        .to_owned();
    let aliased = format!("http://sandbox.test:{port}/worlds");
    let run = |vars: &[(&str, &str)], base: &str, expect: &str| {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                "env_proxy_in_a_child",
                "--ignored",
                "--nocapture",
            ])
            .env("E2E_WORLDS_URL", base)
            .env("E2E_WORLDS_KEY", sandbox.api_key())
            .env("E2E_EXPECT", expect)
            .env(
                "E2E_WORLDS_PLAZA",
                sandbox.worlds().plaza(sandbox.api_key()),
            );
        for var in [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
            "NO_PROXY",
            "no_proxy",
        ] {
            child.env_remove(var);
        }
        for (k, v) in vars {
            child.env(k, v);
        }
        assert!(
            child.status().unwrap().success(),
            "{vars:?} {base} {expect}"
        );
    };
    let url = proxy.url();
    // HTTP_PROXY serves an http URL: a call and a stream both go through it.
    run(&[("HTTP_PROXY", url)], &aliased, "reached");
    let asked = proxy.asked();
    assert!(asked.len() >= 2, "{asked:?}");
    assert!(
        asked
            .iter()
            .all(|a| a.target == format!("sandbox.test:{port}"))
    );
    // ALL_PROXY too.
    run(&[("ALL_PROXY", url)], &aliased, "reached");
    let before = proxy.asked().len();
    assert!(before > asked.len());
    // HTTPS_PROXY is for https URLs only: the http call goes directly (and cannot
    // resolve the name).
    run(&[("HTTPS_PROXY", url)], &aliased, "direct");
    // NO_PROXY wins over all.
    run(
        &[
            ("ALL_PROXY", url),
            ("NO_PROXY", "example.com, sandbox.test"),
        ],
        &aliased,
        "direct",
    );
    assert_eq!(proxy.asked().len(), before, "{:?}", proxy.asked());
    // Loopback never goes through the environment's proxy: the sandbox works in a
    // shell with a company proxy set.
    run(
        &[("ALL_PROXY", url), ("HTTP_PROXY", url)],
        &sandbox.worlds().url(),
        "reached",
    );
    assert_eq!(proxy.asked().len(), before, "{:?}", proxy.asked());
}

/// The child of the test above (ignored on its own): a client built with no proxy
/// setting makes a call and opens a stream (`E2E_EXPECT=reached`), or finds the name
/// unresolvable because it went directly (`direct`).
#[test]
#[ignore = "run by the_environments_proxies_are_chosen_by_scheme_and_never_for_loopback"]
fn env_proxy_in_a_child() {
    let var = |k: &str| std::env::var(k).expect("run by its parent test");
    let client = Client::builder()
        .base_url(var("E2E_WORLDS_URL"))
        .api_key(var("E2E_WORLDS_KEY"))
        .allow_insecure_http(true)
        .max_retries(0)
        .build()
        .unwrap();
    let plaza = var("E2E_WORLDS_PLAZA");
    if var("E2E_EXPECT") == "direct" {
        let err = client.worlds().users(plaza.as_str()).unwrap_err();
        assert_eq!(err.kind(), core_http::ErrorKind::Connection, "{err:?}");
        return;
    }
    client.worlds().users(plaza.as_str()).unwrap();
    let mut realtime = client.stream().unwrap();
    realtime.join(plaza.as_str()).unwrap();
}

/// A proxy on a raw socket that reads each `CONNECT` and answers as `script` says;
/// returns its URL and the count of `CONNECT`s it read.
fn scripted_proxy(
    script: fn(&mut std::net::TcpStream),
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match conn.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                if head.starts_with(b"CONNECT ") {
                    seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                script(&mut conn);
            });
        }
    });
    (url, count)
}

fn via(proxy: &str) -> projects_client::Client {
    projects_client::Client::builder()
        .base_url("https://api.projects.example")
        .api_key("sk_test_PROXY_CASES")
        .proxy(proxy, &[])
        .timeout(Duration::from_secs(2))
        .connect_timeout(Duration::from_secs(2))
        .build()
        .unwrap()
}

#[test]
fn a_proxy_that_trickles_its_answer_cannot_hold_a_call_past_its_timeout() {
    let (url, _) = scripted_proxy(|conn| {
        use std::io::Write;
        for b in b"HTTP/1.1 200 Connection established\r\n\r\n" {
            if conn.write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(400));
        }
    });
    let client = via(&url);
    let started = Instant::now();
    let err = client
        .projects()
        .list(&projects_client::projects::ListProjects::new())
        .unwrap_err();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}: {err:?}");
    assert_eq!(err.kind(), core_http::ErrorKind::Proxy, "{err:?}");
    assert!(err.to_string().contains("in time"), "{err}");
}

#[test]
fn a_proxys_refusal_is_never_retried_and_names_the_proxy_with_a_hint() {
    type Script = fn(&mut std::net::TcpStream);
    let cases: [(u16, Script, &str); 3] = [
        (
            407,
            |c| {
                use std::io::Write;
                let _ = c.write_all(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n",
                );
            },
            "credentials",
        ),
        (
            401,
            |c| {
                use std::io::Write;
                let _ = c.write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n");
            },
            "credentials",
        ),
        (
            403,
            |c| {
                use std::io::Write;
                let _ = c.write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
            },
            "NO_PROXY",
        ),
    ];
    for (status, script, hint) in cases {
        let (url, connects) = scripted_proxy(script);
        let proxy_address = url.trim_start_matches("http://").to_owned();
        let with_password = url.replacen("http://", "http://corp:pw-NEVER-SHOWN-1@", 1);
        let err = via(&with_password)
            .projects()
            .list(&projects_client::projects::ListProjects::new())
            .unwrap_err();
        assert_eq!(
            connects.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "{status}: asked once, never again"
        );
        assert_eq!(err.kind(), core_http::ErrorKind::Proxy, "{status}: {err:?}");
        match &err {
            core_http::Error::Proxy {
                proxy,
                status: got,
                message,
            } => {
                assert_eq!(proxy, &proxy_address);
                assert_eq!(*got, Some(status));
                assert!(message.contains(&proxy_address), "{message}");
                assert!(message.contains(hint), "{message}");
            }
            other => panic!("{status}: {other:?}"),
        }
        assert!(!err.may_have_been_processed(), "{err:?}");
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains("pw-NEVER-SHOWN-1"), "{shown}");
    }
}

#[test]
fn a_proxy_that_refuses_connections_is_named_not_the_service() {
    let refused = testkit::hostile::refused_url();
    let err = via(&refused)
        .projects()
        .list(&projects_client::projects::ListProjects::new())
        .unwrap_err();
    assert_eq!(err.kind(), core_http::ErrorKind::Proxy, "{err:?}");
    let shown = err.to_string();
    let address = refused.trim_start_matches("http://");
    assert!(
        shown.contains(&format!("the proxy {address}")),
        "the proxy is named: {shown}"
    );
}
