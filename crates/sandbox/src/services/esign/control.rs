//! The control routes under `/_sandbox/esign/`: a signer signs or declines, and a
//! document's signed PDF is padded to a size (for download benchmarks).

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;

use crate::http::{bad_request, error, json, object_body};
use crate::state::{Shared, World};

use super::{Document, find, next_signer};

/// The routes relative to `/_sandbox/esign`.
pub(super) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/documents/{id}/sign", post(sign_endpoint))
        .route("/documents/{id}/decline", post(decline_endpoint))
        .route("/documents/{id}/pdf_size", post(pdf_size_endpoint))
}

/// The optional `email` of a sign or decline request (an empty body is fine).
fn signer_email(body: &Bytes) -> Result<Option<String>, Response> {
    if body.is_empty() {
        return Ok(None);
    }
    let body = object_body(body)?;
    match body.get("email") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(email)) => Ok(Some(email.clone())),
        Some(_) => Err(bad_request("invalid_email", "email must be a string")),
    }
}

async fn sign_endpoint(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    signer_action(&shared, &id, &body, sign)
}

async fn decline_endpoint(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    signer_action(&shared, &id, &body, decline)
}

/// Runs a signer's action (`{"email"?}` in the body) on document `id`; answers the
/// document or why it was refused.
fn signer_action(
    shared: &Shared,
    id: &str,
    body: &Bytes,
    action: fn(&mut World, &str, Option<&str>) -> Result<Value, Refusal>,
) -> Response {
    let email = match signer_email(body) {
        Ok(email) => email,
        Err(e) => return e,
    };
    shared
        .with_world(|w| action(w, id, email.as_deref()))
        .map(|doc| json(StatusCode::OK, &doc))
        .unwrap_or_else(IntoResponse::into_response)
}

async fn pdf_size_endpoint(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let bytes = match object_body(&body).map(|b| b.get("bytes").and_then(Value::as_u64)) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return bad_request("invalid_bytes", "bytes must be a whole number"),
        Err(e) => return e,
    };
    shared
        .with_world(|w| set_pdf_size(w, &id, bytes))
        .map(|()| StatusCode::NO_CONTENT.into_response())
        .unwrap_or_else(IntoResponse::into_response)
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
