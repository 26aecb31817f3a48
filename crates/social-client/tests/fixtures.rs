//! The client against recorded and hand-written server answers (tests/fixtures/*.json),
//! served by mockito over a real socket. Each case snapshots what the client sent and
//! what it made of the answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Debug;

use serde_json::{Value, json};
use social_client::webhooks;
use social_client::{
    Client,
    analytics::Period,
    posts::{ListPosts, NewPost, Platform},
    time::OffsetDateTime,
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn load(name: &str) -> testkit::Fixture {
    testkit::load(DIR, name)
}

/// Serves the fixture's answer, makes the call, and snapshots the request the client
/// sent and the decoded value (or the error).
fn check<T: Debug>(name: &str, call: impl FnOnce(&Client) -> social_client::Result<T>) {
    let (sent, decoded) = testkit::exchange(DIR, name, testkit::client::<Client>, call);
    insta::assert_json_snapshot!(format!("{name}__sent"), sent);
    insta::assert_debug_snapshot!(format!("{name}__decoded"), decoded);
}

fn at(s: &str) -> OffsetDateTime {
    social_client::time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
        .unwrap()
}

// ---- recorded from the sandbox ----

#[test]
fn accounts_list() {
    check("accounts_list", |c| c.accounts().list());
}

#[test]
fn accounts_disconnect() {
    let id = load("accounts_disconnect").path_id();
    check("accounts_disconnect", |c| {
        c.accounts().disconnect(id.as_str())
    });
}

#[test]
fn posts_create() {
    check("posts_create", |c| {
        c.posts().create(&NewPost::new(
            "Launch day",
            [Platform::X, Platform::LinkedIn],
        ))
    });
}

#[test]
fn posts_create_scheduled() {
    // Given in another offset, sent in UTC with a Z.
    let noon = at("2026-01-05T13:00:00+01:00");
    check("posts_create_scheduled", |c| {
        c.posts()
            .create(&NewPost::new("See you at noon", [Platform::Mastodon]).scheduled_at(noon))
    });
}

#[test]
fn posts_list() {
    check("posts_list", |c| {
        c.posts().list(&ListPosts::new().limit(2).offset(1))
    });
}

#[test]
fn schedule_list() {
    check("schedule_list", |c| c.schedule().list());
}

#[test]
fn analytics_overview() {
    check("analytics_overview", |c| {
        c.analytics().overview_for(Period::Week)
    });
}

#[test]
fn error_account_not_found() {
    let id = load("error_account_not_found").path_id();
    check("error_account_not_found", |c| {
        c.accounts().disconnect(id.as_str())
    });
}

#[test]
fn error_unknown_platform() {
    check("error_unknown_platform", |c| {
        c.posts()
            .create(&NewPost::new("hi", [Platform::from("myspace")]))
    });
}

#[test]
fn error_platform_not_connected() {
    check("error_platform_not_connected", |c| {
        c.posts().create(&NewPost::new("hi", [Platform::X]))
    });
}

#[test]
fn error_scheduled_in_past() {
    check("error_scheduled_in_past", |c| {
        c.posts().create(
            &NewPost::new("hi", [Platform::LinkedIn]).scheduled_at(at("2026-01-05T08:59:59Z")),
        )
    });
}

// The client refuses these before sending; the raw escape hatch still reaches the
// server's own checks, so the recorded errors are decoded through it.
fn raw_post(c: &Client, body: Value) -> social_client::Result<Value> {
    c.raw().post("/v1/posts", &body)
}

#[test]
fn error_empty_content() {
    check("error_empty_content", |c| {
        raw_post(c, json!({"content": "", "platforms": ["x"]}))
    });
}

#[test]
fn error_no_platforms() {
    check("error_no_platforms", |c| {
        raw_post(c, json!({"content": "hi", "platforms": []}))
    });
}

#[test]
fn error_scheduled_not_rfc3339() {
    check("error_scheduled_not_rfc3339", |c| {
        raw_post(
            c,
            json!({"content": "hi", "platforms": ["linkedin"], "scheduled_at": "next Tuesday"}),
        )
    });
}

#[test]
fn error_invalid_limit() {
    check("error_invalid_limit", |c| {
        c.raw().get::<Value>("/v1/posts", &[("limit", "101")])
    });
}

#[test]
fn error_invalid_period() {
    check("error_invalid_period", |c| {
        c.analytics().overview_for(Period::from("fortnight"))
    });
}

#[test]
fn error_unauthorized() {
    check("error_unauthorized", |c| c.accounts().list());
}

#[test]
fn error_rate_limited() {
    check("error_rate_limited", |c| c.schedule().list());
}

// ---- hand-written: odd but legal answers ----

#[test]
fn posts_create_bare_post() {
    check("posts_create_bare_post", |c| {
        c.posts().create(&NewPost::new("Hello", [Platform::X]))
    });
}

#[test]
fn posts_create_data_object() {
    check("posts_create_data_object", |c| {
        c.posts().create(&NewPost::new("Hello", [Platform::X]))
    });
}

#[test]
fn posts_list_unknown_values() {
    check("posts_list_unknown_values", |c| {
        c.posts().list(&ListPosts::new())
    });
}

#[test]
fn accounts_list_bare_array() {
    check("accounts_list_bare_array", |c| c.accounts().list());
}

#[test]
fn accounts_disconnect_200_body() {
    check("accounts_disconnect_200_body", |c| {
        c.accounts().disconnect("acct_1")
    });
}

#[test]
fn analytics_wrapped_unknown_period() {
    check("analytics_wrapped_unknown_period", |c| {
        c.analytics().overview()
    });
}

#[test]
fn schedule_with_timezone() {
    check("schedule_with_timezone", |c| c.schedule().list());
}

#[test]
fn error_problem_json() {
    check("error_problem_json", |c| {
        c.posts()
            .create(&NewPost::new("a long post", [Platform::X]))
    });
}

#[test]
fn error_flat_message() {
    check("error_flat_message", |c| c.accounts().list());
}

#[test]
fn error_oauth_style() {
    check("error_oauth_style", |c| c.accounts().list());
}

#[test]
fn error_html_502() {
    check("error_html_502", |c| c.schedule().list());
}

#[test]
fn error_plain_text_503() {
    check("error_plain_text_503", |c| {
        c.posts().list(&ListPosts::new())
    });
}

#[test]
fn error_quota_exceeded() {
    check("error_quota_exceeded", |c| {
        c.posts().create(&NewPost::new("one more", [Platform::X]))
    });
}

#[test]
fn ok_html_instead_of_json() {
    check("ok_html_instead_of_json", |c| c.accounts().list());
}

// ---- webhook events: each recorded delivery body, signed here and verified ----

fn event(name: &str) -> Result<webhooks::Event, webhooks::WebhookError> {
    let (body, headers, now) = testkit::signed_delivery(DIR, name);
    webhooks::verify_and_parse_at(testkit::WEBHOOK_SECRET, &headers, body.as_bytes(), now)
}

#[test]
fn webhook_events() {
    for name in [
        "event_post_published",
        "event_post_scheduled",
        "event_account_disconnected",
        "event_analytics_updated",
        "event_unknown_type",
        "event_post_published_extra_fields",
    ] {
        let parsed = event(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        insta::assert_debug_snapshot!(name, parsed);
    }
}
