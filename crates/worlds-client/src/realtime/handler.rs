//! The channel's handler: each world's events put in order by sequence number, and
//! resynchronised from snapshots.

use std::collections::{BTreeMap, VecDeque};

use core_http::ws::{Handler, Stream, StreamItem, WsError};
use core_http::{Error, Result};
use log::debug;

use super::Event;
use super::protocol::{Wire, WorldsProtocol};
use crate::worlds::{User, UserId, WorldId};

/// What the client knows of a joined world.
#[derive(Debug, Default)]
pub(super) struct Known {
    /// The last sequence number delivered (or given by a snapshot).
    seq: u64,
    /// The users known to be there.
    users: BTreeMap<UserId, User>,
    /// A snapshot has been asked for after lost events.
    resyncing: bool,
}

/// The channel's handler: puts each world's events in order and resynchronises.
#[derive(Debug, Default)]
pub(crate) struct Worlds {
    /// The worlds joined (a snapshot received for each).
    pub(super) worlds: BTreeMap<WorldId, Known>,
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
