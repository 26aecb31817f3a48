//! Detect objects, classify, read text, find faces, and check the usage quota.
//!
//! `cargo run -p vision-client --example quickstart [image-url]` runs against a local
//! sandbox; set `VISION_BASE_URL` and `VISION_API_KEY` to use a real service.

mod common;

use vision_client::analyses::{ClassifyRequest, DetectRequest, FacesRequest, OcrRequest};

fn main() -> anyhow::Result<()> {
    let image = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "https://images.example.com/street.jpg".to_owned());
    let (client, _sandbox) = common::client()?;

    let detection = client
        .analyses()
        .detect(&DetectRequest::new(&image).confidence_threshold(0.6))?;
    println!("{} objects (threshold 0.6):", detection.objects.len());
    for object in &detection.objects {
        let [x, y, w, h] = object.bbox.xywh();
        println!(
            "  {:<14} {:>5.1}%  at ({x}, {y}), {w}x{h}",
            object.label,
            object.confidence * 100.0
        );
    }

    let classes = client
        .analyses()
        .classify(&ClassifyRequest::new(&image).top_n(3))?;
    let labels: Vec<String> = classes
        .predictions
        .iter()
        .map(|p| format!("{} ({:.0}%)", p.label, p.confidence * 100.0))
        .collect();
    println!("looks like: {}", labels.join(", "));

    let text = client
        .analyses()
        .ocr(&OcrRequest::new(&image).languages(["en"]).structured())?;
    println!("text: {:?} in {} block(s)", text.text, text.blocks.len());

    let faces = client
        .analyses()
        .faces(&FacesRequest::new(&image).attributes(["age", "emotion"]))?;
    for face in &faces.faces {
        let attributes = face.attributes.as_ref();
        println!(
            "  face at {:?}: age {:?}, {}",
            face.bbox.xyxy(),
            attributes.and_then(|a| a.age_range),
            attributes
                .and_then(|a| a.emotion.as_ref())
                .map_or("?".to_owned(), |e| e.to_string())
        );
    }

    let status = client.status().get()?;
    println!(
        "service {}; {} of {} calls used in {}",
        status.status, status.usage.calls_used, status.usage.calls_limit, status.usage.period
    );

    match client.analyses().detect(&DetectRequest::new("not a url")) {
        Err(e) if matches!(e, vision_client::Error::InvalidRequest(_)) => {
            println!("refused before sending: {e}")
        }
        other => anyhow::bail!("a bad URL should be refused, got {other:?}"),
    }
    Ok(())
}
