//! esign-client against a running sandbox: the whole life of a document (send, verified
//! webhooks, both signatures, download checked against the served bytes), and the
//! failures: a body cut mid-download, a download before completion, an expired OAuth
//! token, a send whose connection drops, inputs refused before sending.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use core_http::config::{Auth, OAuth2Config};
use e2e::{SandboxClock, WebhookReceiver};
use esign_client::webhooks::{self, Event};
use esign_client::{
    Client, Error, ErrorKind,
    documents::{Document, DocumentSource, DocumentStatus, NewSigner, SendDocument, SignerStatus},
};
use sandbox::{Fault, Sandbox};

const CONTRACT: &[u8] = b"%PDF-1.4\n% a two-party contract\n%%EOF\n";

fn api_key_client(sandbox: &Sandbox) -> Client {
    Client::new(sandbox.esign().url(), sandbox.api_key()).unwrap()
}

fn oauth_client(sandbox: &Sandbox) -> Client {
    Client::with_oauth(
        sandbox.esign().url(),
        sandbox.esign().token_url(),
        sandbox::ESIGN_CLIENT_ID,
        sandbox::ESIGN_CLIENT_SECRET,
    )
    .unwrap()
}

fn two_party_contract() -> SendDocument {
    SendDocument::new(DocumentSource::bytes("contract.pdf", CONTRACT))
        .name("Services agreement")
        .signer(NewSigner::new("Ada Lovelace", "ada@example.com").order(1))
        .signer(NewSigner::new("Charles Babbage", "charles@example.com").order(2))
        .subject("Please sign")
        .metadata("deal", "D-42")
}

fn sign_all(sandbox: &Sandbox, document: &Document) {
    for signer in &document.signers {
        sandbox
            .esign()
            .sign(document.id.as_str(), Some(&signer.email))
            .unwrap();
    }
}

/// The entries of `dir`, to prove a failed download left nothing behind (not even its
/// temporary file).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The download's bytes fetched with plain ureq (and a token of its own), as a reference.
fn raw_download(sandbox: &Sandbox, id: &str) -> Vec<u8> {
    let token = ureq::post(sandbox.esign().token_url())
        .send_form([
            ("grant_type", "client_credentials"),
            ("client_id", sandbox::ESIGN_CLIENT_ID),
            ("client_secret", sandbox::ESIGN_CLIENT_SECRET),
        ])
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let token: serde_json::Value = serde_json::from_str(&token).unwrap();
    let token = token["access_token"].as_str().unwrap();
    let mut response = ureq::get(format!("{}/documents/{id}/download", sandbox.esign().url()))
        .header("authorization", format!("Bearer {token}"))
        .call()
        .unwrap();
    response
        .body_mut()
        .with_config()
        .limit(u64::MAX)
        .read_to_vec()
        .unwrap()
}

#[test]
fn the_whole_life_of_a_document() {
    let sandbox = e2e::sandbox().unwrap();
    let receiver = WebhookReceiver::start(0).unwrap();
    let endpoint = sandbox.add_webhook(receiver.url());
    let client = oauth_client(&sandbox);

    let sent = client.documents().send(&two_party_contract()).unwrap();
    assert_eq!(sent.status, DocumentStatus::Sent);
    assert_eq!(sent.name, "Services agreement");
    let emails: Vec<&str> = sent.signers.iter().map(|s| s.email.as_str()).collect();
    assert_eq!(emails, ["ada@example.com", "charles@example.com"]);
    assert!(
        sent.signers
            .iter()
            .all(|s| s.status == Some(SignerStatus::Pending))
    );

    // Charles signs second: the sandbox refuses him before Ada.
    let early = sandbox
        .esign()
        .sign(sent.id.as_str(), Some("charles@example.com"));
    assert!(early.unwrap_err().contains("not_your_turn"));

    sandbox
        .esign()
        .sign(sent.id.as_str(), Some("ada@example.com"))
        .unwrap();
    let halfway = client.documents().get(&sent.id).unwrap();
    assert_eq!(halfway.status, DocumentStatus::Sent);
    assert_eq!(halfway.signers[0].status, Some(SignerStatus::Signed));
    assert!(halfway.signers[0].signed_at.is_some());
    assert_eq!(halfway.signers[1].status, Some(SignerStatus::Pending));

    sandbox
        .esign()
        .sign(sent.id.as_str(), Some("charles@example.com"))
        .unwrap();
    let done = client.documents().get(&sent.id).unwrap();
    assert_eq!(done.status, DocumentStatus::Completed);
    assert!(done.status.is_final());
    let completed_at = done.completed_at.expect("a completed document has a time");

    // The webhooks: sent, signed twice, completed; each verified.
    let deliveries = sandbox.wait_for_deliveries(Duration::from_secs(20));
    assert_eq!(deliveries.len(), 4, "{deliveries:#?}");
    let delivered = receiver.drain(Duration::from_millis(500));
    let mut events: Vec<Event> = delivered
        .iter()
        .map(|d| webhooks::verify_and_parse(&endpoint.secret, &d.headers, &d.body).unwrap())
        .collect();
    events.sort_by_key(|e| match e {
        Event::Sent(_) => 0,
        Event::Signed(d) => d.signers.iter().filter(|s| s.signed_at.is_some()).count(),
        Event::Completed(_) => 3,
        _ => 4,
    });
    let types: Vec<&str> = events.iter().map(Event::event_type).collect();
    assert_eq!(
        types,
        [
            "document.sent",
            "document.signed",
            "document.signed",
            "document.completed"
        ]
    );
    for event in &events {
        assert_eq!(event.document().unwrap().id, sent.id);
    }
    match &events[3] {
        Event::Completed(document) => {
            assert_eq!(document.status, DocumentStatus::Completed);
            assert_eq!(document.completed_at, Some(completed_at));
        }
        other => panic!("expected document.completed, got {other:?}"),
    }
    // A tampered delivery does not verify.
    let mut tampered = delivered[0].body.clone();
    let at = tampered.len() / 2;
    tampered[at] ^= 1;
    assert!(
        webhooks::verify_and_parse(&endpoint.secret, &delivered[0].headers, &tampered).is_err()
    );

    // Download to a path: a real PDF naming the signers, byte for byte what was served.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signed.pdf");
    let mut progress = Vec::new();
    let download = client
        .documents()
        .download(&sent.id)
        .on_progress(|done, total| progress.push((done, total)))
        .to_path(&path)
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.starts_with(b"%PDF-"));
    assert!(bytes.trim_ascii_end().ends_with(b"%%EOF"));
    assert_eq!(download.bytes, bytes.len() as u64);
    assert_eq!(download.path.as_deref(), Some(path.as_path()));
    assert_eq!(bytes, raw_download(&sandbox, sent.id.as_str()));
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains("Signed by Ada Lovelace <ada@example.com> at 20"),
        "{text}"
    );
    assert!(text.contains("Signed by Charles Babbage <charles@example.com> at 20"));
    assert_eq!(
        progress.last(),
        Some(&(bytes.len() as u64, Some(bytes.len() as u64)))
    );
    assert_eq!(
        entries(dir.path()),
        ["signed.pdf"],
        "no temporary file is left"
    );

    // The same bytes streamed into memory.
    let mut memory = Vec::new();
    client
        .documents()
        .download_to(&sent.id, &mut memory)
        .unwrap();
    assert_eq!(memory, bytes);

    // Exactly one document was created.
    assert_eq!(sandbox.esign().documents().len(), 1);
}

#[test]
fn a_body_cut_mid_download_leaves_no_file() {
    let sandbox = e2e::sandbox().unwrap();
    let client = api_key_client(&sandbox);
    let document = client.documents().send(&two_party_contract()).unwrap();
    sign_all(&sandbox, &document);
    sandbox.esign().set_pdf_size(document.id.as_str(), 4 << 20);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signed.pdf");
    // An older copy at the destination stays as it was.
    let previous = dir.path().join("kept.pdf");
    std::fs::write(&previous, b"previous").unwrap();
    sandbox.inject(
        Fault::on("GET", &format!("/esign/documents/{}/download", document.id)).truncated_body(),
    );
    let err = client
        .documents()
        .download_to_path(&document.id, &path)
        .unwrap_err();
    assert!(
        matches!(err, Error::Io { .. } | Error::UnexpectedBody { .. }),
        "{err:?}"
    );
    assert!(!path.exists(), "a cut download must leave no file");
    assert_eq!(entries(dir.path()), ["kept.pdf"], "nor a temporary file");
    assert_eq!(std::fs::read(&previous).unwrap(), b"previous");

    // The same cut into a writer is an error too (the caller owns the writer).
    sandbox.inject(
        Fault::on("GET", &format!("/esign/documents/{}/download", document.id)).truncated_body(),
    );
    let mut memory = Vec::new();
    assert!(
        client
            .documents()
            .download_to(&document.id, &mut memory)
            .is_err()
    );

    // Without the fault the download succeeds: 4 MiB, all of it.
    let download = client
        .documents()
        .download_to_path(&document.id, &path)
        .unwrap();
    assert_eq!(download.bytes, 4 << 20);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 4 << 20);
}

#[test]
fn a_download_before_completion_is_409_and_leaves_no_file() {
    let sandbox = e2e::sandbox().unwrap();
    let client = api_key_client(&sandbox);
    let document = client.documents().send(&two_party_contract()).unwrap();
    sandbox
        .esign()
        .sign(document.id.as_str(), Some("ada@example.com"))
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signed.pdf");
    let err = client
        .documents()
        .download_to_path(&document.id, &path)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err:?}");
    assert_eq!(err.status(), Some(409));
    assert_eq!(
        err.api().and_then(|e| e.code.as_deref()),
        Some("document_not_completed")
    );
    assert!(!path.exists());
    assert!(entries(dir.path()).is_empty());

    // A day later the sandbox signs for Charles on its own, and the download works.
    sandbox.advance(Duration::from_secs(
        sandbox::AUTO_SIGN_AFTER_SECS as u64 + 1,
    ));
    assert_eq!(
        client.documents().get(&document.id).unwrap().status,
        DocumentStatus::Completed
    );
    client
        .documents()
        .download_to_path(&document.id, &path)
        .unwrap();
    assert!(std::fs::read(&path).unwrap().starts_with(b"%PDF-"));
}

#[test]
fn an_expired_token_is_refreshed_once_on_401() {
    let sandbox = e2e::sandbox().unwrap();
    let client = oauth_client(&sandbox);
    let document = client.documents().send(&two_party_contract()).unwrap();
    assert_eq!(sandbox.esign().token_requests(), 1);

    // The sandbox's token expires; the client, on real time, still believes in it: the
    // 401 makes it fetch a new token and repeat the call, once.
    sandbox.advance(Duration::from_secs(
        sandbox::TOKEN_LIFETIME_SECS as u64 + 60,
    ));
    let again = client.documents().get(&document.id).unwrap();
    assert_eq!(again.id, document.id);
    assert_eq!(sandbox.esign().token_requests(), 2);
    client.documents().get(&document.id).unwrap();
    assert_eq!(
        sandbox.esign().token_requests(),
        2,
        "the new token is reused"
    );
}

#[test]
fn a_token_near_expiry_is_refreshed_before_use() {
    let sandbox = Arc::new(e2e::sandbox().unwrap());
    // This client reads the sandbox clock, so it sees its token age.
    let client: Client = Client::builder()
        .base_url(sandbox.esign().url())
        .auth(Auth::oauth2(OAuth2Config::new(
            sandbox.esign().token_url(),
            sandbox::ESIGN_CLIENT_ID,
            sandbox::ESIGN_CLIENT_SECRET,
        )))
        .clock(SandboxClock::new(sandbox.clone()))
        .max_retries(0)
        .build()
        .unwrap();
    let document = client.documents().send(&two_party_contract()).unwrap();
    sandbox.advance(Duration::from_secs(sandbox::TOKEN_LIFETIME_SECS as u64 - 5));
    // The sandbox would still take the old token for 5 s, but it is inside the client's
    // refresh margin (5 minutes): a new one is fetched before the call, with no 401.
    client.documents().get(&document.id).unwrap();
    assert_eq!(sandbox.esign().token_requests(), 2);
}

#[test]
fn fifty_calls_from_four_threads_make_one_token_request() {
    let sandbox = e2e::sandbox().unwrap();
    // Documents belong to the credentials that sent them: send with these, then start a
    // new client (an empty token cache) on the same credentials.
    let document = oauth_client(&sandbox)
        .documents()
        .send(&two_party_contract())
        .unwrap();
    assert_eq!(sandbox.esign().token_requests(), 1);
    let client = oauth_client(&sandbox);
    let start = Arc::new(Barrier::new(4));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let client = client.clone();
            let start = start.clone();
            let id = document.id.clone();
            std::thread::spawn(move || {
                start.wait();
                let calls = if t < 2 { 13 } else { 12 };
                for _ in 0..calls {
                    assert_eq!(client.documents().get(&id).unwrap().id, id);
                }
                calls
            })
        })
        .collect();
    let calls: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(calls, 50);
    assert_eq!(
        sandbox.esign().token_requests(),
        2,
        "one token for the new client, shared by its four threads"
    );
}

#[test]
fn a_send_whose_connection_drops_creates_exactly_one_document() {
    let sandbox = e2e::sandbox().unwrap();
    let client = api_key_client(&sandbox);
    // The sandbox creates the document, then drops the connection before answering: the
    // client resends with the same Idempotency-Key and gets the same document back.
    sandbox.inject(Fault::on("POST", "/esign/documents").drop_connection());
    let document = client.documents().send(&two_party_contract()).unwrap();
    let all = sandbox.esign().documents();
    assert_eq!(all.len(), 1, "exactly one document: {all:#?}");
    assert_eq!(all[0]["id"], document.id.as_str());
    let sent_events = sandbox
        .events()
        .iter()
        .filter(|e| e.event_type == "document.sent")
        .count();
    assert_eq!(sent_events, 1, "and it was sent to the signers once");

    // A 503 before handling is retried, and also creates one document.
    sandbox.inject(
        Fault::on("POST", "/esign/documents")
            .status(503)
            .retry_after(0),
    );
    client.documents().send(&two_party_contract()).unwrap();
    assert_eq!(sandbox.esign().documents().len(), 2);

    // A caller's own key makes a resend after a restart safe too.
    let keyed = two_party_contract().idempotency_key("contract-D-42");
    let first = client.documents().send(&keyed).unwrap();
    let second = client.documents().send(&keyed).unwrap();
    assert_eq!(first.id, second.id);
    assert_eq!(sandbox.esign().documents().len(), 3);
}

#[test]
fn bad_inputs_are_refused_before_sending() {
    let sandbox = e2e::sandbox().unwrap();
    let client = api_key_client(&sandbox);
    let refused = |send: SendDocument| -> String {
        match client.documents().send(&send) {
            Err(Error::InvalidRequest(why)) => why,
            other => panic!("expected InvalidRequest, got {other:?}"),
        }
    };
    let contract = || DocumentSource::bytes("contract.pdf", CONTRACT);

    let why = refused(SendDocument::new(contract()));
    assert!(why.contains("signer"), "{why}");
    let why =
        refused(SendDocument::new(contract()).signer(NewSigner::new("Ada", "ada-at-example.com")));
    assert!(why.contains("ada-at-example.com"), "{why}");
    let why = refused(
        SendDocument::new(DocumentSource::bytes("empty.pdf", Vec::new()))
            .signer(NewSigner::new("Ada", "ada@example.com")),
    );
    assert!(why.contains("empty"), "{why}");
    let why = refused(
        SendDocument::new(contract())
            .signer(NewSigner::new("Ada", "ada@example.com"))
            .max_size(10),
    );
    assert!(why.contains("10"), "{why}");
    let dir = tempfile::tempdir().unwrap();
    let why = refused(
        SendDocument::new(DocumentSource::path(dir.path().join("missing.pdf")))
            .signer(NewSigner::new("Ada", "ada@example.com")),
    );
    assert!(why.contains("missing.pdf"), "{why}");
    let why = refused(
        SendDocument::new(DocumentSource::url("ftp://files.example.com/a.pdf"))
            .signer(NewSigner::new("Ada", "ada@example.com")),
    );
    assert!(why.contains("file_url"), "{why}");

    // A file over the default 25 MiB, on disk: refused from its size, never read.
    let big = dir.path().join("big.pdf");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(esign_client::documents::DEFAULT_MAX_DOCUMENT_SIZE + 1)
        .unwrap();
    let why = refused(
        SendDocument::new(DocumentSource::path(&big))
            .signer(NewSigner::new("Ada", "ada@example.com")),
    );
    assert!(why.contains("25 MiB") || why.contains("26214400"), "{why}");

    assert!(sandbox.esign().documents().is_empty(), "nothing was sent");
}

#[test]
fn a_large_file_is_streamed_and_arrives_intact() {
    let sandbox = e2e::sandbox().unwrap();
    let client = api_key_client(&sandbox);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scan.pdf");
    // 20 MiB, just under the limit: the body is ~27 MiB of base64, encoded as written.
    let mut content = b"%PDF-1.4\n".to_vec();
    content.resize(20 << 20, b'x');
    std::fs::write(&path, &content).unwrap();
    let document = client
        .documents()
        .send(
            &SendDocument::new(DocumentSource::path(&path))
                .signer(NewSigner::new("Ada", "ada@example.com")),
        )
        .unwrap();
    assert_eq!(document.extra["file"]["size"], 20 << 20);
    assert_eq!(document.extra["file"]["filename"], "scan.pdf");
}

#[test]
fn credentials_never_show() {
    let sandbox = e2e::sandbox().unwrap();
    let client = Client::with_oauth(
        sandbox.esign().url(),
        sandbox.esign().token_url(),
        sandbox::ESIGN_CLIENT_ID,
        "wrong_secret_value",
    )
    .unwrap();
    let err = client.documents().get("doc_1").unwrap_err();
    let shown = format!("{err} {err:?} {client:?}");
    assert!(!shown.contains("wrong_secret_value"), "{shown}");
    let keyed = Client::new(sandbox.esign().url(), "sk_test_secret_value_42").unwrap();
    let err = keyed.documents().get("doc_1").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthorized);
    let shown = format!("{err} {err:?} {keyed:?}");
    assert!(!shown.contains("sk_test_secret_value_42"), "{shown}");
}
