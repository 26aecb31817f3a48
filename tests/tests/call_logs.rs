//! No log target of any crate, at any level, carries a credential of a call: with a
//! logger that records everything at TRACE (`ureq_proto` dumps every byte of every
//! request and answer there), calls go out with an API key, a key in a custom header, a
//! rotating key and an OAuth client's secret and token, through a proxy with a password;
//! servers echo what they were sent. The server gets every credential; no log record
//! holds one, whole or in pieces. (Its own test binary: the logger is process-global.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use core_http::HttpClient;
use core_http::config::{Auth, OAuth2Config, Secret};

const KEY: &str = "sk_live_LOGGED_KEY_0123456789";
const HEADER_KEY: &str = "hk_live_HEADER_KEY_9876543210";
const ROTATING: &str = "rk_live_ROTATING_KEY_55555";
const CLIENT_SECRET: &str = "cs_live_CLIENT_SECRET_777";
const TOKEN: &str = "tok_live_ACCESS_TOKEN_424242";
const PROXY_PASSWORD: &str = "pw_live_PROXY_PASSWORD_31";

/// A server that echoes every request it reads (head and body) in its answer's body and
/// its `authorization` in a header, and answers a token request with [`TOKEN`]; the
/// requests as read.
fn echoing() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let log = log.clone();
            std::thread::spawn(move || serve(stream, &log));
        }
    });
    (url, seen)
}

fn serve(stream: TcpStream, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        let length = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
            })
            .unwrap_or(0);
        let mut body = vec![0; length];
        let _ = reader.read_exact(&mut body);
        let request = format!("{head}{}", String::from_utf8_lossy(&body));
        log.lock().unwrap().push(request.clone());
        let authorization = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .starts_with("authorization:")
                    .then(|| l[14..].trim().to_owned())
            })
            .unwrap_or_default();
        let answer = if head.starts_with("POST /oauth/token") {
            format!(r#"{{"access_token":"{TOKEN}","token_type":"Bearer","expires_in":3600}}"#)
        } else {
            serde_json::json!({ "echo": request }).to_string()
        };
        let bytes = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-echo: {authorization}\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if reader.get_mut().write_all(bytes.as_bytes()).is_err() {
            return;
        }
    }
}

/// Every piece of `secret` a log line could show: each run of 8 of its characters.
fn pieces(secret: &str) -> Vec<&str> {
    (0..=secret.len() - 8).map(|i| &secret[i..i + 8]).collect()
}

#[test]
fn no_log_of_any_target_carries_a_credential_of_a_call() {
    testkit::logs::install(testkit::logs::all_targets);
    let (url, seen) = echoing();

    let bearer = HttpClient::builder()
        .base_url(&url)
        .api_key(KEY)
        .build()
        .unwrap();
    let _: serde_json::Value = bearer.get("/v1/things").send_json().unwrap();
    let header = HttpClient::builder()
        .base_url(&url)
        .auth(Auth::header("x-api-key", HEADER_KEY))
        .header("x-extra-token", "xt_live_EXTRA_TOKEN_1111")
        .build()
        .unwrap();
    let _: serde_json::Value = header.get("/v1/things").send_json().unwrap();
    let rotating = HttpClient::builder()
        .base_url(&url)
        .auth(Auth::bearer_from(|| Secret::new(ROTATING)))
        .build()
        .unwrap();
    let _: serde_json::Value = rotating
        .post("/v1/things")
        .json(&serde_json::json!({"a": 1}))
        .send_json()
        .unwrap();
    let oauth = HttpClient::builder()
        .base_url(&url)
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{url}/oauth/token"),
            "client-id",
            CLIENT_SECRET,
        )))
        .build()
        .unwrap();
    let _: serde_json::Value = oauth.get("/v1/things").send_json().unwrap();
    let _: serde_json::Value = oauth.get("/v1/things").send_json().unwrap();

    // Through a proxy that wants a password.
    let basic = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(format!("proxy-user:{PROXY_PASSWORD}"))
    };
    let proxy = testkit::connect_proxy::ConnectProxy::start(Some(&basic));
    let tunnelled = HttpClient::builder()
        .base_url(&url)
        .api_key(KEY)
        .proxy(proxy.url_with("proxy-user", PROXY_PASSWORD), &[])
        .build()
        .unwrap();
    let _: serde_json::Value = tunnelled.get("/v1/through").send_json().unwrap();

    // The server got every credential, as it was.
    let requests = seen.lock().unwrap().join("\n");
    for sent in [
        format!("authorization: Bearer {KEY}"),
        format!("x-api-key: {HEADER_KEY}"),
        format!("authorization: Bearer {ROTATING}"),
        format!("client_secret={CLIENT_SECRET}"),
        format!("authorization: Bearer {TOKEN}"),
    ] {
        assert!(
            requests
                .to_ascii_lowercase()
                .contains(&sent.to_ascii_lowercase()),
            "the server got {sent}:\n{requests}"
        );
    }
    assert_eq!(
        requests.matches("POST /oauth/token").count(),
        1,
        "the token is cached"
    );
    assert!(
        proxy
            .asked()
            .iter()
            .all(|a| a.authorization.as_deref() == Some(&format!("Basic {basic}"))),
        "{:?}",
        proxy.asked()
    );

    // No log record holds one, whole or in any piece of eight characters.
    let logs = testkit::logs::lines();
    assert!(
        logs.iter().any(|l| l.contains("ureq_proto")),
        "ureq's byte dumps were recorded: {} lines",
        logs.len()
    );
    let all = logs.join("\n");
    for secret in [
        KEY,
        HEADER_KEY,
        ROTATING,
        CLIENT_SECRET,
        TOKEN,
        PROXY_PASSWORD,
        "xt_live_EXTRA_TOKEN_1111",
    ] {
        for piece in pieces(secret) {
            let found: Vec<&String> = logs.iter().filter(|l| l.contains(piece)).collect();
            assert!(
                found.is_empty(),
                "{piece} (of a credential) logged: {found:#?}"
            );
        }
    }
    assert!(!all.contains(&basic), "the proxy's credentials logged");
}
