//! The realtime channel (`/ws/v1/realtime`): join worlds, receive their events, and stay
//! in step across reconnects and lost events.
//!
//! Every event of a world carries the world's sequence number. The client keeps, per
//! joined world, the last number it delivered and the users it knows are there:
//! - an event at or below the last number is old (from before the current join, or a
//!   repeat) and is dropped;
//! - an event past the next number means events were lost: the client asks for a
//!   snapshot of the world's users;
//! - an event whose number cannot be read (not a whole number, or past `u64`) is given
//!   as an error item and the world is resynchronised, never skipped in silence;
//! - after a reconnect the client joins every world again, and each join answers with a
//!   snapshot. A snapshot's number is the world's from then on, even when it is lower
//!   than the last one seen: the server restarted its count, and the events after the
//!   snapshot are delivered, not dropped as old.
//!
//! Messages of a type this version does not know travel on the stream's lossy lane
//! (counted in `stats().dropped` if the caller falls far behind); every other event on
//! the lossless lane, bounded at 10,000 waiting: a caller that stops reading gets
//! [`core_http::ws::WsError::FellBehind`], then the channel reconnects and every world
//! is resynchronised.
//!
//! A snapshot (but the first, which comes out as [`Event::Joined`]) is compared with the
//! users known: those missing come out as [`Event::UserLeft`], those new as
//! [`Event::UserJoined`], both marked `recovered`, then [`Event::Resynced`]. Other events
//! of the gap (assets, objects, the world) cannot be rebuilt: re-read what you need
//! after `Resynced`.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use core_http::ws::{Handler, Inbound, Protocol, Session, Stream, StreamItem, WsError};
use core_http::{Error, Result};
use log::debug;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::assets::Asset;
use crate::client::Client;
use crate::worlds::{User, UserId, World, WorldId, WorldObject};

/// How long a join waits for the world's snapshot.
const JOIN_TIMEOUT: Duration = Duration::from_secs(10);

/// What the realtime channel delivers.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A world was joined: the users in it then.
    Joined {
        /// The world.
        world_id: WorldId,
        /// The users in it.
        users: Vec<User>,
    },
    /// A user came into a world.
    UserJoined {
        /// The world.
        world_id: WorldId,
        /// The user.
        user: User,
        /// `true` when found by comparing a snapshot after a reconnect or lost events,
        /// rather than received as it happened.
        recovered: bool,
    },
    /// A user left a world.
    UserLeft {
        /// The world.
        world_id: WorldId,
        /// The user (only the id is certain for a recovered one).
        user: User,
        /// As for [`Event::UserJoined`].
        recovered: bool,
    },
    /// An asset's properties changed.
    AssetUpdated {
        /// The world.
        world_id: WorldId,
        /// The asset as it is now.
        asset: Asset,
    },
    /// The world itself changed (its name, theme, description...).
    WorldUpdated {
        /// The world.
        world_id: WorldId,
        /// The world as it is now.
        world: World,
    },
    /// An object moved.
    ObjectMoved {
        /// The world.
        world_id: WorldId,
        /// The object's place in the world's list, when given.
        index: Option<u64>,
        /// The object as it is now.
        object: WorldObject,
    },
    /// The users of a world were compared with a snapshot after a reconnect or lost
    /// events; the joined and left events it found came just before.
    Resynced {
        /// The world.
        world_id: WorldId,
    },
    /// The connection was lost and is back; every world was joined again and
    /// resynchronised (its `Resynced` came just before).
    Reconnected {
        /// How long the channel was down.
        gap: Duration,
    },
    /// An event type this version does not know (or a known one whose data did not
    /// decode), kept whole.
    Unknown {
        /// Its `type`.
        kind: String,
        /// Its world, when it names one.
        world_id: Option<WorldId>,
        /// The whole message.
        data: Value,
    },
}

impl Event {
    /// The world the event is about, if any.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.realtime()?;
    /// realtime.join("world_1")?;
    /// realtime.join("world_2")?;
    /// for event in realtime.by_ref().take(10) {
    ///     let event = event?;
    ///     println!("{:?}: {event:?}", event.world_id());
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn world_id(&self) -> Option<&WorldId> {
        match self {
            Event::Joined { world_id, .. }
            | Event::UserJoined { world_id, .. }
            | Event::UserLeft { world_id, .. }
            | Event::AssetUpdated { world_id, .. }
            | Event::WorldUpdated { world_id, .. }
            | Event::ObjectMoved { world_id, .. }
            | Event::Resynced { world_id } => Some(world_id),
            Event::Unknown { world_id, .. } => world_id.as_ref(),
            Event::Reconnected { .. } => None,
        }
    }
}

/// Joining a world: as an observer, or as a user who is then in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Join {
    world: WorldId,
    user: Option<(String, String)>,
}

/// What a frame held, before the client puts it in order.
#[derive(Debug)]
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

impl WorldsProtocol {
    fn one(&self, raw: &str, out: &mut Vec<Inbound<Wire>>) {
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

/// What the client knows of a joined world.
#[derive(Debug, Default)]
struct Known {
    /// The last sequence number delivered (or given by a snapshot).
    seq: u64,
    /// The users known to be there.
    users: BTreeMap<UserId, User>,
    /// A snapshot has been asked for after lost events.
    resyncing: bool,
}

/// An open realtime channel: [`Client::realtime`]. Iterate it (each item waits), or call
/// [`next_timeout`](Self::next_timeout). Dropping it closes it.
pub struct Realtime {
    session: Session<WorldsProtocol, Worlds>,
}

impl std::fmt::Debug for Realtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Realtime")
            .field(
                "worlds",
                &self.session.handler().worlds.keys().collect::<Vec<_>>(),
            )
            .field("stats", &self.session.stats())
            .finish_non_exhaustive()
    }
}

impl Realtime {
    pub(crate) fn open(
        client: &Client,
        configure: impl FnOnce(core_http::ws::StreamConfig) -> core_http::ws::StreamConfig,
    ) -> Result<Realtime> {
        let url = client.realtime_url();
        let config = configure(client.http().stream_config(&url)?);
        let stream = Stream::connect(config, WorldsProtocol::default())?;
        Ok(Realtime {
            session: Session::new(stream, Worlds::default()),
        })
    }

    /// Joins a world as an observer: its events from now on. Returns once the server
    /// answered with the world's users (delivered first, as [`Event::Joined`]); an error
    /// if there is no such world.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::Event;
    /// let mut realtime = client.realtime()?;
    /// realtime.join("world_1")?;
    /// if let Some(Ok(Event::Joined { users, .. })) = realtime.next() {
    ///     println!("{} users here", users.len());
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn join(&mut self, world: impl Into<WorldId>) -> Result<()> {
        self.join_inner(Join {
            world: world.into(),
            user: None,
        })
    }

    /// Joins a world as user `id` (shown as `display_name`): the user is in the world
    /// until [`leave`](Self::leave) or the channel closes, and is joined again after a
    /// reconnect.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.realtime()?;
    /// realtime.join_as("world_1", "user_ada", "Ada")?; // Ada is in the world until she leaves
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn join_as(
        &mut self,
        world: impl Into<WorldId>,
        id: impl Into<String>,
        display_name: impl Into<String>,
    ) -> Result<()> {
        let id = id.into();
        if id.trim().is_empty() {
            return Err(Error::InvalidRequest("a user id is needed".into()));
        }
        self.join_inner(Join {
            world: world.into(),
            user: Some((id, display_name.into())),
        })
    }

    fn join_inner(&mut self, join: Join) -> Result<()> {
        join.world.segment()?;
        let (stream, worlds, _) = self.session.parts();
        worlds.worlds.remove(&join.world);
        let world = join.world.clone();
        let joined = stream.subscribe_confirmed(join, JOIN_TIMEOUT);
        if joined.is_err() {
            // Not joined: not to be joined again after a reconnect either.
            stream.unsubscribe(Join { world, user: None });
        }
        joined
    }

    /// Leaves a world: no more of its events (those already received are dropped too).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.realtime()?;
    /// realtime.join("world_1")?;
    /// realtime.leave("world_1");
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn leave(&mut self, world: impl Into<WorldId>) {
        let world = world.into();
        let (stream, worlds, out) = self.session.parts();
        worlds.worlds.remove(&world);
        out.retain(|e| !matches!(e, Ok(event) if event.world_id() == Some(&world)));
        stream.unsubscribe(Join { world, user: None });
    }

    /// The next event, waiting at most `timeout`; `None` when none came in time or the
    /// channel has ended ([`is_closed`](Self::is_closed)).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use std::time::Duration;
    /// let mut realtime = client.realtime()?;
    /// realtime.join("world_1")?;
    /// match realtime.next_timeout(Duration::from_secs(5)) {
    ///     Some(event) => println!("{:?}", event?),
    ///     None => println!("quiet for 5 s"),
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn next_timeout(&mut self, timeout: Duration) -> Option<Result<Event>> {
        self.session.next_timeout(timeout)
    }

    /// `true` once the channel has ended and every event has been read.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use std::time::Duration;
    /// let mut realtime = client.realtime()?;
    /// realtime.join("world_1")?;
    /// while !realtime.is_closed() {
    ///     if let Some(event) = realtime.next_timeout(Duration::from_secs(1)) {
    ///         println!("{:?}", event?);
    ///     }
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn is_closed(&self) -> bool {
        self.session.is_closed()
    }

    /// The channel's counters: reconnects, events received, age of the last message.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let realtime = client.realtime()?;
    /// let stats = realtime.stats();
    /// println!("{} reconnects, {} events", stats.reconnects, stats.received);
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn stats(&self) -> crate::StreamStats {
        self.session.stats()
    }

    /// Closes the channel: a close handshake, and within 5 s in every case.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.realtime()?;
    /// realtime.join("world_1")?;
    /// realtime.close();
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn close(&mut self) {
        self.session.close();
    }
}

impl Iterator for Realtime {
    type Item = Result<Event>;

    /// Waits for the next event; `None` once the channel has ended.
    fn next(&mut self) -> Option<Self::Item> {
        self.session.next()
    }
}

/// The channel's handler: puts each world's events in order and resynchronises.
#[derive(Debug, Default)]
pub(crate) struct Worlds {
    /// The worlds joined (a snapshot received for each).
    worlds: BTreeMap<WorldId, Known>,
}

type Out = VecDeque<Result<Event>>;

impl Handler<WorldsProtocol> for Worlds {
    type Event = Event;

    fn item(
        &mut self,
        item: Result<StreamItem<Wire>>,
        stream: &Stream<WorldsProtocol>,
        out: &mut Out,
    ) {
        match item {
            Ok(StreamItem::Event(Wire::Snapshot {
                world_id,
                users,
                seq,
            })) => self.snapshot(world_id, users, seq, out),
            Ok(StreamItem::Event(Wire::Event {
                world_id,
                seq,
                event,
            })) => self.event(world_id, seq, event, stream, out),
            Ok(StreamItem::Event(Wire::BadSeq { world_id, message })) => {
                if let Some(known) = self.worlds.get_mut(&world_id) {
                    out.push_back(Err(Error::WebSocket(WsError::Undecodable(message))));
                    resync(&world_id, known, stream);
                }
            }
            Ok(StreamItem::Reconnected { gap, .. }) => {
                out.push_back(Ok(Event::Reconnected { gap }));
            }
            Ok(_) => {}
            Err(e) => out.push_back(Err(e)),
        }
    }
}

/// Asks the server for a snapshot of `world_id`, once until it comes.
fn resync(world_id: &WorldId, known: &mut Known, stream: &Stream<WorldsProtocol>) {
    if known.resyncing {
        return;
    }
    known.resyncing = true;
    stream.send_text(serde_json::json!({"action": "snapshot", "world_id": world_id}).to_string());
}

impl Worlds {
    fn snapshot(&mut self, world_id: WorldId, users: Vec<User>, seq: u64, out: &mut Out) {
        let now: BTreeMap<UserId, User> = users.iter().map(|u| (u.id.clone(), u.clone())).collect();
        let Some(known) = self.worlds.get_mut(&world_id) else {
            // The first snapshot of this join.
            self.worlds.insert(
                world_id.clone(),
                Known {
                    seq,
                    users: now,
                    resyncing: false,
                },
            );
            out.push_back(Ok(Event::Joined { world_id, users }));
            return;
        };
        for (id, user) in &known.users {
            if !now.contains_key(id) {
                out.push_back(Ok(Event::UserLeft {
                    world_id: world_id.clone(),
                    user: user.clone(),
                    recovered: true,
                }));
            }
        }
        for (id, user) in &now {
            if !known.users.contains_key(id) {
                out.push_back(Ok(Event::UserJoined {
                    world_id: world_id.clone(),
                    user: user.clone(),
                    recovered: true,
                }));
            }
        }
        debug!("world {world_id}: resynchronised at {seq}");
        known.users = now;
        // The snapshot's number is the world's from now on, lower or not: a lower one
        // means the server restarted its count.
        known.seq = seq;
        known.resyncing = false;
        out.push_back(Ok(Event::Resynced { world_id }));
    }

    fn event(
        &mut self,
        world_id: Option<WorldId>,
        seq: Option<u64>,
        event: Event,
        stream: &Stream<WorldsProtocol>,
        out: &mut Out,
    ) {
        let Some(world_id) = world_id else {
            // Not about a world: nothing to order.
            out.push_back(Ok(event));
            return;
        };
        let Some(known) = self.worlds.get_mut(&world_id) else {
            // A world not joined (any more), or not yet: its join's snapshot sets the
            // starting point, and anything before it is older than the join.
            return;
        };
        if let Some(seq) = seq {
            if seq <= known.seq {
                return;
            }
            if seq > known.seq.saturating_add(1) && !known.resyncing {
                debug!(
                    "world {world_id}: event {seq} after {}: asking for a snapshot",
                    known.seq
                );
                resync(&world_id, known, stream);
            }
            known.seq = seq;
        }
        match &event {
            Event::UserJoined { user, .. } => {
                known.users.insert(user.id.clone(), user.clone());
            }
            Event::UserLeft { user, .. } => {
                known.users.remove(&user.id);
            }
            _ => {}
        }
        out.push_back(Ok(event));
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
