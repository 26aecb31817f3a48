//! vision-client against a running sandbox: every endpoint with its defaults, the
//! monthly quota reached, reported and reset, and a threshold that filters objects.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use e2e::sandbox_time_builder;
use sandbox::{Sandbox, Service};
use vision_client::{
    Client, ErrorKind,
    analyses::{ClassifyRequest, DetectRequest, FacesRequest, OcrRequest, OutputFormat},
    status::{ServiceStatus, UsagePeriod},
};

const IMAGE: &str = "https://images.example.com/street.jpg";

fn client(sandbox: &Sandbox) -> Client {
    Client::new(sandbox.vision().url(), sandbox.api_key()).unwrap()
}

#[test]
fn every_endpoint_with_its_defaults() {
    let sandbox = Sandbox::builder()
        .frozen_at(time::macros::datetime!(2026-01-15 10:00 UTC))
        .start()
        .unwrap();
    let client = client(&sandbox);

    let detection = client
        .analyses()
        .detect(&DetectRequest::new(IMAGE))
        .unwrap();
    assert!(!detection.objects.is_empty());
    assert!(detection.objects.len() <= 100);
    assert!(detection.objects.iter().all(|o| o.confidence >= 0.5));
    assert!(detection.processing_time_ms.is_some());
    for object in &detection.objects {
        let [x1, y1, x2, y2] = object.bbox.xyxy();
        assert!(x2 > x1 && y2 > y1 && x2 <= 1920 && y2 <= 1080, "{object:?}");
    }

    let classes = client
        .analyses()
        .classify(&ClassifyRequest::new(IMAGE))
        .unwrap();
    assert_eq!(classes.predictions.len(), 5, "top_n defaults to 5");
    assert!(
        classes
            .predictions
            .windows(2)
            .all(|w| w[0].confidence >= w[1].confidence)
    );
    let coco = client
        .analyses()
        .classify(&ClassifyRequest::new(IMAGE).taxonomy("coco").top_n(2))
        .unwrap();
    assert_eq!(coco.predictions.len(), 2);

    let text = client.analyses().ocr(&OcrRequest::new(IMAGE)).unwrap();
    assert!(!text.text.is_empty());
    assert!(text.blocks.is_empty(), "output_format defaults to text");
    let structured = client
        .analyses()
        .ocr(&OcrRequest::new(IMAGE).output_format(OutputFormat::Structured))
        .unwrap();
    assert_eq!(structured.text, text.text);
    let lines: Vec<&str> = structured.blocks.iter().map(|b| b.text.as_str()).collect();
    assert_eq!(lines.join("\n"), text.text);

    let faces = client.analyses().faces(&FacesRequest::new(IMAGE)).unwrap();
    assert!(!faces.faces.is_empty());
    for face in &faces.faces {
        let attributes = face.attributes.as_ref().unwrap();
        assert!(attributes.age_range.is_some() && attributes.emotion.is_some());
        assert!(attributes.gender.is_none(), "gender only when asked for");
        assert!(face.matches.is_empty());
    }
    let matched = client
        .analyses()
        .faces(
            &FacesRequest::new(IMAGE)
                .attributes(["gender"])
                .collection("col_staff"),
        )
        .unwrap();
    assert_eq!(matched.faces.len(), faces.faces.len());
    for (plain, with) in faces.faces.iter().zip(&matched.faces) {
        assert_eq!(plain.bbox, with.bbox, "the same faces whatever was asked");
        assert!(with.attributes.as_ref().unwrap().gender.is_some());
        assert_eq!(with.matches.len(), 1);
    }

    let status = client.status().get().unwrap();
    assert_eq!(status.status, ServiceStatus::Operational);
    assert_eq!(status.usage.calls_used, 7, "seven analyses so far");
    assert_eq!(
        status.usage.period,
        UsagePeriod::new(2026, time::Month::January)
    );
    assert!(status.usage.calls_limit > 7);

    // Deterministic: the same image gives the same answer.
    assert_eq!(
        client
            .analyses()
            .detect(&DetectRequest::new(IMAGE))
            .unwrap(),
        detection
    );
    let other = client
        .analyses()
        .detect(&DetectRequest::new("https://images.example.com/other.jpg"))
        .unwrap();
    assert_ne!(other.objects, detection.objects);
}

#[test]
fn a_threshold_filters_objects() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let all = client
        .analyses()
        .detect(&DetectRequest::new(IMAGE).confidence_threshold(0.0))
        .unwrap()
        .objects;
    let confident = client
        .analyses()
        .detect(&DetectRequest::new(IMAGE).confidence_threshold(0.9))
        .unwrap()
        .objects;
    assert!(
        confident.len() < all.len(),
        "{} of {} kept",
        confident.len(),
        all.len()
    );
    assert!(confident.iter().all(|o| o.confidence >= 0.9));
    let expected: Vec<_> = all
        .iter()
        .filter(|o| o.confidence >= 0.9)
        .cloned()
        .collect();
    assert_eq!(confident, expected, "the same objects, fewer of them");

    let top = client
        .analyses()
        .detect(
            &DetectRequest::new(IMAGE)
                .confidence_threshold(0.0)
                .max_objects(1),
        )
        .unwrap()
        .objects;
    assert_eq!(
        top,
        all[..1].to_vec(),
        "max_objects keeps the most confident"
    );

    // Out-of-range values never leave the client.
    let err = client
        .analyses()
        .detect(&DetectRequest::new(IMAGE).confidence_threshold(1.01))
        .unwrap_err();
    assert!(
        matches!(err, vision_client::Error::InvalidRequest(_)),
        "{err:?}"
    );
}

#[test]
fn the_quota_is_reached_reported_and_reset_next_month() {
    let sandbox = Arc::new(
        Sandbox::builder()
            .frozen_at(time::macros::datetime!(2026-01-31 22:00 UTC))
            .start()
            .unwrap(),
    );
    // Default retries, with waits recorded: a quota error must not be retried.
    let (builder, sleeper) =
        sandbox_time_builder::<Client>(&sandbox, Service::Vision, "sk_test_free");
    let client = builder.build().unwrap();
    let limit = sandbox.vision().quota("free");
    for i in 0..limit {
        client
            .analyses()
            .classify(&ClassifyRequest::new(IMAGE).top_n(1))
            .unwrap_or_else(|e| panic!("call {i}: {e}"));
    }
    let usage = client.status().get().unwrap().usage;
    assert_eq!((usage.calls_used, usage.calls_limit), (limit, limit));
    assert_eq!(usage.remaining(), 0);

    let err = client
        .analyses()
        .detect(&DetectRequest::new(IMAGE))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::QuotaExceeded, "{err}");
    assert_eq!(err.status(), Some(429));
    assert_eq!(err.api().unwrap().retry_after, None);
    assert!(
        sleeper.slept().is_empty(),
        "a quota error is not retried: {:?}",
        sleeper.slept()
    );
    assert_eq!(client.status().get().unwrap().usage.calls_used, limit);

    // February: a new period, a fresh count.
    sandbox.advance(Duration::from_secs(3 * 3600));
    client
        .analyses()
        .detect(&DetectRequest::new(IMAGE))
        .unwrap();
    let usage = client.status().get().unwrap().usage;
    assert_eq!(usage.period, UsagePeriod::new(2026, time::Month::February));
    assert_eq!(usage.calls_used, 1);
}
