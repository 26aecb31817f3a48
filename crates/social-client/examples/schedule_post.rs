//! Schedule a post, watch it in the schedule, and (on the sandbox) move the clock past
//! its time to see it publish.
//!
//! `cargo run -p social-client --example schedule_post -- "Post text" 90` schedules the
//! text 90 minutes ahead (defaults: a sample text, 60 minutes).

mod common;

use std::time::Duration;

use social_client::posts::{NewPost, Platform, PostStatus};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let text = args
        .next()
        .unwrap_or_else(|| "Our webinar starts soon".to_owned());
    let minutes: i64 = match args.next() {
        Some(m) => m
            .parse()
            .map_err(|_| anyhow::anyhow!("minutes must be a whole number, got {m:?}"))?,
        None => 60,
    };
    let (client, sandbox) = common::client()?;

    let now = match &sandbox {
        Some(sandbox) => sandbox.now(),
        None => social_client::time::OffsetDateTime::now_utc(),
    };
    let at = now + time::Duration::minutes(minutes);
    let posts = client
        .posts()
        .create(&NewPost::new(text, [Platform::LinkedIn, Platform::Bluesky]).scheduled_at(at))?;
    for post in &posts {
        println!(
            "{} on {:?} is {} for {at}",
            post.id, post.platform, post.status
        );
    }
    println!(
        "schedule now holds {} entries",
        client.schedule().list()?.len()
    );

    if let Some(sandbox) = &sandbox {
        println!("advancing the sandbox clock by {minutes} minutes...");
        sandbox.advance(Duration::from_secs(minutes.unsigned_abs() * 60 + 1));
        for post in client.posts().iter() {
            let post = post?;
            if posts.iter().any(|p| p.id == post.id) {
                if post.status != PostStatus::Published {
                    anyhow::bail!("{} should have published, but is {}", post.id, post.status);
                }
                println!(
                    "{} is now {} (published at {:?})",
                    post.id, post.status, post.published_at
                );
            }
        }
        println!(
            "schedule now holds {} entries",
            client.schedule().list()?.len()
        );
    }
    Ok(())
}
