//! The channel's wire protocol: join and leave messages, and frames decoded into what
//! the handler puts in order.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use core_streams::{Inbound, Protocol};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use time::OffsetDateTime;

use super::Event;
use crate::assets::Asset;
use crate::models::{User, UserId, World, WorldId, WorldObject};

/// The last sequence number delivered of a world: moved by the handler as it delivers,
/// read by the protocol to rejoin from it after a reconnect.
#[derive(Debug, Clone, Default)]
pub(crate) struct Checkpoint(Arc<AtomicU64>);

impl Checkpoint {
    /// A checkpoint at `seq`, if known.
    pub(super) fn at(seq: Option<u64>) -> Self {
        let c = Checkpoint::default();
        if let Some(seq) = seq {
            c.set(seq);
        }
        c
    }

    pub(super) fn get(&self) -> Option<u64> {
        self.0.load(Ordering::Acquire).checked_sub(1)
    }

    pub(super) fn set(&self, seq: u64) {
        self.0.store(seq.saturating_add(1), Ordering::Release);
    }
}

/// Joining a world: as an observer, or as a user who is then in it; from a checkpoint,
/// or as it is now.
#[derive(Debug, Clone)]
pub(crate) struct Join {
    pub(super) world: WorldId,
    pub(super) user: Option<(String, String)>,
    pub(super) checkpoint: Checkpoint,
}

/// What a frame held, before the client puts it in order. (`Event` is the common
/// variant and the large one: boxing it would cost an allocation per event.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Wire {
    /// The world as it is (the answer to a join or a resync), boxed: large and rare.
    Snapshot(Box<Snapshot>),
    /// An event (`recovered` when the server sent it again, replayed).
    Event(Event),
    /// An event of a world whose sequence number could not be read.
    BadSeq { world_id: WorldId, message: String },
}

/// A world as the server has it at `seq`.
#[derive(Debug)]
pub(crate) struct Snapshot {
    pub(super) world_id: WorldId,
    pub(super) users: Vec<User>,
    pub(super) world: Option<World>,
    pub(super) assets: Vec<Asset>,
    pub(super) seq: u64,
    pub(super) timestamp: Option<OffsetDateTime>,
    /// How many events the server replayed before it (from the `since` asked), or
    /// `None` when it could not.
    pub(super) replayed: Option<u64>,
}

/// The channel's wire protocol.
#[derive(Debug, Default)]
pub(crate) struct WorldsProtocol {
    joined: BTreeMap<WorldId, (Option<(String, String)>, Checkpoint)>,
}

fn join_message(world: &WorldId, user: Option<&(String, String)>, since: Option<u64>) -> String {
    let mut m = serde_json::json!({"action": "join", "world_id": world});
    if let Some((id, name)) = user {
        m["user"] = serde_json::json!({"id": id, "display_name": name});
    }
    if let Some(since) = since {
        m["since"] = since.into();
    }
    m.to_string()
}

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(default, rename = "type", borrow)]
    kind: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    world_id: Option<WorldId>,
    #[serde(default, borrow)]
    seq: Option<&'a RawValue>,
    #[serde(default, borrow)]
    timestamp: Option<&'a RawValue>,
    #[serde(default, borrow)]
    data: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    replayed: Value,
    #[serde(default, rename = "ref", deserialize_with = "core_http::de::opt_text")]
    reference: Option<String>,
    #[serde(default, deserialize_with = "core_http::de::opt_text")]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct SnapshotBody {
    #[serde(deserialize_with = "core_http::de::or_default")]
    users: Vec<User>,
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    world: Option<World>,
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    assets: Vec<Asset>,
}

#[derive(Deserialize)]
struct UserData {
    user: User,
}

#[derive(Deserialize)]
struct AssetData {
    asset: Asset,
}

#[derive(Deserialize)]
struct WorldData {
    world: World,
}

#[derive(Deserialize)]
struct ObjectData {
    #[serde(default, deserialize_with = "core_http::de::opt_u64")]
    index: Option<u64>,
    object: WorldObject,
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    by: Option<UserId>,
}

#[derive(Deserialize)]
struct CustomData {
    #[serde(deserialize_with = "core_http::de::text")]
    name: String,
    #[serde(default)]
    data: Value,
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    from: Option<UserId>,
}

/// An object's move read in one pass: the busiest event of a world, written
/// type-first as the service writes it.
#[derive(Deserialize)]
struct MovedMessage<'a> {
    world_id: WorldId,
    seq: core_http::de::Exact<u64>,
    #[serde(default, borrow)]
    timestamp: Option<&'a str>,
    data: ObjectData,
    #[serde(default)]
    replayed: bool,
}

/// An object's move read by `serde` in one pass, type first as the service writes it;
/// `None` for anything that does not read so.
pub(super) fn moved_by_serde(raw: &str) -> Option<Event> {
    let m = serde_json::from_str::<MovedMessage<'_>>(raw).ok()?;
    Some(Event::ObjectMoved {
        world_id: m.world_id,
        index: m.data.index,
        object: m.data.object,
        by: m.data.by,
        recovered: m.replayed,
        seq: m.seq.0,
        timestamp: time_of(m.timestamp),
    })
}

/// A server time, when it reads as one.
fn time_of(text: Option<&str>) -> Option<OffsetDateTime> {
    core_http::timestamp::parse(text?).ok()
}

impl WorldsProtocol {
    fn one(&mut self, raw: &str, out: &mut Vec<Inbound<Wire>>) {
        // The common case first: a move read straight into its event. Anything else
        // (or a move that does not read so) takes the general path below, which says
        // what is wrong.
        if raw.starts_with(r#"{"type":"object.moved","#)
            && let Some(event) = moved_by_serde(raw)
        {
            out.push(Inbound::lossless(Wire::Event(event)));
            return;
        }
        let Ok(head) = serde_json::from_str::<Head<'_>>(raw) else {
            if raw.starts_with('{') && serde_json::from_str::<Value>(raw).is_ok() {
                // An object whose type, world or message is not what they must be.
                out.push(Inbound::Invalid(format!(
                    "a message whose type, world or text is unreadable: {}",
                    excerpt(raw)
                )));
            }
            return;
        };
        let kind = head.kind.as_deref().unwrap_or_default().to_owned();
        match kind.as_str() {
            "ack" => {
                if let Some(id) = head.reference {
                    out.push(Inbound::Reply {
                        id,
                        outcome: Ok(raw.to_owned()),
                    });
                }
                return;
            }
            "error" => {
                let message = head
                    .message
                    .unwrap_or_else(|| "the server reported an error".into());
                out.push(match head.reference {
                    Some(id) => Inbound::Reply {
                        id,
                        outcome: Err((head.code.unwrap_or_default(), message)),
                    },
                    None => Inbound::Refused(message),
                });
                return;
            }
            "left" => return,
            _ => {}
        }
        let seq = match head.seq.map(|s| s.get()) {
            None | Some("null") => None,
            Some(text) => match serde_json::from_str::<core_http::de::Exact<u64>>(text) {
                Ok(core_http::de::Exact(n)) => n,
                Err(_) => {
                    match head.world_id.clone() {
                        Some(world_id) => out.push(Inbound::lossless(Wire::BadSeq {
                            message: format!(
                                "a {kind} event of world {world_id} has an unreadable \
                                 sequence number {}; the world is resynchronised",
                                excerpt(text)
                            ),
                            world_id,
                        })),
                        None => out.push(Inbound::Invalid(format!(
                            "a {kind} event has an unreadable sequence number {}",
                            excerpt(text)
                        ))),
                    }
                    return;
                }
            },
        };
        let timestamp = head
            .timestamp
            .and_then(|t| serde_json::from_str::<&str>(t.get()).ok())
            .and_then(|t| time_of(Some(t)));
        let replayed = head.replayed == Value::Bool(true);
        let data = head.data.map(RawValue::get).unwrap_or("null");
        let unknown = || Event::Unknown {
            kind: kind.clone(),
            world_id: head.world_id.clone(),
            data: serde_json::from_str(raw).unwrap_or_default(),
            seq,
        };
        let Some(world_id) = head.world_id.clone() else {
            // Not about a world: kept whole, on the lossy lane.
            out.push(Inbound::lossy(Wire::Event(unknown())));
            return;
        };
        let event = match kind.as_str() {
            "snapshot" => {
                let Ok(body) = serde_json::from_str::<SnapshotBody>(raw) else {
                    out.push(Inbound::lossless(Wire::Event(unknown())));
                    return;
                };
                // The snapshot first, then its acknowledgement: after a reconnect the
                // last acknowledgement brings `Reconnected`, which must come after the
                // recovery the snapshot leads to.
                out.push(Inbound::lossless(Wire::Snapshot(Box::new(Snapshot {
                    world_id,
                    users: body.users,
                    world: body.world,
                    assets: body.assets,
                    seq: seq.unwrap_or(0),
                    timestamp,
                    replayed: head.replayed.as_u64(),
                }))));
                out.push(Inbound::Ack);
                return;
            }
            "user.joined" | "user.left" | "user.updated" => {
                match serde_json::from_str::<UserData>(data) {
                    Ok(d) if kind == "user.joined" => Event::UserJoined {
                        world_id,
                        user: d.user,
                        recovered: replayed,
                        seq,
                        timestamp,
                    },
                    Ok(d) if kind == "user.left" => Event::UserLeft {
                        world_id,
                        user: d.user,
                        recovered: replayed,
                        seq,
                        timestamp,
                    },
                    Ok(d) => Event::UserUpdated {
                        world_id,
                        user: d.user,
                        recovered: replayed,
                        seq,
                        timestamp,
                    },
                    Err(_) => unknown(),
                }
            }
            "asset.updated" => match serde_json::from_str::<AssetData>(data) {
                Ok(d) => Event::AssetUpdated {
                    world_id,
                    asset: d.asset,
                    recovered: replayed,
                    seq,
                    timestamp,
                },
                Err(_) => unknown(),
            },
            "world.updated" => match serde_json::from_str::<WorldData>(data) {
                Ok(d) => Event::WorldUpdated {
                    world_id,
                    world: Box::new(d.world),
                    recovered: replayed,
                    seq,
                    timestamp,
                },
                Err(_) => unknown(),
            },
            "world.deleted" => {
                // A deleted world is forgotten here, in order with the stream: no
                // reconnect after this joins it again.
                self.joined.remove(&world_id);
                Event::WorldDeleted {
                    world_id,
                    seq,
                    timestamp,
                }
            }
            "object.moved" => match serde_json::from_str::<ObjectData>(data) {
                Ok(d) => Event::ObjectMoved {
                    world_id,
                    index: d.index,
                    object: d.object,
                    by: d.by,
                    recovered: replayed,
                    seq,
                    timestamp,
                },
                Err(_) => unknown(),
            },
            "custom" => match serde_json::from_str::<CustomData>(data) {
                Ok(d) => Event::Custom {
                    world_id,
                    name: d.name,
                    data: d.data,
                    from: d.from,
                    recovered: replayed,
                    seq,
                    timestamp,
                },
                Err(_) => unknown(),
            },
            _ => {
                // A type this version does not know: kept, on the lossy lane, so that a
                // flood of them cannot grow the client without bound.
                out.push(Inbound::lossy(Wire::Event(unknown())));
                return;
            }
        };
        out.push(Inbound::lossless(Wire::Event(event)));
    }
}

impl Protocol for WorldsProtocol {
    type Event = Wire;
    type Subscription = Join;

    fn subscribe(&mut self, join: &Join) -> Vec<String> {
        self.joined.insert(
            join.world.clone(),
            (join.user.clone(), join.checkpoint.clone()),
        );
        vec![join_message(
            &join.world,
            join.user.as_ref(),
            join.checkpoint.get(),
        )]
    }

    fn unsubscribe(&mut self, join: &Join) -> Vec<String> {
        self.joined.remove(&join.world);
        vec![serde_json::json!({"action": "leave", "world_id": join.world}).to_string()]
    }

    fn replay(&self) -> Vec<String> {
        // Each world from the last event delivered: the server replays what came after
        // it when it still can.
        self.joined
            .iter()
            .map(|(world, (user, checkpoint))| join_message(world, user.as_ref(), checkpoint.get()))
            .collect()
    }

    fn decode(&mut self, frame: &str, out: &mut Vec<Inbound<Wire>>) {
        let trimmed = frame.trim_start();
        if trimmed.starts_with('[') {
            let items: Vec<&RawValue> = serde_json::from_str(trimmed).unwrap_or_default();
            for item in items {
                self.one(item.get(), out);
            }
        } else {
            self.one(trimmed, out);
        }
    }
}

/// At most 200 characters of `text`, for a message.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "protocol_tests.rs"]
mod tests;
