//! The client against recorded and hand-written server answers (tests/fixtures/*.json),
//! served by mockito over a real socket. Each case snapshots what the client sent and
//! what it made of the answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Debug;

use esign_client::webhooks::{self, WebhookEvent};
use esign_client::{
    Client,
    documents::{DocumentId, DocumentSource, NewSigner, SendDocument},
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const SAMPLE: &[u8] = b"%PDF-1.4\n% sample contract\n%%EOF\n";

fn check<T: Debug>(name: &str, call: impl FnOnce(&Client) -> esign_client::Result<T>) {
    let (sent, decoded) = testkit::exchange(DIR, name, testkit::client::<Client>, call);
    insta::assert_json_snapshot!(format!("{name}__sent"), sent);
    insta::assert_debug_snapshot!(format!("{name}__decoded"), decoded);
}

/// The document id in a recorded path such as `/documents/{id}` or `.../download`.
fn recorded_id(name: &str) -> DocumentId {
    let fixture = testkit::load(DIR, name);
    let path = fixture.request["path"].as_str().unwrap().to_owned();
    DocumentId::new(path.split('/').nth(2).unwrap())
}

fn contract() -> SendDocument {
    contract_from(DocumentSource::bytes("contract.pdf", SAMPLE))
}

fn contract_from(source: DocumentSource) -> SendDocument {
    SendDocument::new(source)
        .name("Services agreement")
        .signer(NewSigner::new("Ada Lovelace", "ada@example.com").order(1))
        .signer(NewSigner::new("Charles Babbage", "charles@example.com").order(2))
        .subject("Please sign")
        .metadata("deal", "D-42")
}

// ---- recorded from the sandbox ----

#[test]
fn documents_send() {
    // The body is streamed (base64 encoded while written); the sent JSON must equal the
    // recorded one.
    check("documents_send", |c| c.documents().send(&contract()));
}

#[test]
fn documents_send_from_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("contract.pdf");
    std::fs::write(&path, SAMPLE).unwrap();
    let send = contract_from(DocumentSource::path(&path));
    // Same recorded exchange: a file on disk sends the same bytes as memory.
    check("documents_send", |c| c.documents().send(&send));
}

#[test]
fn documents_send_url() {
    check("documents_send_url", |c| {
        c.documents().send(
            &SendDocument::new(DocumentSource::url("https://files.example.com/nda.pdf"))
                .signer(NewSigner::new("Grace Hopper", "grace@example.com")),
        )
    });
}

#[test]
fn documents_get() {
    let id = recorded_id("documents_get");
    check("documents_get", |c| c.documents().get(id));
}

#[test]
fn documents_get_completed() {
    let id = recorded_id("documents_get_completed");
    check("documents_get_completed", |c| c.documents().get(id));
}

#[test]
fn documents_download() {
    let id = recorded_id("documents_download");
    let served = testkit::load(DIR, "documents_download").response["body"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut pdf = Vec::new();
    check("documents_download", |c| {
        c.documents().download_to(id, &mut pdf)
    });
    assert_eq!(
        pdf,
        served.as_bytes(),
        "the bytes written are the bytes served"
    );
}

#[test]
fn error_not_completed() {
    let id = recorded_id("error_not_completed");
    let mut pdf = Vec::new();
    check("error_not_completed", |c| {
        c.documents().download_to(id, &mut pdf)
    });
    assert!(pdf.is_empty());
}

#[test]
fn error_document_not_found() {
    check("error_document_not_found", |c| {
        c.documents().get("doc_missing")
    });
}

#[test]
fn error_unauthorized() {
    let id = recorded_id("error_unauthorized");
    check("error_unauthorized", |c| c.documents().get(id));
}

// The client refuses these before sending; the raw escape hatch still reaches the
// server's own checks.
#[test]
fn error_invalid_signer() {
    check("error_invalid_signer", |c| {
        c.raw().post::<serde_json::Value, _>(
            "/documents",
            &serde_json::json!({
                "file_url": "https://files.example.com/nda.pdf",
                "signers": [{"name": "Nobody", "email": "not-an-email"}]
            }),
        )
    });
}

#[test]
fn error_no_signers() {
    check("error_no_signers", |c| {
        c.raw().post::<serde_json::Value, _>(
            "/documents",
            &serde_json::json!({"file_url": "https://files.example.com/nda.pdf", "signers": []}),
        )
    });
}

// ---- hand-written: odd but legal answers ----

#[test]
fn documents_get_unknown_values() {
    check("documents_get_unknown_values", |c| {
        c.documents().get("doc_1")
    });
}

#[test]
fn download_html_200() {
    let mut pdf = Vec::new();
    check("download_html_200", |c| {
        c.documents().download_to("doc_1", &mut pdf)
    });
    assert!(
        pdf.is_empty(),
        "nothing written for a page that is not a PDF"
    );
}

#[test]
fn download_not_a_pdf() {
    let mut pdf = Vec::new();
    check("download_not_a_pdf", |c| {
        c.documents().download_to("doc_1", &mut pdf)
    });
    assert!(pdf.is_empty());
}

#[test]
fn download_without_eof() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signed.pdf");
    check("download_without_eof", |c| {
        c.documents().download_to_path("doc_1", &path)
    });
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no file, no temp file"
    );
}

#[test]
fn download_octet_stream() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signed.pdf");
    let mut seen = Vec::new();
    let result = {
        testkit::exchange(
            DIR,
            "download_octet_stream",
            testkit::client::<Client>,
            |c| {
                c.documents()
                    .download("doc_1")
                    .on_progress(|done, total| seen.push((done, total)))
                    .to_path(&path)
            },
        )
        .1
    };
    let download = result.unwrap();
    assert_eq!(download.bytes, 16);
    assert_eq!(std::fs::read(&path).unwrap(), b"%PDF-1.7\n%%EOF\r\n");
    assert_eq!(seen.last(), Some(&(16, Some(16))));
}

#[test]
fn error_problem_json_422() {
    check("error_problem_json_422", |c| {
        c.documents().send(&contract())
    });
}

// ---- webhook events ----

fn event(name: &str) -> Result<webhooks::Event, webhooks::WebhookError> {
    let (body, headers, now) = testkit::signed_delivery(DIR, name);
    webhooks::verify_and_parse_at(testkit::WEBHOOK_SECRET, &headers, body.as_bytes(), now)
}

#[test]
fn webhook_events() {
    for name in [
        "event_document_sent",
        "event_document_signed",
        "event_document_completed",
        "event_document_declined",
        "event_document_viewed_voided_expired",
        "event_unknown_type",
    ] {
        let parsed = event(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        insta::assert_debug_snapshot!(name, parsed);
    }
    // The other documented types decode to their variants.
    let data = serde_json::json!({"id": "doc_1", "status": "voided"});
    for (event_type, expected) in [
        ("document.voided", "document.voided"),
        ("document.expired", "document.expired"),
    ] {
        let envelope = serde_json::from_value(serde_json::json!({
            "type": event_type, "timestamp": "2026-01-05T10:00:00Z", "data": data
        }))
        .unwrap();
        let parsed = webhooks::Event::from_envelope(envelope).unwrap();
        assert_eq!(parsed.event_type(), expected);
        assert!(parsed.document().is_some());
    }
}
