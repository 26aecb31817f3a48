//! Blocking Rust client for the virtual worlds service: worlds (list, create, get, change
//! in part, delete), the users in them, assets (read, list, create, and change: `replace`
//! all their properties or `merge` only some, optionally only from a known revision), and
//! a realtime channel whose events stay in order and complete across reconnects and lost
//! messages.
//!
//! ```no_run
//! use worlds_client::{Client, Event, NewWorld, WorldObject};
//!
//! let client = Client::from_env()?; // WORLDS_API_KEY, WORLDS_BASE_URL
//! let world = client.worlds().create(
//!     &NewWorld::new("Harbour", "seaside")
//!         .object(WorldObject::new("lighthouse", [12.0, 0.0, -3.5])),
//! )?;
//! let mut realtime = client.realtime()?;
//! realtime.join(&world.id)?;
//! for event in realtime.by_ref().take(5) {
//!     match event? {
//!         Event::UserJoined { user, .. } => println!("{} arrived", user.id),
//!         Event::AssetUpdated { asset, .. } => println!("{} changed", asset.id),
//!         other => println!("{other:?}"),
//!     }
//! }
//! # Ok::<(), worlds_client::Error>(())
//! ```
//!
//! # Behaviour
//! - **Writes.** Creating a world or an asset is never repeated once the server may have
//!   acted. Assets change two ways, named for what they do: `assets().replace` (`PUT`: the
//!   properties become exactly those given, the others are gone) and `assets().merge`
//!   (`PATCH`, a JSON merge patch: only the properties given change, `null` removes one);
//!   both are retried like a `PUT`. Their `_if(id, props, revision)` forms send `If-Match`
//!   and are never repeated (a repeat would fail its own condition); a conflict's
//!   `current_revision(&error)` says where the asset is now. `assets().get` reads one with
//!   its revision, for read-modify-write. (`update`/`update_if`, a full replace, are kept
//!   deprecated.)
//! - **Retries.** Reads, `replace` and `merge` are retried on connection failures, 408, 429
//!   (after `Retry-After`) and 5xx, twice by default.
//! - **Checks.** Checked before sending: a world's name and theme not blank, each object
//!   with a type and a finite position, ids that are not empty or `..` (each is encoded into
//!   one path segment), a page size of 1 to 100.
//! - **Decoding.** The document shows the paths and little else: only ids are required;
//!   every record keeps the fields this version does not model in `extra`; unknown event
//!   types arrive as `Event::Unknown` with the whole message. Numbers decode exactly or
//!   fail (a revision or user count out of range is an error, never clamped); ids, world
//!   names and themes sent as JSON integers keep their digits.
//! - **Errors.** Errors carry the HTTP status, the server's code and message, and the
//!   request id. A stale revision is `ErrorKind::Conflict` (412 or 409), and
//!   `current_revision(&err)` says where the asset is now.
//! - **Limits.** None documented: a 429's `Retry-After` is honoured, and
//!   `builder().rate_limit(RateLimit::per_minute(n))` paces calls under a limit of your own.
//! - **Realtime.** Events carry a per-world sequence number: old and repeated ones are
//!   dropped, a gap makes the client ask for a snapshot of the world's users. After a
//!   reconnect the client joins every world again; each snapshot is compared with the
//!   users it knew, and those who came or went meanwhile are reported (`recovered: true`)
//!   before `Event::Resynced` and `Event::Reconnected`. Asset, object and world changes of
//!   a gap cannot be rebuilt: re-read what you need after `Resynced`.
//! - **Configuration.** Bearer by default; `Client::builder().auth(Auth::header("x-api-key",
//!   key))` sends the key in a header of your choice, on REST calls and on the realtime
//!   upgrade. `Client::from_env()` reads `WORLDS_BASE_URL` and `WORLDS_API_KEY` (plus
//!   `WORLDS_REALTIME_URL`, `WORLDS_MAX_RETRIES`, `WORLDS_TIMEOUT_SECS`). `client.raw()`
//!   reaches anything else with the same auth, retries and errors.
//! - **Secrets.** The API key is never printed (`Debug` shows `***`), put in a URL or an
//!   error, and goes only to the base URL's origin and the realtime channel.
//! - **Logging.** Through the `log` crate, never a key. Keep the `ureq_proto` target below
//!   `trace`: at trace it dumps the raw bytes of every request, the `Authorization` header
//!   included.
//!
//! The document shows the paths and little else; every choice made where it is silent
//! is in `docs/worlds.md`. Records keep the fields this version does not model in
//! `extra`, unknown event types arrive as [`Event::Unknown`], and
//! [`Client::raw`] reaches anything else with the same auth, retries and errors.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod assets;
mod client;
mod realtime;
mod world_changes;
mod worlds;

pub use assets::{Asset, AssetId, AssetPage, Assets, ListAssets, current_revision};
pub use client::Client;
pub use realtime::{Accepted, Event, Realtime, Recovery};
pub use time::OffsetDateTime;
pub use world_changes::UpdateWorld;
pub use worlds::{
    ListWorlds, MAX_PAGE_SIZE, NewWorld, Presence, User, UserId, World, WorldId, WorldObject,
    WorldPage, Worlds,
};

core_http::reexports!();
/// The realtime channel's settings and counters.
pub use core_http::ws::{ReconnectPolicy, StreamConfig, StreamStats};

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
