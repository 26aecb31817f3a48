//! A realtime session: the worlds it joined (as an observer, or as a user who is then
//! in the world until the session leaves or ends), their events as they happen, and
//! snapshots on request.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::{join, leave, with_tenant};
use crate::outbox::StreamEvent;
use crate::state::Shared;
use crate::streams::{Outgoing, SessionHandler};

#[derive(Debug)]
pub(super) struct Session {
    key: String,
    /// The worlds joined, and the user each was joined as.
    joined: BTreeMap<String, Option<String>>,
}

impl Session {
    pub(super) fn new(key: String) -> Self {
        Session {
            key,
            joined: BTreeMap::new(),
        }
    }

    /// The world's users and its current sequence number; `None` if there is no such
    /// world.
    fn snapshot(&self, shared: &Shared, world_id: &str) -> Option<Value> {
        shared.with_world(|w| {
            with_tenant(w, &self.key, |_, tenant| {
                let world = tenant.worlds.iter().find(|x| x.id == world_id)?;
                Some(json!({
                    "type": "snapshot",
                    "world_id": world.id,
                    "users": world.users_json(),
                    "seq": world.seq,
                }))
            })
        })
    }
}

fn refuse(code: &str, message: &str, world_id: Option<&str>) -> Vec<Outgoing> {
    let mut v = json!({"type": "error", "code": code, "message": message});
    if let Some(id) = world_id {
        v["world_id"] = json!(id);
    }
    vec![Outgoing::Text(v.to_string())]
}

impl SessionHandler for Session {
    fn on_text(&mut self, shared: &Shared, text: &str) -> Vec<Outgoing> {
        let Ok(Value::Object(message)) = serde_json::from_str::<Value>(text) else {
            return refuse(
                "invalid_message",
                "a message is a JSON object with an action",
                None,
            );
        };
        let Some(world_id) = message.get("world_id").and_then(Value::as_str) else {
            return refuse("invalid_message", "world_id is a string", None);
        };
        let world_id = world_id.to_owned();
        match message.get("action").and_then(Value::as_str) {
            Some("join") => {
                let user = match message.get("user") {
                    None | Some(Value::Null) => None,
                    Some(u) => match (
                        u.get("id").and_then(Value::as_str),
                        u.get("display_name").and_then(Value::as_str),
                    ) {
                        (Some(id), name) if !id.trim().is_empty() => {
                            Some((id.to_owned(), name.unwrap_or(id).to_owned()))
                        }
                        _ => {
                            return refuse(
                                "invalid_user",
                                "user is {\"id\", \"display_name\"?}",
                                Some(&world_id),
                            );
                        }
                    },
                };
                let key = self.key.clone();
                let found = shared.with_world(|w| {
                    with_tenant(w, &key, |w, tenant| {
                        let world = tenant.worlds.iter_mut().find(|x| x.id == world_id)?;
                        if let Some((id, name)) = &user {
                            join(w, &key, world, id, name, true);
                        }
                        Some(())
                    })
                });
                if found.is_none() {
                    return refuse(
                        "world_not_found",
                        &format!("no world with id {world_id:?}"),
                        Some(&world_id),
                    );
                }
                self.joined.insert(world_id.clone(), user.map(|(id, _)| id));
                self.snapshot(shared, &world_id)
                    .map(|s| vec![Outgoing::Text(s.to_string())])
                    .unwrap_or_default()
            }
            Some("leave") => {
                if let Some(Some(user)) = self.joined.remove(&world_id) {
                    self.leave_as(shared, &world_id, &user);
                }
                vec![Outgoing::Text(
                    json!({"type": "left", "world_id": world_id}).to_string(),
                )]
            }
            Some("snapshot") => {
                if !self.joined.contains_key(&world_id) {
                    return refuse(
                        "not_joined",
                        "join the world before asking for its snapshot",
                        Some(&world_id),
                    );
                }
                self.snapshot(shared, &world_id)
                    .map(|s| vec![Outgoing::Text(s.to_string())])
                    .unwrap_or_default()
            }
            _ => refuse(
                "invalid_message",
                "action is join, leave or snapshot",
                Some(&world_id),
            ),
        }
    }

    fn on_event(&mut self, _shared: &Shared, event: &StreamEvent) -> Vec<Outgoing> {
        if self.joined.contains_key(&event.channel) {
            vec![Outgoing::Text(event.data.to_string())]
        } else {
            Vec::new()
        }
    }

    fn on_tick(&mut self, _shared: &Shared) -> Vec<Outgoing> {
        Vec::new()
    }

    fn tick_every(&self, _shared: &Shared) -> Duration {
        Duration::from_secs(3600)
    }

    fn on_close(&mut self, shared: &Shared) {
        let joined = std::mem::take(&mut self.joined);
        for (world_id, user) in joined {
            if let Some(user) = user {
                self.leave_as(shared, &world_id, &user);
            }
        }
    }
}

impl Session {
    fn leave_as(&self, shared: &Shared, world_id: &str, user: &str) {
        let key = self.key.clone();
        shared.with_world(|w| {
            with_tenant(w, &key, |w, tenant| {
                if let Some(world) = tenant.worlds.iter_mut().find(|x| x.id == world_id) {
                    leave(w, &key, world, user, true);
                }
            })
        });
    }
}
