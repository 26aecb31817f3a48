//! Property tests of the decoders: every answer valid under what the service's document
//! shows decodes (with unknown fields, numbers in any JSON form, optional fields absent
//! or null), and no answer at all makes them panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::Value;
use testkit::arb::{Kind, cases, json, object, optional, required};
use vision_client::{
    analyses::{Classification, Detection, Faces, OcrResult},
    status::Status,
};

fn answer(key: &'static str, item: Vec<testkit::arb::Field>) -> BoxedStrategy<Value> {
    object(vec![
        required(key, Kind::Objects(item)),
        optional("processing_time_ms", Kind::Integer),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn documented_answers_always_decode(
        detection in answer("objects", vec![
            required("label", Kind::Text),
            required("confidence", Kind::Number),
            required("bbox", Kind::Integers(4)),
        ]),
        classification in answer("predictions", vec![
            required("label", Kind::Text),
            required("confidence", Kind::Number),
        ]),
        ocr in object(vec![
            required("text", Kind::Text),
            required("blocks", Kind::Objects(vec![
                required("text", Kind::Text),
                required("confidence", Kind::Number),
                required("bbox", Kind::Integers(4)),
            ])),
            optional("processing_time_ms", Kind::Integer),
        ]),
        faces in answer("faces", vec![
            required("bbox", Kind::Integers(4)),
            required("confidence", Kind::Number),
            optional("attributes", Kind::Object(vec![
                optional("age_range", Kind::Integers(2)),
                optional("emotion", Kind::Word(&["happy", "sad", "neutral"])),
            ])),
        ]),
        status in object(vec![
            required("status", Kind::Word(&["operational", "degraded"])),
            optional("latency_ms", Kind::Integer),
            required("usage", Kind::Object(vec![
                required("calls_used", Kind::Integer),
                required("calls_limit", Kind::Integer),
                required("period", Kind::Month),
            ])),
        ]),
    ) {
        serde_json::from_value::<Detection>(detection).unwrap();
        serde_json::from_value::<Classification>(classification).unwrap();
        serde_json::from_value::<OcrResult>(ocr).unwrap();
        serde_json::from_value::<Faces>(faces).unwrap();
        serde_json::from_value::<Status>(status).unwrap();
    }

    #[test]
    fn no_answer_panics_a_decoder(value in json()) {
        let _ = serde_json::from_value::<Detection>(value.clone());
        let _ = serde_json::from_value::<Classification>(value.clone());
        let _ = serde_json::from_value::<OcrResult>(value.clone());
        let _ = serde_json::from_value::<Faces>(value.clone());
        let _ = serde_json::from_value::<Status>(value);
    }
}
