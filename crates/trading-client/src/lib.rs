//! A blocking client for the trading service: market data, orders that are never
//! placed twice, the account, twenty years of history, news, and a stream that never
//! loses or repeats a fill.
//!
//! ```no_run
//! use rust_decimal::Decimal;
//! use trading_client::{Amount, Client, Event, OrderRequest, Side};
//!
//! let client = Client::new("https://paper-api.example.com", "pk_...")?; // paper trading
//! let quote = &client.markets().quotes(&["AAPL"])?[0];
//! println!("AAPL at {}", quote.price);
//! let order = client
//!     .orders()
//!     .place(&OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::from(10))))?;
//! println!("order {} is {}", order.id, order.status);
//! let mut stream = client.stream()?;
//! stream.subscribe_orders()?;
//! if let Some(Ok(Event::Fill(fill))) = stream.next() {
//!     println!("filled {} at {}", fill.qty, fill.price);
//! }
//! # Ok::<(), trading_client::Error>(())
//! ```
//!
//! Try it without an account: the workspace's `sandbox` crate runs a paper-trading
//! engine (`cargo run -p trading-client --example trading_quote_ticker -- AAPL`).
//!
//! # Behaviour
//! - **Never twice**: every order carries a `client_order_id` (yours, or a UUID), the
//!   same on every attempt, and the service never places two orders with one id; the
//!   POST is retried after a dropped connection or a 5xx, and an outcome still uncertain
//!   after the retries is settled by looking the order up: you get the order, or
//!   [`Error::NotProcessed`] ("not placed, safe to send again").
//! - **Exact money**: prices, quantities and amounts are [`Decimal`]s, read from the
//!   exact text of the JSON and written as exact decimal numbers (never `f64`, never an
//!   exponent).
//! - **Orders that cannot be wrong**: each order type carries its own prices
//!   ([`OrderType`]), the amount is [`Amount::Qty`] or [`Amount::Notional`], and bracket,
//!   OCO and OTO orders hold exactly their legs.
//! - **Paper by default**: [`Environment::Paper`] unless [`Environment::Live`] is asked
//!   for by name; a stream refused with 401 or 403 says which environment refused it.
//! - **Streams that survive**: pings both ways, a connection silent for 60 s declared
//!   dead, reconnects with backoff and full jitter (a 90 s cool-down after 429 or 406),
//!   subscriptions replayed, fills reconciled through REST after each reconnect and
//!   de-duplicated by execution id, then [`Event::Reconnected`]. Quotes go through a
//!   bounded queue (10,000) that drops the oldest when you fall behind, counted in
//!   [`TradingStream::stats`]; fills, orders and account changes are never dropped.
//! - **History**: [`BarsQuery::iter`] fetches a page at a time as you iterate (memory
//!   does not grow with the range), paced by the client's rate limit, resumable from
//!   [`BarIter::resume_token`].
//! - **Plans**: [`Plan`] sets the client-side limiter (`.rate_limit(Plan::Pro)`, or
//!   `TRADING_PLAN=pro`); streaming is in the Pro plan.
//! - **Secrets**: the API key is never printed, logged or put in a URL.
//!
//! The wire format and every choice made where the service's document is silent are in
//! the workspace's `docs/trading.md`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod account;
mod client;
mod history;
mod markets;
mod money;
mod news;
mod orders;
mod stream;

pub use account::{Account, AccountHandle, AccountStatus, Position};
pub use client::{Client, Environment, Plan};
pub use history::{BarIter, BarPage, BarsQuery, History};
pub use markets::{Bar, Level, MAX_SYMBOLS, Markets, OrderBook, Quote, Timeframe, Trade};
pub use news::{Earnings, News, NewsItem, NewsKind, NewsPage};
pub use orders::{
    Amount, Entry, Execution, Exit, ListOrders, MAX_CLIENT_ORDER_ID, Order, OrderClass, OrderId,
    OrderKind, OrderRequest, OrderStatus, OrderType, Orders, Side, StopLoss, TimeInForce, Trail,
};
/// The decimal type of every price, quantity and amount.
pub use rust_decimal::Decimal;
pub use stream::{Event, Fill, TradingStream};
pub use time::OffsetDateTime;

core_http::reexports!();
/// The stream's settings and counters.
pub use core_http::ws::{ReconnectPolicy, StreamConfig, StreamStats};

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
