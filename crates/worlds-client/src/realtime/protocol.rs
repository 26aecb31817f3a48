//! The channel's wire protocol: join and leave messages, and frames decoded into what
//! the handler puts in order.

use std::collections::BTreeMap;

use core_http::ws::{Inbound, Protocol};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Event;
use crate::assets::Asset;
use crate::worlds::{User, World, WorldId, WorldObject};

/// Joining a world: as an observer, or as a user who is then in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Join {
    pub(super) world: WorldId,
    pub(super) user: Option<(String, String)>,
}

/// What a frame held, before the client puts it in order. (`Event` is the common
/// variant and the large one: boxing it would cost an allocation per event.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Wire {
    Snapshot {
        world_id: WorldId,
        users: Vec<User>,
        seq: u64,
    },
    Event {
        world_id: Option<WorldId>,
        seq: Option<u64>,
        event: Event,
    },
    /// An event of a world whose sequence number could not be read.
    BadSeq { world_id: WorldId, message: String },
}

/// The channel's wire protocol.
#[derive(Debug, Default)]
pub(crate) struct WorldsProtocol {
    joined: BTreeMap<WorldId, Option<(String, String)>>,
}

fn join_message(world: &WorldId, user: Option<&(String, String)>) -> String {
    let mut m = serde_json::json!({"action": "join", "world_id": world});
    if let Some((id, name)) = user {
        m["user"] = serde_json::json!({"id": id, "display_name": name});
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
    data: Option<&'a RawValue>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct SnapshotBody {
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    users: Vec<User>,
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
}

/// An object's move read in one pass: the busiest event of a world, written
/// type-first as the service writes it.
#[derive(Deserialize)]
struct MovedMessage {
    world_id: WorldId,
    seq: core_http::de::Exact<u64>,
    data: ObjectData,
}

impl WorldsProtocol {
    fn one(&self, raw: &str, out: &mut Vec<Inbound<Wire>>) {
        // The common case first: a move read in one pass. Anything else (or a move that
        // does not read so) takes the general path below, which says what is wrong.
        if raw.starts_with(r#"{"type":"object.moved","#)
            && let Ok(m) = serde_json::from_str::<MovedMessage>(raw)
        {
            out.push(Inbound::lossless(Wire::Event {
                world_id: Some(m.world_id.clone()),
                seq: m.seq.0,
                event: Event::ObjectMoved {
                    world_id: m.world_id,
                    index: m.data.index,
                    object: m.data.object,
                },
            }));
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
        let data = head.data.map(RawValue::get).unwrap_or("null");
        let unknown = || Event::Unknown {
            kind: kind.clone(),
            world_id: head.world_id.clone(),
            data: serde_json::from_str(raw).unwrap_or_default(),
        };
        let world = head.world_id.clone();
        let event = match kind.as_str() {
            "snapshot" => {
                let (Some(world_id), Ok(body)) = (
                    head.world_id.clone(),
                    serde_json::from_str::<SnapshotBody>(raw),
                ) else {
                    out.push(Inbound::lossless(Wire::Event {
                        world_id: world,
                        seq: None,
                        event: unknown(),
                    }));
                    return;
                };
                // The snapshot first, then its acknowledgement: after a reconnect the
                // last acknowledgement brings `Reconnected`, which must come after the
                // resynchronisation the snapshot leads to.
                out.push(Inbound::lossless(Wire::Snapshot {
                    world_id,
                    users: body.users,
                    seq: seq.unwrap_or(0),
                }));
                out.push(Inbound::Ack);
                return;
            }
            "left" => return,
            "error" => {
                out.push(Inbound::Refused(
                    head.message
                        .unwrap_or_else(|| "the server reported an error".into()),
                ));
                return;
            }
            "user.joined" | "user.left" => match (&world, serde_json::from_str::<UserData>(data)) {
                (Some(world_id), Ok(d)) if kind == "user.joined" => Event::UserJoined {
                    world_id: world_id.clone(),
                    user: d.user,
                    recovered: false,
                },
                (Some(world_id), Ok(d)) => Event::UserLeft {
                    world_id: world_id.clone(),
                    user: d.user,
                    recovered: false,
                },
                _ => unknown(),
            },
            "asset.updated" => match (&world, serde_json::from_str::<AssetData>(data)) {
                (Some(world_id), Ok(d)) => Event::AssetUpdated {
                    world_id: world_id.clone(),
                    asset: d.asset,
                },
                _ => unknown(),
            },
            "world.updated" => match (&world, serde_json::from_str::<WorldData>(data)) {
                (Some(world_id), Ok(d)) => Event::WorldUpdated {
                    world_id: world_id.clone(),
                    world: d.world,
                },
                _ => unknown(),
            },
            "world.deleted" => match &world {
                Some(world_id) => Event::WorldDeleted {
                    world_id: world_id.clone(),
                },
                None => unknown(),
            },
            "object.moved" => match (&world, serde_json::from_str::<ObjectData>(data)) {
                (Some(world_id), Ok(d)) => Event::ObjectMoved {
                    world_id: world_id.clone(),
                    index: d.index,
                    object: d.object,
                },
                _ => unknown(),
            },
            _ => {
                // A type this version does not know: kept, on the lossy lane, so that a
                // flood of them cannot grow the client without bound.
                out.push(Inbound::lossy(Wire::Event {
                    world_id: world,
                    seq,
                    event: unknown(),
                }));
                return;
            }
        };
        out.push(Inbound::lossless(Wire::Event {
            world_id: world,
            seq,
            event,
        }));
    }
}

impl Protocol for WorldsProtocol {
    type Event = Wire;
    type Subscription = Join;

    fn subscribe(&mut self, join: &Join) -> Vec<String> {
        self.joined.insert(join.world.clone(), join.user.clone());
        vec![join_message(&join.world, join.user.as_ref())]
    }

    fn unsubscribe(&mut self, join: &Join) -> Vec<String> {
        self.joined.remove(&join.world);
        vec![serde_json::json!({"action": "leave", "world_id": join.world}).to_string()]
    }

    fn replay(&self) -> Vec<String> {
        self.joined
            .iter()
            .map(|(world, user)| join_message(world, user.as_ref()))
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
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn decoded(frame: &str) -> Vec<Inbound<Wire>> {
        let mut out = Vec::new();
        WorldsProtocol::default().decode(frame, &mut out);
        out
    }

    #[test]
    fn frames_decode_into_acks_snapshots_events_and_unknowns() {
        let out = decoded(
            r#"{"type":"snapshot","world_id":"w1","seq":4,"users":[{"id":"u1","display_name":"Ada","presence":"online","x_mood":"happy"}]}"#,
        );
        assert!(matches!(out[1], Inbound::Ack));
        match &out[0] {
            Inbound::Event {
                event:
                    Wire::Snapshot {
                        world_id,
                        users,
                        seq,
                    },
                ..
            } => {
                assert_eq!((world_id.as_str(), *seq, users.len()), ("w1", 4, 1));
                assert_eq!(users[0].extra["x_mood"], "happy");
            }
            other => panic!("{other:?}"),
        }
        let out = decoded(
            r#"[{"type":"user.joined","world_id":"w1","seq":5,"data":{"user":{"id":"u2"}}},{"type":"weather.changed","world_id":"w1","seq":6,"data":{"rain":true}},{"type":"asset.updated","world_id":"w1","seq":"7","data":{"nope":1}}]"#,
        );
        assert_eq!(out.len(), 3);
        let kinds: Vec<String> = out
            .iter()
            .map(|i| match i {
                Inbound::Event {
                    event: Wire::Event { event, seq, .. },
                    ..
                } => format!(
                    "{:?}:{}",
                    seq,
                    match event {
                        Event::UserJoined { .. } => "joined".to_owned(),
                        Event::Unknown { kind, .. } => format!("unknown {kind}"),
                        _ => "other".to_owned(),
                    }
                ),
                _ => "?".into(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "Some(5):joined",
                "Some(6):unknown weather.changed",
                "Some(7):unknown asset.updated"
            ]
        );
        assert!(matches!(
            decoded(r#"{"type":"error","code":"world_not_found","message":"no world"}"#)[..],
            [Inbound::Refused(_)]
        ));
        assert!(decoded(r#"{"type":"left","world_id":"w1"}"#).is_empty());
        assert!(decoded("not json").is_empty());
    }

    #[test]
    fn joins_are_replayed_with_their_users() {
        let mut p = WorldsProtocol::default();
        p.subscribe(&Join {
            world: "w1".into(),
            user: None,
        });
        p.subscribe(&Join {
            world: "w2".into(),
            user: Some(("u1".into(), "Ada".into())),
        });
        assert_eq!(
            p.replay(),
            [
                r#"{"action":"join","world_id":"w1"}"#,
                r#"{"action":"join","user":{"display_name":"Ada","id":"u1"},"world_id":"w2"}"#
            ]
        );
        p.unsubscribe(&Join {
            world: "w1".into(),
            user: None,
        });
        assert_eq!(p.replay().len(), 1);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        #[test]
        fn no_frame_panics_the_decoder(frame in "\\PC{0,200}") {
            let _ = decoded(&frame);
        }

        #[test]
        fn no_json_frame_panics_the_decoder(
            kind in proptest::sample::select(vec!["snapshot", "user.joined", "user.left", "asset.updated", "world.updated", "object.moved", "error", "x"]),
            body in testkit::arb::json(),
            seq in proptest::option::of(0u64..10),
        ) {
            let mut message = serde_json::Map::new();
            message.insert("type".into(), kind.into());
            message.insert("world_id".into(), "w1".into());
            message.insert("data".into(), body.clone());
            message.insert("users".into(), body);
            if let Some(seq) = seq {
                message.insert("seq".into(), seq.into());
            }
            let _ = decoded(&Value::Object(message).to_string());
        }
    }
}
