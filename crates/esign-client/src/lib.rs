//! Blocking Rust client for the e-signature service (send, track and download signed documents), built on `core-http`.
//!
//! This crate holds its place in the workspace; its typed client is not written yet.
//! Until then, nothing here is usable: use `core-http` directly if you need the service.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
