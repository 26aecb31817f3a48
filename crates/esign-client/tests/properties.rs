//! Property tests of the decoders: the document record is not shown by the service's
//! document, so only its id is required; every other field, numbers in any JSON form,
//! and unknown fields must decode, and no answer at all makes a decoder panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use esign_client::documents::Document;
use esign_client::webhooks;
use proptest::prelude::*;
use serde_json::Value;
use testkit::arb::{Kind, cases, json, object, optional, required};

fn document() -> BoxedStrategy<Value> {
    object(vec![
        required("id", Kind::Id),
        optional("name", Kind::Text),
        optional("status", Kind::Word(&["sent", "completed", "declined"])),
        optional(
            "signers",
            Kind::Objects(vec![
                optional("name", Kind::Text),
                optional("email", Kind::Text),
                optional("status", Kind::Word(&["pending", "signed"])),
                optional("order", Kind::Integer),
                optional("signed_at", Kind::Timestamp),
            ]),
        ),
        optional("created_at", Kind::Timestamp),
        optional("completed_at", Kind::Timestamp),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn documented_answers_always_decode(doc in document(), kind in prop::sample::select(vec!["document.sent", "document.signed", "document.completed", "document.voided"])) {
        serde_json::from_value::<Document>(doc.clone()).unwrap();
        let body = serde_json::json!({"type": kind, "data": doc}).to_string();
        let headers = core_webhooks::signed_headers(testkit::WEBHOOK_SECRET, "msg_1", body.as_bytes()).unwrap();
        let event = webhooks::verify_and_parse(testkit::WEBHOOK_SECRET, &headers, body.as_bytes()).unwrap();
        prop_assert_eq!(event.event_type(), kind);
        prop_assert!(event.document().is_some());
    }

    #[test]
    fn no_answer_panics_a_decoder(value in json()) {
        let _ = serde_json::from_value::<Document>(value.clone());
        let body = serde_json::json!({"type": "document.completed", "data": value}).to_string();
        let headers = core_webhooks::signed_headers(testkit::WEBHOOK_SECRET, "msg_1", body.as_bytes()).unwrap();
        let _ = webhooks::verify_and_parse(testkit::WEBHOOK_SECRET, &headers, body.as_bytes());
    }
}
