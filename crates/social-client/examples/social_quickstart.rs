//! Create a post on two platforms, list posts, schedule one, read analytics.
//!
//! `cargo run -p social-client --example quickstart` runs against a local sandbox; set
//! `SOCIAL_BASE_URL` and `SOCIAL_API_KEY` to use a real service.

mod common;

use social_client::posts::{ListPosts, NewPost, Platform};

/// A figure the answer may not carry: `?` rather than a zero it did not give.
fn figure<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "?".to_owned(), |v| v.to_string())
}

fn main() -> anyhow::Result<()> {
    let (client, _sandbox) = common::client()?;

    let created = client.posts().create(&NewPost::new(
        "Hello from Rust!",
        [Platform::X, Platform::LinkedIn],
    ))?;
    for post in &created {
        println!(
            "created {} on {:?}: {}",
            post.id, post.platform, post.status
        );
    }

    let page = client.posts().list(&ListPosts::new().limit(10))?;
    let total = page
        .meta
        .and_then(|m| m.total)
        .unwrap_or(page.data.len() as u64);
    println!("{total} posts in all; first page has {}", page.data.len());

    let tomorrow = social_client::time::OffsetDateTime::now_utc() + time::Duration::days(1);
    let scheduled = client
        .posts()
        .create(&NewPost::new("Tomorrow's news", [Platform::Mastodon]).scheduled_at(tomorrow))?;
    println!("scheduled {} for {}", scheduled[0].id, tomorrow);
    for entry in client.schedule().list()? {
        println!(
            "  in the schedule: post {} at {}",
            entry.post_id, entry.scheduled_at
        );
    }

    let stats = client.analytics().overview()?;
    println!(
        "analytics ({}): {} followers, {} impressions, {} clicks, {}% engagement",
        stats.period,
        figure(stats.followers),
        figure(stats.impressions),
        figure(stats.clicks),
        figure(stats.engagement_rate.map(|r| format!("{:.2}", r * 100.0)))
    );
    Ok(())
}
