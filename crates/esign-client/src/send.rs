//! What to send for signature ([`SendDocument`]), its checks, and its JSON body, written
//! while it is sent: the file is read and base64-encoded on the fly, never held whole.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use core_http::{Error, Result, transport::RequestBuilder};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::encode::{Base64Reader, encoded_len};

/// The default largest document [`Documents::send`](crate::documents::Documents::send) accepts:
/// 25 MiB.
pub const DEFAULT_MAX_DOCUMENT_SIZE: u64 = 25 * 1024 * 1024;

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
    ///
    /// ```
    /// use esign_client::documents::{DocumentSource, NewSigner, SendDocument};
    /// let nda = SendDocument::new(DocumentSource::path("contracts/nda.pdf"))
    ///     .signer(NewSigner::new("Ada Lovelace", "ada@example.com"));
    /// # let _ = nda;
    /// ```
    pub fn path(path: impl Into<PathBuf>) -> Self {
        DocumentSource::Path(path.into())
    }

    /// Bytes in memory, under `filename`.
    ///
    /// ```
    /// use esign_client::documents::DocumentSource;
    /// let pdf: Vec<u8> = b"%PDF-1.7 ... %%EOF".to_vec();
    /// let source = DocumentSource::bytes("nda.pdf", pdf);
    /// # let _ = source;
    /// ```
    pub fn bytes(filename: impl Into<String>, content: impl Into<Vec<u8>>) -> Self {
        DocumentSource::Bytes {
            filename: filename.into(),
            content: Arc::new(content.into()),
        }
    }

    /// A URL the service fetches.
    ///
    /// ```
    /// use esign_client::documents::DocumentSource;
    /// let source = DocumentSource::url("https://files.example.com/nda.pdf");
    /// # let _ = source;
    /// ```
    pub fn url(url: impl Into<String>) -> Self {
        DocumentSource::Url(url.into())
    }
}

/// A signer to add to a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct NewSigner {
    /// Their name.
    pub(crate) name: String,
    /// Their email address.
    pub(crate) email: String,
    /// Their place in the signing order (1 first). Defaults to none (not sent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) order: Option<u32>,
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
/// use esign_client::documents::{DocumentSource, NewSigner, SendDocument};
/// let send = SendDocument::new(DocumentSource::path("contract.pdf"))
///     .name("Services agreement")
///     .signer(NewSigner::new("Ada Lovelace", "ada@example.com").order(1))
///     .signer(NewSigner::new("Charles Babbage", "charles@example.com").order(2))
///     .subject("Please sign");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SendDocument {
    /// The document.
    pub(crate) source: DocumentSource,
    /// Its name. Defaults to the file name.
    pub(crate) name: Option<String>,
    /// Who signs; at least one.
    pub(crate) signers: Vec<NewSigner>,
    /// The email subject. Defaults to none (not sent).
    pub(crate) subject: Option<String>,
    /// The email message. Defaults to none (not sent).
    pub(crate) message: Option<String>,
    /// Your own key/value data, kept with the document. Defaults to none (not sent).
    pub(crate) metadata: Option<Map<String, Value>>,
    /// The largest document accepted before sending. Defaults to
    /// [`DEFAULT_MAX_DOCUMENT_SIZE`] (25 MiB).
    pub(crate) max_size: u64,
    /// The `Idempotency-Key` to send. Defaults to none: a fresh key is made for each
    /// [`send`](crate::documents::Documents::send) call, and every retry of that call reuses it.
    pub(crate) idempotency_key: Option<String>,
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
    ///
    /// ```no_run
    /// # let client = esign_client::Client::new("https://api.example.com/v1", "sk")?;
    /// use esign_client::documents::{DocumentSource, NewSigner, SendDocument};
    /// // The key saved before a crash: resending it cannot send the document twice.
    /// let key = std::fs::read_to_string("nda.idempotency-key")?;
    /// let document = SendDocument::new(DocumentSource::path("nda.pdf"))
    ///     .signer(NewSigner::new("Ada", "ada@example.com"))
    ///     .idempotency_key(key.trim());
    /// client.documents().send(&document)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
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

impl SendDocument {
    /// `request` with this document's body: JSON with the file URL, or the file itself
    /// streamed as `{"file": {"filename", "content_base64"}, ...}`. A file or bytes are
    /// checked against [`max_size`](Self::max_size) before anything is sent; a path is
    /// reopened for each attempt and refused if its size changed.
    pub(crate) fn body<'c>(&self, request: RequestBuilder<'c>) -> Result<RequestBuilder<'c>> {
        let fields = fields_json(self)?;
        match &self.source {
            DocumentSource::Url(url) => {
                core_http::service::check_absolute_http(url)
                    .map_err(|why| Error::InvalidRequest(format!("file_url: {why}")))?;
                let mut body = fields;
                body.insert("file_url".into(), Value::String(url.clone()));
                Ok(request.json(&body))
            }
            DocumentSource::Bytes { filename, content } => {
                check_size(content.len() as u64, self.max_size, filename)?;
                let content = content.clone();
                streamed(
                    request,
                    filename,
                    content.len() as u64,
                    &fields,
                    move || Ok(Box::new(io::Cursor::new(ArcBytes(content.clone())))),
                )
            }
            DocumentSource::Path(path) => {
                let size = file_size(path)?;
                check_size(size, self.max_size, &path.display().to_string())?;
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
                })
            }
        }
    }
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
    request: core_http::transport::RequestBuilder<'c>,
    filename: &str,
    size: u64,
    fields: &Map<String, Value>,
    open: impl Fn() -> io::Result<Box<dyn Read + Send>> + Send + Sync + 'static,
) -> Result<core_http::transport::RequestBuilder<'c>> {
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
}
