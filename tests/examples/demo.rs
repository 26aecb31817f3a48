//! `cargo xtask demo`: a readable tour of the clients against a sandbox started
//! in-process. No key, no network.

use std::sync::Arc;
use std::time::{Duration, Instant};

use e2e::{WebhookReceiver, social_client_with_sleeper};
use sandbox::{Fault, Sandbox};
use social_client::webhooks;
use social_client::{Client, ListPosts, NewPost, Period, Platform};

fn main() -> anyhow::Result<()> {
    let started = Instant::now();
    let sandbox = Arc::new(Sandbox::start()?);
    println!(
        "sandbox running at {} (key {})",
        sandbox.url(),
        sandbox.api_key()
    );
    social(&sandbox)?;
    println!(
        "\ntour finished in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn step(title: &str) {
    println!("\n== {title}");
}

fn social(sandbox: &Arc<Sandbox>) -> anyhow::Result<()> {
    println!("\n#### social-client");
    let receiver = WebhookReceiver::start(0)?;
    let endpoint = sandbox.add_webhook(receiver.url());
    let client = Client::new(sandbox.social_url(), sandbox.api_key())?;
    println!("client: {client:?}");
    println!("(the key is shown as *** in Debug, errors and logs)");

    step("create a post on two platforms: one post per platform");
    let posts = client.posts().create(&NewPost::new(
        "Hello from the demo",
        [Platform::X, Platform::LinkedIn],
    ))?;
    for post in &posts {
        println!("  {} on {:?}: {}", post.id, post.platform, post.status);
    }

    step("schedule a post an hour ahead");
    let at = sandbox.now() + time::Duration::hours(1);
    let scheduled = client
        .posts()
        .create(&NewPost::new("See you in an hour", [Platform::Mastodon]).scheduled_at(at))?;
    for entry in client.schedule().list()? {
        println!(
            "  schedule: post {} at {}",
            entry.post_id, entry.scheduled_at
        );
    }

    step("move the sandbox clock past it: it publishes and leaves the schedule");
    sandbox.advance(Duration::from_secs(3601));
    let page = client.posts().list(&ListPosts::new())?;
    for post in page.data.iter().filter(|p| p.id == scheduled[0].id) {
        println!("  {} is now {}", post.id, post.status);
    }
    println!(
        "  schedule entries left: {}",
        client.schedule().list()?.len()
    );

    step("analytics follow the published posts");
    let stats = client.analytics().overview_for(Period::Week)?;
    println!(
        "  {}: {} followers, {} impressions, {} clicks ({:.2}% engagement)",
        stats.period,
        stats.followers,
        stats.impressions,
        stats.clicks,
        stats.engagement_rate * 100.0
    );

    step("iterate every post lazily");
    let count = client.posts().iter().collect::<Result<Vec<_>, _>>()?.len();
    println!(
        "  {count} posts (meta.total says {:?})",
        page.meta.map(|m| m.total)
    );

    step("disconnect an account");
    let account = client.accounts().list()?.remove(0);
    client.accounts().disconnect(&account.id)?;
    let again = client.accounts().disconnect(&account.id);
    println!(
        "  disconnected {}; again -> {:?}",
        account.id,
        again.err().and_then(|e| e.kind())
    );

    step("webhooks: signed deliveries, verified by a local receiver");
    sandbox.wait_for_deliveries(Duration::from_secs(10));
    for delivered in receiver.drain(Duration::from_millis(300)) {
        match webhooks::verify_and_parse(&endpoint.secret, &delivered.headers, &delivered.body) {
            Ok(event) => println!("  verified {}", event.event_type()),
            Err(e) => println!("  REJECTED: {e}"),
        }
    }

    step("a typed error from the server's validation");
    let err = client
        .posts()
        .create(&NewPost::new("hi", [Platform::from("myspace")]))
        .err()
        .ok_or_else(|| anyhow::anyhow!("an unknown platform was accepted"))?;
    println!("  {err}");

    step("a Starter key (100/min): the 101st request gets a 429 and the client waits it out");
    let (starter, sleeper) = social_client_with_sleeper(sandbox, "sk_test_starter")?;
    for _ in 0..101 {
        starter.schedule().list()?;
    }
    println!(
        "  101 calls succeeded; the client waited {:?} (Retry-After)",
        sleeper.slept()
    );

    step("an injected 503 is retried");
    let (retrying, _) = social_client_with_sleeper(sandbox, sandbox.api_key())?;
    sandbox.inject(Fault::on("GET", "/social/v1/accounts").status(503));
    let accounts = retrying.accounts().list()?;
    println!("  got {} accounts after one retry", accounts.len());

    step("a POST whose connection drops after the server acted is not repeated");
    let before = client
        .posts()
        .list(&ListPosts::new())?
        .meta
        .map(|m| m.total)
        .unwrap_or(0);
    sandbox.inject(Fault::on("POST", "/social/v1/posts").drop_connection());
    match client
        .posts()
        .create(&NewPost::new("exactly once", [Platform::Facebook]))
    {
        Ok(_) => println!("  unexpected success"),
        Err(e) => println!(
            "  error: {e}\n  may_have_been_processed: {} -> check before retrying",
            e.may_have_been_processed()
        ),
    }
    let after = client
        .posts()
        .list(&ListPosts::new())?
        .meta
        .map(|m| m.total)
        .unwrap_or(0);
    println!("  posts before {before}, after {after}: created once, not twice");

    step("a slow answer hits the configured timeout");
    sandbox.inject(Fault::on("GET", "/social/v1/schedule").delay_ms(3_000));
    let hurried = client
        .with_options(&social_client::RequestOptions::new().timeout(Duration::from_millis(500)));
    let t = Instant::now();
    let err = hurried.schedule().list().err();
    match err {
        Some(e) => println!("  after {:.1} s: {e}", t.elapsed().as_secs_f64()),
        None => println!("  unexpected success"),
    }
    Ok(())
}
