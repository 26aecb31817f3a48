//! The e-signature service (`/esign/documents...`) and its OAuth 2.0 token endpoint
//! (`/esign/oauth/token`).
//!
//! - `POST /documents` sends a document: it is `sent` at once and `document.sent` fires.
//!   An `Idempotency-Key` is honoured per tenant: the same key with the same body answers
//!   the first result again (with `Idempotent-Replayed: true`) and creates nothing; the
//!   same key with another body answers 422.
//! - Signers sign through the control endpoint `/_sandbox/esign/documents/{id}/sign`, or
//!   on their own a day (sandbox time) after the document was sent. Each signature fires
//!   `document.signed`; the last makes the document `completed` and fires
//!   `document.completed`.
//! - `GET /documents/{id}/download` answers 409 until the document is completed, then a
//!   real PDF naming the signers and when they signed, streamed with its length. A
//!   control endpoint can pad it to any size (for download benchmarks) without the
//!   sandbox ever holding it in memory.
//! - Tokens from the token endpoint last an hour of sandbox time; an expired token gets
//!   401 `token_expired`.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use base64::Engine as _;
use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use crate::clock::rfc3339;
use crate::http::{Caller, bad_request, error, json, object_body};
use crate::state::{Shared, World};

/// The OAuth client id the sandbox accepts.
pub const ESIGN_CLIENT_ID: &str = "sandbox_client";
/// The OAuth client secret the sandbox accepts.
pub const ESIGN_CLIENT_SECRET: &str = "sandbox_client_secret";
/// How long an issued token lasts, in sandbox seconds.
pub const TOKEN_LIFETIME_SECS: i64 = 3600;
/// The largest document the sandbox accepts (decoded), in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 25 * 1024 * 1024;
/// How long after sending a document its signers sign on their own (sandbox time).
pub const AUTO_SIGN_AFTER_SECS: i64 = 24 * 3600;

/// The request body cap of the service: a 25 MiB document, base64-encoded, plus JSON.
const BODY_LIMIT: usize = MAX_DOCUMENT_BYTES / 3 * 4 + 1024 * 1024;

/// The e-signature state: documents and idempotency records per tenant, issued tokens.
#[derive(Debug, Default)]
pub(crate) struct EsignState {
    tenants: BTreeMap<String, Tenant>,
    tokens: HashMap<String, Token>,
    token_requests: u64,
}

#[derive(Debug, Default)]
struct Tenant {
    documents: Vec<Document>,
    idempotency: HashMap<String, (u64, Value)>,
}

#[derive(Debug)]
struct Token {
    tenant: String,
    expires_at: OffsetDateTime,
}

#[derive(Debug, Clone)]
struct Document {
    id: String,
    name: String,
    status: &'static str,
    signers: Vec<Signer>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
    completed_at: Option<OffsetDateTime>,
    filename: String,
    size: Option<u64>,
    subject: Option<String>,
    message: Option<String>,
    metadata: Option<Value>,
    pdf_size: Option<u64>,
}

#[derive(Debug, Clone)]
struct Signer {
    name: String,
    email: String,
    order: Option<u64>,
    status: &'static str,
    signed_at: Option<OffsetDateTime>,
}

impl Document {
    fn to_json(&self) -> Value {
        let signers: Vec<Value> = self
            .signers
            .iter()
            .map(|s| {
                let mut v = json!({"name": s.name, "email": s.email, "status": s.status});
                if let Some(order) = s.order {
                    v["order"] = json!(order);
                }
                if let Some(at) = s.signed_at {
                    v["signed_at"] = json!(rfc3339(at));
                }
                v
            })
            .collect();
        let mut doc = json!({
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "signers": signers,
            "created_at": rfc3339(self.created_at),
            "updated_at": rfc3339(self.updated_at),
            "file": {"filename": self.filename, "size": self.size},
        });
        if let Some(at) = self.completed_at {
            doc["completed_at"] = json!(rfc3339(at));
        }
        for (name, value) in [
            ("subject", self.subject.clone().map(Value::String)),
            ("message", self.message.clone().map(Value::String)),
            ("metadata", self.metadata.clone()),
        ] {
            if let Some(value) = value {
                doc[name] = value;
            }
        }
        doc
    }

    /// The signer whose turn it is: with orders, the pending one with the lowest order;
    /// without, any pending signer may sign.
    fn may_sign(&self, index: usize) -> Result<(), String> {
        let signer = &self.signers[index];
        if signer.status != "pending" {
            return Err(format!("{} has already {}", signer.email, signer.status));
        }
        if let Some(order) = signer.order
            && let Some(first) = self
                .signers
                .iter()
                .filter(|s| s.status == "pending" && s.order.is_some_and(|o| o < order))
                .min_by_key(|s| s.order)
        {
            return Err(format!(
                "{} signs after {} (order {} before {order})",
                signer.email,
                first.email,
                first.order.unwrap_or_default()
            ));
        }
        Ok(())
    }

    /// Signs for signer `index` at `at`; returns the events to emit.
    fn sign(&mut self, index: usize, at: OffsetDateTime) -> Vec<(&'static str, Value)> {
        let signer = &mut self.signers[index];
        signer.status = "signed";
        signer.signed_at = Some(at);
        self.updated_at = at;
        let mut events = vec![("document.signed", Value::Null)];
        if self.signers.iter().all(|s| s.status == "signed") {
            self.status = "completed";
            self.completed_at = Some(at);
            events.push(("document.completed", Value::Null));
        }
        events
            .into_iter()
            .map(|(t, _)| (t, self.to_json()))
            .collect()
    }

    /// The PDF's parts: the bytes before the padding, the padding length, the bytes after.
    fn pdf(&self) -> (Vec<u8>, u64, Vec<u8>) {
        let mut lines = vec![
            "Signed document".to_owned(),
            format!("Name: {}", self.name),
            format!("Document id: {}", self.id),
            format!("File: {}", self.filename),
        ];
        for signer in &self.signers {
            let when = signer.signed_at.map(rfc3339).unwrap_or_default();
            lines.push(format!(
                "Signed by {} <{}> at {when}",
                signer.name, signer.email
            ));
        }
        if let Some(at) = self.completed_at {
            lines.push(format!("Completed at {}", rfc3339(at)));
        }
        pdf_parts(&lines, self.pdf_size)
    }
}

/// Escapes a line for a PDF literal string (ASCII only).
fn pdf_text(line: &str) -> String {
    line.chars()
        .map(|c| match c {
            '(' | ')' | '\\' => format!("\\{c}"),
            c if c.is_ascii() && !c.is_ascii_control() => c.to_string(),
            _ => "?".to_owned(),
        })
        .collect()
}

/// A one-page PDF showing `lines`, with an unreferenced padding stream that brings the
/// file to `size` bytes when asked (and the size allows).
fn pdf_parts(lines: &[String], size: Option<u64>) -> (Vec<u8>, u64, Vec<u8>) {
    let mut content = String::from("BT /F1 12 Tf 72 720 Td 18 TL");
    for line in lines {
        content.push_str(&format!(" ({}) Tj T*", pdf_text(line)));
    }
    content.push_str(" ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>".to_owned(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
    ];
    let mut head = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(head.len());
        head.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    offsets.push(head.len());
    let tail_of = |pad: u64, head: &[u8]| -> Vec<u8> {
        let mut tail = b"\nendstream\nendobj\n".to_vec();
        let xref = head.len() as u64 + pad + tail.len() as u64;
        tail.extend_from_slice(b"xref\n0 7\n0000000000 65535 f \n");
        for offset in &offsets {
            tail.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
        }
        tail.extend_from_slice(
            format!("trailer\n<< /Size 7 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
        );
        tail
    };
    // The padding object's header holds its length, whose digits move everything after
    // it: settle the numbers in a few rounds.
    let mut pad = 0u64;
    for _ in 0..4 {
        let mut with_header = head.clone();
        with_header.extend_from_slice(format!("6 0 obj\n<< /Length {pad} >>\nstream\n").as_bytes());
        let fixed = with_header.len() as u64 + tail_of(pad, &with_header).len() as u64;
        pad = size.map_or(0, |s| s.saturating_sub(fixed));
    }
    head.extend_from_slice(format!("6 0 obj\n<< /Length {pad} >>\nstream\n").as_bytes());
    let tail = tail_of(pad, &head);
    (head, pad, tail)
}

/// The routes relative to `/esign` that need a key or token.
pub(crate) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/documents", post(send))
        .route("/documents/{id}", get(fetch))
        .route("/documents/{id}/download", get(download))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
}

fn tenant<'w>(world: &'w mut World, key: &str) -> &'w mut Tenant {
    world.esign.tenants.entry(key.to_owned()).or_default()
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

/// `POST /esign/oauth/token`: client credentials in, a bearer token out.
pub(crate) async fn token(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let fields: HashMap<String, String> = form_urlencoded::parse(&body).into_owned().collect();
    let oauth_error = |status: StatusCode, code: &str, description: &str| {
        json(
            status,
            &json!({"error": code, "error_description": description}),
        )
    };
    shared.with_world(|w| {
        w.esign.token_requests += 1;
        if fields.get("grant_type").map(String::as_str) != Some("client_credentials") {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "grant_type must be client_credentials",
            );
        }
        let id = fields.get("client_id").map(String::as_str);
        let secret = fields.get("client_secret").map(String::as_str);
        if id != Some(ESIGN_CLIENT_ID) || secret != Some(ESIGN_CLIENT_SECRET) {
            return oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "unknown client id or wrong secret",
            );
        }
        let token = w.ids.next("at");
        let expires_at = w.now() + time::Duration::seconds(TOKEN_LIFETIME_SECS);
        w.esign.tokens.insert(
            token.clone(),
            Token {
                tenant: format!("oauth:{ESIGN_CLIENT_ID}"),
                expires_at,
            },
        );
        let mut response = json(
            StatusCode::OK,
            &json!({"access_token": token, "token_type": "Bearer", "expires_in": TOKEN_LIFETIME_SECS}),
        );
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    })
}

/// What a bearer value is to the e-signature service.
pub(crate) enum TokenCheck {
    /// An issued, unexpired token of this tenant.
    Valid(String),
    /// An issued token past its lifetime.
    Expired,
    /// Not a token the sandbox issued.
    Unknown,
}

/// Looks up an OAuth token.
pub(crate) fn check_token(world: &World, token: &str) -> TokenCheck {
    match world.esign.tokens.get(token) {
        Some(t) if world.now() < t.expires_at => TokenCheck::Valid(t.tenant.clone()),
        Some(_) => TokenCheck::Expired,
        None => TokenCheck::Unknown,
    }
}

/// How many token requests the endpoint has answered.
pub(crate) fn token_requests(world: &World) -> u64 {
    world.esign.token_requests
}

/// Every document of every tenant, oldest first, as the API shows them.
pub(crate) fn documents(world: &World) -> Vec<Value> {
    let mut all: Vec<&Document> = world
        .esign
        .tenants
        .values()
        .flat_map(|t| t.documents.iter())
        .collect();
    all.sort_by_key(|d| d.created_at);
    all.into_iter().map(Document::to_json).collect()
}

/// Finds a document by id across tenants.
fn find<'w>(world: &'w mut World, id: &str) -> Option<&'w mut Document> {
    world
        .esign
        .tenants
        .values_mut()
        .flat_map(|t| t.documents.iter_mut())
        .find(|d| d.id == id)
}

/// Why a control operation was refused: an error answer for the control endpoints, a
/// message for in-process callers.
#[derive(Debug)]
pub(crate) struct Refusal {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl Refusal {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            code,
            message: message.into(),
        }
    }

    fn not_found(id: &str) -> Refusal {
        Refusal::new(
            StatusCode::NOT_FOUND,
            "document_not_found",
            format!("no document with id {id:?}"),
        )
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        error(self.status, self.code, self.message)
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

/// Document `id`, if it still waits for signatures.
fn signable<'w>(world: &'w mut World, id: &str) -> Result<&'w mut Document, Refusal> {
    let document = find(world, id).ok_or_else(|| Refusal::not_found(id))?;
    if document.status != "sent" {
        return Err(Refusal::new(
            StatusCode::CONFLICT,
            "not_signable",
            format!("document {id} is {}", document.status),
        ));
    }
    Ok(document)
}

/// Signs document `id` for the signer with `email`, or for the next signer whose turn it
/// is. Returns the document after signing.
pub(crate) fn sign(world: &mut World, id: &str, email: Option<&str>) -> Result<Value, Refusal> {
    let now = world.now();
    let document = signable(world, id)?;
    let index = match email {
        Some(email) => document
            .signers
            .iter()
            .position(|s| s.email.eq_ignore_ascii_case(email))
            .ok_or_else(|| {
                Refusal::new(
                    StatusCode::BAD_REQUEST,
                    "unknown_signer",
                    format!("{email} is not a signer of {id}"),
                )
            })?,
        None => next_signer(document).ok_or_else(|| {
            Refusal::new(StatusCode::CONFLICT, "not_signable", "no signer is pending")
        })?,
    };
    document
        .may_sign(index)
        .map_err(|why| Refusal::new(StatusCode::CONFLICT, "not_your_turn", why))?;
    let events = document.sign(index, now);
    let answer = document.to_json();
    for (event_type, data) in events {
        world.emit(event_type, data);
    }
    Ok(answer)
}

/// Declines document `id` for the signer with `email` (or the next pending signer).
pub(crate) fn decline(world: &mut World, id: &str, email: Option<&str>) -> Result<Value, Refusal> {
    let now = world.now();
    let document = signable(world, id)?;
    let index = match email {
        Some(email) => document
            .signers
            .iter()
            .position(|s| s.email.eq_ignore_ascii_case(email) && s.status == "pending"),
        None => next_signer(document),
    }
    .ok_or_else(|| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            "unknown_signer",
            "no such pending signer",
        )
    })?;
    document.signers[index].status = "declined";
    document.status = "declined";
    document.updated_at = now;
    let answer = document.to_json();
    world.emit("document.declined", answer.clone());
    Ok(answer)
}

/// Pads document `id`'s signed PDF to `bytes` (at least its natural size).
pub(crate) fn set_pdf_size(world: &mut World, id: &str, bytes: u64) -> Result<(), Refusal> {
    let document = find(world, id).ok_or_else(|| Refusal::not_found(id))?;
    document.pdf_size = Some(bytes);
    Ok(())
}

fn next_signer(document: &Document) -> Option<usize> {
    (0..document.signers.len()).find(|&i| document.may_sign(i).is_ok())
}

/// Signers sign on their own a day after sending, in turn.
pub(crate) fn tick(world: &mut World, now: OffsetDateTime) -> Vec<(&'static str, Value)> {
    let mut events = Vec::new();
    for tenant in world.esign.tenants.values_mut() {
        for document in tenant.documents.iter_mut() {
            let due = document.created_at + time::Duration::seconds(AUTO_SIGN_AFTER_SECS);
            if document.status != "sent" || now < due {
                continue;
            }
            while document.status == "sent" {
                let Some(index) = next_signer(document) else {
                    break;
                };
                events.extend(document.sign(index, due));
            }
        }
    }
    events
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn assemble(lines: &[String], size: Option<u64>) -> Vec<u8> {
        let (head, pad, tail) = pdf_parts(lines, size);
        let mut out = head;
        out.extend(std::iter::repeat_n(b'0', pad as usize));
        out.extend(tail);
        out
    }

    #[test]
    fn the_pdf_is_well_formed_and_reaches_the_size_asked() {
        let lines = vec!["Signed by Ada (CEO) <ada@example.com>".to_owned()];
        let natural = assemble(&lines, None);
        assert!(natural.starts_with(b"%PDF-1.4\n"));
        assert!(natural.ends_with(b"%%EOF\n"));
        let text = String::from_utf8(natural.clone()).unwrap();
        assert!(text.contains("(Signed by Ada \\(CEO\\) <ada@example.com>) Tj"));
        // Each xref entry points at its object.
        let xref_at: usize = text
            .rsplit("startxref\n")
            .next()
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(text[xref_at..].starts_with("xref\n0 7\n"));
        for (i, line) in text[xref_at..].lines().skip(3).take(6).enumerate() {
            let offset: usize = line[..10].parse().unwrap();
            assert!(
                text[offset..].starts_with(&format!("{} 0 obj", i + 1)),
                "object {}",
                i + 1
            );
        }
        for size in [5_000u64, 1 << 20, 123_457] {
            let padded = assemble(&lines, Some(size));
            assert_eq!(padded.len() as u64, size);
            let text = String::from_utf8_lossy(&padded);
            let xref_at: usize = text
                .rsplit("startxref\n")
                .next()
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(text[xref_at..].starts_with("xref\n"), "size {size}");
        }
    }
}
