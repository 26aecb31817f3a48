//! What the realtime channel delivers.

use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;

use crate::assets::Asset;
use crate::models::{User, UserId, World, WorldId, WorldObject};

/// What the realtime channel delivers.
///
/// Every event of a world carries the world's sequence number (`seq`) and the server's
/// time (`timestamp`), when the server gave them: save the last `seq` you handled and
/// rejoin from it with [`WorldsStream::join_from`](super::WorldsStream::join_from).
/// `recovered` is `true` for an event that happened while the client was not hearing
/// the world (after a reconnect, lost events or a rejoin): replayed by the server, or
/// found by comparing the world with a snapshot.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A world was joined: the world as it is at `seq`.
    Joined {
        /// The world.
        world_id: WorldId,
        /// The users in it.
        users: Vec<User>,
        /// The world itself (its name, theme, objects, revision), when the server sent
        /// it. Boxed, as in [`WorldUpdated`](Event::WorldUpdated): a world is the largest
        /// thing an event carries and these are rare, so every other event is smaller
        /// (and cheaper to hand over) for it.
        world: Option<Box<World>>,
        /// Its assets, with their revisions.
        assets: Vec<Asset>,
        /// The sequence number the world stands at.
        seq: Option<u64>,
        /// The server's time.
        timestamp: Option<OffsetDateTime>,
    },
    /// A user came into a world.
    UserJoined {
        /// The world.
        world_id: WorldId,
        /// The user.
        user: User,
        /// See [`Event`].
        recovered: bool,
        /// The world's sequence number.
        seq: Option<u64>,
        /// The server's time.
        timestamp: Option<OffsetDateTime>,
    },
    /// A user left a world.
    UserLeft {
        /// The world.
        world_id: WorldId,
        /// The user (only the id is certain for one found by comparing a snapshot).
        user: User,
        /// See [`Event`].
        recovered: bool,
        /// The world's sequence number.
        seq: Option<u64>,
        /// The server's time.
        timestamp: Option<OffsetDateTime>,
    },
    /// A user's presence changed: their `state` (a position, a status...), as their
    /// session set it with [`WorldsStream::set_presence`](super::WorldsStream::set_presence).
    #[doc(alias = "presence")]
    UserUpdated {
        /// The world.
        world_id: WorldId,
        /// The user as they are now.
        user: User,
        /// See [`Event`].
        recovered: bool,
        /// The world's sequence number.
        seq: Option<u64>,
        /// The server's time.
        timestamp: Option<OffsetDateTime>,
    },
    /// An asset's properties changed.
    AssetUpdated {
        /// The world.
        world_id: WorldId,
        /// The asset as it is now.
        asset: Asset,
        /// See [`Event`].
        recovered: bool,
        /// The world's sequence number.
        seq: Option<u64>,
        /// The server's time.
        timestamp: Option<OffsetDateTime>,
    },
    /// The world itself changed (its name, theme, description, objects...).
    WorldUpdated {
        /// The world.
        world_id: WorldId,
        /// The world as it is now (boxed: see [`Joined`](Event::Joined)).
        world: Box<World>,
        /// See [`Event`].
        recovered: bool,
        /// The world's sequence number.
        seq: Option<u64>,
        /// The server's time.
        timestamp: Option<OffsetDateTime>,
    },
    /// The world was deleted (`worlds().delete`): nothing more comes from it; leave it.
    WorldDeleted {
        /// The world.
        world_id: WorldId,
        /// The world's sequence number.
        seq: Option<u64>,
        /// The server's time.
        timestamp: Option<OffsetDateTime>,
    },
    /// An object moved.
    ObjectMoved {
        /// The world.
        world_id: WorldId,
        /// The object's place in the world's list, when given.
        index: Option<u64>,
        /// The object as it is now.
        object: WorldObject,
        /// The user whose session moved it, when one did.
        by: Option<UserId>,
        /// See [`Event`].
        recovered: bool,
        /// The world's sequence number.
        seq: Option<u64>,
        /// The server's time.
        timestamp: Option<OffsetDateTime>,
    },
    /// An application's own event, sent to the world's sessions with
    /// [`WorldsStream::send`](super::WorldsStream::send).
    Custom {
        /// The world.
        world_id: WorldId,
        /// Its name.
        name: String,
        /// Its data, as sent.
        data: Value,
        /// The user whose session sent it, when it was joined as one.
        from: Option<UserId>,
        /// See [`Event`].
        recovered: bool,
        /// The world's sequence number.
        seq: Option<u64>,
        /// The server's time.
        timestamp: Option<OffsetDateTime>,
    },
    /// A world was brought up to date after a reconnect, lost events or a rejoin from a
    /// checkpoint; the recovered events it took came just before.
    Resynced {
        /// The world.
        world_id: WorldId,
        /// How.
        recovery: Recovery,
        /// The sequence number the world stands at now.
        seq: Option<u64>,
        /// The server's time.
        timestamp: Option<OffsetDateTime>,
    },
    /// The connection was lost and is back; every world was joined again and brought up
    /// to date (its `Resynced` came just before).
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
        /// The world's sequence number.
        seq: Option<u64>,
    },
}

/// How a world was brought up to date ([`Event::Resynced`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Recovery {
    /// The server still held every event missed and sent them again: each was
    /// delivered, in order, marked `recovered`. Nothing was lost.
    Replayed {
        /// How many.
        events: u64,
    },
    /// The server no longer held them: the world was compared with what the client had
    /// seen, and each difference delivered as a `recovered` event (`changes` of them).
    /// What happened in between is lost: an asset changed twice shows once, as it is
    /// now.
    Compared {
        /// How many differences.
        changes: usize,
    },
    /// Rejoined from a checkpoint ([`WorldsStream::join_from`](super::WorldsStream::join_from))
    /// the server could no longer replay from: the world as it is now came in
    /// [`Event::Joined`], and what happened since the checkpoint is not known.
    Lost,
}

impl Event {
    /// The world the event is about, if any.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.stream()?;
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
            | Event::UserUpdated { world_id, .. }
            | Event::AssetUpdated { world_id, .. }
            | Event::WorldUpdated { world_id, .. }
            | Event::WorldDeleted { world_id, .. }
            | Event::ObjectMoved { world_id, .. }
            | Event::Custom { world_id, .. }
            | Event::Resynced { world_id, .. } => Some(world_id),
            Event::Unknown { world_id, .. } => world_id.as_ref(),
            Event::Reconnected { .. } => None,
        }
    }

    /// The world's sequence number at this event, when the server gave one: the
    /// checkpoint to save, and to rejoin from with
    /// [`WorldsStream::join_from`](super::WorldsStream::join_from).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.stream()?;
    /// realtime.join("world_1")?;
    /// let mut checkpoint = 0;
    /// for event in realtime.by_ref().take(10) {
    ///     let event = event?;
    ///     // ... handle it, then:
    ///     checkpoint = event.seq().unwrap_or(checkpoint);
    /// }
    /// println!("save {checkpoint}");
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn seq(&self) -> Option<u64> {
        match self {
            Event::Joined { seq, .. }
            | Event::UserJoined { seq, .. }
            | Event::UserLeft { seq, .. }
            | Event::UserUpdated { seq, .. }
            | Event::AssetUpdated { seq, .. }
            | Event::WorldUpdated { seq, .. }
            | Event::WorldDeleted { seq, .. }
            | Event::ObjectMoved { seq, .. }
            | Event::Custom { seq, .. }
            | Event::Resynced { seq, .. }
            | Event::Unknown { seq, .. } => *seq,
            Event::Reconnected { .. } => None,
        }
    }

    /// The server's time at this event, when it gave one.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.stream()?;
    /// realtime.join("world_1")?;
    /// if let Some(Ok(event)) = realtime.next() {
    ///     println!("{:?} at {:?}", event.seq(), event.timestamp());
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn timestamp(&self) -> Option<OffsetDateTime> {
        match self {
            Event::Joined { timestamp, .. }
            | Event::UserJoined { timestamp, .. }
            | Event::UserLeft { timestamp, .. }
            | Event::UserUpdated { timestamp, .. }
            | Event::AssetUpdated { timestamp, .. }
            | Event::WorldUpdated { timestamp, .. }
            | Event::WorldDeleted { timestamp, .. }
            | Event::ObjectMoved { timestamp, .. }
            | Event::Custom { timestamp, .. }
            | Event::Resynced { timestamp, .. } => *timestamp,
            Event::Unknown { .. } | Event::Reconnected { .. } => None,
        }
    }

    /// `true` for an event that happened while the client was not hearing the world
    /// (see [`Event`]).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.stream()?;
    /// realtime.join("world_1")?;
    /// for event in realtime.by_ref().take(10) {
    ///     let event = event?;
    ///     if event.is_recovered() {
    ///         println!("missed while away: {event:?}");
    ///     }
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn is_recovered(&self) -> bool {
        match self {
            Event::UserJoined { recovered, .. }
            | Event::UserLeft { recovered, .. }
            | Event::UserUpdated { recovered, .. }
            | Event::AssetUpdated { recovered, .. }
            | Event::WorldUpdated { recovered, .. }
            | Event::ObjectMoved { recovered, .. }
            | Event::Custom { recovered, .. } => *recovered,
            _ => false,
        }
    }

    /// Marks it recovered (a replayed or found event).
    pub(super) fn mark_recovered(&mut self) {
        match self {
            Event::UserJoined { recovered, .. }
            | Event::UserLeft { recovered, .. }
            | Event::UserUpdated { recovered, .. }
            | Event::AssetUpdated { recovered, .. }
            | Event::WorldUpdated { recovered, .. }
            | Event::ObjectMoved { recovered, .. }
            | Event::Custom { recovered, .. } => *recovered = true,
            _ => {}
        }
    }
}
