//! The virtual worlds service (`/worlds/api/v1/...`, realtime at
//! `/worlds/ws/v1/realtime`): worlds with objects, the users in each world, assets with
//! properties, and live events.
//!
//! - Each API key is its own tenant and starts with one world, "Sandbox Plaza", with
//!   two users in it and two assets.
//! - Worlds are listed oldest first, paged by token; created with a name, a theme, an
//!   optional description and objects (`type`, `position` as three numbers, an optional
//!   `destination`).
//! - `PUT /api/v1/assets/{id}` replaces an asset's properties; each change moves its
//!   `revision`, sent as an `ETag`; `If-Match` with another revision answers 412.
//! - Every event of a world carries the world's sequence number (1, 2, 3...): users
//!   joining and leaving (through the control routes or the realtime channel), assets
//!   updated, the world updated, objects moved.
//! - Each world keeps its last 1,000 events (`LOG_KEEP`), to replay them to a
//!   session that rejoins from a sequence number.
//! - Realtime (see `stream.rs`): `{"action": "join", "world_id", "user"?, "since"?}`
//!   answers the events after `since` when the world still holds them, then a snapshot
//!   of the world (users, the world itself with its objects, assets, sequence number);
//!   then sends its events. `{"action": "resync", "world_id", "since"}` answers the
//!   same way; `leave`; `move`, `send` and `presence` are answered by `ref` with an
//!   `ack` or an `error`. A session that joined as a user leaves when it ends.

mod assets;
mod control;
mod handlers;
mod stream;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use axum::Router;
use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use crate::Sandbox;
use crate::clock::rfc3339;
use crate::outbox::StreamEvent;
use crate::plans::Limit;
use crate::registry::ServiceDef;
use crate::service::Service;
use crate::state::{Shared, World as SandboxWorld};

/// The service, as the registry sees it.
pub(crate) struct Def;

impl ServiceDef for Def {
    fn hint(&self) -> &'static str {
        "cargo run -p worlds-client --example tail_world"
    }

    fn router(&self) -> Router<Arc<Shared>> {
        handlers::router()
    }

    fn control_router(&self) -> Router<Arc<Shared>> {
        control::router()
    }

    fn limit(&self, _plan: &str) -> Option<Limit> {
        // The document shows no limits.
        None
    }
}

/// Every tenant's worlds and assets.
#[derive(Debug, Default)]
pub(crate) struct WorldsState {
    tenants: BTreeMap<String, Tenant>,
}

#[derive(Debug, Default)]
pub(crate) struct Tenant {
    /// Oldest first.
    pub(crate) worlds: Vec<WorldRecord>,
    pub(crate) assets: BTreeMap<String, Asset>,
}

#[derive(Debug, Clone)]
pub(crate) struct WorldRecord {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) theme: String,
    pub(crate) description: Option<String>,
    pub(crate) objects: Vec<Value>,
    pub(crate) created_at: OffsetDateTime,
    pub(crate) updated_at: OffsetDateTime,
    /// The users in the world, by id.
    pub(crate) users: BTreeMap<String, User>,
    /// The sequence number of the world's last event.
    pub(crate) seq: u64,
    /// Moves with every change of the world's own fields (its `ETag`).
    pub(crate) revision: u64,
    /// Its last events (at most [`LOG_KEEP`]), oldest first.
    pub(crate) log: VecDeque<Value>,
}

/// How many of a world's last events it keeps for replay.
pub(crate) const LOG_KEEP: usize = 1_000;

#[derive(Debug, Clone)]
pub(crate) struct User {
    pub(crate) id: String,
    pub(crate) display_name: String,
    pub(crate) joined_at: OffsetDateTime,
    /// What the user's session set with `presence` (position, status...).
    pub(crate) state: Map<String, Value>,
}

#[derive(Debug, Clone)]
pub(crate) struct Asset {
    pub(crate) id: String,
    pub(crate) world_id: String,
    pub(crate) properties: Map<String, Value>,
    pub(crate) revision: u64,
    pub(crate) updated_at: OffsetDateTime,
}

impl WorldRecord {
    pub(crate) fn to_json(&self) -> Value {
        let mut v = json!({
            "id": self.id,
            "name": self.name,
            "theme": self.theme,
            "objects": self.objects,
            "user_count": self.users.len(),
            "revision": self.revision,
            "created_at": rfc3339(self.created_at),
            "updated_at": rfc3339(self.updated_at),
        });
        if let Some(d) = &self.description {
            v["description"] = json!(d);
        }
        v
    }

    pub(crate) fn users_json(&self) -> Vec<Value> {
        let mut users: Vec<&User> = self.users.values().collect();
        users.sort_by(|a, b| (a.joined_at, &a.id).cmp(&(b.joined_at, &b.id)));
        users.iter().map(|u| u.to_json()).collect()
    }
}

impl User {
    pub(crate) fn to_json(&self) -> Value {
        let mut v = json!({
            "id": self.id,
            "display_name": self.display_name,
            "presence": "online",
            "joined_at": rfc3339(self.joined_at),
        });
        if !self.state.is_empty() {
            v["state"] = Value::Object(self.state.clone());
        }
        v
    }
}

impl Asset {
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "world_id": self.world_id,
            "properties": self.properties,
            "revision": self.revision,
            "updated_at": rfc3339(self.updated_at),
        })
    }
}

/// Runs `f` on the tenant of `key` (seeded with the plaza on first use), with the
/// sandbox world at hand for ids, the clock and events.
pub(crate) fn with_tenant<T>(
    w: &mut SandboxWorld,
    key: &str,
    f: impl FnOnce(&mut SandboxWorld, &mut Tenant) -> T,
) -> T {
    let taken = w.services.get_mut::<WorldsState>().tenants.remove(key);
    let mut tenant = match taken {
        Some(t) => t,
        None => seed(w),
    };
    let result = f(w, &mut tenant);
    w.services
        .get_mut::<WorldsState>()
        .tenants
        .insert(key.to_owned(), tenant);
    result
}

/// The tenant a world belongs to (world ids are unique across tenants).
pub(crate) fn owner_of(w: &mut SandboxWorld, world_id: &str) -> Option<String> {
    w.services
        .get_mut::<WorldsState>()
        .tenants
        .iter()
        .find(|(_, t)| t.worlds.iter().any(|world| world.id == world_id))
        .map(|(key, _)| key.clone())
}

/// Records an event of `world` (its next sequence number) and, unless `deliver` is
/// false, sends it to the realtime sessions joined to it. Returns the message.
pub(crate) fn event(
    w: &mut SandboxWorld,
    tenant: &str,
    world: &mut WorldRecord,
    kind: &str,
    data: Value,
    deliver: bool,
) -> Value {
    world.seq += 1;
    let message = json!({
        "type": kind,
        "world_id": world.id,
        "seq": world.seq,
        "timestamp": rfc3339(w.now()),
        "data": data,
    });
    if world.log.len() >= LOG_KEEP {
        world.log.pop_front();
    }
    world.log.push_back(message.clone());
    if deliver {
        w.publish(StreamEvent {
            service: Service::Worlds,
            tenant: Some(tenant.to_owned()),
            channel: world.id.clone(),
            data: message.clone(),
        });
    }
    message
}

/// Adds a user to a world (a `user.joined` event); `false` if already there.
pub(crate) fn join(
    w: &mut SandboxWorld,
    tenant: &str,
    world: &mut WorldRecord,
    id: &str,
    display_name: &str,
    deliver: bool,
) -> bool {
    if world.users.contains_key(id) {
        return false;
    }
    let user = User {
        id: id.to_owned(),
        display_name: display_name.to_owned(),
        joined_at: w.now(),
        state: Map::new(),
    };
    let data = json!({"user": user.to_json()});
    world.users.insert(id.to_owned(), user);
    event(w, tenant, world, "user.joined", data, deliver);
    true
}

/// Removes a user from a world (a `user.left` event); `false` if not there.
pub(crate) fn leave(
    w: &mut SandboxWorld,
    tenant: &str,
    world: &mut WorldRecord,
    id: &str,
    deliver: bool,
) -> bool {
    let Some(user) = world.users.remove(id) else {
        return false;
    };
    event(
        w,
        tenant,
        world,
        "user.left",
        json!({"user": user.to_json()}),
        deliver,
    );
    true
}

/// Moves (and perhaps re-targets) object `index` of `world`: its `object.moved` event
/// (`by`: the user who moved it, if one did), or `None` if there is no such object.
pub(crate) fn move_object(
    w: &mut SandboxWorld,
    tenant: &str,
    world: &mut WorldRecord,
    index: usize,
    position: &Value,
    destination: Option<&Value>,
    by: Option<&str>,
) -> Option<Value> {
    let object = world.objects.get_mut(index)?;
    object["position"] = position.clone();
    if let Some(d) = destination {
        object["destination"] = d.clone();
    }
    let mut data = json!({"index": index, "object": object.clone()});
    if let Some(by) = by {
        data["by"] = json!(by);
    }
    world.updated_at = w.now();
    Some(event(w, tenant, world, "object.moved", data, true))
}

/// The world as a realtime snapshot: its users, the world itself (its objects too), its
/// assets, and the sequence number and time it stands at.
pub(crate) fn snapshot(w: &SandboxWorld, tenant: &Tenant, world: &WorldRecord) -> Value {
    let assets: Vec<Value> = tenant
        .assets
        .values()
        .filter(|a| a.world_id == world.id)
        .map(Asset::to_json)
        .collect();
    json!({
        "type": "snapshot",
        "world_id": world.id,
        "seq": world.seq,
        "timestamp": rfc3339(w.now()),
        "users": world.users_json(),
        "world": world.to_json(),
        "assets": assets,
    })
}

/// The worlds service of a running sandbox: `sandbox.worlds()`.
#[derive(Debug, Clone, Copy)]
pub struct Worlds<'a> {
    sandbox: &'a Sandbox,
}

impl Sandbox {
    /// The virtual worlds service.
    pub fn worlds(&self) -> Worlds<'_> {
        Worlds { sandbox: self }
    }
}

impl Worlds<'_> {
    /// The base URL a client uses (paths such as `/api/v1/worlds` go after it).
    pub fn url(&self) -> String {
        self.sandbox.service_url(Service::Worlds)
    }

    /// The realtime endpoint's URL (`ws://.../worlds/ws/v1/realtime`).
    pub fn stream_url(&self) -> String {
        format!(
            "{}/ws/v1/realtime",
            self.url().replacen("http://", "ws://", 1)
        )
    }

    /// The id of the world every tenant of `key` starts with.
    pub fn plaza(&self, key: &str) -> String {
        self.sandbox.shared.with_world(|w| {
            with_tenant(w, key, |_, t| {
                t.worlds.first().map(|w| w.id.clone()).unwrap_or_default()
            })
        })
    }

    /// Adds user `id` to a world, as `POST /_sandbox/worlds/worlds/{id}/users` does;
    /// with `announce` false the world's sequence moves but no session is told (a
    /// lost event). `false` if there is no such world or the user is already in it.
    pub fn join_user(&self, world_id: &str, id: &str, display_name: &str, announce: bool) -> bool {
        self.sandbox.shared.with_world(|w| {
            control::on_world(w, world_id, |w, key, world| {
                join(w, key, world, id, display_name, announce)
            })
            .unwrap_or(false)
        })
    }

    /// Removes user `id` from a world (see [`join_user`](Self::join_user)).
    pub fn leave_user(&self, world_id: &str, id: &str, announce: bool) -> bool {
        self.sandbox.shared.with_world(|w| {
            control::on_world(w, world_id, |w, key, world| {
                leave(w, key, world, id, announce)
            })
            .unwrap_or(false)
        })
    }

    /// Sends an event of any type to the sessions joined to a world (the next sequence
    /// number, `data` as given); `false` if there is no such world.
    pub fn emit(&self, world_id: &str, kind: &str, data: Value) -> bool {
        self.sandbox.shared.with_world(|w| {
            control::on_world(w, world_id, |w, key, world| {
                event(w, key, world, kind, data, true);
            })
            .is_some()
        })
    }

    /// Creates an asset in a world with these properties; its id, or `None` if there is
    /// no such world.
    pub fn add_asset(&self, world_id: &str, properties: Value) -> Option<String> {
        self.sandbox
            .shared
            .with_world(|w| control::add_asset(w, world_id, properties))
    }

    /// Forgets the events a world keeps for replay, as if they were too old: a session
    /// that rejoins from a sequence number gets a snapshot instead.
    pub fn forget_events(&self, world_id: &str) -> bool {
        self.sandbox.shared.with_world(|w| {
            control::on_world(w, world_id, |_, _, world| world.log.clear()).is_some()
        })
    }

    /// Moves object `index` of a world to `position` (an `object.moved` event, told to
    /// its sessions); `false` if there is no such world or object.
    pub fn move_object(&self, world_id: &str, index: usize, position: [f64; 3]) -> bool {
        self.sandbox.shared.with_world(|w| {
            control::on_world(w, world_id, |w, key, world| {
                move_object(w, key, world, index, &json!(position), None, None).is_some()
            })
            .unwrap_or(false)
        })
    }

    /// The events a world keeps for replay (its last 1,000), oldest first, as
    /// sent.
    pub fn events(&self, world_id: &str) -> Vec<Value> {
        self.sandbox.shared.with_world(|w| {
            control::on_world(w, world_id, |_, _, world| {
                world.log.iter().cloned().collect()
            })
            .unwrap_or_default()
        })
    }

    /// The ids of the users in a world.
    pub fn users(&self, world_id: &str) -> Vec<String> {
        self.sandbox.shared.with_world(|w| {
            control::on_world(w, world_id, |_, _, world| {
                world.users.keys().cloned().collect()
            })
            .unwrap_or_default()
        })
    }
}

/// The plaza every tenant starts with.
fn seed(w: &mut SandboxWorld) -> Tenant {
    let now = w.now();
    let id = w.ids.next("world");
    let users = [("user_ada", "Ada"), ("user_grace", "Grace")]
        .into_iter()
        .map(|(id, name)| {
            (
                id.to_owned(),
                User {
                    id: id.to_owned(),
                    display_name: name.to_owned(),
                    joined_at: now,
                    state: Map::new(),
                },
            )
        })
        .collect();
    let world = WorldRecord {
        id: id.clone(),
        name: "Sandbox Plaza".into(),
        theme: "city".into(),
        description: Some("The world every sandbox key starts with.".into()),
        objects: vec![
            json!({"type": "fountain", "position": [0.0, 0.0, 0.0]}),
            json!({"type": "portal", "position": [10.0, 0.0, -4.5], "destination": "world_elsewhere"}),
        ],
        created_at: now,
        updated_at: now,
        users,
        seq: 0,
        revision: 1,
        log: VecDeque::new(),
    };
    let mut assets = BTreeMap::new();
    for (name, properties) in [
        ("fountain", json!({"model": "fountain.glb", "scale": 1.0})),
        ("sky", json!({"color": "#88ccff", "clouds": true})),
    ] {
        let asset_id = format!("{}_{name}", w.ids.next("asset"));
        let Value::Object(properties) = properties else {
            continue;
        };
        assets.insert(
            asset_id.clone(),
            Asset {
                id: asset_id,
                world_id: id.clone(),
                properties,
                revision: 1,
                updated_at: now,
            },
        );
    }
    Tenant {
        worlds: vec![world],
        assets,
    }
}
