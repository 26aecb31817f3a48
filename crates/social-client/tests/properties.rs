//! Property tests of the decoders: every answer valid under what the service's document
//! shows decodes (with unknown fields, numbers in any JSON form, optional fields absent
//! or null), and no answer at all makes them panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::Value;
use social_client::pagination::Page;
use social_client::webhooks;
use social_client::{
    accounts::Account, analytics::AnalyticsOverview, posts::Post, schedule::ScheduleEntry,
};

type PostPage = Page<Post>;
use testkit::arb::{Kind, cases, json, object, optional, required};

fn post() -> BoxedStrategy<Value> {
    object(vec![
        required("id", Kind::Id),
        optional("content", Kind::Text),
        optional("platform", Kind::Word(&["x", "linkedin", "facebook"])),
        optional("status", Kind::Word(&["scheduled", "published", "failed"])),
        optional("created_at", Kind::Timestamp),
    ])
}

fn page() -> BoxedStrategy<Value> {
    (
        prop::collection::vec(post(), 0..5),
        object(vec![required("total", Kind::Integer)]),
    )
        .prop_map(|(data, meta)| serde_json::json!({"data": data, "meta": meta}))
        .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn documented_answers_always_decode(
        post in post(),
        page in page(),
        entry in object(vec![
            required("id", Kind::Id),
            required("post_id", Kind::Id),
            required("scheduled_at", Kind::Timestamp),
            optional("timezone", Kind::Word(&["Europe/Paris", "UTC"])),
        ]),
        overview in object(vec![
            optional("followers", Kind::Integer),
            optional("engagement_rate", Kind::Number),
            optional("impressions", Kind::Integer),
            optional("clicks", Kind::Integer),
            optional("period", Kind::Word(&["day", "week", "month"])),
        ]),
        account in object(vec![required("id", Kind::Id)]),
    ) {
        serde_json::from_value::<Post>(post.clone()).unwrap();
        let page: PostPage = serde_json::from_value(page).unwrap();
        prop_assert!(page.meta.is_some());
        serde_json::from_value::<ScheduleEntry>(entry).unwrap();
        serde_json::from_value::<AnalyticsOverview>(overview).unwrap();
        serde_json::from_value::<Account>(account).unwrap();
    }

    #[test]
    fn verified_events_of_documented_shape_parse(kind in 0usize..4, data in post(), overview in object(vec![optional("followers", Kind::Integer), optional("clicks", Kind::Integer)])) {
        let (event_type, data) = match kind {
            0 => ("post.published", data),
            1 => ("post.scheduled", data),
            2 => ("analytics.updated", overview),
            _ => ("account.disconnected", serde_json::json!({"id": "acc_1"})),
        };
        let body = serde_json::json!({"type": event_type, "timestamp": "2026-01-01T00:00:00Z", "data": data}).to_string();
        let headers = core_webhooks::signed_headers(testkit::WEBHOOK_SECRET, "msg_1", body.as_bytes()).unwrap();
        let event = webhooks::verify_and_parse(testkit::WEBHOOK_SECRET, &headers, body.as_bytes()).unwrap();
        prop_assert_eq!(event.event_type(), event_type);
    }

    #[test]
    fn no_answer_panics_a_decoder(value in json()) {
        let _ = serde_json::from_value::<Post>(value.clone());
        let _ = serde_json::from_value::<PostPage>(value.clone());
        let _ = serde_json::from_value::<ScheduleEntry>(value.clone());
        let _ = serde_json::from_value::<AnalyticsOverview>(value.clone());
        let _ = serde_json::from_value::<Account>(value.clone());
        let body = serde_json::json!({"type": "post.published", "data": value}).to_string();
        let headers = core_webhooks::signed_headers(testkit::WEBHOOK_SECRET, "msg_1", body.as_bytes()).unwrap();
        let _ = webhooks::verify_and_parse(testkit::WEBHOOK_SECRET, &headers, body.as_bytes());
    }
}
