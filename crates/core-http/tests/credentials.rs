//! A credential reaches the socket exactly as the user or the token endpoint gave it, or
//! not at all: for every way a client holds one (an API key, a custom key header, an
//! OAuth token fetched, refreshed to the same string or a new one, by clones at once, a
//! proxy's credentials), the bytes the server read are asserted; and a credential that
//! cannot be a header's value is refused before anything is sent, naming where it came
//! from and never its value.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use common::hostile::{Act, Hostile, raw};
use core_http::config::{Auth, OAuth2Config, Secret};
use core_http::{ErrorKind, HttpClient};
use serde_json::json;

/// The value of `name` in each request the server read, in order.
fn header_values(server: &Hostile, name: &str) -> Vec<String> {
    server
        .seen()
        .iter()
        .map(|s| {
            s.head
                .lines()
                .find_map(|l| {
                    let (n, v) = l.split_once(':')?;
                    n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
                })
                .unwrap_or_default()
        })
        .collect()
}

fn token_answer(token: &str) -> Act {
    Act::json(
        200,
        &json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600}).to_string(),
    )
}

/// An answer that closes its connection: the next request needs a new one.
fn closing_ok() -> Act {
    Act::Send(raw(200, &[("connection", "close")], b"{}"))
}

#[test]
fn an_api_key_is_the_bytes_on_every_request_and_every_connection() {
    let key = "sk_live_0123456789abcdefXYZ";
    let api = Hostile::scripted(vec![Act::json(200, "{}"), closing_ok(), closing_ok()]);
    let client = HttpClient::builder()
        .base_url(api.url())
        .api_key(key)
        .build()
        .unwrap();
    for _ in 0..5 {
        client.get("/v1/x").send().unwrap();
    }
    assert!(api.connections() >= 3, "{}", api.connections());
    assert_eq!(
        header_values(&api, "authorization"),
        vec![format!("Bearer {key}"); 5]
    );
}

#[test]
fn a_custom_key_header_is_the_bytes_on_every_request() {
    let key = "key_0123456789_custom";
    let api = Hostile::scripted(vec![Act::json(200, "{}"), closing_ok()]);
    let client = HttpClient::builder()
        .base_url(api.url())
        .auth(Auth::header("x-api-key", key))
        .build()
        .unwrap();
    for _ in 0..4 {
        client.get("/v1/x").send().unwrap();
    }
    assert_eq!(header_values(&api, "x-api-key"), vec![key.to_owned(); 4]);
    assert_eq!(header_values(&api, "authorization"), vec![String::new(); 4]);
}

/// An API server that takes only the newest token the token server issued, and calls
/// every `expire_every`-th request's token expired (a 401), as a server whose tokens
/// run out does.
fn oauth_pair(tokens: Vec<&'static str>, expire_every: usize) -> (Hostile, Hostile) {
    let issued = Arc::new(AtomicUsize::new(0));
    let counted = issued.clone();
    let token_server = Hostile::start(move |r| {
        if r.method.is_empty() {
            return Act::json(200, "{}");
        }
        let n = counted.fetch_add(1, Ordering::SeqCst);
        token_answer(tokens[n.min(tokens.len() - 1)])
    });
    let served = Arc::new(AtomicUsize::new(0));
    let api = Hostile::start(move |r| {
        if r.method.is_empty() {
            return Act::json(200, "{}");
        }
        if served.fetch_add(1, Ordering::SeqCst) % expire_every == expire_every - 1 {
            return Act::json(401, r#"{"error":"invalid_token","message":"expired"}"#);
        }
        Act::json(200, "{}")
    });
    (token_server, api)
}

fn oauth_client(api: &Hostile, tokens: &Hostile) -> HttpClient {
    HttpClient::builder()
        .base_url(api.url())
        .auth(Auth::oauth2(OAuth2Config::new(
            format!("{}/oauth/token", tokens.url()),
            "client_id",
            "cs_0123456789_secret",
        )))
        .build()
        .unwrap()
}

#[test]
fn a_token_refreshed_to_the_same_string_is_that_string_on_every_request() {
    let token = "tok_SAME_0123456789abcdefghij";
    let (tokens, api) = oauth_pair(vec![token], 3);
    let client = oauth_client(&api, &tokens);
    for _ in 0..12 {
        client.get("/v1/x").send().unwrap();
    }
    assert!(
        tokens.seen().len() >= 4,
        "refreshed: {}",
        tokens.seen().len()
    );
    let sent = header_values(&api, "authorization");
    assert!(sent.len() >= 16, "{}", sent.len());
    for value in &sent {
        assert_eq!(value, &format!("Bearer {token}"));
    }
    // The token request carried the secret as given.
    for request in tokens.requests() {
        assert!(
            request.ends_with("client_secret=cs_0123456789_secret"),
            "{request}"
        );
    }
}

#[test]
fn new_tokens_are_each_sent_as_given_from_the_refresh_on() {
    let (tokens, api) = oauth_pair(
        vec![
            "tok_first_0123456789",
            "tok_second_0123456789",
            "tok_third_0123456789",
            "tok_fourth_0123456789",
        ],
        2,
    );
    let client = oauth_client(&api, &tokens);
    for _ in 0..3 {
        client.get("/v1/x").send().unwrap();
    }
    assert_eq!(
        header_values(&api, "authorization"),
        [
            "Bearer tok_first_0123456789",
            "Bearer tok_first_0123456789",
            "Bearer tok_second_0123456789",
            "Bearer tok_second_0123456789",
            "Bearer tok_third_0123456789",
        ]
    );
}

#[test]
fn clones_refreshing_at_once_send_only_tokens_the_endpoint_gave() {
    let given = [
        "tok_a_0123456789abcdef",
        "tok_b_0123456789abcdef",
        "tok_a_0123456789abcdef",
        "tok_c_0123456789abcdef",
    ];
    let (tokens, api) = oauth_pair(given.to_vec(), 4);
    let client = oauth_client(&api, &tokens);
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let client = client.clone();
            thread::spawn(move || {
                for _ in 0..8 {
                    let _ = client.get("/v1/x").send();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let sent = header_values(&api, "authorization");
    assert!(sent.len() >= 48, "{}", sent.len());
    for value in &sent {
        let token = value.strip_prefix("Bearer ").unwrap_or_default();
        assert!(given.contains(&token), "sent {value:?}, which no one gave");
    }
}

#[test]
fn an_escaped_token_is_sent_as_json_decodes_it() {
    let api = Hostile::scripted(vec![Act::json(200, "{}")]);
    let tokens = Hostile::scripted(vec![Act::json(
        200,
        r#"{"access_token":"abc\/def\u002Bghi_0123","expires_in":3600}"#,
    )]);
    let client = oauth_client(&api, &tokens);
    client.get("/v1/x").send().unwrap();
    client.get("/v1/x").send().unwrap();
    assert_eq!(
        header_values(&api, "authorization"),
        vec!["Bearer abc/def+ghi_0123"; 2]
    );
}

#[test]
fn a_token_that_would_inject_a_header_is_an_error_of_the_token_request() {
    for token in [
        "tok_0123456789\r\nX-Injected: yes",
        "tok_0123456789\nX-Injected: yes",
        "tok_0123456789\u{0}tail",
        "tok_0123456789\u{7f}",
        " tok_0123456789",
    ] {
        let api = Hostile::scripted(vec![Act::json(200, "{}")]);
        let body = json!({"access_token": token, "expires_in": 3600}).to_string();
        let tokens = Hostile::scripted(vec![Act::json(200, &body)]);
        let client = oauth_client(&api, &tokens);
        let err = client.get("/v1/x").send().unwrap_err();
        assert_eq!(api.seen().len(), 0, "{token:?}: nothing sent with it");
        let text = format!("{err} {err:?}");
        assert!(text.contains("access token that"), "{text}");
        assert!(!text.contains("tok_0123456789"), "{text}");
        assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
    }
}

#[test]
fn a_key_that_cannot_be_a_header_is_refused_at_build_naming_where_it_came_from() {
    let cases: [(&str, &str); 5] = [
        ("sk_live_0123456789\n", "ends with a line break"),
        (
            "sk_live_0123456789\r\nX-Injected: yes",
            "holds a line break",
        ),
        ("sk_live_01234\u{0}56789", "holds a NUL byte"),
        ("sk_live_01234\u{1b}56789", "holds a control character"),
        (" sk_live_0123456789", "starts with whitespace"),
    ];
    for (key, problem) in cases {
        let err = HttpClient::builder()
            .base_url("http://127.0.0.1:9")
            .api_key(key)
            .build()
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("the API key (given to Client::new"), "{text}");
        assert!(text.contains(problem), "{key:?}: {text}");
        assert!(!text.contains("sk_live"), "{text}");
        let err = HttpClient::builder()
            .base_url("http://127.0.0.1:9")
            .auth(Auth::header("x-api-key", key))
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("x-api-key header"), "{err}");
    }
}

#[test]
fn a_key_from_a_source_that_cannot_be_a_header_fails_the_call_before_sending() {
    let api = Hostile::scripted(vec![Act::json(200, "{}")]);
    let good = Arc::new(Mutex::new(true));
    let switch = good.clone();
    let client = HttpClient::builder()
        .base_url(api.url())
        .auth(Auth::bearer_from(move || {
            Secret::new(if *switch.lock().unwrap() {
                "sk_rotated_0123456789"
            } else {
                "sk_rotated_0123456789\r\nX-Injected: yes"
            })
        }))
        .build()
        .unwrap();
    client.get("/v1/x").send().unwrap();
    *good.lock().unwrap() = false;
    let err = client.get("/v1/x").send().unwrap_err();
    assert!(err.to_string().contains("Auth::bearer_from"), "{err}");
    assert!(!err.to_string().contains("sk_rotated"), "{err}");
    assert_eq!(
        header_values(&api, "authorization"),
        ["Bearer sk_rotated_0123456789"]
    );
}

#[test]
fn a_key_read_from_the_environment_loses_the_newline_a_file_gave_it() {
    let api = Hostile::scripted(vec![Act::json(200, "{}")]);
    let url = api.url().to_owned();
    let vars = move |name: &str| match name {
        "SVC_BASE_URL" => Some(url.clone()),
        "SVC_API_KEY" => Some("sk_env_0123456789\n".to_owned()),
        _ => None,
    };
    let client = core_http::ClientBuilder::<HttpClient>::from_env_with("SVC", vars)
        .unwrap()
        .build()
        .unwrap();
    client.get("/v1/x").send().unwrap();
    assert_eq!(
        header_values(&api, "authorization"),
        ["Bearer sk_env_0123456789"]
    );
    // One inside it is refused, naming the variable.
    let vars = |name: &str| match name {
        "SVC_BASE_URL" => Some("http://127.0.0.1:9".to_owned()),
        "SVC_API_KEY" => Some("sk_env_0123\n456789".to_owned()),
        _ => None,
    };
    let err = core_http::ClientBuilder::<HttpClient>::from_env_with("SVC", vars).unwrap_err();
    assert!(
        err.to_string().contains("SVC_API_KEY holds a line break"),
        "{err}"
    );
    assert!(!err.to_string().contains("sk_env"), "{err}");
}
