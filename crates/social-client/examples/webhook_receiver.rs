//! Receive webhook deliveries in a plain script: `webhooks::listen`, then
//! `for event in listener`. Each delivery is verified with the endpoint's secret and
//! answered at once; a forged one never reaches the loop, a redelivery reaches it once.
//!
//! `cargo run -p social-client --example webhook_receiver` starts a sandbox, registers
//! this receiver with it, makes a few things happen, and prints each event.
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

fn show(event: &Event) {
    match event {
        Event::PostPublished(post) => println!("post {} is live", post.id),
        Event::PostScheduled(post) => println!("post {} is scheduled", post.id),
        Event::AccountDisconnected(account) => println!("account {} was disconnected", account.id),
        other => println!("{}", other.event_type()),
    }
}

fn main() -> anyhow::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .map(|p| p.parse())
        .transpose()?
        .unwrap_or(0);

    if let Ok(secret) = std::env::var("SOCIAL_WEBHOOK_SECRET") {
        let listener = webhooks::listen(("0.0.0.0", port), &secret)?;
        println!("listening on {}", listener.local_addr());
        for event in listener {
            match event {
                Ok(event) => show(&event),
                // Authentic, but not an event this version can read.
                Err(e) => eprintln!("unreadable event: {e}"),
            }
        }
        return Ok(());
    }

    // No secret given: a sandbox delivers to us, signed with a secret we give it (on a
    // real service the dashboard shows the endpoint's secret).
    let sandbox = Sandbox::start()?;
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let mut listener = webhooks::listen(("127.0.0.1", port), secret)?;
    let url = format!("http://{}/webhooks", listener.local_addr());
    sandbox.add_webhook_with(&url, secret, &[]);
    println!("listening on {url}, registered with the sandbox");

    let client = Client::new(sandbox.social().url(), sandbox.api_key())?;
    let at = sandbox.now() + time::Duration::minutes(5);
    client
        .posts()
        .create(&NewPost::new("Webhooks are neat", [Platform::Threads]).scheduled_at(at))?;
    sandbox.advance(Duration::from_secs(301));
    let account = client.accounts().list()?.remove(0);
    client.accounts().disconnect(&account.id)?;

    // post.scheduled, post.published, account.disconnected.
    for _ in 0..3 {
        match listener.next_timeout(Duration::from_secs(10)) {
            Some(event) => show(&event?),
            None => anyhow::bail!("no delivery within 10 s"),
        }
    }
    Ok(())
}
