//! The realtime channel (`/ws/v1/realtime`): join worlds, receive their events in order
//! and complete across reconnects and lost events, and send.
//!
//! Every event of a world carries the world's sequence number. The client keeps, per
//! joined world, the last number it delivered (its checkpoint) and what it has seen of
//! the world (users, the world and its objects, assets):
//! - an event at or below the checkpoint is old (from before the join, or a repeat) and
//!   is dropped;
//! - an event past the next number means events were lost: it is dropped too, and the
//!   client asks the service for what came after the checkpoint (`resync`);
//! - an event whose number cannot be read (not a whole number, or past `u64`) is given
//!   as an error item and the world is caught up the same way, never skipped in silence;
//! - after a reconnect the client joins every world again from its checkpoint.
//!
//! The service answers a join or a resync from a checkpoint with the events after it
//! while it still holds them (delivered marked `recovered`), then a snapshot of the
//! world. A snapshot after the first is compared with what the client had seen: each
//! difference comes as a recovered event (so an event lost and not replayed is still
//! reflected, as the world is now), then [`Event::Resynced`] says how
//! ([`Recovery`]). A snapshot's number is the world's from then on, even when it is
//! lower than the checkpoint: the server restarted its count.
//!
//! Messages of a type this version does not know travel on the stream's lossy lane
//! (counted in `stats().dropped` if the caller falls far behind); every other event on
//! the lossless lane, bounded at 10,000 waiting: a caller that stops reading gets
//! [`core_streams::WsError::FellBehind`], then the channel reconnects and every world
//! is caught up from its checkpoint.
//!
//! Sends ([`WorldsStream::send`], [`WorldsStream::move_object`], [`WorldsStream::set_presence`])
//! carry a `ref` the service answers with an `ack` or an `error`, through
//! [`core_streams::Stream::request`]: written at most once.

mod events;
mod handler;
mod protocol;
mod recovery;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use core_http::{Error, Result};
use core_streams::{Session, Stream};
use serde::Serialize;
use serde_json::Value;

use crate::client::Client;
use crate::models::WorldId;
pub use core_streams::{ReconnectPolicy, StreamConfig, StreamStats, WsError};
pub use events::{Event, Recovery};
use handler::{Tracked, Worlds};
use protocol::{Checkpoint, Join, WorldsProtocol};

/// How long a join waits for the world's snapshot.
const JOIN_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a send waits for the server's answer, by default.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// What the server said to a send it accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Accepted {
    /// The sequence number of the event the send made, when the server gave it (that
    /// event comes on the channel too).
    pub seq: Option<u64>,
}

/// An open realtime channel: [`Client::stream`]. Iterate it (each item waits), or call
/// [`next_timeout`](Self::next_timeout). Dropping it closes it.
pub struct WorldsStream {
    session: Session<WorldsProtocol, Worlds>,
    /// The id of the next request (`r1`, `r2`...).
    next_ref: AtomicU64,
    send_timeout: Duration,
}

impl std::fmt::Debug for WorldsStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorldsStream")
            .field(
                "worlds",
                &self.session.handler().worlds.keys().collect::<Vec<_>>(),
            )
            .field("stats", &self.session.stats())
            .finish_non_exhaustive()
    }
}

impl WorldsStream {
    pub(crate) fn open(
        client: &Client,
        configure: impl FnOnce(core_streams::StreamConfig) -> core_streams::StreamConfig,
    ) -> Result<WorldsStream> {
        let url = client.stream_url();
        let config = configure(core_streams::stream_config(client.http(), &url)?);
        let stream = Stream::connect(config, WorldsProtocol::default())?;
        Ok(WorldsStream {
            session: Session::new(stream, Worlds::default()),
            next_ref: AtomicU64::new(1),
            send_timeout: SEND_TIMEOUT,
        })
    }

    /// Joins a world as an observer: its events from now on. Returns once the server
    /// answered with the world's users (delivered first, as [`Event::Joined`]); an error
    /// if there is no such world.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::stream::Event;
    /// let mut realtime = client.stream()?;
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
            checkpoint: Checkpoint::at(None),
        })
    }

    /// Joins a world from a checkpoint: `seq`, the sequence number of the last event
    /// handled (saved from [`Event::seq`], e.g. before a restart). The events after it
    /// come first, marked `recovered`, when the server still holds them; then
    /// [`Event::Joined`] with the world as it is now, and [`Event::Resynced`] saying
    /// whether they were all replayed ([`Recovery::Replayed`]) or could not be
    /// ([`Recovery::Lost`]).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::stream::{Event, Recovery};
    /// let saved: u64 = 41; // the last `event.seq()` handled before the restart
    /// let mut realtime = client.stream()?;
    /// realtime.join_from("world_1", saved)?;
    /// for event in realtime.by_ref() {
    ///     match event? {
    ///         Event::Resynced { recovery: Recovery::Lost, .. } => {
    ///             println!("too old to replay: start from what Joined said");
    ///             break;
    ///         }
    ///         Event::Resynced { .. } => break,
    ///         missed => println!("missed: {missed:?}"),
    ///     }
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn join_from(&mut self, world: impl Into<WorldId>, seq: u64) -> Result<()> {
        self.join_inner(Join {
            world: world.into(),
            user: None,
            checkpoint: Checkpoint::at(Some(seq)),
        })
    }

    /// Joins a world as user `id` (shown as `display_name`): the user is in the world
    /// until [`leave`](Self::leave) or the channel closes, and is joined again after a
    /// reconnect.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.stream()?;
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
            checkpoint: Checkpoint::at(None),
        })
    }

    fn join_inner(&mut self, join: Join) -> Result<()> {
        join.world.segment()?;
        let (stream, worlds, _) = self.session.parts();
        worlds
            .worlds
            .insert(join.world.clone(), Tracked::new(join.checkpoint.clone()));
        let world = join.world.clone();
        let joined = stream.subscribe_confirmed(join, JOIN_TIMEOUT);
        if joined.is_err() {
            // Not joined: not to be joined again after a reconnect either.
            worlds.worlds.remove(&world);
            stream.unsubscribe(Join {
                world,
                user: None,
                checkpoint: Checkpoint::default(),
            });
        }
        joined
    }

    /// Leaves a world: no more of its events (those already received are dropped too).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.stream()?;
    /// realtime.join("world_1")?;
    /// realtime.leave("world_1");
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn leave(&mut self, world: impl Into<WorldId>) {
        let world = world.into();
        let (stream, worlds, out) = self.session.parts();
        worlds.worlds.remove(&world);
        out.retain(|e| !matches!(e, Ok(event) if event.world_id() == Some(&world)));
        stream.unsubscribe(Join {
            world,
            user: None,
            checkpoint: Checkpoint::default(),
        });
    }

    /// Moves object `index` of a joined world to `position`; every session of the world
    /// (this one too) gets the [`Event::ObjectMoved`]. Returns once the server accepted
    /// it; see [`send`](Self::send) for what a failure means.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.stream()?;
    /// realtime.join_as("world_1", "user_ada", "Ada")?;
    /// let accepted = realtime.move_object("world_1", 0, [1.0, 0.0, 2.5])?;
    /// println!("moved at {:?}", accepted.seq);
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn move_object(
        &self,
        world: impl Into<WorldId>,
        index: usize,
        position: [f64; 3],
    ) -> Result<Accepted> {
        self.move_object_to(world, index, position, None)
    }

    /// [`move_object`](Self::move_object), also changing where the object leads
    /// (`destination`, e.g. a portal's world).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use serde_json::json;
    /// let mut realtime = client.stream()?;
    /// realtime.join("world_1")?;
    /// realtime.move_object_to("world_1", 1, [0.0, 0.0, 0.0], Some(json!("world_2")))?;
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn move_object_to(
        &self,
        world: impl Into<WorldId>,
        index: usize,
        position: [f64; 3],
        destination: Option<Value>,
    ) -> Result<Accepted> {
        if position.iter().any(|p| !p.is_finite()) {
            return Err(Error::InvalidRequest(
                "a position is three finite numbers".into(),
            ));
        }
        let mut message =
            serde_json::json!({"action": "move", "index": index, "position": position});
        if let Some(d) = destination {
            message["destination"] = d;
        }
        self.request(world.into(), message)
    }

    /// Sends an event of the application's own (`name`, any JSON `data`) to every
    /// session of a joined world (this one too), as [`Event::Custom`]. Returns once the
    /// server accepted it.
    ///
    /// A send is written at most once. While the channel reconnects it waits for the
    /// connection, within the send timeout ([`set_send_timeout`](Self::set_send_timeout),
    /// 10 s by default). It fails with the server's refusal
    /// ([`WsError::Rejected`]: its code and reason);
    /// with [`WsError::NotSent`] when it was never
    /// written (safe to send again); or with
    /// [`WsError::Unanswered`] when it was written
    /// and no answer came (the connection dropped, or time ran out): it may have been
    /// done, and [`Error::may_have_been_processed`] says so.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use serde_json::json;
    /// let mut realtime = client.stream()?;
    /// realtime.join_as("world_1", "user_ada", "Ada")?;
    /// match realtime.send("world_1", "wave", &json!({"to": "user_grace"})) {
    ///     Ok(accepted) => println!("sent as event {:?}", accepted.seq),
    ///     Err(e) if e.may_have_been_processed() => println!("unknown: {e}"),
    ///     Err(e) => println!("not sent: {e}"),
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn send(
        &self,
        world: impl Into<WorldId>,
        name: &str,
        data: &impl Serialize,
    ) -> Result<Accepted> {
        if name.is_empty() {
            return Err(Error::InvalidRequest("an event needs a name".into()));
        }
        let data = serde_json::to_value(data)
            .map_err(|e| Error::InvalidRequest(format!("the event's data: {e}")))?;
        self.request(
            world.into(),
            serde_json::json!({"action": "send", "name": name, "data": data}),
        )
    }

    /// Sets this session's user's presence in a world joined with
    /// [`join_as`](Self::join_as): any JSON object (a position, a status...). Every
    /// session of the world gets an [`Event::UserUpdated`] with the user's `state`.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use serde_json::json;
    /// let mut realtime = client.stream()?;
    /// realtime.join_as("world_1", "user_ada", "Ada")?;
    /// realtime.set_presence("world_1", &json!({"status": "away", "position": [1, 0, 2]}))?;
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn set_presence(
        &self,
        world: impl Into<WorldId>,
        state: &impl Serialize,
    ) -> Result<Accepted> {
        let state = serde_json::to_value(state)
            .map_err(|e| Error::InvalidRequest(format!("the presence: {e}")))?;
        if !state.is_object() {
            return Err(Error::InvalidRequest("a presence is a JSON object".into()));
        }
        self.request(
            world.into(),
            serde_json::json!({"action": "presence", "state": state}),
        )
    }

    /// How long each send ([`send`](Self::send), [`move_object`](Self::move_object),
    /// [`set_presence`](Self::set_presence)) waits for the server's answer, the wait
    /// for a connection included. Defaults to 10 s.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.stream()?;
    /// realtime.set_send_timeout(std::time::Duration::from_secs(2));
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn set_send_timeout(&mut self, timeout: Duration) {
        self.send_timeout = timeout;
    }

    fn request(&self, world: WorldId, mut message: Value) -> Result<Accepted> {
        world.segment()?;
        let id = format!("r{}", self.next_ref.fetch_add(1, Ordering::Relaxed));
        message["world_id"] = Value::String(world.to_string());
        message["ref"] = Value::String(id.clone());
        let answer = self
            .session
            .stream()
            .request(id, message.to_string(), self.send_timeout)?;
        let answer: Value = serde_json::from_str(&answer).unwrap_or_default();
        Ok(Accepted {
            seq: answer.get("seq").and_then(Value::as_u64),
        })
    }

    /// The next event, waiting at most `timeout`; `None` when none came in time or the
    /// channel has ended ([`is_closed`](Self::is_closed)).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use std::time::Duration;
    /// let mut realtime = client.stream()?;
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
    /// let mut realtime = client.stream()?;
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
    /// let realtime = client.stream()?;
    /// let stats = realtime.stats();
    /// println!("{} reconnects, {} events", stats.reconnects, stats.received);
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn stats(&self) -> StreamStats {
        self.session.stats()
    }

    /// Closes the channel: a close handshake, and within 5 s in every case.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.stream()?;
    /// realtime.join("world_1")?;
    /// realtime.close();
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn close(&mut self) {
        self.session.close();
    }
}

impl Iterator for WorldsStream {
    type Item = Result<Event>;

    /// Waits for the next event; `None` once the channel has ended.
    fn next(&mut self) -> Option<Self::Item> {
        self.session.next()
    }
}

/// Reached from the client.
impl Client {
    /// Opens the realtime channel (`/ws/v1/realtime`). Join worlds on it to receive
    /// their events.
    ///
    /// ```no_run
    /// use worlds_client::stream::Event;
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut realtime = client.stream()?;
    /// realtime.join("world_1")?;
    /// for event in realtime.by_ref().take(10) {
    ///     match event? {
    ///         Event::UserJoined { user, .. } => println!("{} joined", user.id),
    ///         Event::Resynced { world_id, recovery, .. } => println!("{world_id}: {recovery:?}"),
    ///         other => println!("{other:?}"),
    ///     }
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn stream(&self) -> Result<WorldsStream> {
        WorldsStream::open(self, |config| config)
    }

    /// As [`stream`](Self::stream), with the channel's settings adjusted first (its
    /// reconnect policy, ping and silence timers).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use std::time::Duration;
    /// let mut realtime = client.stream_with(|config| {
    ///     config
    ///         .ping_after(Duration::from_secs(10))
    ///         .dead_after(Duration::from_secs(30))
    /// })?;
    /// realtime.join("world_1")?;
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn stream_with(
        &self,
        configure: impl FnOnce(StreamConfig) -> StreamConfig,
    ) -> Result<WorldsStream> {
        WorldsStream::open(self, configure)
    }
}
