//! The whole script: send a contract to two signers, wait until both signed, download
//! the signed PDF (with a progress bar).
//!
//! `cargo run -p esign-client --example esign_quickstart [contract.pdf]` runs against a
//! local sandbox, which signs through its control endpoint; set `ESIGN_BASE_URL` and
//! `ESIGN_API_KEY` (or the OAuth variables) to use a real service, where the wait lasts
//! until the signers have signed (at most a week).

mod common;

use std::time::Duration;

use esign_client::documents::{DocumentSource, DocumentStatus, NewSigner, SendDocument};
use esign_client::wait::{Wait, WaitError};

/// A tiny but valid PDF, used when no file is given.
const SAMPLE_PDF: &[u8] =
    b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

fn main() -> anyhow::Result<()> {
    let (client, sandbox) = common::client()?;
    let source = match std::env::args().nth(1) {
        Some(path) => DocumentSource::path(path),
        None => DocumentSource::bytes("contract.pdf", SAMPLE_PDF.to_vec()),
    };

    let document = client.documents().send(
        &SendDocument::new(source)
            .name("Services agreement")
            .signer(NewSigner::new("Ada Lovelace", "ada@example.com").order(1))
            .signer(NewSigner::new("Charles Babbage", "charles@example.com").order(2))
            .subject("Please sign the services agreement")
            .metadata("deal", "D-42"),
    )?;
    println!(
        "sent {} to {} signer(s): {:?}",
        document.id,
        document.signers.len(),
        document.status
    );

    // Downloading now is refused: nothing is written until every signer has signed.
    let early = std::env::temp_dir().join(format!("{}-early.pdf", document.id));
    match client.documents().download_to_path(&document.id, &early) {
        Err(e) => println!("download before completion refused: {e}"),
        Ok(_) => anyhow::bail!("a download before completion should be refused"),
    }
    anyhow::ensure!(!early.exists(), "a refused download must leave no file");

    common::sign_all(sandbox.as_ref(), &document)?;
    // Wait until everyone signed: one call, one deadline; a decline ends it at once.
    let wait = Wait::up_to(Duration::from_secs(7 * 24 * 3600))
        .interval(Duration::from_secs(1), Duration::from_secs(300));
    let document = match client.documents().wait_until_completed(&document.id, wait) {
        Ok(document) => document,
        Err(WaitError::Ended { state, .. }) => anyhow::bail!("the contract was {state}"),
        Err(e) => return Err(e.into()),
    };
    println!("now {:?}", document.status);
    anyhow::ensure!(document.status == DocumentStatus::Completed);

    let path = std::env::temp_dir().join(format!("{}-signed.pdf", document.id));
    let download = client
        .documents()
        .download(&document.id)
        .on_progress(common::progress_bar)
        .to_path(&path)?;
    println!("signed PDF: {} bytes at {}", download.bytes, path.display());
    std::fs::remove_file(&path)?;
    Ok(())
}
