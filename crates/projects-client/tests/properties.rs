//! Property tests of the decoders: every answer valid under what the service's document
//! shows decodes (with unknown fields, numbers in any JSON form, optional fields absent
//! or null), and no answer at all makes them panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projects_client::pagination::Page;
use projects_client::projects::Project;

type ProjectPage = Page<Project>;
use proptest::prelude::*;
use serde_json::Value;
use testkit::arb::{Kind, cases, json, object, optional, required};

fn project() -> BoxedStrategy<Value> {
    object(vec![
        required("id", Kind::Id),
        optional("name", Kind::Text),
        optional("description", Kind::Text),
        optional("environment", Kind::Word(&["development", "production"])),
        optional("created_at", Kind::Timestamp),
        optional("status", Kind::Word(&["active", "paused"])),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn documented_answers_always_decode(
        project in project(),
        data in prop::collection::vec(project(), 0..5),
        meta in object(vec![
            required("total", Kind::Integer),
            optional("limit", Kind::Integer),
            optional("offset", Kind::Integer),
        ]),
    ) {
        serde_json::from_value::<Project>(project).unwrap();
        let n = data.len();
        let page: ProjectPage = serde_json::from_value(serde_json::json!({"data": data, "meta": meta})).unwrap();
        prop_assert_eq!(page.data.len(), n);
        prop_assert!(page.meta.is_some());
    }

    #[test]
    fn no_answer_panics_a_decoder(value in json()) {
        let _ = serde_json::from_value::<Project>(value.clone());
        let _ = serde_json::from_value::<ProjectPage>(value);
    }
}
