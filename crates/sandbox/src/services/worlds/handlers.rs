//! The REST routes and the realtime upgrade, relative to `/worlds`.

use std::sync::Arc;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use serde_json::{Value, json};

use super::{Tenant, WorldRecord, with_tenant};
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
        .route("/api/v1/worlds/{id}", get(get_world))
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
    let text = |name: &str| body.get(name).and_then(Value::as_str).map(str::trim);
    let name = match text("name") {
        Some(n) if !n.is_empty() && n.chars().count() <= MAX_NAME => n.to_owned(),
        _ => {
            return bad_request(
                "invalid_name",
                format!("name is a non-blank string of at most {MAX_NAME} characters"),
            );
        }
    };
    let theme = match text("theme") {
        Some(t) if !t.is_empty() => t.to_owned(),
        _ => return bad_request("invalid_theme", "theme is a non-blank string"),
    };
    let description = match body.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(d.clone()),
        Some(_) => return bad_request("invalid_description", "description is a string"),
    };
    let objects = match body.get("objects") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.len() <= MAX_OBJECTS => {
            match items
                .iter()
                .enumerate()
                .map(|(i, v)| object(i, v))
                .collect()
            {
                Ok(objects) => objects,
                Err(e) => return e,
            }
        }
        Some(_) => {
            return bad_request(
                "invalid_object",
                format!("objects is an array of at most {MAX_OBJECTS}"),
            );
        }
    };
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
            Some(world) => json(StatusCode::OK, &world.to_json()),
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
            crate::streams::run_session(shared, Service::Worlds, key, socket, session)
        })
        .into_response()
}
