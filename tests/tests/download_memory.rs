//! A 64 MiB download sent as fast as the client reads it: the client's resident memory
//! stays bounded (the esign README's "memory stays constant"), whatever its connections'
//! read size. Its own test binary, so the peak resident memory is this test's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use testkit::bench::{memory_mib, reset_peak};
use testkit::hostile::{Act, Hostile};

const BODY: u64 = 64 << 20;

#[test]
fn a_large_download_keeps_memory_bounded_and_leaves_nothing_when_it_is_not_a_pdf() {
    // The body starts as a PDF but never ends as one (no `%%EOF`): the whole of it is
    // read and written before the check refuses it.
    let server = Hostile::start(|_| {
        let mut head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ncontent-length: {}\r\n\r\n",
            BODY + 5
        )
        .into_bytes();
        head.extend_from_slice(b"%PDF-");
        Act::Flood {
            head,
            len: BODY,
            fill: b'x',
        }
    });
    let dir = std::env::temp_dir().join(format!("download-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("signed.pdf");
    let client = esign_client::Client::new(server.url(), "sk_test").unwrap();
    reset_peak();
    let before = memory_mib("VmHWM");
    let result = client.documents().download_to_path("doc_1", &path);
    let grown = memory_mib("VmHWM") - before;
    eprintln!("a {} MiB download: peak grew {grown:.1} MiB", BODY >> 20);
    let err = result.expect_err("a body without %%EOF is not a PDF");
    assert!(err.to_string().contains("PDF"), "{err}");
    assert!(!path.exists(), "nothing is left at the path");
    assert_eq!(server.count("GET"), 1, "read once, not retried");
    let _ = std::fs::remove_dir_all(&dir);
    // Holding the body would take 64 MiB; the download's buffers are under 1 MiB.
    assert!(
        grown < 16.0,
        "grew by {grown:.1} MiB over a {} MiB download",
        BODY >> 20
    );
}
