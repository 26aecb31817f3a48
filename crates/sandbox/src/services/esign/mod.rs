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

mod control;
mod handlers;
mod oauth;
mod pdf;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::Router;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::Sandbox;
use crate::clock::rfc3339;
use crate::plans::Limit;
use crate::registry::{Credential, ServiceDef};
use crate::service::Service;
use crate::state::{Shared, World};

/// The OAuth client id the sandbox accepts.
pub const ESIGN_CLIENT_ID: &str = "sandbox_client";
/// The OAuth client secret the sandbox accepts.
pub const ESIGN_CLIENT_SECRET: &str = "sandbox_client_secret";
/// How long an issued token lasts, in sandbox seconds.
pub const TOKEN_LIFETIME_SECS: i64 = 3600;
/// The largest document the sandbox accepts (decoded), in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 25 * 1024 * 1024;
/// How long after sending a document its signers sign on their own (sandbox time), unless
/// the sandbox was started with another [`crate::SandboxBuilder::sign_after`].
pub const AUTO_SIGN_AFTER_SECS: i64 = 24 * 3600;

/// The request body cap of the service: a 25 MiB document, base64-encoded, plus JSON.
const BODY_LIMIT: usize = MAX_DOCUMENT_BYTES / 3 * 4 + 1024 * 1024;

/// The service, as the registry sees it.
pub(crate) struct Def;

impl ServiceDef for Def {
    fn hint(&self) -> &'static str {
        "cargo run -p esign-client --example esign_quickstart"
    }

    fn router(&self) -> Router<Arc<Shared>> {
        handlers::router()
    }

    fn public_router(&self) -> Router<Arc<Shared>> {
        oauth::router()
    }

    fn control_router(&self) -> Router<Arc<Shared>> {
        control::router()
    }

    fn limit(&self, plan: &str) -> Option<Limit> {
        match plan {
            "business" => Some(Limit::per_hour(10_000)),
            _ => None,
        }
    }

    fn authenticate(&self, world: &World, credential: &str) -> Credential {
        oauth::check_token(world, credential)
    }

    fn tick(&self, world: &mut World, now: OffsetDateTime) -> Vec<(&'static str, Value)> {
        tick(world, now)
    }
}

/// The e-signature service of a running sandbox: `sandbox.esign()`.
#[derive(Debug, Clone, Copy)]
pub struct Esign<'a> {
    sandbox: &'a Sandbox,
}

impl Sandbox {
    /// The e-signature service.
    pub fn esign(&self) -> Esign<'_> {
        Esign { sandbox: self }
    }
}

impl Esign<'_> {
    /// The base URL a client uses (paths such as `/documents` go after it).
    pub fn url(&self) -> String {
        self.sandbox.service_url(Service::Esign)
    }

    /// The OAuth 2.0 token URL (client credentials [`ESIGN_CLIENT_ID`] and
    /// [`ESIGN_CLIENT_SECRET`]).
    pub fn token_url(&self) -> String {
        format!("{}/oauth/token", self.url())
    }

    /// How many requests the token endpoint has answered.
    pub fn token_requests(&self) -> u64 {
        self.sandbox.shared.with_world(|w| {
            w.services
                .get::<EsignState>()
                .map_or(0, |s| s.token_requests)
        })
    }

    /// Every document the sandbox holds (all keys), oldest first, as
    /// `GET /documents/{id}` shows them: lets a test count what was really created.
    pub fn documents(&self) -> Vec<Value> {
        self.sandbox.shared.with_world(|w| documents(w))
    }

    /// Signs document `id` for the signer with `email` (or the next signer whose turn
    /// it is), as `POST /_sandbox/esign/documents/{id}/sign` does. Returns the document,
    /// or why it was refused (`409 not_your_turn: ...`).
    pub fn sign(&self, id: &str, email: Option<&str>) -> Result<Value, String> {
        self.sandbox
            .shared
            .with_world(|w| control::sign(w, id, email))
            .map_err(|refusal| refusal.to_string())
    }

    /// Declines document `id` for the signer with `email` (or the next pending signer).
    pub fn decline(&self, id: &str, email: Option<&str>) -> Result<Value, String> {
        self.sandbox
            .shared
            .with_world(|w| control::decline(w, id, email))
            .map_err(|refusal| refusal.to_string())
    }

    /// Pads document `id`'s signed PDF to `bytes` (for download benchmarks); the
    /// sandbox streams it without holding it in memory. `false` for an unknown id.
    pub fn set_pdf_size(&self, id: &str, bytes: u64) -> bool {
        self.sandbox
            .shared
            .with_world(|w| control::set_pdf_size(w, id, bytes))
            .is_ok()
    }
}

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
}

fn tenant<'w>(world: &'w mut World, key: &str) -> &'w mut Tenant {
    world
        .services
        .get_mut::<EsignState>()
        .tenants
        .entry(key.to_owned())
        .or_default()
}

/// Every document of every tenant, oldest first, as the API shows them.
fn documents(world: &World) -> Vec<Value> {
    let Some(state) = world.services.get::<EsignState>() else {
        return Vec::new();
    };
    let mut all: Vec<&Document> = state
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
        .services
        .get_mut::<EsignState>()
        .tenants
        .values_mut()
        .flat_map(|t| t.documents.iter_mut())
        .find(|d| d.id == id)
}

/// Signers sign on their own, in turn, a while after sending (a day by default:
/// [`crate::SandboxBuilder::sign_after`]).
fn tick(world: &mut World, now: OffsetDateTime) -> Vec<(&'static str, Value)> {
    let mut events = Vec::new();
    let after = time::Duration::seconds(world.settings.sign_after_secs);
    for tenant in world.services.get_mut::<EsignState>().tenants.values_mut() {
        for document in tenant.documents.iter_mut() {
            let due = document.created_at.saturating_add(after);
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

fn next_signer(document: &Document) -> Option<usize> {
    (0..document.signers.len()).find(|&i| document.may_sign(i).is_ok())
}
