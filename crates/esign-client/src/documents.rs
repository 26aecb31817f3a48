//! The documents resource: send one for signature, get it, download the signed PDF;
//! the document and its signers as the service answers them; what to send; a download.

use std::io::Write;
use std::path::Path;

use core_http::Result;

use crate::client::Client;
pub use crate::download::{Download, DownloadRequest};
pub use crate::models::{Document, DocumentId, DocumentStatus, Signer, SignerStatus};
pub use crate::send::{DEFAULT_MAX_DOCUMENT_SIZE, DocumentSource, NewSigner, SendDocument};

/// The documents resource: `client.documents()`.
#[derive(Debug, Clone, Copy)]
pub struct Documents<'a> {
    client: &'a Client,
}

impl<'a> Documents<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Documents { client }
    }

    /// Sends a document for signature. `POST /documents`.
    ///
    /// Checked before sending: at least one signer, plausible and distinct emails, a
    /// non-empty file no larger than [`SendDocument::max_size`], an absolute http(s)
    /// URL. The file is base64-encoded while the request is written, so neither it nor
    /// its encoding is held in memory whole (a path is read from disk for each attempt).
    ///
    /// Every attempt carries the same `Idempotency-Key`, so the call is retried after a
    /// dropped connection or a 5xx without the risk of a second document: the service
    /// answers a repeated key with the document it already created. When the outcome is
    /// still unknown after the retries (the time ran out after the request went out),
    /// the error is [`Error::Unsettled`](crate::Error::Unsettled), naming the key: the
    /// document may have been created, so send it again only with that key
    /// ([`SendDocument::idempotency_key`] with [`Error::repeat_with`](crate::Error::repeat_with)'s
    /// id), never with a new one.
    ///
    /// ```no_run
    /// # let client = esign_client::Client::new("https://api.example.com/v1", "sk")?;
    /// use esign_client::documents::{DocumentSource, NewSigner, SendDocument};
    /// let document = client.documents().send(
    ///     &SendDocument::new(DocumentSource::path("contract.pdf"))
    ///         .signer(NewSigner::new("Ada Lovelace", "ada@example.com"))
    ///         .subject("Please sign"),
    /// )?;
    /// println!("{} is {:?}", document.id, document.status);
    /// # Ok::<(), esign_client::Error>(())
    /// ```
    pub fn send(&self, document: &SendDocument) -> Result<Document> {
        document.validate()?;
        let key = document
            .idempotency_key
            .clone()
            .unwrap_or_else(core_http::service::uuid_v4);
        let request = self.client.http().post("/documents").idempotency_key(key);
        document.body(request)?.send()?.json_data()
    }

    /// A document with its signers and status. `GET /documents/{id}`.
    ///
    /// ```no_run
    /// # let client = esign_client::Client::new("https://api.example.com/v1", "sk")?;
    /// let document = client.documents().get("doc_123")?;
    /// println!("{:?}, {} signers", document.status, document.signers.len());
    /// # Ok::<(), esign_client::Error>(())
    /// ```
    pub fn get(&self, id: impl Into<DocumentId>) -> Result<Document> {
        let id = id.into();
        let path = format!("/documents/{}", id.segment()?);
        read_document(self.client.http(), &path, &id)
    }

    /// Waits until the document is completed (everyone signed), reading it again and
    /// again (`GET /documents/{id}`) within `wait` (a `Duration`, or a
    /// [`Wait`](core_http::wait::Wait) for the pace): the completed document, ready for
    /// [`download_to_path`](Documents::download_to_path). A document declined, voided or
    /// expired ends the wait at once: [`WaitError::Ended`](core_http::wait::WaitError::Ended)
    /// holds it as read (who declined, when). The deadline passing first is
    /// [`WaitError::TimedOut`](core_http::wait::WaitError::TimedOut) with the last
    /// reading. A status this version does not know is taken as not final yet.
    ///
    /// ```no_run
    /// # let client = esign_client::Client::new("https://api.example.com/v1", "sk")?;
    /// use std::time::Duration;
    /// let document = client.documents().wait_until_completed("doc_123", Duration::from_secs(3600))?;
    /// client.documents().download_to_path(&document.id, "signed.pdf")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wait_until_completed(
        &self,
        id: impl Into<DocumentId>,
        wait: impl Into<core_http::wait::Wait>,
    ) -> std::result::Result<Document, core_http::wait::WaitError<Document>> {
        use core_http::wait::{Seen, WaitError};
        let id = id.into();
        let path = match id.segment() {
            Ok(segment) => format!("/documents/{segment}"),
            Err(e) => return Err(WaitError::Call(e)),
        };
        self.client.http().wait_for(
            format!("document {id} to be completed"),
            &wait.into(),
            |http| read_document(http, &path, &id),
            |document: &Document| match &document.status {
                DocumentStatus::Completed => Seen::reached(&document.status),
                DocumentStatus::Declined | DocumentStatus::Voided | DocumentStatus::Expired => {
                    Seen::ended(&document.status)
                }
                other => Seen::pending(other),
            },
        )
    }

    /// Streams the signed PDF into `to`. `GET /documents/{id}/download`.
    ///
    /// Nothing is written unless the body starts with `%PDF-`; a short body (fewer bytes
    /// than `Content-Length`), a body that is not a PDF, or a 409 (not completed yet) is
    /// an error. `to` may hold a partial file after an error in mid-stream: use
    /// [`download_to_path`](Documents::download_to_path) for a file that is either
    /// complete or absent.
    ///
    /// ```no_run
    /// # let client = esign_client::Client::new("https://api.example.com/v1", "sk")?;
    /// let mut pdf = Vec::new();
    /// let download = client.documents().download_to("doc_123", &mut pdf)?;
    /// println!("{} bytes", download.bytes);
    /// # Ok::<(), esign_client::Error>(())
    /// ```
    pub fn download_to(&self, id: impl Into<DocumentId>, to: &mut impl Write) -> Result<Download> {
        self.download(id).to_writer(to)
    }

    /// Downloads the signed PDF to `path` atomically: into a temporary file in the same
    /// folder, checked, flushed to disk, then renamed over `path`. On any error the
    /// temporary file is removed and `path` is left as it was.
    ///
    /// ```no_run
    /// # let client = esign_client::Client::new("https://api.example.com/v1", "sk")?;
    /// let download = client.documents().download_to_path("doc_123", "signed.pdf")?;
    /// println!("{} bytes written", download.bytes);
    /// # Ok::<(), esign_client::Error>(())
    /// ```
    pub fn download_to_path(
        &self,
        id: impl Into<DocumentId>,
        path: impl AsRef<Path>,
    ) -> Result<Download> {
        self.download(id).to_path(path)
    }

    /// A download to configure (progress callback) before choosing its destination.
    ///
    /// ```no_run
    /// # let client = esign_client::Client::new("https://api.example.com/v1", "sk")?;
    /// client
    ///     .documents()
    ///     .download("doc_123")
    ///     .on_progress(|done, total| eprintln!("{done} of {total:?} bytes"))
    ///     .to_path("signed.pdf")?;
    /// # Ok::<(), esign_client::Error>(())
    /// ```
    pub fn download(&self, id: impl Into<DocumentId>) -> DownloadRequest<'a> {
        DownloadRequest::new(self.client, id.into())
    }
}

/// The document at `path`, checked to be `id`'s.
fn read_document(http: &core_http::HttpClient, path: &str, id: &DocumentId) -> Result<Document> {
    let document: Document = http.get(path).send()?.json_data()?;
    core_http::service::check_answered("document", id.as_str(), document.id.as_str())?;
    Ok(document)
}

/// Reached from the client.
impl Client {
    /// Documents: send, get, download.
    ///
    /// ```no_run
    /// # let client = esign_client::Client::new("https://api.example.com/v1", "sk")?;
    /// let document = client.documents().get("doc_1")?;
    /// println!("{} is {}", document.name, document.status);
    /// # Ok::<(), esign_client::Error>(())
    /// ```
    pub fn documents(&self) -> Documents<'_> {
        Documents::new(self)
    }
}
