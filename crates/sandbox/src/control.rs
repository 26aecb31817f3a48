//! The control endpoints under `/_sandbox/` (no key needed): the clock, webhook
//! receivers and their deliveries, the event log, fault injection, open streams and
//! reset; each service's own control routes are mounted under `/_sandbox/<service>/`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use serde_json::{Value, json};

use crate::clock::rfc3339;
use crate::faults::Fault;
use crate::http::{bad_request, error, json, object_body};
use crate::service::Service;
use crate::state::Shared;
use crate::webhooks::{WebhookReceiver, make_secret};

/// The routes, relative to `/_sandbox`.
pub(crate) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/", get(info))
        .route("/clock", get(clock))
        .route("/clock/advance", post(advance))
        .route("/webhooks", get(receivers).post(add_receiver))
        .route("/webhooks/deliveries", get(deliveries))
        .route("/webhooks/{id}", delete(remove_receiver))
        .route("/events", get(events))
        .route("/faults", post(add_fault).delete(clear_faults))
        .route("/reset", post(reset))
        .route("/streams", get(streams))
        .route("/streams/drop", post(drop_streams))
}

/// The control routes of every service, each under its prefix.
pub(crate) fn service_routers() -> Router<Arc<Shared>> {
    Service::ALL.iter().fold(Router::new(), |router, service| {
        router.nest(
            &format!("/{}", service.prefix()),
            crate::services::def(service).control_router(),
        )
    })
}

async fn info(State(shared): State<Arc<Shared>>) -> Response {
    let (now, keys) = shared.with_world(|w| (rfc3339(w.now()), w.settings.keys.clone()));
    let services: serde_json::Map<String, Value> = Service::ALL
        .iter()
        .map(|s| (s.prefix().to_owned(), json!(format!("/{}", s.prefix()))))
        .collect();
    let keys: Vec<Value> = keys
        .iter()
        .map(|(key, plan)| json!({"key": key, "plan": plan}))
        .collect();
    json(
        StatusCode::OK,
        &json!({"now": now, "services": services, "keys": keys}),
    )
}

async fn clock(State(shared): State<Arc<Shared>>) -> Response {
    let now = shared.with_world(|w| rfc3339(w.now()));
    json(StatusCode::OK, &json!({ "now": now }))
}

async fn advance(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let body = match object_body(&body) {
        Ok(body) => body,
        Err(e) => return e,
    };
    let Some(seconds) = body
        .get("seconds")
        .and_then(Value::as_f64)
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e10)
    else {
        return bad_request("invalid_seconds", "seconds must be a non-negative number");
    };
    let moved = shared.with_world(|w| w.clock.advance(Duration::from_secs_f64(seconds)));
    if !moved {
        return bad_request(
            "out_of_range",
            format!(
                "the clock cannot move past {}; it stays where it is",
                rfc3339(crate::clock::LATEST)
            ),
        );
    }
    let now = shared.with_world(|w| rfc3339(w.now()));
    json(StatusCode::OK, &json!({ "now": now }))
}

pub(crate) fn register(
    shared: &Shared,
    url: String,
    secret: Option<String>,
    events: Vec<String>,
) -> WebhookReceiver {
    shared.with_world(|w| {
        let id = w.ids.next("wh");
        let secret =
            secret.unwrap_or_else(|| make_secret(w.settings.seed ^ crate::ids::stable_hash(&id)));
        let receiver = WebhookReceiver {
            id,
            url,
            secret,
            events,
        };
        w.receivers.push(receiver.clone());
        receiver
    })
}

async fn add_receiver(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let body = match object_body(&body) {
        Ok(body) => body,
        Err(e) => return e,
    };
    let Some(url) = body
        .get("url")
        .and_then(Value::as_str)
        .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
    else {
        return bad_request("invalid_url", "url must be an http(s) URL");
    };
    let secret = match body.get("secret") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if crate::signing::sign(s, "msg", 0, b"").is_ok() => Some(s.clone()),
        Some(_) => return bad_request("invalid_secret", "secret must look like whsec_<base64>"),
    };
    let events = match body.get("events") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(_) => return bad_request("invalid_events", "events must be an array of event types"),
    };
    let receiver = register(&shared, url.to_owned(), secret, events);
    json(StatusCode::CREATED, &receiver)
}

async fn receivers(State(shared): State<Arc<Shared>>) -> Response {
    let data = shared.with_world(|w| w.receivers.clone());
    json(StatusCode::OK, &json!({ "data": data }))
}

async fn remove_receiver(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    let removed = shared.with_world(|w| {
        let before = w.receivers.len();
        w.receivers.retain(|r| r.id != id);
        before != w.receivers.len()
    });
    if removed {
        StatusCode::NO_CONTENT.into_response()
    } else {
        error(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no receiver {id:?}"),
        )
    }
}

async fn deliveries(State(shared): State<Arc<Shared>>) -> Response {
    let data = shared.with_world(|w| w.deliveries.clone());
    json(StatusCode::OK, &json!({ "data": data }))
}

async fn events(State(shared): State<Arc<Shared>>) -> Response {
    let data = shared.with_world(|w| w.events.clone());
    json(StatusCode::OK, &json!({ "data": data }))
}

async fn add_fault(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let fault: Fault = match serde_json::from_slice(&body) {
        Ok(fault) => fault,
        Err(e) => return bad_request("invalid_fault", format!("not a fault: {e}")),
    };
    if fault.status.is_some_and(|s| !(100..=599).contains(&s)) {
        return bad_request("invalid_fault", "status must be from 100 to 599");
    }
    shared.with_world(|w| w.faults.add(fault.clone()));
    json(StatusCode::CREATED, &fault)
}

async fn clear_faults(State(shared): State<Arc<Shared>>) -> Response {
    shared.with_world(|w| w.faults.clear());
    StatusCode::NO_CONTENT.into_response()
}

async fn reset(State(shared): State<Arc<Shared>>) -> Response {
    shared.with_world(|w| w.reset());
    StatusCode::NO_CONTENT.into_response()
}

async fn streams(State(shared): State<Arc<Shared>>) -> Response {
    let open: serde_json::Map<String, Value> = Service::ALL
        .iter()
        .map(|s| (s.prefix().to_owned(), json!(shared.streams.count(Some(*s)))))
        .collect();
    json(StatusCode::OK, &json!({ "open": open }))
}

/// `POST /_sandbox/streams/drop {"service"?}`: closes every open stream connection (of
/// one service), without a close frame, as a network failure would.
async fn drop_streams(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let service = if body.is_empty() {
        None
    } else {
        let body = match object_body(&body) {
            Ok(body) => body,
            Err(e) => return e,
        };
        match body.get("service") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => match Service::from_prefix(name) {
                Some(service) => Some(service),
                None => {
                    return bad_request("invalid_service", format!("no service {name:?}"));
                }
            },
            Some(_) => return bad_request("invalid_service", "service must be a string"),
        }
    };
    let dropped = shared.streams.drop_all(service);
    json(StatusCode::OK, &json!({ "dropped": dropped }))
}
