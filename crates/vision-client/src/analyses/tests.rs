//! The analyses' requests, checked and written as the service takes them.
#![allow(clippy::unwrap_used)]
use super::*;

#[test]
fn inputs_are_checked_with_a_reason() {
    let bad = [
        DetectRequest::new("example.com/a.jpg").validate(),
        DetectRequest::new("ftp://example.com/a.jpg").validate(),
        DetectRequest::new("https://example.com/a b.jpg").validate(),
        DetectRequest::new("https://x.test/a.jpg")
            .confidence_threshold(1.5)
            .validate(),
        DetectRequest::new("https://x.test/a.jpg")
            .confidence_threshold(f64::NAN)
            .validate(),
        DetectRequest::new("https://x.test/a.jpg")
            .max_objects(0)
            .validate(),
        ClassifyRequest::new("https://x.test/a.jpg")
            .top_n(0)
            .validate(),
        OcrRequest::new("https://x.test/a.jpg")
            .languages([""])
            .validate(),
        FacesRequest::new("https://x.test/a.jpg")
            .collection(" ")
            .validate(),
    ];
    for result in bad {
        let err = result.unwrap_err();
        assert!(matches!(err, Error::InvalidRequest(_)), "{err:?}");
    }
    DetectRequest::new("http://127.0.0.1:8080/a.jpg")
        .confidence_threshold(0.0)
        .validate()
        .unwrap();
    DetectRequest::new("https://x.test/a.jpg")
        .confidence_threshold(1.0)
        .validate()
        .unwrap();
}

#[test]
fn defaults_are_sent() {
    let body = serde_json::to_value(DetectRequest::new("https://x.test/a.jpg")).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"image_url": "https://x.test/a.jpg", "confidence_threshold": 0.5, "max_objects": 100})
    );
    let body = serde_json::to_value(OcrRequest::new("https://x.test/a.jpg")).unwrap();
    assert_eq!(body["output_format"], "text");
}
