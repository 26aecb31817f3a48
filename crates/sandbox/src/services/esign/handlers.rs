//! The service's routes: send a document, get it, download the signed PDF.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use base64::Engine as _;
use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::http::{Caller, bad_request, error, json, object_body};
use crate::state::Shared;

use super::{BODY_LIMIT, Document, MAX_DOCUMENT_BYTES, Signer, tenant};

/// The routes relative to `/esign` that need a key or token.
pub(super) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/documents", post(send))
        .route("/documents/{id}", get(fetch))
        .route("/documents/{id}/download", get(download))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
}

/// A 64-bit FNV-1a hash of a request body, to recognise a repeated idempotent request.
fn body_hash(body: &[u8]) -> u64 {
    body.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

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

async fn send(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let key = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let hash = body_hash(&body);
    if let Some(key) = &key {
        let replay = shared.with_world(|w| tenant(w, &caller.key).idempotency.get(key).cloned());
        match replay {
            Some((h, answer)) if h == hash => {
                let mut response = json(StatusCode::CREATED, &answer);
                response
                    .headers_mut()
                    .insert("idempotent-replayed", HeaderValue::from_static("true"));
                return response;
            }
            Some(_) => {
                return error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "idempotency_key_reused",
                    "this Idempotency-Key was used with a different request body",
                );
            }
            None => {}
        }
    }
    let parsed = match parse_send(&body) {
        Ok(parsed) => parsed,
        Err(e) => return e,
    };
    shared.with_world(|w| {
        let now = w.now();
        let document = Document {
            id: w.ids.next("doc"),
            status: "sent",
            created_at: now,
            updated_at: now,
            completed_at: None,
            pdf_size: None,
            ..parsed
        };
        let answer = document.to_json();
        let tenant = tenant(w, &caller.key);
        tenant.documents.push(document);
        if let Some(key) = key {
            tenant.idempotency.insert(key, (hash, answer.clone()));
        }
        w.emit("document.sent", answer.clone());
        json(StatusCode::CREATED, &answer)
    })
}

/// The fields of a send request, or the error explaining what is wrong.
fn parse_send(body: &Bytes) -> Result<Document, Response> {
    let body = object_body(body)?;
    let text = |name: &str, body: &Map<String, Value>| -> Result<Option<String>, Response> {
        match body.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad_request(
                &format!("invalid_{name}"),
                format!("{name} must be a string"),
            )),
        }
    };
    let (filename, size) = match (body.get("file"), body.get("file_url")) {
        (Some(Value::Object(file)), None) => {
            let filename = match file.get("filename") {
                Some(Value::String(f)) if !f.trim().is_empty() => f.clone(),
                _ => {
                    return Err(bad_request(
                        "invalid_file",
                        "file.filename is required and must be a non-empty string",
                    ));
                }
            };
            let Some(Value::String(content)) = file.get("content_base64") else {
                return Err(bad_request(
                    "invalid_file",
                    "file.content_base64 is required: the document, base64-encoded",
                ));
            };
            let decoded_len = content.len() / 4 * 3;
            if decoded_len > MAX_DOCUMENT_BYTES + 3 {
                return Err(error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "document_too_large",
                    format!("documents are limited to {MAX_DOCUMENT_BYTES} bytes"),
                ));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(content)
                .map_err(|e| {
                    bad_request(
                        "invalid_file",
                        format!("file.content_base64 is not valid base64: {e}"),
                    )
                })?;
            if bytes.is_empty() {
                return Err(bad_request("invalid_file", "the document is empty"));
            }
            // The service signs PDFs: anything else ("hello") is refused, as it would be.
            if !bytes.starts_with(b"%PDF-") {
                return Err(bad_request(
                    "invalid_file",
                    "the document is not a PDF (it does not start with %PDF-)",
                ));
            }
            if bytes.len() > MAX_DOCUMENT_BYTES {
                return Err(error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "document_too_large",
                    format!("documents are limited to {MAX_DOCUMENT_BYTES} bytes"),
                ));
            }
            (filename, Some(bytes.len() as u64))
        }
        (None, Some(Value::String(url))) => {
            if let Err(why) = crate::signing::check_http_url(url) {
                return Err(bad_request("invalid_file_url", why));
            }
            let name = url
                .split(['?', '#'])
                .next()
                .and_then(|u| u.rsplit('/').next())
                .filter(|n| !n.is_empty())
                .unwrap_or("document.pdf")
                .to_owned();
            (name, None)
        }
        _ => {
            return Err(bad_request(
                "invalid_file",
                "give exactly one of file {filename, content_base64} and file_url",
            ));
        }
    };
    let name = text("name", &body)?
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| filename.clone());
    let signers = match body.get("signers") {
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut signers: Vec<Signer> = Vec::new();
            for item in items {
                let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                let email = item
                    .get("email")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if name.trim().is_empty() {
                    return Err(bad_request("invalid_signer", "every signer needs a name"));
                }
                if !looks_like_email(email) {
                    return Err(bad_request(
                        "invalid_signer",
                        format!("{email:?} is not a valid email address"),
                    ));
                }
                if signers.iter().any(|s| s.email.eq_ignore_ascii_case(email)) {
                    return Err(bad_request(
                        "invalid_signer",
                        format!("{email} is listed twice"),
                    ));
                }
                let order = match item.get("order") {
                    None | Some(Value::Null) => None,
                    Some(v) => match v.as_u64() {
                        Some(n) if n >= 1 => Some(n),
                        _ => {
                            return Err(bad_request(
                                "invalid_signer",
                                format!(
                                    "a signer's order must be an integer of at least 1, got {v}"
                                ),
                            ));
                        }
                    },
                };
                signers.push(Signer {
                    name: name.to_owned(),
                    email: email.to_owned(),
                    order,
                    status: "pending",
                    signed_at: None,
                });
            }
            signers
        }
        _ => {
            return Err(bad_request(
                "invalid_signers",
                "signers is required: a non-empty array of {name, email, order?}",
            ));
        }
    };
    let metadata = match body.get("metadata") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(Value::Object(m.clone())),
        Some(_) => {
            return Err(bad_request(
                "invalid_metadata",
                "metadata must be an object",
            ));
        }
    };
    let epoch = OffsetDateTime::UNIX_EPOCH;
    Ok(Document {
        id: String::new(),
        name,
        status: "draft",
        signers,
        created_at: epoch,
        updated_at: epoch,
        completed_at: None,
        filename,
        size,
        subject: text("subject", &body)?,
        message: text("message", &body)?,
        metadata,
        pdf_size: None,
    })
}

fn not_found(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "document_not_found",
        format!("no document with id {id:?}"),
    )
}

async fn fetch(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    shared.with_world(
        |w| match tenant(w, &caller.key).documents.iter().find(|d| d.id == id) {
            Some(document) => json(StatusCode::OK, &document.to_json()),
            None => not_found(&id),
        },
    )
}

async fn download(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    let document = shared.with_world(|w| {
        tenant(w, &caller.key)
            .documents
            .iter()
            .find(|d| d.id == id)
            .cloned()
    });
    let Some(document) = document else {
        return not_found(&id);
    };
    if document.status != "completed" {
        return error(
            StatusCode::CONFLICT,
            "document_not_completed",
            format!(
                "document {id} is {}: the signed PDF is available once every signer has signed",
                document.status
            ),
        );
    }
    let (head, pad, tail) = document.pdf();
    let length = head.len() as u64 + pad + tail.len() as u64;
    let body = Body::from_stream(pdf_stream(head, pad, tail));
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/pdf"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    if let Ok(value) = HeaderValue::from_str(&format!(
        "attachment; filename=\"{}-signed.pdf\"",
        document.id
    )) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    response
}

/// The padding's bytes, shared by every chunk.
static PAD: [u8; 64 * 1024] = [b'0'; 64 * 1024];

/// The PDF as a stream of chunks: memory stays at one chunk whatever the size.
fn pdf_stream(
    head: Vec<u8>,
    pad: u64,
    tail: Vec<u8>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let chunks = (pad / PAD.len() as u64, pad % PAD.len() as u64);
    let state = (0u8, head, chunks.0, chunks.1, tail);
    futures_util::stream::unfold(state, |(stage, head, full, rest, tail)| async move {
        match stage {
            0 => Some((Ok(Bytes::from(head)), (1, Vec::new(), full, rest, tail))),
            1 if full > 0 => Some((
                Ok(Bytes::from_static(&PAD)),
                (1, Vec::new(), full - 1, rest, tail),
            )),
            1 if rest > 0 => Some((
                Ok(Bytes::from_static(&PAD[..rest as usize])),
                (2, Vec::new(), 0, 0, tail),
            )),
            1 | 2 => Some((Ok(Bytes::from(tail)), (3, Vec::new(), 0, 0, Vec::new()))),
            _ => None,
        }
    })
}
