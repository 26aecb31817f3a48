//! The client against recorded and hand-written server answers (tests/fixtures/*.json),
//! served by mockito over a real socket. Each case snapshots what the client sent (the
//! defaults included) and what it made of the answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Debug;

use serde_json::{Value, json};
use vision_client::{
    Client,
    analyses::{ClassifyRequest, DetectRequest, FacesRequest, OcrRequest},
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const IMAGE: &str = "https://images.example.com/street.jpg";

fn check<T: Debug>(name: &str, call: impl FnOnce(&Client) -> vision_client::Result<T>) {
    let (sent, decoded) = testkit::exchange(DIR, name, testkit::client::<Client>, call);
    insta::assert_json_snapshot!(format!("{name}__sent"), sent);
    insta::assert_debug_snapshot!(format!("{name}__decoded"), decoded);
}

// ---- recorded from the sandbox ----

#[test]
fn detect() {
    check("detect", |c| {
        c.analyses().detect(&DetectRequest::new(IMAGE))
    });
}

#[test]
fn detect_options() {
    check("detect_options", |c| {
        c.analyses().detect(
            &DetectRequest::new(IMAGE)
                .model("accurate")
                .confidence_threshold(0.3)
                .max_objects(3),
        )
    });
}

#[test]
fn classify() {
    check("classify", |c| {
        c.analyses().classify(&ClassifyRequest::new(IMAGE))
    });
}

#[test]
fn classify_options() {
    check("classify_options", |c| {
        c.analyses()
            .classify(&ClassifyRequest::new(IMAGE).top_n(2).taxonomy("coco"))
    });
}

#[test]
fn ocr() {
    check("ocr", |c| c.analyses().ocr(&OcrRequest::new(IMAGE)));
}

#[test]
fn ocr_structured() {
    check("ocr_structured", |c| {
        c.analyses()
            .ocr(&OcrRequest::new(IMAGE).languages(["en", "de"]).structured())
    });
}

#[test]
fn faces() {
    check("faces", |c| c.analyses().faces(&FacesRequest::new(IMAGE)));
}

#[test]
fn faces_collection() {
    check("faces_collection", |c| {
        c.analyses().faces(
            &FacesRequest::new(IMAGE)
                .attributes(["age", "emotion", "gender"])
                .collection("col_staff"),
        )
    });
}

#[test]
fn status() {
    check("status", |c| c.status().get());
}

#[test]
fn status_quota_used() {
    check("status_quota_used", |c| c.status().get());
}

#[test]
fn error_quota_exceeded() {
    check("error_quota_exceeded", |c| {
        c.analyses().classify(&ClassifyRequest::new(IMAGE).top_n(1))
    });
}

#[test]
fn error_unknown_taxonomy() {
    check("error_unknown_taxonomy", |c| {
        c.analyses()
            .classify(&ClassifyRequest::new(IMAGE).taxonomy("birds-of-europe"))
    });
}

#[test]
fn error_unauthorized() {
    check("error_unauthorized", |c| c.status().get());
}

// The client refuses these before sending; the raw escape hatch still reaches the
// server's own checks.
#[test]
fn error_invalid_image_url() {
    check("error_invalid_image_url", |c| {
        c.raw().post::<Value, _>(
            "/v2/detect",
            &json!({"image_url": "street.jpg", "confidence_threshold": 0.5, "max_objects": 100}),
        )
    });
}

#[test]
fn error_threshold_out_of_range() {
    check("error_threshold_out_of_range", |c| {
        c.raw().post::<Value, _>(
            "/v2/detect",
            &json!({"image_url": IMAGE, "confidence_threshold": 1.5, "max_objects": 100}),
        )
    });
}

// ---- hand-written: odd but legal answers ----

#[test]
fn detect_bbox_floats() {
    check("detect_bbox_floats", |c| {
        c.analyses().detect(&DetectRequest::new(IMAGE))
    });
}

#[test]
fn faces_unknown_values() {
    check("faces_unknown_values", |c| {
        c.analyses().faces(&FacesRequest::new(IMAGE))
    });
}

#[test]
fn ocr_missing_fields() {
    check("ocr_missing_fields", |c| {
        c.analyses().ocr(&OcrRequest::new(IMAGE))
    });
}

#[test]
fn status_unknown_value() {
    check("status_unknown_value", |c| c.status().get());
}

#[test]
fn status_bad_period() {
    check("status_bad_period", |c| c.status().get());
}

#[test]
fn error_html_500() {
    check("error_html_500", |c| {
        c.analyses().detect(&DetectRequest::new(IMAGE))
    });
}

#[test]
fn error_quota_problem_json() {
    check("error_quota_problem_json", |c| {
        c.analyses().classify(&ClassifyRequest::new(IMAGE))
    });
}

// ---- refused before sending ----

#[test]
fn bad_input_is_refused_without_a_request() {
    let client = Client::builder()
        .base_url("http://127.0.0.1:9")
        .api_key("k")
        .max_retries(0)
        .build()
        .unwrap();
    let errors = [
        client
            .analyses()
            .detect(&DetectRequest::new("/street.jpg"))
            .unwrap_err(),
        client
            .analyses()
            .detect(&DetectRequest::new(IMAGE).confidence_threshold(-0.1))
            .unwrap_err(),
        client
            .analyses()
            .detect(&DetectRequest::new(IMAGE).max_objects(0))
            .unwrap_err(),
        client
            .analyses()
            .classify(&ClassifyRequest::new(IMAGE).top_n(0))
            .unwrap_err(),
        client
            .analyses()
            .ocr(&OcrRequest::new("mailto:a@b.c"))
            .unwrap_err(),
        client.analyses().faces(&FacesRequest::new("")).unwrap_err(),
    ];
    for err in errors {
        assert!(
            matches!(err, vision_client::Error::InvalidRequest(_)),
            "expected a refusal before sending, got {err:?}"
        );
    }
}
