//! A realtime session: the worlds it joined (as an observer, or as a user who is then
//! in the world until the session leaves or ends), their events as they happen, and
//! snapshots on request.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::{WorldRecord, event, join, leave, move_object, snapshot, with_tenant};
use crate::outbox::StreamEvent;
use crate::sessions::{Outgoing, SessionHandler};
use crate::state::Shared;

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

    /// What brings a session up to date with a world: the events after `since` when the
    /// world still holds them all (each marked `"replayed": true`), then the snapshot
    /// (with `"replayed": n` when they were replayed); `None` if there is no such world.
    fn catch_up(
        &self,
        shared: &Shared,
        world_id: &str,
        since: Option<u64>,
    ) -> Option<Vec<Outgoing>> {
        shared.with_world(|w| {
            with_tenant(w, &self.key, |w, tenant| {
                let world = tenant.worlds.iter().find(|x| x.id == world_id)?;
                let mut out = Vec::new();
                let mut snapshot = snapshot(w, tenant, world);
                let first_kept = world
                    .log
                    .front()
                    .and_then(|e| e["seq"].as_u64())
                    .unwrap_or(world.seq + 1);
                if let Some(since) = since
                    && since <= world.seq
                    && (since == world.seq || first_kept <= since + 1)
                {
                    let mut replayed = 0u64;
                    for e in &world.log {
                        if e["seq"].as_u64().is_some_and(|n| n > since) {
                            let mut e = e.clone();
                            e["replayed"] = json!(true);
                            out.push(Outgoing::Text(e.to_string()));
                            replayed += 1;
                        }
                    }
                    snapshot["replayed"] = json!(replayed);
                }
                out.push(Outgoing::Text(snapshot.to_string()));
                Some(out)
            })
        })
    }

    /// Runs `f` on a world this session joined, as the user it joined as (if any);
    /// answers its `ack` with the sequence number `f` gives, or an `error` by `ref`.
    fn act(
        &self,
        shared: &Shared,
        world_id: &str,
        reference: &str,
        f: impl FnOnce(
            &mut crate::state::World,
            &str,
            &mut WorldRecord,
            Option<&str>,
        ) -> Result<u64, (&'static str, String)>,
    ) -> Vec<Outgoing> {
        let Some(user) = self.joined.get(world_id) else {
            return refuse_ref(reference, "not_joined", "join the world first", world_id);
        };
        let key = self.key.clone();
        let done = shared.with_world(|w| {
            with_tenant(w, &key, |w, tenant| {
                match tenant.worlds.iter_mut().find(|x| x.id == world_id) {
                    Some(world) => f(w, &key, world, user.as_deref()),
                    None => Err(("world_not_found", format!("no world with id {world_id:?}"))),
                }
            })
        });
        match done {
            Ok(seq) => vec![Outgoing::Text(
                json!({"type": "ack", "ref": reference, "world_id": world_id, "seq": seq})
                    .to_string(),
            )],
            Err((code, message)) => refuse_ref(reference, code, &message, world_id),
        }
    }
}

/// A refusal of the request `reference`.
fn refuse_ref(reference: &str, code: &str, message: &str, world_id: &str) -> Vec<Outgoing> {
    vec![Outgoing::Text(
        json!({"type": "error", "ref": reference, "code": code, "message": message, "world_id": world_id})
            .to_string(),
    )]
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
                let since = message.get("since").and_then(Value::as_u64);
                self.catch_up(shared, &world_id, since).unwrap_or_default()
            }
            Some("leave") => {
                if let Some(Some(user)) = self.joined.remove(&world_id) {
                    self.leave_as(shared, &world_id, &user);
                }
                vec![Outgoing::Text(
                    json!({"type": "left", "world_id": world_id}).to_string(),
                )]
            }
            Some(action @ ("snapshot" | "resync")) => {
                if !self.joined.contains_key(&world_id) {
                    return refuse(
                        "not_joined",
                        "join the world before asking for its snapshot",
                        Some(&world_id),
                    );
                }
                let since = message.get("since").and_then(Value::as_u64);
                let since = if action == "resync" { since } else { None };
                self.catch_up(shared, &world_id, since).unwrap_or_default()
            }
            Some(action @ ("move" | "send" | "presence")) => {
                let Some(reference) = message.get("ref").and_then(Value::as_str) else {
                    return refuse("invalid_message", "ref is a string", Some(&world_id));
                };
                match action {
                    "move" => self.act(shared, &world_id, reference, |w, key, world, user| {
                        let index = message.get("index").and_then(Value::as_u64);
                        let position = message.get("position").cloned().unwrap_or(Value::Null);
                        if !position
                            .as_array()
                            .is_some_and(|p| p.len() == 3 && p.iter().all(Value::is_number))
                        {
                            return Err(("invalid_position", "position is three numbers [x, y, z]".into()));
                        }
                        let index = index.and_then(|i| usize::try_from(i).ok());
                        let moved = index.and_then(|i| {
                            move_object(w, key, world, i, &position, message.get("destination"), user)
                        });
                        match moved {
                            Some(_) => Ok(world.seq),
                            None => Err(("object_not_found", "the world has no such object".into())),
                        }
                    }),
                    "send" => self.act(shared, &world_id, reference, |w, key, world, user| {
                        let Some(name) = message.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) else {
                            return Err(("invalid_event", "name is a non-empty string".into()));
                        };
                        let mut data = json!({"name": name, "data": message.get("data").cloned().unwrap_or(Value::Null)});
                        if let Some(user) = user {
                            data["from"] = json!(user);
                        }
                        event(w, key, world, "custom", data, true);
                        Ok(world.seq)
                    }),
                    _ => self.act(shared, &world_id, reference, |w, key, world, user| {
                        let Some(user) = user else {
                            return Err(("not_a_user", "join the world as a user to set a presence".into()));
                        };
                        let Some(Value::Object(state)) = message.get("state") else {
                            return Err(("invalid_state", "state is a JSON object".into()));
                        };
                        let Some(record) = world.users.get_mut(user) else {
                            return Err(("not_joined", "the user is not in the world".into()));
                        };
                        record.state = state.clone();
                        let data = json!({"user": record.to_json()});
                        event(w, key, world, "user.updated", data, true);
                        Ok(world.seq)
                    }),
                }
            }
            _ => refuse(
                "invalid_message",
                "action is join, leave, resync, snapshot, move, send or presence",
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
