//! Receive webhook deliveries on a local port and verify their signatures.
//!
//! `cargo run -p social-client --example webhook_receiver` starts a sandbox, registers
//! this receiver with it, makes a few things happen, and prints each verified event.
//!
//! To receive from a real service instead, set `SOCIAL_WEBHOOK_SECRET` (the endpoint's
//! `whsec_...` secret) and pass a port: `... --example webhook_receiver -- 8000`; it then
//! listens until stopped.

use std::time::Duration;

use sandbox::Sandbox;
use social_client::webhooks::{self, Event};
use social_client::{
    Client,
    posts::{NewPost, Platform},
};

fn main() -> anyhow::Result<()> {
    let port: Option<u16> = std::env::args().nth(1).map(|p| p.parse()).transpose()?;
    let server = tiny_http::Server::http(("127.0.0.1", port.unwrap_or(0)))
        .map_err(|e| anyhow::anyhow!("cannot listen: {e}"))?;
    let addr = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| anyhow::anyhow!("no IP address"))?;
    let url = format!("http://{addr}/webhooks");
    println!("listening on {url}");

    if let Ok(secret) = std::env::var("SOCIAL_WEBHOOK_SECRET") {
        for request in server.incoming_requests() {
            handle(request, &secret);
        }
        return Ok(());
    }

    // No secret given: drive a sandbox that delivers to us.
    let sandbox = Sandbox::start()?;
    let endpoint = sandbox.add_webhook(&url);
    println!(
        "registered with the sandbox; secret {}...",
        &endpoint.secret[..12]
    );
    let client = Client::new(sandbox.social().url(), sandbox.api_key())?;
    let at = sandbox.now() + time::Duration::minutes(5);
    client
        .posts()
        .create(&NewPost::new("Webhooks are neat", [Platform::Threads]).scheduled_at(at))?;
    sandbox.advance(Duration::from_secs(301));
    let account = client.accounts().list()?.remove(0);
    client.accounts().disconnect(&account.id)?;

    let mut received = 0;
    while received < 3 {
        match server.recv_timeout(Duration::from_secs(10))? {
            Some(request) => {
                handle(request, &endpoint.secret);
                received += 1;
            }
            None => anyhow::bail!("no delivery within 10 s"),
        }
    }
    Ok(())
}

/// Verifies one delivery and answers 204, or 400 when it does not verify.
fn handle(mut request: tiny_http::Request, secret: &str) {
    let mut body = Vec::new();
    if request.as_reader().read_to_end(&mut body).is_err() {
        let _ = request.respond(tiny_http::Response::empty(400));
        return;
    }
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|h| {
            (
                h.field.as_str().as_str().to_owned(),
                h.value.as_str().to_owned(),
            )
        })
        .collect();
    let status = match webhooks::verify_and_parse(secret, &headers, &body) {
        Ok(event) => {
            match &event {
                Event::PostScheduled(post) => println!(
                    "verified post.scheduled: {} at {:?}",
                    post.id, post.scheduled_at
                ),
                Event::PostPublished(post) => {
                    println!("verified post.published: {} is live", post.id)
                }
                Event::AccountDisconnected(account) => {
                    println!("verified account.disconnected: {}", account.id)
                }
                Event::AnalyticsUpdated(stats) => println!(
                    "verified analytics.updated: {} impressions",
                    stats.impressions.map_or("?".into(), |n| n.to_string())
                ),
                other => println!("verified {}: {other:?}", other.event_type()),
            }
            204
        }
        Err(e) => {
            println!("rejected a delivery: {e}");
            400
        }
    };
    let _ = request.respond(tiny_http::Response::empty(status));
}
