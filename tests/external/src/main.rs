//! What a user writes with `social-client` alone: configuration, calls, the response
//! behind a call, pages, errors, webhooks (with an `http::HeaderMap`, as axum gives
//! them) and the raw escape hatch, all through the one dependency.

use std::time::Duration;

use social_client::serde_json::{Map, Value};
use social_client::webhooks::{self, Event};
use social_client::config::{Auth, RequestOptions, RetryPolicy, Secret};
use social_client::{Client, ErrorKind, Plan, posts::{ListPosts, NewPost, Platform}};

fn main() -> Result<(), social_client::Error> {
    let key: Secret = std::env::var("SOCIAL_API_KEY").unwrap_or_default().into();
    let client = Client::builder()
        .base_url(std::env::var("SOCIAL_BASE_URL").unwrap_or("https://api.example.com".into()))
        .auth(Auth::Bearer(key))
        .timeout(Duration::from_secs(30))
        .retry_policy(RetryPolicy::default().with_max_retries(4))
        .rate_limit(Plan::Starter)
        .build()?;

    // A call, and the same call with its response metadata.
    let post = NewPost::new("Hello!", [Platform::X, Platform::LinkedIn]);
    match client.posts().create(&post) {
        Ok(posts) => println!("{} posts", posts.len()),
        Err(e) if e.kind() == ErrorKind::RateLimited => println!("slow down: {e}"),
        Err(e) if e.may_have_been_processed() => println!("check before retrying: {e}"),
        Err(e) => return Err(e),
    }
    let page = client.with_response(|c| c.posts().list(&ListPosts::new().limit(10)))?;
    println!(
        "status {} request {:?} rate limit {:?}",
        page.status,
        page.request_id(),
        page.rate_limit()
    );

    // Pages, items from a point, per-call options.
    for p in client.posts().pages(&ListPosts::new().limit(50)).take(2) {
        println!("{} posts on this page", p?.data.len());
    }
    let mut items = client.posts().iter_from(&ListPosts::new().offset(100));
    if let Some(first) = items.next() {
        println!("{}", first?.id);
    }
    let patient = client.with_options(&RequestOptions::new().timeout(Duration::from_secs(120)));
    println!("{:?}", patient.analytics().overview()?.followers);

    // Anything not modelled, through the same auth, retries and errors.
    let raw: Value = client.raw().get("/v1/something/new", &[("limit", "5")])?;
    let extra: Option<&Map<String, Value>> = raw.as_object();
    println!("{}", extra.map_or(0, Map::len));

    // A webhook delivery, headers as axum hands them over.
    let headers = social_client::http::HeaderMap::new();
    match webhooks::verify_and_parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", &headers, b"{}") {
        Ok(Event::PostPublished(post)) => println!("{} is live", post.id),
        Ok(other) => println!("{}", other.event_type()),
        Err(e) => println!("rejected: {e}"),
    }
    Ok(())
}
