//! Download a signed PDF with a progress bar (the `indicatif` crate).
//!
//! `cargo run -p esign-client --example download_progress [document-id] [destination]`.
//! Without a document id it sends one to the local sandbox, signs it there and pads the
//! signed PDF to 256 MiB so there is something to watch; memory stays flat whatever the
//! size, because the body is streamed to a temporary file and renamed at the end.

mod common;

use esign_client::documents::{DocumentSource, NewSigner, SendDocument};
use indicatif::{ProgressBar, ProgressStyle};

fn main() -> anyhow::Result<()> {
    let (client, sandbox) = common::client()?;
    let mut args = std::env::args().skip(1);
    let id = match (args.next(), &sandbox) {
        (Some(id), _) => id,
        (None, Some(sandbox)) => {
            let document = client.documents().send(
                &SendDocument::new(DocumentSource::bytes(
                    "big.pdf",
                    b"%PDF-1.4\n%%EOF\n".to_vec(),
                ))
                .signer(NewSigner::new("Ada Lovelace", "ada@example.com")),
            )?;
            common::sign_all(Some(sandbox), &document)?;
            sandbox
                .esign()
                .set_pdf_size(document.id.as_str(), 256 << 20);
            document.id.to_string()
        }
        (None, None) => anyhow::bail!("usage: download_progress <document-id> [destination]"),
    };
    let destination = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join(format!("{id}.pdf")));

    let bar = ProgressBar::new(0).with_style(ProgressStyle::with_template(
        "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    )?);
    let download = client
        .documents()
        .download(id.as_str())
        .on_progress(|done, total| {
            if let Some(total) = total {
                bar.set_length(total);
            }
            bar.set_position(done);
        })
        .to_path(&destination);
    bar.finish();
    let download = download?;
    println!(
        "{} bytes written to {}",
        download.bytes,
        destination.display()
    );
    if sandbox.is_some() {
        std::fs::remove_file(&destination)?;
    }
    Ok(())
}
