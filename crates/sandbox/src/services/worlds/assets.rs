//! Assets over REST: read one (`GET /api/v1/assets/{id}`, its revision in the body and
//! the `ETag`), list a world's (`GET /api/v1/worlds/{id}/assets?limit&page_token`),
//! create one (`POST /api/v1/worlds/{id}/assets`), replace its properties (`PUT`) or
//! change only some (`PATCH`, a JSON merge patch, RFC 7396, of the properties: a key set
//! to `null` is removed, an object merges into an object), both conditional with `If-Match`. Each change moves the revision and is
//! an `asset.updated` event of its world.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use axum::{Extension, Router};
use serde_json::{Map, Value, json};

use super::handlers::{if_match, with_etag};
use super::{Asset, event, with_tenant};
use crate::http::{
    Caller, Params, bad_request, bounded_param, error, json, object_body, page_token,
};
use crate::state::Shared;

pub(super) fn routes(router: Router<Arc<Shared>>) -> Router<Arc<Shared>> {
    router
        .route(
            "/api/v1/assets/{id}",
            get(get_asset).put(replace).patch(merge),
        )
        .route("/api/v1/worlds/{id}/assets", get(list).post(create))
}

fn asset_not_found(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "asset_not_found",
        format!("no asset with id {id:?}"),
    )
}

fn world_not_found(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "world_not_found",
        format!("no world with id {id:?}"),
    )
}

/// The `properties` object of a body.
/// A merge patch of an asset (RFC 7396): `{}` (no `properties`) changes nothing,
/// `"properties": null` removes every property (`Ok(None)`), an object merges.
fn patch(body: &Bytes) -> Result<Option<Map<String, Value>>, Response> {
    match object_body(body)?.get("properties") {
        None => Ok(Some(Map::new())),
        Some(Value::Null) => Ok(None),
        Some(Value::Object(p)) => Ok(Some(p.clone())),
        Some(_) => Err(bad_request(
            "invalid_properties",
            "properties is a JSON object (or null, to remove them all)",
        )),
    }
}

fn properties(body: &Bytes) -> Result<Map<String, Value>, Response> {
    match object_body(body)?.get("properties") {
        Some(Value::Object(p)) => Ok(p.clone()),
        _ => Err(bad_request(
            "invalid_properties",
            "properties is a JSON object",
        )),
    }
}

async fn get_asset(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    shared.with_world(|w| {
        with_tenant(w, &caller.key, |_, tenant| match tenant.assets.get(&id) {
            Some(asset) => with_etag(json(StatusCode::OK, &asset.to_json()), asset.revision),
            None => asset_not_found(&id),
        })
    })
}

/// In id order (ids never change, so a page token stays good), `{"assets",
/// "next_page_token"}`; `limit` 1 to 100 (default 20).
async fn list(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(world_id): Path<String>,
    params: Params,
) -> Response {
    let pairs = params.0.as_slice();
    let limit = match bounded_param(pairs, "limit", 1, 100) {
        Ok(l) => l.unwrap_or(20) as usize,
        Err(e) => return e,
    };
    let start = match page_token(pairs, "a") {
        Ok(n) => n,
        Err(e) => return e,
    };
    shared.with_world(|w| {
        with_tenant(w, &caller.key, |_, tenant| {
            if !tenant.worlds.iter().any(|x| x.id == world_id) {
                return world_not_found(&world_id);
            }
            let mut all: Vec<&Asset> = tenant
                .assets
                .values()
                .filter(|a| a.world_id == world_id)
                .collect();
            all.sort_by(|a, b| a.id.cmp(&b.id));
            let page: Vec<Value> = all
                .iter()
                .skip(start)
                .take(limit)
                .map(|a| a.to_json())
                .collect();
            let next = (start + limit < all.len()).then(|| format!("a{}", start + limit));
            json(
                StatusCode::OK,
                &json!({"assets": page, "next_page_token": next}),
            )
        })
    })
}

async fn create(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(world_id): Path<String>,
    body: Bytes,
) -> Response {
    let properties = match properties(&body) {
        Ok(p) => p,
        Err(e) => return e,
    };
    shared.with_world(|w| {
        let id = w.ids.next("asset");
        let now = w.now();
        with_tenant(w, &caller.key, |w, tenant| {
            let Some(world) = tenant.worlds.iter_mut().find(|x| x.id == world_id) else {
                return world_not_found(&world_id);
            };
            let asset = Asset {
                id: id.clone(),
                world_id: world_id.clone(),
                properties,
                revision: 1,
                updated_at: now,
            };
            let answer = asset.to_json();
            event(
                w,
                &caller.key,
                world,
                "asset.updated",
                json!({"asset": answer}),
                true,
            );
            tenant.assets.insert(id, asset);
            with_etag(json(StatusCode::CREATED, &answer), 1)
        })
    })
}

/// `PUT`: the properties replaced whole.
async fn replace(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    change(shared, caller, id, headers, body, false)
}

/// `PATCH`: only the properties given change (`null` removes one).
async fn merge(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    change(shared, caller, id, headers, body, true)
}

fn change(
    shared: Arc<Shared>,
    caller: Caller,
    id: String,
    headers: HeaderMap,
    body: Bytes,
    merge: bool,
) -> Response {
    let expected = match if_match(&headers) {
        Ok(e) => e,
        Err(e) => return e,
    };
    let given = match if merge {
        patch(&body)
    } else {
        properties(&body).map(Some)
    } {
        Ok(p) => p,
        Err(e) => return e,
    };
    shared.with_world(|w| {
        with_tenant(w, &caller.key, |w, tenant| {
            let Some(asset) = tenant.assets.get_mut(&id) else {
                return asset_not_found(&id);
            };
            if let Err(stale) = expected.check("asset", asset.revision) {
                return stale;
            }
            let before = asset.properties.clone();
            match given {
                Some(given) if merge => merge_patch(&mut asset.properties, given),
                Some(given) => asset.properties = given,
                None => asset.properties.clear(),
            }
            if asset.properties == before {
                // Nothing changed (`{}`, or values it already had): the revision stays, no
                // event is sent, and the answer is the asset as it is.
                let answer = asset.to_json();
                return with_etag(json(StatusCode::OK, &answer), asset.revision);
            }
            asset.revision += 1;
            asset.updated_at = w.now();
            let answer = asset.to_json();
            let revision = asset.revision;
            let world_id = asset.world_id.clone();
            if let Some(world) = tenant.worlds.iter_mut().find(|x| x.id == world_id) {
                event(
                    w,
                    &caller.key,
                    world,
                    "asset.updated",
                    json!({"asset": answer}),
                    true,
                );
            }
            with_etag(json(StatusCode::OK, &answer), revision)
        })
    })
}

/// A JSON merge patch (RFC 7396) of an object: `null` removes a member, an object merges
/// into an object, anything else replaces.
fn merge_patch(target: &mut Map<String, Value>, patch: Map<String, Value>) {
    for (name, value) in patch {
        match value {
            Value::Null => {
                target.remove(&name);
            }
            Value::Object(inner) => match target.get_mut(&name) {
                Some(Value::Object(existing)) => merge_patch(existing, inner),
                _ => {
                    let mut fresh = Map::new();
                    merge_patch(&mut fresh, inner);
                    target.insert(name, Value::Object(fresh));
                }
            },
            other => {
                target.insert(name, other);
            }
        }
    }
}
