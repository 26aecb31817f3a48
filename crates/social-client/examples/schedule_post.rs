//! The whole script: schedule a post, see it in the schedule, wait until it is published.
//!
//! `cargo run -p social-client --example schedule_post -- "Post text" 90` schedules the
//! text 90 minutes ahead (defaults: a sample text, 60 minutes) and waits for it. On the
//! local sandbox the sandbox clock is moved past the post's time first, so the wait ends
//! at once; on a real service (`SOCIAL_BASE_URL`) it lasts until the post goes live.

mod common;

use std::time::Duration;

use social_client::posts::{NewPost, Platform};
use social_client::wait::{Wait, WaitError};

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
    }
    // One wait per post: until it is live, a failed post ending the wait at once.
    let wait = Wait::up_to(Duration::from_secs(minutes.unsigned_abs() * 60 + 600))
        .interval(Duration::from_secs(1), Duration::from_secs(60));
    for post in &posts {
        match client.posts().wait_until_published(&post.id, wait) {
            Ok(post) => println!(
                "{} is now {} (published at {:?})",
                post.id, post.status, post.published_at
            ),
            Err(WaitError::Ended { state, .. }) => anyhow::bail!("{} ended {state}", post.id),
            Err(e) => return Err(e.into()),
        }
    }
    println!(
        "schedule now holds {} entries",
        client.schedule().list()?.len()
    );
    Ok(())
}
