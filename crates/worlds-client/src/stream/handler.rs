//! The channel's handler: each world's events delivered in order, exactly once, by
//! sequence number; a gap asks the server to catch the client up (see `recovery`).

use std::collections::{BTreeMap, VecDeque};

use core_http::{Error, Result};
use core_streams::{Handler, Stream, StreamItem, WsError};
use log::debug;

use super::Event;
use super::protocol::{Checkpoint, Snapshot, Wire, WorldsProtocol};
use super::recovery::{Known, Phase};
use crate::models::WorldId;

/// A joined world.
#[derive(Debug)]
pub(super) struct Tracked {
    pub(super) phase: Phase,
    /// The last sequence number delivered (or given by a snapshot), shared with the
    /// protocol, which rejoins from it after a reconnect.
    pub(super) checkpoint: Checkpoint,
    pub(super) seq: u64,
    /// What the client has seen of the world, to compare with a snapshot.
    pub(super) known: Known,
    /// The server was asked to catch the client up; until it answers, events past the
    /// next number are dropped (the answer brings them again).
    pub(super) resyncing: bool,
    /// An event was missing since the last snapshot (a number skipped): a replay that
    /// claims to be whole is not believed, and the snapshot is compared instead.
    pub(super) hole: bool,
}

impl Tracked {
    pub(super) fn new(checkpoint: Checkpoint) -> Self {
        let (phase, seq) = match checkpoint.get() {
            Some(seq) => (Phase::FromCheckpoint, seq),
            None => (Phase::Joining, 0),
        };
        Tracked {
            phase,
            checkpoint,
            seq,
            known: Known::default(),
            resyncing: false,
            hole: false,
        }
    }
}

/// The channel's handler: puts each world's events in order and recovers what it missed.
#[derive(Debug, Default)]
pub(crate) struct Worlds {
    /// The worlds joined.
    pub(super) worlds: BTreeMap<WorldId, Tracked>,
}

type Out = VecDeque<Result<Event>>;

impl Handler<WorldsProtocol> for Worlds {
    type Event = Event;

    fn item(
        &mut self,
        item: Result<StreamItem<Wire>>,
        stream: &Stream<WorldsProtocol>,
        out: &mut Out,
    ) -> Option<Result<Event>> {
        match item {
            Ok(StreamItem::Event(Wire::Snapshot(snapshot))) => self.snapshot(*snapshot, out),
            // The common case: the event goes straight back to the caller, unqueued.
            Ok(StreamItem::Event(Wire::Event(event))) => {
                return self.event(event, stream).map(Ok);
            }
            Ok(StreamItem::Event(Wire::BadSeq { world_id, message })) => {
                if let Some(world) = self.worlds.get_mut(&world_id) {
                    out.push_back(Err(Error::from(WsError::Undecodable(message))));
                    world.hole = true;
                    resync(&world_id, world, stream);
                }
            }
            Ok(StreamItem::Reconnected { gap, .. }) => {
                out.push_back(Ok(Event::Reconnected { gap }));
            }
            Ok(_) => {}
            Err(e) => out.push_back(Err(e)),
        }
        out.pop_front()
    }
}

/// Asks the server for the events after the last one delivered (or, when it no longer
/// holds them, a snapshot), once until it answers.
fn resync(world_id: &WorldId, world: &mut Tracked, stream: &Stream<WorldsProtocol>) {
    if world.resyncing {
        return;
    }
    world.resyncing = true;
    stream.send_text(
        serde_json::json!({"action": "resync", "world_id": world_id, "since": world.seq})
            .to_string(),
    );
}

impl Worlds {
    fn snapshot(&mut self, snapshot: Snapshot, out: &mut Out) {
        let Some(world) = self.worlds.get_mut(&snapshot.world_id) else {
            // A world left meanwhile.
            return;
        };
        debug!(
            "world {}: snapshot at {} ({:?} replayed)",
            snapshot.world_id, snapshot.seq, snapshot.replayed
        );
        let phase = std::mem::replace(&mut world.phase, Phase::Joined);
        // A replay is whole only when no number was skipped on the way and it reached the
        // snapshot's number: otherwise its claim is not taken, and the snapshot is
        // compared with what was seen (after a checkpoint join, with nothing seen,
        // what happened since is reported lost).
        let mut snapshot = snapshot;
        if snapshot.replayed.is_some() && (world.hole || world.seq != snapshot.seq) {
            debug!(
                "world {}: the replay has a hole (at {}, snapshot at {}); comparing instead",
                snapshot.world_id, world.seq, snapshot.seq
            );
            snapshot.replayed = None;
        }
        world.hole = false;
        // The snapshot's number is the world's from now on, lower or not: a lower one
        // means the server restarted its count.
        world.seq = snapshot.seq;
        world.checkpoint.set(snapshot.seq);
        world.resyncing = false;
        world.known.recover(phase, snapshot, out);
    }

    /// The event if the caller gets it now: in order, of a world joined.
    fn event(&mut self, mut event: Event, stream: &Stream<WorldsProtocol>) -> Option<Event> {
        let Some(world_id) = event.world_id() else {
            // Not about a world: nothing to order.
            return Some(event);
        };
        let Some(world) = self.worlds.get_mut(world_id) else {
            // A world not joined (any more).
            return None;
        };
        if matches!(world.phase, Phase::Joining) {
            // Older than the join's snapshot, which sets the starting point.
            return None;
        }
        if let Some(seq) = event.seq() {
            if seq <= world.seq {
                return None;
            }
            if seq > world.seq.saturating_add(1) {
                // Lost events: this one comes again with them, in order.
                world.hole = true;
                if !world.resyncing {
                    debug!(
                        "world {world_id}: event {seq} after {}: catching up",
                        world.seq
                    );
                    let world_id = world_id.clone();
                    resync(&world_id, world, stream);
                }
                return None;
            }
            world.seq = seq;
            world.checkpoint.set(seq);
        }
        if matches!(world.phase, Phase::FromCheckpoint) || world.resyncing {
            event.mark_recovered();
        }
        world.known.apply(&event);
        if let Event::WorldDeleted { world_id, .. } = &event {
            // Gone for good: forgotten (the protocol no longer joins it either).
            self.worlds.remove(world_id);
        }
        Some(event)
    }
}
