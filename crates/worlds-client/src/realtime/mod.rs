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

mod handler;
mod protocol;

use std::time::Duration;

use core_http::ws::{Session, Stream};
use core_http::{Error, Result};
use serde_json::Value;

use crate::assets::Asset;
use crate::client::Client;
use crate::worlds::{User, World, WorldId, WorldObject};
use handler::Worlds;
use protocol::{Join, WorldsProtocol};

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
    /// The world was deleted (`worlds().delete`): nothing more comes from it; leave it.
    WorldDeleted {
        /// The world.
        world_id: WorldId,
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
            | Event::WorldDeleted { world_id }
            | Event::ObjectMoved { world_id, .. }
            | Event::Resynced { world_id } => Some(world_id),
            Event::Unknown { world_id, .. } => world_id.as_ref(),
            Event::Reconnected { .. } => None,
        }
    }
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
