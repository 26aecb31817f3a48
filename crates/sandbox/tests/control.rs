//! The sandbox's own HTTP surface, over a real socket: keys, control endpoints, faults,
//! reset, and shutdown on drop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::{Value, json};
use service_clients_sandbox::Sandbox;

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

fn call(
    method: &str,
    url: &str,
    key: Option<&str>,
    body: Option<Value>,
) -> (u16, Value, Vec<(String, String)>) {
    let agent = agent();
    let auth = key.map(|k| format!("Bearer {k}"));
    let result = match (method, body) {
        ("GET", _) => {
            let mut r = agent.get(url);
            if let Some(a) = &auth {
                r = r.header("authorization", a);
            }
            r.call()
        }
        ("DELETE", _) => {
            let mut r = agent.delete(url);
            if let Some(a) = &auth {
                r = r.header("authorization", a);
            }
            r.call()
        }
        (_, body) => {
            let mut r = agent.post(url).header("content-type", "application/json");
            if let Some(a) = &auth {
                r = r.header("authorization", a);
            }
            r.send(body.unwrap_or(json!({})).to_string().as_bytes())
        }
    };
    let response = result.unwrap();
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                v.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let text = response.into_body().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::Null),
        headers,
    )
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn keys_are_checked_and_answers_carry_request_ids() {
    let sandbox = Sandbox::start().unwrap();
    let url = format!("{}/v1/accounts", sandbox.social().url());
    let (status, body, headers) = call("GET", &url, None, None);
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "unauthorized");
    assert_eq!(header(&headers, "www-authenticate"), Some("Bearer"));
    assert!(
        header(&headers, "x-request-id")
            .unwrap()
            .starts_with("req_")
    );
    assert_eq!(call("GET", &url, Some("sk_live_nope"), None).0, 401);
    let (status, body, headers) = call("GET", &url, Some(sandbox.api_key()), None);
    assert_eq!(status, 200);
    assert_eq!(
        body["data"].as_array().unwrap().len(),
        service_clients_sandbox::PLATFORMS.len()
    );
    assert_eq!(header(&headers, "x-ratelimit-limit"), Some("10000"));
    let (status, body, _) = call(
        "GET",
        &format!("{}/nowhere", sandbox.url()),
        Some(sandbox.api_key()),
        None,
    );
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
}

#[test]
fn the_clock_advances_and_publishes_due_posts() {
    let start = time::macros::datetime!(2026-02-01 08:00 UTC);
    let sandbox = Sandbox::builder().frozen_at(start).start().unwrap();
    let control = format!("{}/_sandbox", sandbox.url());
    let (_, clock, _) = call("GET", &format!("{control}/clock"), None, None);
    assert_eq!(clock["now"], "2026-02-01T08:00:00Z");
    let posts = format!("{}/v1/posts", sandbox.social().url());
    let body =
        json!({"content": "at nine", "platforms": ["x"], "scheduled_at": "2026-02-01T09:00:00Z"});
    assert_eq!(
        call("POST", &posts, Some(sandbox.api_key()), Some(body)).0,
        201
    );
    let (status, now, _) = call(
        "POST",
        &format!("{control}/clock/advance"),
        None,
        Some(json!({"seconds": 3600})),
    );
    assert_eq!(
        (status, now["now"].as_str()),
        (200, Some("2026-02-01T09:00:00Z"))
    );
    let (_, list, _) = call("GET", &posts, Some(sandbox.api_key()), None);
    assert_eq!(list["data"][0]["status"], "published");
    let (_, events, _) = call("GET", &format!("{control}/events"), None, None);
    let types: Vec<&str> = events["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["post.scheduled", "post.published"]);
    let bad = call(
        "POST",
        &format!("{control}/clock/advance"),
        None,
        Some(json!({"seconds": -5})),
    );
    assert_eq!(bad.0, 400);
}

#[test]
fn faults_apply_to_the_next_matching_requests_only() {
    let sandbox = Sandbox::start().unwrap();
    let control = format!("{}/_sandbox", sandbox.url());
    let fault = json!({"method": "GET", "path": "/social/v1/schedule", "count": 2, "status": 503, "retry_after": 7});
    assert_eq!(
        call("POST", &format!("{control}/faults"), None, Some(fault)).0,
        201
    );
    let url = format!("{}/v1/schedule", sandbox.social().url());
    for _ in 0..2 {
        let (status, body, headers) = call("GET", &url, Some(sandbox.api_key()), None);
        assert_eq!((status, header(&headers, "retry-after")), (503, Some("7")));
        assert_eq!(body["error"]["code"], "injected_fault");
    }
    assert_eq!(call("GET", &url, Some(sandbox.api_key()), None).0, 200);
    // A dropped connection: the client sees no answer at all.
    let drop = json!({"path": "/social/v1/schedule", "action": "drop"});
    call("POST", &format!("{control}/faults"), None, Some(drop));
    assert!(
        agent()
            .get(&url)
            .header("authorization", "Bearer sk_test_sandbox")
            .call()
            .is_err()
    );
    let invalid = call(
        "POST",
        &format!("{control}/faults"),
        None,
        Some(json!({"path": "/x", "status": 42})),
    );
    assert_eq!(invalid.0, 400);
}

#[test]
fn webhook_receivers_are_registered_and_reset_forgets_everything() {
    let sandbox = Sandbox::start().unwrap();
    let control = format!("{}/_sandbox", sandbox.url());
    // Nobody listens on port 9: every attempt fails and the delivery ends up failed.
    let (status, receiver, _) = call(
        "POST",
        &format!("{control}/webhooks"),
        None,
        Some(json!({"url": "http://127.0.0.1:9/hook"})),
    );
    assert_eq!(status, 201);
    assert!(receiver["secret"].as_str().unwrap().starts_with("whsec_"));
    let posts = format!("{}/v1/posts", sandbox.social().url());
    call(
        "POST",
        &posts,
        Some(sandbox.api_key()),
        Some(json!({"content": "hi", "platforms": ["x"]})),
    );
    let (_, deliveries, _) = call("GET", &format!("{control}/webhooks/deliveries"), None, None);
    assert_eq!(deliveries["data"][0]["event_type"], "post.published");
    assert_eq!(
        call(
            "POST",
            &format!("{control}/webhooks"),
            None,
            Some(json!({"url": "ftp://x"}))
        )
        .0,
        400
    );

    assert_eq!(call("POST", &format!("{control}/reset"), None, None).0, 204);
    let (_, list, _) = call("GET", &posts, Some(sandbox.api_key()), None);
    assert_eq!(list["meta"]["total"], 0);
    let (_, receivers, _) = call("GET", &format!("{control}/webhooks"), None, None);
    assert_eq!(receivers["data"], json!([]));
}

#[test]
fn dropping_the_sandbox_stops_the_server() {
    let sandbox = Sandbox::start().unwrap();
    let addr = sandbox.addr();
    drop(sandbox);
    assert!(std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err());
}

#[test]
fn the_same_requests_give_the_same_ids() {
    let run = || {
        let sandbox = Sandbox::builder()
            .frozen_at(time::macros::datetime!(2026-01-01 00:00 UTC))
            .start()
            .unwrap();
        let posts = format!("{}/v1/posts", sandbox.social().url());
        call(
            "POST",
            &posts,
            Some(sandbox.api_key()),
            Some(json!({"content": "a", "platforms": ["x", "threads"]})),
        )
        .1
    };
    assert_eq!(run(), run());
}

#[test]
fn esign_control_endpoints_sign_decline_and_pad_documents() {
    let sandbox = Sandbox::start().unwrap();
    let key = Some(sandbox.api_key());
    let docs = format!("{}/documents", sandbox.esign().url());
    let control = |id: &str, action: &str| {
        format!("{}/_sandbox/esign/documents/{id}/{action}", sandbox.url())
    };
    let send = || {
        let (status, doc, _) = call(
            "POST",
            &docs,
            key,
            Some(json!({
                "file_url": "https://files.example.com/nda.pdf",
                "signers": [
                    {"name": "Ada", "email": "ada@example.com", "order": 1},
                    {"name": "Charles", "email": "charles@example.com", "order": 2},
                ],
            })),
        );
        assert_eq!(status, 201, "{doc}");
        doc["id"].as_str().unwrap().to_owned()
    };

    // Signing out of order is refused; in order, it completes the document.
    let id = send();
    let (status, body, _) = call(
        "POST",
        &control(&id, "sign"),
        None,
        Some(json!({"email": "charles@example.com"})),
    );
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("not_your_turn"))
    );
    let (status, body, _) = call("POST", &control(&id, "sign"), None, None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["signers"][0]["status"], "signed");
    let (status, body, _) = call("POST", &control(&id, "sign"), None, None);
    assert_eq!((status, body["status"].as_str()), (200, Some("completed")));
    let (status, body, _) = call("POST", &control(&id, "sign"), None, None);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("not_signable"))
    );

    // Padding makes the served PDF exactly that long.
    let (status, _, _) = call(
        "POST",
        &control(&id, "pdf_size"),
        None,
        Some(json!({"bytes": 100_000})),
    );
    assert_eq!(status, 204);
    let mut response = agent()
        .get(format!("{docs}/{id}/download"))
        .header("authorization", format!("Bearer {}", sandbox.api_key()))
        .call()
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let pdf = response
        .body_mut()
        .with_config()
        .limit(1 << 20)
        .read_to_vec()
        .unwrap();
    assert_eq!(pdf.len(), 100_000);
    assert!(pdf.starts_with(b"%PDF-"));

    // Declining ends a document; an unknown one is 404.
    let id = send();
    let (status, body, _) = call(
        "POST",
        &control(&id, "decline"),
        None,
        Some(json!({"email": "ada@example.com"})),
    );
    assert_eq!((status, body["status"].as_str()), (200, Some("declined")));
    assert_eq!(body["signers"][0]["status"], "declined");
    let (status, body, _) = call("POST", &control("doc_missing", "decline"), None, None);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("document_not_found"))
    );
    let (status, _, _) = call(
        "POST",
        &control(&id, "sign"),
        None,
        Some(json!({"email": 42})),
    );
    assert_eq!(status, 400);
}

#[test]
fn an_early_answer_to_a_body_sent_late_keeps_the_connection_usable() {
    use std::io::{Read, Write};
    let sandbox = Sandbox::start().unwrap();
    sandbox.inject(
        service_clients_sandbox::Fault::on("POST", "/projects/v1/projects")
            .status(503)
            .retry_after(0),
    );
    let mut stream = std::net::TcpStream::connect(sandbox.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let body = br#"{"name": "late body"}"#;
    let head = |stream: &mut std::net::TcpStream| {
        write!(
            stream,
            "POST /projects/v1/projects HTTP/1.1\r\nHost: sandbox\r\n\
             Authorization: Bearer {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n",
            sandbox.api_key(),
            body.len()
        )
        .unwrap();
    };
    // The body follows the head a moment later, as from a client that writes them
    // separately: the 503 (which needs no body) must still leave the connection usable.
    head(&mut stream);
    std::thread::sleep(Duration::from_millis(100));
    stream.write_all(body).unwrap();
    let mut first = [0u8; 4096];
    let n = stream.read(&mut first).unwrap();
    let first = String::from_utf8_lossy(&first[..n]).into_owned();
    assert!(first.starts_with("HTTP/1.1 503"), "{first}");
    head(&mut stream);
    stream.write_all(body).unwrap();
    let mut second = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&second).contains("late body") {
        let n = stream.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "the sandbox closed the connection after its early answer"
        );
        second.extend_from_slice(&buf[..n]);
    }
    assert!(String::from_utf8_lossy(&second).starts_with("HTTP/1.1 201"));
}
