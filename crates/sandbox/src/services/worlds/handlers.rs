//! The REST routes and the realtime upgrade, relative to `/worlds`.

use std::sync::Arc;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use serde_json::{Value, json};

use super::{Tenant, WorldRecord, event, with_tenant};
use crate::http::{Caller, Object, Params, bad_request, bounded_param, error, json, page_token};
use crate::service::Service;
use crate::state::Shared;

/// The longest world name accepted.
const MAX_NAME: usize = 100;
/// The most objects a world is created with.
const MAX_OBJECTS: usize = 1_000;

pub(super) fn router() -> Router<Arc<Shared>> {
    let router = Router::new()
        .route("/api/v1/worlds", get(list).post(create))
        .route(
            "/api/v1/worlds/{id}",
            get(get_world).patch(update_world).delete(delete_world),
        )
        .route("/api/v1/worlds/{id}/users", get(users))
        .route("/ws/v1/realtime", get(realtime));
    super::assets::routes(router)
}

fn not_found(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "world_not_found",
        format!("no world with id {id:?}"),
    )
}

fn find<'t>(tenant: &'t mut Tenant, id: &str) -> Option<&'t mut WorldRecord> {
    tenant.worlds.iter_mut().find(|w| w.id == id)
}

/// `GET /api/v1/worlds?limit&page_token`: oldest first, `{"data", "next_page_token"}`.
async fn list(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Response {
    let pairs = params.0.as_slice();
    let limit = match bounded_param(pairs, "limit", 1, 100) {
        Ok(l) => l.unwrap_or(20) as usize,
        Err(e) => return e,
    };
    let start = match page_token(pairs, "p") {
        Ok(n) => n,
        Err(e) => return e,
    };
    shared.with_world(|w| {
        with_tenant(w, &caller.key, |_, tenant| {
            let data: Vec<Value> = tenant
                .worlds
                .iter()
                .skip(start)
                .take(limit)
                .map(WorldRecord::to_json)
                .collect();
            let next = (start + limit < tenant.worlds.len()).then(|| format!("p{}", start + limit));
            json(
                StatusCode::OK,
                &json!({"data": data, "next_page_token": next}),
            )
        })
    })
}

/// Checks an object of a new world: `type`, `position` as three finite numbers, an
/// optional `destination` (kept as given).
fn object(i: usize, v: &Value) -> Result<Value, Response> {
    let bad = |m: String| Err(bad_request("invalid_object", m));
    let Some(o) = v.as_object() else {
        return bad(format!("objects[{i}] is not an object"));
    };
    match o.get("type").and_then(Value::as_str) {
        Some(t) if !t.trim().is_empty() => {}
        _ => return bad(format!("objects[{i}].type is a non-empty string")),
    }
    let position = o.get("position").and_then(Value::as_array);
    let valid = position
        .is_some_and(|p| p.len() == 3 && p.iter().all(|n| n.as_f64().is_some_and(f64::is_finite)));
    if !valid {
        return bad(format!("objects[{i}].position is three numbers [x, y, z]"));
    }
    Ok(v.clone())
}

/// `POST /api/v1/worlds {name, theme, description?, objects?}`.
async fn create(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Object(body): Object,
) -> Response {
    let fields = match Fields::read(&body) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let Some(name) = fields.name else {
        return bad_request(
            "invalid_name",
            format!("name is a non-blank string of at most {MAX_NAME} characters"),
        );
    };
    let Some(theme) = fields.theme else {
        return bad_request("invalid_theme", "theme is a non-blank string");
    };
    let description = fields.description.flatten();
    let objects = fields.objects.unwrap_or_default();
    shared.with_world(|w| {
        let now = w.now();
        let id = w.ids.next("world");
        with_tenant(w, &caller.key, |_, tenant| {
            let world = WorldRecord {
                id,
                name,
                theme,
                description,
                objects,
                created_at: now,
                updated_at: now,
                users: Default::default(),
                seq: 0,
                log: std::collections::VecDeque::new(),
                revision: 1,
            };
            let answer = world.to_json();
            tenant.worlds.push(world);
            json(StatusCode::CREATED, &answer)
        })
    })
}

/// `GET /api/v1/worlds/{id}`.
async fn get_world(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    shared.with_world(|w| {
        with_tenant(w, &caller.key, |_, tenant| match find(tenant, &id) {
            Some(world) => with_etag(json(StatusCode::OK, &world.to_json()), world.revision),
            None => not_found(&id),
        })
    })
}

/// `GET /api/v1/worlds/{id}/users`: `{"data": [user]}`, by join time.
async fn users(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    shared.with_world(|w| {
        with_tenant(w, &caller.key, |_, tenant| match find(tenant, &id) {
            Some(world) => json(StatusCode::OK, &json!({"data": world.users_json()})),
            None => not_found(&id),
        })
    })
}

/// `GET /ws/v1/realtime`: the upgrade.
async fn realtime(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let key = caller.key.clone();
    upgrade
        .max_message_size(1024 * 1024)
        .on_upgrade(move |socket| {
            let session = super::stream::Session::new(key.clone());
            crate::sessions::run_session(shared, Service::Worlds, key, socket, session)
        })
        .into_response()
}

/// The fields of a world's body, each checked when given: `name` (non-blank, at most
/// [`MAX_NAME`] characters), `theme` (non-blank), `description` (a string, or `null`
/// to remove it), `objects` (at most [`MAX_OBJECTS`], each checked).
struct Fields {
    name: Option<String>,
    theme: Option<String>,
    description: Option<Option<String>>,
    objects: Option<Vec<Value>>,
}

impl Fields {
    fn read(body: &serde_json::Map<String, Value>) -> Result<Fields, Response> {
        let name = match body.get("name") {
            None => None,
            Some(Value::String(n))
                if !n.trim().is_empty() && n.trim().chars().count() <= MAX_NAME =>
            {
                Some(n.trim().to_owned())
            }
            Some(_) => {
                return Err(bad_request(
                    "invalid_name",
                    format!("name is a non-blank string of at most {MAX_NAME} characters"),
                ));
            }
        };
        let theme = match body.get("theme") {
            None => None,
            Some(Value::String(t)) if !t.trim().is_empty() => Some(t.trim().to_owned()),
            Some(_) => return Err(bad_request("invalid_theme", "theme is a non-blank string")),
        };
        let description = match body.get("description") {
            None => None,
            Some(Value::Null) => Some(None),
            Some(Value::String(d)) => Some(Some(d.clone())),
            Some(_) => {
                return Err(bad_request(
                    "invalid_description",
                    "description is a string",
                ));
            }
        };
        let objects = match body.get("objects") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) if items.len() <= MAX_OBJECTS => Some(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| object(i, v))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(_) => {
                return Err(bad_request(
                    "invalid_object",
                    format!("objects is an array of at most {MAX_OBJECTS}"),
                ));
            }
        };
        Ok(Fields {
            name,
            theme,
            description,
            objects,
        })
    }
}

/// What an `If-Match` header asks for (RFC 9110 section 13.1.1).
pub(super) enum IfMatch {
    /// No header: the change applies whatever the revision.
    Absent,
    /// `*`: the resource must exist, at any revision.
    Any,
    /// A list of entity tags: one must be the current `ETag`, compared strongly. A weak
    /// tag (`W/"1"`) never matches, nor does a tag that is not the revision exactly as
    /// the `ETag` writes it (`"01"`, `"+1"`).
    Tags(String),
}

impl IfMatch {
    /// Whether the resource at `revision` meets the condition.
    pub(super) fn holds(&self, revision: u64) -> bool {
        match self {
            IfMatch::Absent | IfMatch::Any => true,
            IfMatch::Tags(list) => {
                let current = format!("\"{revision}\"");
                list.split(',').any(|tag| tag.trim() == current)
            }
        }
    }

    /// `Ok` when the condition holds, else `412 revision_mismatch`.
    pub(super) fn check(&self, what: &str, revision: u64) -> Result<(), Response> {
        match self {
            IfMatch::Tags(list) if !self.holds(revision) => Err(stale(what, revision, list)),
            _ => Ok(()),
        }
    }
}

/// Reads `If-Match`: absent, `*`, or a comma-separated list of entity tags (each
/// `"..."` or `W/"..."`); anything else is `400 invalid_if_match`.
pub(super) fn if_match(headers: &HeaderMap) -> Result<IfMatch, Response> {
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Ok(IfMatch::Absent);
    };
    let invalid = || {
        bad_request(
            "invalid_if_match",
            "If-Match is `*` or a list of entity tags, as the ETag gives them (\"3\")",
        )
    };
    let text = value.to_str().map_err(|_| invalid())?.trim();
    if text == "*" {
        return Ok(IfMatch::Any);
    }
    let well_formed = text.split(',').all(|tag| {
        let tag = tag.trim();
        let opaque = tag.strip_prefix("W/").unwrap_or(tag);
        opaque.len() >= 2
            && opaque.starts_with('"')
            && opaque.ends_with('"')
            && !opaque[1..opaque.len() - 1].contains('"')
    });
    if well_formed {
        Ok(IfMatch::Tags(text.to_owned()))
    } else {
        Err(invalid())
    }
}

/// `response` with `ETag: "<revision>"`.
pub(super) fn with_etag(mut response: Response, revision: u64) -> Response {
    if let Ok(value) = HeaderValue::from_str(&format!("\"{revision}\"")) {
        response.headers_mut().insert(header::ETAG, value);
    }
    response
}

/// `412 revision_mismatch`, naming the current revision in the message and the `ETag`.
fn stale(what: &str, revision: u64, asked: &str) -> Response {
    with_etag(
        error(
            StatusCode::PRECONDITION_FAILED,
            "revision_mismatch",
            format!("the {what} is at revision {revision}; If-Match asked for {asked}"),
        ),
        revision,
    )
}

/// `PATCH /api/v1/worlds/{id} {name?, theme?, description?, objects?}` (`If-Match`
/// optional): the fields given change (objects replaced as a whole), the revision
/// moves, and a `world.updated` event goes to the world's sessions.
async fn update_world(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Object(body): Object,
) -> Response {
    let expected = match if_match(&headers) {
        Ok(e) => e,
        Err(e) => return e,
    };
    let fields = match Fields::read(&body) {
        Ok(f) => f,
        Err(e) => return e,
    };
    shared.with_world(|w| {
        with_tenant(w, &caller.key, |w, tenant| {
            let Some(world) = find(tenant, &id) else {
                return not_found(&id);
            };
            if let Err(stale) = expected.check("world", world.revision) {
                return stale;
            }
            let before = world.to_json();
            if let Some(name) = fields.name {
                world.name = name;
            }
            if let Some(theme) = fields.theme {
                world.theme = theme;
            }
            if let Some(description) = fields.description {
                world.description = description;
            }
            if let Some(objects) = fields.objects {
                world.objects = objects;
            }
            if world.to_json() == before {
                // A patch that changes nothing (`{}`, or the values it has): the revision
                // stays and no event is sent.
                return with_etag(json(StatusCode::OK, &before), world.revision);
            }
            world.revision += 1;
            world.updated_at = w.now();
            let answer = world.to_json();
            event(
                w,
                &caller.key,
                world,
                "world.updated",
                json!({"world": answer}),
                true,
            );
            with_etag(json(StatusCode::OK, &answer), world.revision)
        })
    })
}

/// `DELETE /api/v1/worlds/{id}` (`If-Match` optional): the world and its assets are
/// gone; its sessions get a `world.deleted` event first. 204.
async fn delete_world(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let expected = match if_match(&headers) {
        Ok(e) => e,
        Err(e) => return e,
    };
    shared.with_world(|w| {
        with_tenant(w, &caller.key, |w, tenant| {
            let Some(world) = find(tenant, &id) else {
                return not_found(&id);
            };
            if let Err(stale) = expected.check("world", world.revision) {
                return stale;
            }
            event(
                w,
                &caller.key,
                world,
                "world.deleted",
                json!({"world_id": id}),
                true,
            );
            tenant.worlds.retain(|x| x.id != id);
            tenant.assets.retain(|_, a| a.world_id != id);
            StatusCode::NO_CONTENT.into_response()
        })
    })
}
