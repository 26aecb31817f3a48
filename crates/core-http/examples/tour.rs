//! A tour of core-http's safety rules against a local scripted server (no key, no
//! network): retries, server-requested waits, typed errors, and a POST that is never
//! sent twice unless it carries an idempotency key.
//!
//! Run with `cargo xtask demo` or `cargo run -p core-http --example tour`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::hostile::{Act, Hostile};
use core_http::{HttpClient, config::RequestOptions};
use serde_json::{Value, json};

fn client(url: &str) -> anyhow::Result<HttpClient> {
    Ok(HttpClient::builder()
        .base_url(url)
        .api_key("sk_test_sandbox")
        .build()?)
}

fn attempts(server: &Hostile) -> usize {
    server.requests().len()
}

fn main() -> anyhow::Result<()> {
    println!("core-http tour: every call goes over a real socket to a local server.\n");

    let server = Hostile::scripted(vec![
        Act::json(503, r#"{"error":{"code":"unavailable","message":"busy"}}"#),
        Act::json(503, r#"{"error":{"code":"unavailable","message":"busy"}}"#),
        Act::json(200, r#"{"data":[{"id":"post_1"}],"meta":{"total":1}}"#),
    ]);
    let t = Instant::now();
    let v: Value = client(server.url())?.get("/v1/posts").send_json()?;
    println!(
        "1. GET /v1/posts: the server answered 503 twice, then 200.\n   -> {} attempts, {:.1}s of backoff, result {v}\n",
        attempts(&server),
        t.elapsed().as_secs_f64()
    );

    let server = Hostile::scripted(vec![
        Act::answer(429, &[("retry-after", "1")], ""),
        Act::json(200, r#"{"ok":true}"#),
    ]);
    let t = Instant::now();
    client(server.url())?.get("/v1/analytics/overview").send()?;
    println!(
        "2. GET with a 429 and Retry-After: 1 -> waited {:.1}s as asked, then succeeded ({} attempts)\n",
        t.elapsed().as_secs_f64(),
        attempts(&server)
    );

    let server = Hostile::scripted(vec![Act::json(500, r#"{"message":"database hiccup"}"#)]);
    let err = client(server.url())?
        .post("/v1/orders")
        .json(&json!({"symbol": "AAPL", "qty": 1}))
        .send()
        .unwrap_err();
    println!(
        "3. POST /v1/orders without an idempotency key, answered 500:\n   -> {} attempt(s); error: {err}\n   -> may_have_been_processed() = {} (check before repeating)\n",
        attempts(&server),
        err.may_have_been_processed()
    );

    let server = Hostile::scripted(vec![
        Act::json(500, r#"{"message":"database hiccup"}"#),
        Act::json(201, r#"{"id":"ord_1"}"#),
    ]);
    // Only a service known to de-duplicate by key gets a POST repeated.
    let honours_keys = HttpClient::builder()
        .base_url(server.url())
        .api_key("sk_test_sandbox")
        .idempotency_keys(true)
        .build()?;
    let v: Value = honours_keys
        .with_options(&RequestOptions::new().idempotency_key("order-2026-11-22-001"))
        .post("/v1/orders")
        .json(&json!({"symbol": "AAPL", "qty": 1}))
        .send_json()?;
    let keys: Vec<String> = server
        .requests()
        .iter()
        .filter_map(|r| {
            r.lines()
                .find(|l| l.to_ascii_lowercase().starts_with("idempotency-key:"))
                .map(|l| l[16..].trim().to_owned())
        })
        .collect();
    println!(
        "4. The same POST with an Idempotency-Key, to a service that de-duplicates by it (idempotency_keys(true)): retried safely -> {v}\n   -> keys sent: {keys:?}\n"
    );

    let server = Hostile::scripted(vec![Act::answer(
        400,
        &[
            ("content-type", "application/problem+json"),
            ("x-request-id", "req_42"),
        ],
        r#"{"type":"about:blank","title":"Invalid","detail":"limit must be <= 100"}"#,
    )]);
    let err = client(server.url())?
        .get("/v1/projects")
        .query("limit", 101)
        .send()
        .unwrap_err();
    println!(
        "5. A 400 in RFC 9457 form: kind {:?}, message {:?}, request id {:?}\n",
        err.kind(),
        err.api().map(|a| a.message.as_str()),
        err.request_id()
    );

    let server = Hostile::scripted(vec![Act::stall(Duration::from_secs(5))]);
    let t = Instant::now();
    let err = client(server.url())?
        .with_options(&RequestOptions::new().timeout(Duration::from_millis(500)))
        .get("/v1/slow")
        .send()
        .unwrap_err();
    println!(
        "6. A server that never answers, with a 0.5 s timeout: {err} after {:.2}s\n",
        t.elapsed().as_secs_f64()
    );

    let c = client(server.url())?;
    println!("7. The client's Debug output never shows the key:\n   {c:?}\n");
    println!("The local sandbox with all six services arrives with the service clients.");
    Ok(())
}
