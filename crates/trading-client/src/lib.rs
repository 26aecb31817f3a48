//! Blocking Rust client for the trading service (markets, orders, account, history, news, stream), built on `core-http`.
//!
//! This crate holds its place in the workspace; its typed client is not written yet.
//! Until then, nothing here is usable: use `core-http` directly if you need the service.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
