//! Blocking Rust client for the virtual worlds service: worlds (list, create, get), the
//! users in them, assets (update their properties, optionally only from a known
//! revision), and a realtime channel whose events stay in order and complete across
//! reconnects and lost messages.
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
//! The document shows the paths and little else; every choice made where it is silent
//! is in `docs/worlds.md`. Records keep the fields this version does not model in
//! `extra`, unknown event types arrive as [`Event::Unknown`], and
//! [`Client::raw`] reaches anything else with the same auth, retries and errors.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod assets;
mod client;
mod realtime;
mod worlds;

pub use assets::{Asset, AssetId, Assets, current_revision};
pub use client::Client;
pub use realtime::{Event, Realtime};
pub use time::OffsetDateTime;
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
