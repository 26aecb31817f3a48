//! The control routes under `/_sandbox/worlds/`: users joining and leaving, assets
//! created, objects moved, worlds changed, and events of any type, each in whichever
//! tenant owns the world.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{delete, patch, post};
use serde_json::{Value, json};

use super::{Asset, WorldRecord, event, join, leave, owner_of, with_tenant};
use crate::http::{Object, bad_request, error, json, object_body, query_pairs};
use crate::state::{Shared, World};

/// The routes relative to `/_sandbox/worlds`.
pub(super) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/worlds/{id}", patch(update_world))
        .route("/worlds/{id}/users", post(add_user))
        .route("/worlds/{id}/users/{user}", delete(remove_user))
        .route("/worlds/{id}/assets", post(create_asset))
        .route("/worlds/{id}/objects/{index}/move", post(move_object))
        .route("/worlds/{id}/events", post(emit))
}

/// Runs `f` on a world of any tenant; `None` if there is no such world.
pub(super) fn on_world<T>(
    w: &mut World,
    world_id: &str,
    f: impl FnOnce(&mut World, &str, &mut WorldRecord) -> T,
) -> Option<T> {
    let key = owner_of(w, world_id)?;
    with_tenant(w, &key, |w, tenant| {
        let world = tenant.worlds.iter_mut().find(|x| x.id == world_id)?;
        Some(f(w, &key, world))
    })
}

/// Creates an asset in a world; its id.
pub(super) fn add_asset(w: &mut World, world_id: &str, properties: Value) -> Option<String> {
    let Value::Object(properties) = properties else {
        return None;
    };
    let key = owner_of(w, world_id)?;
    let id = w.ids.next("asset");
    let now = w.now();
    with_tenant(w, &key, |_, tenant| {
        tenant.assets.insert(
            id.clone(),
            Asset {
                id: id.clone(),
                world_id: world_id.to_owned(),
                properties,
                revision: 1,
                updated_at: now,
            },
        );
    });
    Some(id)
}

fn no_world(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "world_not_found",
        format!("no world with id {id:?}"),
    )
}

/// `announce` from a body or query (`true` unless given as false): whether sessions are
/// told; false makes a lost event (the sequence moves, nobody hears).
fn announce(body: Option<&serde_json::Map<String, Value>>, query: Option<&str>) -> bool {
    if let Some(v) = body
        .and_then(|b| b.get("announce"))
        .and_then(Value::as_bool)
    {
        return v;
    }
    !query_pairs(query)
        .iter()
        .any(|(k, v)| k == "announce" && v == "false")
}

/// `POST /worlds/{id}/users {"id", "display_name"?, "announce"?}`: the user joins.
async fn add_user(
    State(shared): State<Arc<Shared>>,
    Path(world_id): Path<String>,
    Object(body): Object,
) -> Response {
    let Some(id) = body.get("id").and_then(Value::as_str).map(str::to_owned) else {
        return bad_request("invalid_user", "id is a string");
    };
    let name = body
        .get("display_name")
        .and_then(Value::as_str)
        .unwrap_or(&id)
        .to_owned();
    let announce = announce(Some(&body), None);
    shared.with_world(|w| {
        match on_world(w, &world_id, |w, key, world| {
            join(w, key, world, &id, &name, announce)
        }) {
            None => no_world(&world_id),
            Some(joined) => json(StatusCode::OK, &json!({"joined": joined})),
        }
    })
}

/// `DELETE /worlds/{id}/users/{user}[?announce=false]`: the user leaves.
async fn remove_user(
    State(shared): State<Arc<Shared>>,
    Path((world_id, user)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Response {
    let announce = announce(None, query.as_deref());
    shared.with_world(|w| {
        match on_world(w, &world_id, |w, key, world| {
            leave(w, key, world, &user, announce)
        }) {
            None => no_world(&world_id),
            Some(left) => json(StatusCode::OK, &json!({"left": left})),
        }
    })
}

/// `POST /worlds/{id}/assets {"properties"}`: a new asset in the world.
async fn create_asset(
    State(shared): State<Arc<Shared>>,
    Path(world_id): Path<String>,
    body: Bytes,
) -> Response {
    let properties = match object_body(&body) {
        Ok(b) => b.get("properties").cloned().unwrap_or(json!({})),
        Err(e) => return e,
    };
    if !properties.is_object() {
        return bad_request("invalid_properties", "properties is a JSON object");
    }
    shared.with_world(|w| match add_asset(w, &world_id, properties) {
        Some(id) => json(StatusCode::CREATED, &json!({"id": id})),
        None => no_world(&world_id),
    })
}

/// `POST /worlds/{id}/objects/{index}/move {"position", "destination"?}`: an
/// `object.moved` event.
async fn move_object(
    State(shared): State<Arc<Shared>>,
    Path((world_id, index)): Path<(String, usize)>,
    Object(body): Object,
) -> Response {
    let position = body.get("position").cloned().unwrap_or(Value::Null);
    let valid = position
        .as_array()
        .is_some_and(|p| p.len() == 3 && p.iter().all(Value::is_number));
    if !valid {
        return bad_request("invalid_position", "position is three numbers [x, y, z]");
    }
    let destination = body.get("destination").cloned();
    shared.with_world(|w| {
        let moved = on_world(w, &world_id, |w, key, world| {
            super::move_object(w, key, world, index, &position, destination.as_ref(), None)
        });
        match moved {
            None => no_world(&world_id),
            Some(None) => error(
                StatusCode::NOT_FOUND,
                "object_not_found",
                format!("the world has no object {index}"),
            ),
            Some(Some(message)) => json(StatusCode::OK, &message),
        }
    })
}

/// `PATCH /worlds/{id} {"name"?, "theme"?, "description"?}`: a `world.updated` event.
async fn update_world(
    State(shared): State<Arc<Shared>>,
    Path(world_id): Path<String>,
    Object(body): Object,
) -> Response {
    shared.with_world(|w| {
        let updated = on_world(w, &world_id, |w, key, world| {
            if let Some(n) = body.get("name").and_then(Value::as_str) {
                world.name = n.to_owned();
            }
            if let Some(t) = body.get("theme").and_then(Value::as_str) {
                world.theme = t.to_owned();
            }
            if let Some(d) = body.get("description").and_then(Value::as_str) {
                world.description = Some(d.to_owned());
            }
            world.updated_at = w.now();
            world.revision += 1;
            let data = json!({"world": world.to_json()});
            event(w, key, world, "world.updated", data, true)
        });
        match updated {
            None => no_world(&world_id),
            Some(message) => json(StatusCode::OK, &message),
        }
    })
}

/// `POST /worlds/{id}/events {"type", "data"?}`: an event of any type, the next
/// sequence number.
async fn emit(
    State(shared): State<Arc<Shared>>,
    Path(world_id): Path<String>,
    Object(body): Object,
) -> Response {
    let Some(kind) = body.get("type").and_then(Value::as_str).map(str::to_owned) else {
        return bad_request("invalid_event", "type is a string");
    };
    let data = body.get("data").cloned().unwrap_or(json!({}));
    shared.with_world(|w| {
        match on_world(w, &world_id, |w, key, world| {
            event(w, key, world, &kind, data, true)
        }) {
            None => no_world(&world_id),
            Some(message) => json(StatusCode::OK, &message),
        }
    })
}
