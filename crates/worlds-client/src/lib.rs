//! Blocking Rust client for the virtual worlds service: worlds (list, create, get, change
//! in part, delete), the users in them, assets (read, list, create, and change: `replace`
//! all their properties or `merge` only some, optionally only from a known revision), and
//! a two-way realtime channel whose events stay in order and complete across reconnects
//! and lost messages, and which sends custom events, object moves and presence.
//!
//! ```
//! use std::time::Duration;
//! use worlds_client::{Client, serde_json::json, stream::Event, worlds::{NewWorld, WorldObject}};
//!
//! # let (base_url, api_key) = testkit::doc::worlds();
//! let client = Client::new(base_url, api_key)?; // or Client::from_env()
//! let world = client.worlds().create(
//!     &NewWorld::new("Harbour", "seaside")
//!         .object(WorldObject::new("lighthouse", [12.0, 0.0, -3.5])),
//! )?;
//! let mut stream = client.stream()?;
//! stream.join_as(&world.id, "user_ada", "Ada")?;
//! stream.send(&world.id, "wave", &json!({"to": "everyone"}))?;
//! // Each read waits at most a second; none left means the world went quiet.
//! let mut seen = Vec::new();
//! while let Some(event) = stream.next_timeout(Duration::from_secs(1)) {
//!     match event? {
//!         Event::UserJoined { user, .. } => println!("{} arrived", user.id),
//!         Event::Custom { name, data, .. } if name == "wave" => {
//!             println!("a wave: {data}");
//!             seen.push(name);
//!             break;
//!         }
//!         other => println!("{other:?}"),
//!     }
//! }
//! # assert_eq!(seen, ["wave"]);
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
//!   names and themes sent as JSON integers keep their digits (up to 64 bits; a larger one is a decode error).
//! - **Errors.** Errors carry the HTTP status, the server's code and message, and the
//!   request id. A stale revision is `ErrorKind::Conflict` (412 or 409), and
//!   `current_revision(&err)` says where the asset is now.
//! - **Limits.** None documented: a 429's `Retry-After` is honoured, and
//!   `builder().rate_limit(RateLimit::per_minute(n))` paces calls under a limit of your own.
//! - **Realtime.** Every event carries its world's sequence number and the server's time
//!   (`event.seq()`, `event.timestamp()`), and a world's events come in order, each once.
//!   After a reconnect or a gap in the numbers, the client asks for what came after the
//!   last event it delivered: the events themselves while the world still holds them
//!   (the sandbox keeps 1,000), each marked `recovered`; otherwise a snapshot of the whole
//!   world (users, the world and its objects, assets with revisions) is compared with what
//!   the client had seen and each difference comes as a recovered event. Then
//!   `Event::Resynced` says which (`Recovery::Replayed` or `Recovery::Compared`), before
//!   `Event::Reconnected`. `join_from(world, seq)` rejoins from a saved checkpoint
//!   (`Recovery::Lost` when it is too old to replay). The lossless lane holds 10,000
//!   events: a reader that stops reading gets `WsError::FellBehind`, then the channel
//!   reconnects and recovers the rest the same way.
//! - **Sending.** `realtime.send` (an event of your own), `move_object` and `set_presence`
//!   return once the service accepted them (`Accepted { seq }`), fail with its code and
//!   reason when it refuses (`WsError::Rejected`), wait for a reconnect within the send
//!   timeout (10 s), and are written at most once: `WsError::NotSent` is safe to repeat,
//!   `WsError::Unanswered` may have been done (`err.may_have_been_processed()`).
//! - **Configuration.** Calls and streams go through the proxy in `HTTPS_PROXY`, `HTTP_PROXY` or `ALL_PROXY`
//!   (upper or lower case; `NO_PROXY` hosts directly), by an HTTP `CONNECT` tunnel;
//!   `builder().proxy(url, &bypass)` overrides the environment and `builder().no_proxy()`
//!   turns proxies off; a proxy's credentials (`http://user:pass@host:port`) go only to it
//!   and are never shown. A company's root: `builder().root_certificates_pem(pem)`, or the
//!   system's store with `builder().system_roots()` (feature `system-roots`); a gateway
//!   that asks for a client certificate: `builder().client_certificate_pem(chain, key)`;
//!   calls and streams alike. Feature `tracing`: a span per call, an event per attempt;
//!   `builder().observer(..)` sees every attempt without `tracing`.
//!   Bearer by default; `Client::builder().auth(Auth::header("x-api-key",
//!   key))` sends the key in a header of your choice, on REST calls and on the realtime
//!   upgrade; `Auth::bearer_from(|| key)` reads a key that rotates for every call and
//!   every reconnect. `Client::from_env()` reads `WORLDS_BASE_URL` and `WORLDS_API_KEY` (plus
//!   `WORLDS_STREAM_URL`, `WORLDS_MAX_RETRIES`, `WORLDS_TIMEOUT_SECS`, `WORLDS_RATE_BUDGET`). `client.raw()`
//!   reaches anything else with the same auth, retries and errors.
//! - **Secrets.** The API key is never printed (`Debug` shows `***`), put in a URL or an
//!   error, and goes only to the base URL's origin and the realtime channel.
//! - **Logging.** Through the `log` crate, never a key. No log of any crate holds one at any
//!   level: below the HTTP layer a credential is a stand-in, swapped for it only at the
//!   socket.
//!
//! The document shows the paths and little else; every choice made where it is silent
//! is in `docs/worlds.md`. Records keep the fields this version does not model in
//! `extra`, unknown event types arrive as [`Event::Unknown`](stream::Event::Unknown), and
//! [`Client::raw`] reaches anything else with the same auth, retries and errors.
#![forbid(unsafe_code)]
// docs.rs (nightly, `--cfg docsrs`) labels each item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod assets;
mod client;
mod models;
mod position;
pub mod stream;
pub mod worlds;

pub use client::Client;

core_http::reexports!();

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
