//! social-client against a running sandbox: the whole workflow, webhooks, rate limits,
//! retries, and a dropped connection that must not post twice.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use e2e::{WebhookReceiver, social_client_with_sleeper};
use sandbox::{DeliveryStatus, Fault, Sandbox};
use social_client::webhooks::{self, Event};
use social_client::{
    Client, ErrorKind,
    accounts::AccountStatus,
    analytics::Period,
    posts::{ListPosts, NewPost, Platform, PostStatus},
};

fn client(sandbox: &Sandbox) -> Client {
    Client::new(sandbox.social().url(), sandbox.api_key()).unwrap()
}

/// How many posts the sandbox holds for this client's key.
fn total_posts(client: &Client) -> u64 {
    client
        .posts()
        .list(&ListPosts::new())
        .unwrap()
        .meta
        .unwrap()
        .total
        .unwrap()
}

#[test]
fn full_workflow() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);

    let before = client.analytics().overview_for(Period::Week).unwrap();
    assert_eq!(before.impressions, Some(0));
    assert_eq!(before.period, Period::Week);

    // One post per platform, published now.
    let posts = client
        .posts()
        .create(&NewPost::new(
            "Launch day",
            [Platform::X, Platform::LinkedIn],
        ))
        .unwrap();
    assert_eq!(posts.len(), 2);
    assert!(
        posts
            .iter()
            .all(|p| p.status == PostStatus::Published && p.content == "Launch day")
    );
    let platforms: Vec<_> = posts.iter().filter_map(|p| p.platform.clone()).collect();
    assert_eq!(platforms, [Platform::X, Platform::LinkedIn]);

    let after = client.analytics().overview_for(Period::Week).unwrap();
    assert!(
        after.impressions > Some(0) && after.followers > before.followers,
        "{after:?}"
    );

    // Scheduled an hour ahead: in the schedule until the clock passes it.
    let at = sandbox.now() + time::Duration::hours(1);
    let scheduled = client
        .posts()
        .create(&NewPost::new("Later", [Platform::Mastodon]).scheduled_at(at))
        .unwrap();
    assert_eq!(scheduled[0].status, PostStatus::Scheduled);
    assert_eq!(scheduled[0].scheduled_at, Some(at));
    let schedule = client.schedule().list().unwrap();
    assert_eq!(schedule.len(), 1);
    assert_eq!(schedule[0].post_id, scheduled[0].id);
    assert_eq!(schedule[0].scheduled_at, at);

    sandbox.advance(Duration::from_secs(3601));
    assert!(client.schedule().list().unwrap().is_empty());
    let page = client.posts().list(&ListPosts::new()).unwrap();
    assert_eq!(page.meta.and_then(|m| m.total), Some(3));
    let later = page.data.iter().find(|p| p.id == scheduled[0].id).unwrap();
    assert_eq!(later.status, PostStatus::Published);
    assert_eq!(later.published_at, Some(at));

    // Pages: 3 posts at 2 a page.
    let first = client.posts().list(&ListPosts::new().limit(2)).unwrap();
    let second = client
        .posts()
        .list(&ListPosts::new().limit(2).offset(2))
        .unwrap();
    assert_eq!((first.data.len(), second.data.len()), (2, 1));
    let all: Vec<_> = client.posts().iter().map(Result::unwrap).collect();
    assert_eq!(all.len(), 3);

    // Accounts: disconnect one, it leaves the list, a second disconnect is NotFound.
    let accounts = client.accounts().list().unwrap();
    assert!(
        accounts
            .iter()
            .all(|a| a.status == Some(AccountStatus::Connected))
    );
    let x = accounts
        .iter()
        .find(|a| a.platform == Some(Platform::X))
        .unwrap();
    client.accounts().disconnect(&x.id).unwrap();
    let remaining = client.accounts().list().unwrap();
    assert_eq!(remaining.len(), accounts.len() - 1);
    let again = client.accounts().disconnect(&x.id).unwrap_err();
    assert_eq!(again.kind(), ErrorKind::NotFound);
    // Posting to the disconnected platform is refused with the server's reason.
    let refused = client
        .posts()
        .create(&NewPost::new("hi", [Platform::X]))
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::BadRequest);
    assert_eq!(
        refused.api().and_then(|e| e.code.as_deref()),
        Some("platform_not_connected")
    );
}

#[test]
fn the_service_validates_input_with_clear_errors() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let check = |post: NewPost, code: &str, words: &str| {
        let err = client.posts().create(&post).unwrap_err();
        let api = err
            .api()
            .unwrap_or_else(|| panic!("expected an API error, got {err:?}"));
        assert_eq!(api.status, 400);
        assert_eq!(api.code.as_deref(), Some(code));
        assert!(
            api.message.contains(words),
            "{:?} should mention {words:?}",
            api.message
        );
        assert!(
            api.request_id
                .as_deref()
                .is_some_and(|id| id.starts_with("req_"))
        );
    };
    check(
        NewPost::new("hi", [Platform::from("myspace")]),
        "unknown_platform",
        "myspace",
    );
    check(
        NewPost::new("hi", [Platform::X]).scheduled_at(sandbox.now() - time::Duration::minutes(1)),
        "scheduled_at_in_past",
        "not in the future",
    );
    // What the client refuses before sending, the raw escape hatch can still send: the
    // server's own checks answer.
    let raw = |body: serde_json::Value| {
        client
            .raw()
            .post::<serde_json::Value, _>("/v1/posts", &body)
            .unwrap_err()
    };
    let empty = raw(serde_json::json!({"content": "", "platforms": ["x"]}));
    assert_eq!(
        empty.api().unwrap().code.as_deref(),
        Some("invalid_content")
    );
    let none = raw(serde_json::json!({"content": "hi", "platforms": []}));
    assert_eq!(
        none.api().unwrap().code.as_deref(),
        Some("invalid_platforms")
    );
    let not_a_time = raw(
        serde_json::json!({"content": "hi", "platforms": ["x"], "scheduled_at": "tomorrow 9am"}),
    );
    assert_eq!(
        not_a_time.api().unwrap().code.as_deref(),
        Some("invalid_scheduled_at")
    );
    // Refused locally, so nothing reached the server.
    let local = client
        .posts()
        .create(&NewPost::new("  ", [Platform::X]))
        .unwrap_err();
    assert!(
        matches!(local, social_client::Error::InvalidRequest(_)),
        "{local:?}"
    );
    assert!(client.posts().list(&ListPosts::new().limit(101)).is_err());
    assert_eq!(total_posts(&client), 0);
    assert_eq!(
        client
            .analytics()
            .overview_for(Period::from("fortnight"))
            .unwrap_err()
            .api()
            .unwrap()
            .code
            .as_deref(),
        Some("invalid_period")
    );
    let wrong_key = Client::new(sandbox.social().url(), "sk_test_nope").unwrap();
    let err = wrong_key.accounts().list().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthorized);
    assert!(!format!("{err:?}{err}").contains("sk_test_nope"));
}

#[test]
fn webhooks_are_delivered_signed_and_verify() {
    let sandbox = e2e::sandbox().unwrap();
    // The receiver fails its first delivery: the sandbox must retry it.
    let receiver = WebhookReceiver::start(1).unwrap();
    let endpoint = sandbox.add_webhook(receiver.url());
    let client = client(&sandbox);

    let start = sandbox.now();
    let at = start + time::Duration::minutes(30);
    let scheduled = client
        .posts()
        .create(&NewPost::new("Webhook me", [Platform::Bluesky]).scheduled_at(at))
        .unwrap();
    sandbox.advance(Duration::from_secs(31 * 60));
    let account = client.accounts().list().unwrap().remove(0);
    client.accounts().disconnect(&account.id).unwrap();
    let end = sandbox.advance(Duration::from_secs(24 * 3600));
    // One analytics refresh per midnight crossed: one from mid-day, two when the test
    // starts in the half hour before midnight.
    let midnights = (end.date() - start.date()).whole_days() as usize;

    let deliveries = sandbox.wait_for_deliveries(Duration::from_secs(20));
    assert!(
        deliveries
            .iter()
            .all(|d| d.status == DeliveryStatus::Delivered),
        "{deliveries:#?}"
    );
    assert_eq!(
        deliveries[0].attempts, 2,
        "the first attempt got a 500 and was retried"
    );

    let mut events = Vec::new();
    for delivered in receiver.drain(Duration::from_millis(500)) {
        let event =
            webhooks::verify_and_parse(&endpoint.secret, &delivered.headers, &delivered.body)
                .expect("every delivery verifies");
        events.push(event);
    }
    // Retries reorder deliveries (the first one failed once and came last), as with any
    // webhook sender: compare the set, then look each event up by type.
    let mut types: Vec<&str> = events.iter().map(Event::event_type).collect();
    types.sort_unstable();
    let mut expected = vec!["account.disconnected"];
    expected.extend(std::iter::repeat_n("analytics.updated", midnights));
    expected.extend(["post.published", "post.scheduled"]);
    assert_eq!(types, expected);
    let find = |t: &str| events.iter().find(|e| e.event_type() == t).unwrap();
    match find("post.published") {
        Event::PostPublished(post) => {
            assert_eq!(post.id, scheduled[0].id);
            assert_eq!(post.status, PostStatus::Published);
        }
        other => panic!("expected post.published, got {other:?}"),
    }
    match find("post.scheduled") {
        Event::PostScheduled(post) => assert_eq!(post.scheduled_at, Some(at)),
        other => panic!("expected post.scheduled, got {other:?}"),
    }
    match find("account.disconnected") {
        Event::AccountDisconnected(a) => assert_eq!(a.id, account.id),
        other => panic!("expected account.disconnected, got {other:?}"),
    }
    match find("analytics.updated") {
        Event::AnalyticsUpdated(overview) => assert_eq!(overview.period, Period::Day),
        other => panic!("expected analytics.updated, got {other:?}"),
    }

    // A tampered body or another secret is refused.
    let delivered = {
        client
            .posts()
            .create(&NewPost::new("one more", [Platform::Threads]))
            .unwrap();
        receiver.next(Duration::from_secs(10)).expect("a delivery")
    };
    let mut tampered = delivered.body.clone();
    tampered[10] ^= 1;
    assert!(webhooks::verify_and_parse(&endpoint.secret, &delivered.headers, &tampered).is_err());
    let other = e2e::sandbox_builder()
        .seed(99)
        .start()
        .unwrap()
        .add_webhook("http://127.0.0.1:9/");
    assert!(
        webhooks::verify_and_parse(&other.secret, &delivered.headers, &delivered.body).is_err()
    );
}

#[test]
fn a_starter_key_hits_its_limit_and_the_client_waits_it_out() {
    // This part is about the running clock: the server's bucket refills in real time
    // while the client really waits.
    let sandbox = Sandbox::start().unwrap();
    // No client-side limiter: the server's 429 is what the client must handle.
    let client = Client::builder()
        .base_url(sandbox.social().url())
        .api_key("sk_test_starter")
        .build()
        .unwrap();
    for _ in 0..100 {
        client.schedule().list().unwrap();
    }
    // The 101st request within the minute gets a 429 with Retry-After: 1; the client waits
    // a second and the retry succeeds.
    let started = std::time::Instant::now();
    client.schedule().list().unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "the client did not wait"
    );

    // The same with the sandbox clock standing in for the wait, to see the exact delay.
    let sandbox = Arc::new(e2e::sandbox().unwrap());
    let (client, sleeper) = social_client_with_sleeper(&sandbox, "sk_test_starter").unwrap();
    for _ in 0..101 {
        client.accounts().list().unwrap();
    }
    assert_eq!(sleeper.slept(), [Duration::from_secs(1)]);
    // Without retries the 429 surfaces, typed, with its Retry-After.
    let no_retry =
        client.with_options(&social_client::config::RequestOptions::new().max_retries(0));
    let limited = (0..200)
        .find_map(|_| no_retry.accounts().list().err())
        .unwrap();
    assert_eq!(limited.kind(), ErrorKind::RateLimited);
    assert_eq!(
        limited.api().unwrap().retry_after,
        Some(Duration::from_secs(1))
    );
}

#[test]
fn an_injected_503_is_retried() {
    let sandbox = Arc::new(e2e::sandbox().unwrap());
    let (client, sleeper) = social_client_with_sleeper(&sandbox, sandbox.api_key()).unwrap();
    sandbox.inject(Fault::on("GET", "/social/v1/posts").status(503).times(2));
    let page = client.posts().list(&ListPosts::new()).unwrap();
    assert_eq!(page.data.len(), 0);
    assert_eq!(sleeper.slept().len(), 2, "two 503s, two waits");

    // A POST answered 503 with Retry-After cannot have been acted on: retried, one post.
    sandbox.inject(
        Fault::on("POST", "/social/v1/posts")
            .status(503)
            .retry_after(2),
    );
    let created = client
        .posts()
        .create(&NewPost::new("after 503", [Platform::X]))
        .unwrap();
    assert_eq!(created.len(), 1);
    assert_eq!(sleeper.slept().last(), Some(&Duration::from_secs(2)));
    assert_eq!(total_posts(&client), 1);

    // A 500 on a POST may hide a created post: not retried.
    sandbox.inject(Fault::on("POST", "/social/v1/posts").status(500));
    let err = client
        .posts()
        .create(&NewPost::new("after 500", [Platform::X]))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server);
    assert_eq!(sleeper.slept().len(), 3);
}

#[test]
fn a_dropped_post_is_not_blindly_repeated() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    sandbox.inject(Fault::on("POST", "/social/v1/posts").drop_connection());
    let err = client
        .posts()
        .create(&NewPost::new("exactly once", [Platform::Facebook]))
        .unwrap_err();
    assert!(err.may_have_been_processed(), "{err:?}");
    let page = client.posts().list(&ListPosts::new()).unwrap();
    assert_eq!(page.meta.unwrap().total, Some(1), "exactly one post exists");
    assert_eq!(page.data[0].content, "exactly once");

    // A GET whose connection drops is safe to repeat, and is.
    sandbox.inject(Fault::on("GET", "/social/v1/posts").drop_connection());
    assert_eq!(
        client.posts().list(&ListPosts::new()).unwrap().data.len(),
        1
    );
}

#[test]
fn damaged_or_slow_answers_are_typed_errors() {
    let sandbox = e2e::sandbox().unwrap();
    let client =
        client(&sandbox).with_options(&social_client::config::RequestOptions::new().max_retries(0));
    sandbox.inject(Fault::on("GET", "/social/v1/accounts").malformed_body());
    let err = client.accounts().list().unwrap_err();
    assert!(
        matches!(err, social_client::Error::Decode { status: 200, .. }),
        "{err:?}"
    );

    sandbox.inject(Fault::on("GET", "/social/v1/accounts").truncated_body());
    let err = client.accounts().list().unwrap_err();
    assert!(matches!(err, social_client::Error::Io { .. }), "{err:?}");

    sandbox.inject(Fault::on("GET", "/social/v1/schedule").delay_ms(5_000));
    let hurried = client.with_options(
        &social_client::config::RequestOptions::new().timeout(Duration::from_millis(300)),
    );
    let started = std::time::Instant::now();
    let err = hurried.schedule().list().unwrap_err();
    assert!(
        matches!(err, social_client::Error::Timeout { .. }),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the timeout was not honoured"
    );
}

#[test]
fn posts_come_page_by_page_or_from_an_offset() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    for i in 0..5 {
        client
            .posts()
            .create(&NewPost::new(format!("post {i}"), [Platform::X]))
            .unwrap();
    }
    let sizes: Vec<usize> = client
        .posts()
        .pages(&ListPosts::new().limit(2))
        .map(|p| p.unwrap().data.len())
        .collect();
    assert_eq!(sizes, [2, 2, 1]);
    let contents: Vec<String> = client
        .posts()
        .iter_from(&ListPosts::new().offset(3))
        .map(|p| p.unwrap().content)
        .collect();
    assert_eq!(contents, ["post 3", "post 4"]);
}
