//! Documents: send one for signature, get it, download the signed PDF.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use core_http::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::client::Client;
use crate::encode::{Base64Reader, encoded_len};

/// The default largest document [`Documents::send`] accepts: 25 MiB.
pub const DEFAULT_MAX_DOCUMENT_SIZE: u64 = 25 * 1024 * 1024;

core_http::string_id! {
    /// The id of a document.
    pub struct DocumentId;
}

core_http::string_enum! {
    /// Where a document stands. Values the service adds later are kept as sent.
    pub enum DocumentStatus {
        /// Not sent yet.
        Draft = "draft",
        /// Sent to the signers.
        Sent = "sent",
        /// Delivered to the signers.
        Delivered = "delivered",
        /// Signed by some signers.
        Signed = "signed",
        /// Signed by everyone: the signed PDF can be downloaded.
        Completed = "completed",
        /// A signer declined.
        Declined = "declined",
        /// Withdrawn by the sender.
        Voided = "voided",
        /// Not completed in time.
        Expired = "expired",
    }
}

impl DocumentStatus {
    /// Whether the document will not change any more.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            DocumentStatus::Completed
                | DocumentStatus::Declined
                | DocumentStatus::Voided
                | DocumentStatus::Expired
        )
    }
}

core_http::string_enum! {
    /// Where one signer stands.
    pub enum SignerStatus {
        /// Not signed yet.
        Pending = "pending",
        /// Has opened the document.
        Viewed = "viewed",
        /// Has signed.
        Signed = "signed",
        /// Refused to sign.
        Declined = "declined",
    }
}

/// A document and its signers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Document {
    /// Its id.
    pub id: DocumentId,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Where it stands.
    pub status: DocumentStatus,
    /// The signers, with their progress.
    #[serde(default)]
    pub signers: Vec<Signer>,
    /// When it was created.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_at: Option<OffsetDateTime>,
    /// When it last changed.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_at: Option<OffsetDateTime>,
    /// When the last signer signed.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub completed_at: Option<OffsetDateTime>,
    /// Fields this version does not model (the document's record is not shown in the
    /// service's document), kept as sent: `file`, `subject`, `metadata`, ...
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A signer of a document, as the service reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Signer {
    /// Their name.
    #[serde(default)]
    pub name: String,
    /// Their email address.
    pub email: String,
    /// Where they stand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SignerStatus>,
    /// Their place in the signing order, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<u32>,
    /// When they signed.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub signed_at: Option<OffsetDateTime>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Where the document to send comes from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DocumentSource {
    /// A file, read (and base64-encoded) while the request is written; the file name is
    /// sent as the document's filename.
    Path(PathBuf),
    /// Bytes in memory, under a file name. The `Arc` lets retries resend them without a
    /// copy.
    Bytes {
        /// The file name to send.
        filename: String,
        /// The document.
        content: Arc<Vec<u8>>,
    },
    /// An absolute http(s) URL the service fetches the document from.
    Url(String),
}

impl DocumentSource {
    /// A file on disk.
    pub fn path(path: impl Into<PathBuf>) -> Self {
        DocumentSource::Path(path.into())
    }

    /// Bytes in memory, under `filename`.
    pub fn bytes(filename: impl Into<String>, content: impl Into<Vec<u8>>) -> Self {
        DocumentSource::Bytes {
            filename: filename.into(),
            content: Arc::new(content.into()),
        }
    }

    /// A URL the service fetches.
    pub fn url(url: impl Into<String>) -> Self {
        DocumentSource::Url(url.into())
    }
}

/// A signer to add to a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct NewSigner {
    /// Their name.
    pub name: String,
    /// Their email address.
    pub email: String,
    /// Their place in the signing order (1 first). Defaults to none (not sent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<u32>,
}

impl NewSigner {
    /// A signer with no particular place in the order.
    pub fn new(name: impl Into<String>, email: impl Into<String>) -> Self {
        NewSigner {
            name: name.into(),
            email: email.into(),
            order: None,
        }
    }

    /// Sets the signer's place in the order (1 first).
    pub fn order(mut self, order: u32) -> Self {
        self.order = Some(order);
        self
    }
}

/// A document to send for signature.
///
/// ```
/// use esign_client::{DocumentSource, NewSigner, SendDocument};
/// let send = SendDocument::new(DocumentSource::path("contract.pdf"))
///     .name("Services agreement")
///     .signer(NewSigner::new("Ada Lovelace", "ada@example.com").order(1))
///     .signer(NewSigner::new("Charles Babbage", "charles@example.com").order(2))
///     .subject("Please sign");
/// assert_eq!(send.signers.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SendDocument {
    /// The document.
    pub source: DocumentSource,
    /// Its name. Defaults to the file name.
    pub name: Option<String>,
    /// Who signs; at least one.
    pub signers: Vec<NewSigner>,
    /// The email subject. Defaults to none (not sent).
    pub subject: Option<String>,
    /// The email message. Defaults to none (not sent).
    pub message: Option<String>,
    /// Your own key/value data, kept with the document. Defaults to none (not sent).
    pub metadata: Option<Map<String, Value>>,
    /// The largest document accepted before sending. Defaults to
    /// [`DEFAULT_MAX_DOCUMENT_SIZE`] (25 MiB).
    pub max_size: u64,
    /// The `Idempotency-Key` to send. Defaults to none: a fresh key is made for each
    /// [`send`](Documents::send) call, and every retry of that call reuses it.
    pub idempotency_key: Option<String>,
}

impl SendDocument {
    /// A document from `source`, with no signers yet.
    pub fn new(source: DocumentSource) -> Self {
        SendDocument {
            source,
            name: None,
            signers: Vec::new(),
            subject: None,
            message: None,
            metadata: None,
            max_size: DEFAULT_MAX_DOCUMENT_SIZE,
            idempotency_key: None,
        }
    }

    /// Sets the document's name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Adds a signer.
    pub fn signer(mut self, signer: NewSigner) -> Self {
        self.signers.push(signer);
        self
    }

    /// Sets the email subject.
    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// Sets the email message.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// Sets one metadata entry.
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata
            .get_or_insert_with(Map::new)
            .insert(key.into(), value.into());
        self
    }

    /// Sets the largest document accepted.
    pub fn max_size(mut self, bytes: u64) -> Self {
        self.max_size = bytes;
        self
    }

    /// Sends this `Idempotency-Key` (for example one you stored, to resend safely after
    /// your own process restarted).
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    fn validate(&self) -> Result<()> {
        let invalid = |m: String| Err(Error::InvalidRequest(m));
        if self.signers.is_empty() {
            return invalid("a document needs at least one signer".into());
        }
        for signer in &self.signers {
            if signer.name.trim().is_empty() {
                return invalid(format!("the signer {} has no name", signer.email));
            }
            if !looks_like_email(&signer.email) {
                return invalid(format!(
                    "{:?} does not look like an email address",
                    signer.email
                ));
            }
            if signer.order == Some(0) {
                return invalid(format!(
                    "signing order starts at 1 ({} has 0)",
                    signer.email
                ));
            }
        }
        for (i, a) in self.signers.iter().enumerate() {
            if self.signers[..i]
                .iter()
                .any(|b| b.email.eq_ignore_ascii_case(&a.email))
            {
                return invalid(format!("{} is listed twice", a.email));
            }
        }
        if self.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return invalid("the document name is empty".into());
        }
        Ok(())
    }
}

/// A plausible email address: one `@`, something before it, a dotted domain after it,
/// no spaces. (Only the service can know whether it exists.)
fn looks_like_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains('@')
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// What a finished download wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Download {
    /// How many bytes.
    pub bytes: u64,
    /// Where, for a download to a path.
    pub path: Option<PathBuf>,
}

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
    /// answers a repeated key with the document it already created.
    pub fn send(&self, document: &SendDocument) -> Result<Document> {
        document.validate()?;
        let key = document
            .idempotency_key
            .clone()
            .unwrap_or_else(core_http::uuid_v4);
        let fields = fields_json(document)?;
        let request = self.client.http().post("/documents").idempotency_key(key);
        let request = match &document.source {
            DocumentSource::Url(url) => {
                core_http::url::check_absolute_http(url)
                    .map_err(|why| Error::InvalidRequest(format!("file_url: {why}")))?;
                let mut body = fields;
                body.insert("file_url".into(), Value::String(url.clone()));
                request.json(&body)
            }
            DocumentSource::Bytes { filename, content } => {
                check_size(content.len() as u64, document.max_size, filename)?;
                let content = content.clone();
                streamed(
                    request,
                    filename,
                    content.len() as u64,
                    &fields,
                    move || Ok(Box::new(io::Cursor::new(ArcBytes(content.clone())))),
                )?
            }
            DocumentSource::Path(path) => {
                let size = file_size(path)?;
                check_size(size, document.max_size, &path.display().to_string())?;
                let filename = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "document.pdf".into());
                let path = path.clone();
                streamed(request, &filename, size, &fields, move || {
                    let file = File::open(&path)?;
                    if file.metadata()?.len() != size {
                        return Err(io::Error::other(format!(
                            "{} changed size while being sent",
                            path.display()
                        )));
                    }
                    Ok(Box::new(file.take(size)))
                })?
            }
        };
        request.send()?.json_data()
    }

    /// A document with its signers and status. `GET /documents/{id}`.
    pub fn get(&self, id: impl Into<DocumentId>) -> Result<Document> {
        let path = document_path(&id.into(), "")?;
        self.client.http().get(&path).send()?.json_data()
    }

    /// Streams the signed PDF into `to`. `GET /documents/{id}/download`.
    ///
    /// Nothing is written unless the body starts with `%PDF-`; a short body (fewer bytes
    /// than `Content-Length`), a body that is not a PDF, or a 409 (not completed yet) is
    /// an error. `to` may hold a partial file after an error in mid-stream: use
    /// [`download_to_path`](Documents::download_to_path) for a file that is either
    /// complete or absent.
    pub fn download_to(&self, id: impl Into<DocumentId>, to: &mut impl Write) -> Result<Download> {
        self.download(id).to_writer(to)
    }

    /// Downloads the signed PDF to `path` atomically: into a temporary file in the same
    /// folder, checked, flushed to disk, then renamed over `path`. On any error the
    /// temporary file is removed and `path` is left as it was.
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
        DownloadRequest {
            client: self.client,
            id: id.into(),
            progress: None,
        }
    }
}

/// A download being set up: [`Documents::download`].
#[must_use = "a download does nothing until to_writer or to_path is called"]
pub struct DownloadRequest<'a> {
    client: &'a Client,
    id: DocumentId,
    progress: Option<ProgressFn<'a>>,
}

/// A progress callback: `(bytes so far, Content-Length)`.
type ProgressFn<'a> = Box<dyn FnMut(u64, Option<u64>) + 'a>;

impl std::fmt::Debug for DownloadRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DownloadRequest")
            .field("id", &self.id)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// The bytes a PDF starts with.
const PDF_SIGNATURE: &[u8] = b"%PDF-";

impl<'a> DownloadRequest<'a> {
    /// Calls `progress(bytes so far, Content-Length)` as the body arrives (every 64 KiB
    /// or so). Defaults to none.
    pub fn on_progress(mut self, progress: impl FnMut(u64, Option<u64>) + 'a) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Streams the PDF into `to`; see [`Documents::download_to`].
    pub fn to_writer(mut self, to: &mut impl Write) -> Result<Download> {
        let bytes = self.stream(to)?;
        Ok(Download { bytes, path: None })
    }

    /// Downloads the PDF to `path` atomically; see [`Documents::download_to_path`].
    pub fn to_path(mut self, path: impl AsRef<Path>) -> Result<Download> {
        let path = path.as_ref();
        let io_error = |source: io::Error| Error::Io {
            may_have_been_processed: false,
            source,
        };
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .ok_or_else(|| Error::InvalidRequest(format!("{} is not a file path", path.display())))?
            .to_string_lossy()
            .into_owned();
        let (temp_path, file) = create_temp(&folder, &name).map_err(io_error)?;
        let mut temp = TempFile {
            path: Some(temp_path),
        };
        let result: Result<u64> = (|| {
            let mut writer = io::BufWriter::with_capacity(256 * 1024, file);
            let bytes = self.stream(&mut writer)?;
            let file = writer.into_inner().map_err(|e| io_error(e.into_error()))?;
            file.sync_all().map_err(io_error)?;
            drop(file);
            let from = temp
                .path
                .as_ref()
                .ok_or_else(|| Error::Config("internal: temp file lost".into()))?;
            std::fs::rename(from, path).map_err(io_error)?;
            temp.path = None;
            sync_folder(&folder);
            Ok(bytes)
        })();
        drop(temp); // removes the temporary file unless it was renamed
        let bytes = result?;
        Ok(Download {
            bytes,
            path: Some(path.to_path_buf()),
        })
    }

    /// Fetches and checks the body, writing it to `to`; returns the byte count.
    fn stream(&mut self, to: &mut dyn Write) -> Result<u64> {
        let path = document_path(&self.id, "/download")?;
        let mut response = self
            .client
            .http()
            .get(&path)
            // The PDF, or a JSON error.
            .header("accept", "application/pdf, application/json")
            .send_streaming()?;
        let status = response.status();
        let unexpected = |message: String| Error::UnexpectedBody { status, message };
        if let Some(content_type) = response.headers().get("content-type") {
            let essence = content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            if !matches!(
                essence.as_str(),
                "application/pdf" | "application/octet-stream" | "binary/octet-stream"
            ) {
                return Err(unexpected(format!(
                    "expected a PDF, got Content-Type {content_type:?}"
                )));
            }
        }
        let total = response.content_length();
        let io_error = |source: io::Error| Error::Io {
            may_have_been_processed: false,
            source,
        };
        // The signature first: nothing is written unless this is a PDF.
        let mut head = Vec::with_capacity(PDF_SIGNATURE.len());
        (&mut response)
            .take(PDF_SIGNATURE.len() as u64)
            .read_to_end(&mut head)
            .map_err(io_error)?;
        if head != PDF_SIGNATURE {
            return Err(unexpected(format!(
                "the body does not start with %PDF- (it starts with {:?})",
                String::from_utf8_lossy(&head)
            )));
        }
        to.write_all(&head).map_err(io_error)?;
        let mut tail = Tail::default();
        tail.push(&head);
        let mut written = head.len() as u64;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = response.read(&mut buf).map_err(io_error)?;
            if n == 0 {
                break;
            }
            to.write_all(&buf[..n]).map_err(io_error)?;
            tail.push(&buf[..n]);
            written += n as u64;
            if let Some(progress) = self.progress.as_mut() {
                progress(written, total);
            }
        }
        to.flush().map_err(io_error)?;
        if let Some(total) = total
            && written != total
        {
            return Err(io_error(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("received {written} of {total} bytes"),
            )));
        }
        if !tail.has_eof_marker() {
            return Err(unexpected(
                "the PDF does not end with %%EOF: it is incomplete".into(),
            ));
        }
        if let Some(progress) = self.progress.as_mut()
            && written == head.len() as u64
        {
            progress(written, total);
        }
        Ok(written)
    }
}

/// The last bytes of a body, to check the PDF's end-of-file marker.
#[derive(Default)]
struct Tail(Vec<u8>);

impl Tail {
    const KEEP: usize = 1024;

    fn push(&mut self, bytes: &[u8]) {
        let bytes = &bytes[bytes.len().saturating_sub(Self::KEEP)..];
        self.0.extend_from_slice(bytes);
        let excess = self.0.len().saturating_sub(Self::KEEP);
        self.0.drain(..excess);
    }

    fn has_eof_marker(&self) -> bool {
        let end = self
            .0
            .iter()
            .rposition(|b| !b.is_ascii_whitespace() && *b != 0)
            .map_or(0, |i| i + 1);
        self.0[..end].ends_with(b"%%EOF")
    }
}

/// A temporary file that removes itself unless it was renamed.
struct TempFile {
    path: Option<PathBuf>,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Creates `.<name>.<random>.part` in `folder`, failing rather than reusing a file.
fn create_temp(folder: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    for _ in 0..8 {
        let suffix: String = core_http::uuid_v4().chars().take(8).collect();
        let path = folder.join(format!(".{name}.{suffix}.part"));
        match File::options().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "could not create a temporary file",
    ))
}

/// Makes the rename durable where the platform allows it.
fn sync_folder(folder: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = File::open(folder) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = folder;
}

fn document_path(id: &DocumentId, suffix: &str) -> Result<String> {
    if id.as_str().trim().is_empty() {
        return Err(Error::InvalidRequest("a document id is empty".into()));
    }
    Ok(format!(
        "/documents/{}{suffix}",
        core_http::url::encode(id.as_str())
    ))
}

fn file_size(path: &Path) -> Result<u64> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::InvalidRequest(format!("cannot read {}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(Error::InvalidRequest(format!(
            "{} is not a file",
            path.display()
        )));
    }
    Ok(meta.len())
}

fn check_size(size: u64, max: u64, what: &str) -> Result<()> {
    if size == 0 {
        return Err(Error::InvalidRequest(format!("{what} is empty")));
    }
    if size > max {
        return Err(Error::InvalidRequest(format!(
            "{what} is {size} bytes; the limit is {max} bytes"
        )));
    }
    Ok(())
}

/// The JSON fields of a send request other than the file.
fn fields_json(document: &SendDocument) -> Result<Map<String, Value>> {
    let mut fields = Map::new();
    let name = document.name.clone().or_else(|| match &document.source {
        DocumentSource::Path(p) => p.file_name().map(|n| n.to_string_lossy().into_owned()),
        DocumentSource::Bytes { filename, .. } => Some(filename.clone()),
        DocumentSource::Url(_) => None,
    });
    if let Some(name) = name {
        fields.insert("name".into(), Value::String(name));
    }
    let signers = serde_json::to_value(&document.signers)
        .map_err(|e| Error::InvalidRequest(format!("signers: {e}")))?;
    fields.insert("signers".into(), signers);
    for (key, value) in [
        ("subject", &document.subject),
        ("message", &document.message),
    ] {
        if let Some(value) = value {
            fields.insert(key.into(), Value::String(value.clone()));
        }
    }
    if let Some(metadata) = &document.metadata {
        fields.insert("metadata".into(), Value::Object(metadata.clone()));
    }
    Ok(fields)
}

/// A request whose body is `{"file": {"filename", "content_base64"}, ...fields}`, with
/// the file encoded as the body is written.
fn streamed<'c>(
    request: core_http::RequestBuilder<'c>,
    filename: &str,
    size: u64,
    fields: &Map<String, Value>,
    open: impl Fn() -> io::Result<Box<dyn Read + Send>> + Send + Sync + 'static,
) -> Result<core_http::RequestBuilder<'c>> {
    let filename = serde_json::to_string(filename)
        .map_err(|e| Error::InvalidRequest(format!("filename: {e}")))?;
    let rest = serde_json::to_string(fields)
        .map_err(|e| Error::InvalidRequest(format!("document fields: {e}")))?;
    let prefix: Arc<[u8]> = format!("{{\"file\":{{\"filename\":{filename},\"content_base64\":\"")
        .into_bytes()
        .into();
    // `rest` is a JSON object: its members follow the file's.
    let suffix: Arc<[u8]> = match rest.strip_prefix('{') {
        Some("}") | None => b"\"}}".to_vec().into(),
        Some(members) => format!("\"}},{members}").into_bytes().into(),
    };
    let length = prefix.len() as u64 + encoded_len(size) + suffix.len() as u64;
    Ok(request.body_stream("application/json", length, move || {
        let file = open()?;
        let body = io::Cursor::new(prefix.clone())
            .chain(Base64Reader::new(file))
            .chain(io::Cursor::new(suffix.clone()));
        Ok(Box::new(body))
    }))
}

/// Shared bytes readable through a cursor.
struct ArcBytes(Arc<Vec<u8>>);

impl AsRef<[u8]> for ArcBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sends_are_checked_before_anything_goes_out() {
        let ok = SendDocument::new(DocumentSource::bytes("a.pdf", b"%PDF-1".to_vec()))
            .signer(NewSigner::new("Ada", "ada@example.com"));
        ok.validate().unwrap();
        let bad = [
            SendDocument::new(DocumentSource::bytes("a.pdf", b"x".to_vec())),
            ok.clone()
                .signer(NewSigner::new("Ada again", "ADA@example.com")),
            ok.clone().signer(NewSigner::new("B", "not-an-email")),
            ok.clone().signer(NewSigner::new("B", "b@localhost")),
            ok.clone().signer(NewSigner::new("B", "b c@example.com")),
            ok.clone().signer(NewSigner::new(" ", "b@example.com")),
            ok.clone()
                .signer(NewSigner::new("B", "b@example.com").order(0)),
            ok.clone().name(""),
        ];
        for send in bad {
            assert!(send.validate().is_err(), "{send:?}");
        }
        assert!(check_size(0, 10, "x").is_err());
        assert!(check_size(11, 10, "x").is_err());
        assert!(check_size(10, 10, "x").is_ok());
    }

    #[test]
    fn the_eof_marker_is_found_past_trailing_whitespace() {
        let mut tail = Tail::default();
        tail.push(b"%PDF-1.4 ... %%EOF\r\n");
        assert!(tail.has_eof_marker());
        let mut cut = Tail::default();
        cut.push(b"%PDF-1.4 ... endobj\n");
        assert!(!cut.has_eof_marker());
        let mut long = Tail::default();
        long.push(&vec![b'0'; 5000]);
        long.push(b"%%EOF");
        assert!(long.has_eof_marker());
    }
}
