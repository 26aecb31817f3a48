//! The signed PDF's download: checked as it arrives (`%PDF-` before anything is written,
//! the `Content-Length`, the closing `%%EOF`), into any writer or atomically into a file.
//!
//! When the service compresses the PDF (gzip or brotli), every check is made on the
//! decoded bytes. The length is then the encoding's own to check (gzip's trailer holds
//! the decoded length and a CRC; a brotli stream marks its end), and a body that stops
//! short or does not decode is an error naming the encoding.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use core_http::{Error, Result};

use crate::client::Client;
use crate::models::DocumentId;

/// What a finished download wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Download {
    /// How many bytes.
    pub bytes: u64,
    /// Where, for a download to a path.
    pub path: Option<PathBuf>,
}

/// A download being set up: [`Documents::download`](crate::documents::Documents::download).
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
    pub(crate) fn new(client: &'a Client, id: DocumentId) -> Self {
        DownloadRequest {
            client,
            id,
            progress: None,
        }
    }

    /// Calls `progress(bytes so far, Content-Length)` as the body arrives (every 256 KiB
    /// or so). Defaults to none. The bytes are the PDF's, decoded: when the service
    /// compresses the download, its `Content-Length` counts the compressed bytes and the
    /// total passed is `None`.
    ///
    /// ```no_run
    /// # let client = esign_client::Client::new("https://api.example.com/v1", "sk")?;
    /// client
    ///     .documents()
    ///     .download("doc_1")
    ///     .on_progress(|done, total| eprintln!("{done} of {total:?} bytes"))
    ///     .to_path("signed.pdf")?;
    /// # Ok::<(), esign_client::Error>(())
    /// ```
    pub fn on_progress(mut self, progress: impl FnMut(u64, Option<u64>) + 'a) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Streams the PDF into `to`; see [`Documents::download_to`](crate::documents::Documents::download_to).
    ///
    /// ```no_run
    /// # let client = esign_client::Client::new("https://api.example.com/v1", "sk")?;
    /// let mut pdf = Vec::new();
    /// let done = client.documents().download("doc_1").to_writer(&mut pdf)?;
    /// assert_eq!(done.bytes as usize, pdf.len());
    /// # Ok::<(), esign_client::Error>(())
    /// ```
    pub fn to_writer(mut self, to: &mut impl Write) -> Result<Download> {
        let bytes = self.stream(to)?;
        Ok(Download { bytes, path: None })
    }

    /// Downloads the PDF to `path` atomically; see [`Documents::download_to_path`](crate::documents::Documents::download_to_path).
    ///
    /// ```no_run
    /// # let client = esign_client::Client::new("https://api.example.com/v1", "sk")?;
    /// let done = client.documents().download("doc_1").to_path("signed.pdf")?;
    /// println!("{} bytes in {:?}", done.bytes, done.path);
    /// # Ok::<(), esign_client::Error>(())
    /// ```
    pub fn to_path(mut self, path: impl AsRef<Path>) -> Result<Download> {
        let path = path.as_ref();
        let io_error = |source: io::Error| Error::Io {
            delivery: core_http::Delivery::MayHaveBeenProcessed,
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
        // Nothing is asked of the service before the file exists.
        let (temp_path, file) = create_temp(&folder, &name).map_err(|source| Error::File {
            action: "create a file in",
            path: folder.clone(),
            delivery: core_http::Delivery::NotSent,
            source,
        })?;
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
            std::fs::rename(from, path).map_err(|source| Error::File {
                action: "put the download in place at",
                path: path.to_path_buf(),
                delivery: core_http::Delivery::Processed,
                source,
            })?;
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
        let path = format!("/documents/{}/download", self.id.segment()?);
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
        // A failed read (the body cut short, or not decoding as its Content-Encoding
        // says) or write.
        let io_error = |source: io::Error| Error::body_read(status, source);
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
        let mut checked = Checked {
            inner: to,
            tail: Tail::default(),
        };
        checked.write_all(&head).map_err(io_error)?;
        let progress = &mut self.progress;
        let written = response
            .copy_to(&mut checked, |so_far, total| {
                if let Some(progress) = progress.as_mut() {
                    progress(so_far, total);
                }
            })
            .map_err(io_error)?;
        checked.flush().map_err(io_error)?;
        if let Some(total) = total
            && written != total
        {
            return Err(io_error(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("received {written} of {total} bytes"),
            )));
        }
        if !checked.tail.has_eof_marker() {
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

/// A writer that keeps the last bytes written, for the end-of-file check.
struct Checked<'w> {
    inner: &'w mut dyn Write,
    tail: Tail,
}

impl Write for Checked<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.tail.push(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
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
        let suffix: String = core_http::service::uuid_v4().chars().take(8).collect();
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
