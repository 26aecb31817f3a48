//! A blocking client for the trading service: market data, orders that are never
//! placed twice, the account, twenty years of history, news, and a stream that never
//! loses or repeats a fill.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use trading_client::{Client, Decimal, orders::{Amount, OrderRequest, Side}, stream::Event};
//!
//! # let (base_url, api_key) = testkit::doc::trading();
//! let client = Client::new(base_url, api_key)?; // or Client::from_env(); paper by default
//! let quote = client.markets().quote("AAPL")?;
//! println!("AAPL at {}", quote.price);
//!
//! // Subscribe first, then place: a fill that happens before the subscription is not sent.
//! let mut stream = client.stream()?;
//! stream.subscribe_orders()?;
//! let order = client
//!     .orders()
//!     .place(&OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::from(10))))?;
//! println!("order {} is {}", order.id, order.status);
//!
//! // Wait up to 10 s for its fill; other events (quotes, order changes) pass by.
//! let deadline = Instant::now() + Duration::from_secs(10);
//! let mut filled = None;
//! while filled.is_none() {
//!     let left = deadline.saturating_duration_since(Instant::now());
//!     let Some(event) = stream.next_timeout(left) else { break }; // time is up, or the stream ended
//!     if let Event::Fill(fill) = event? {
//!         if fill.order_id == order.id {
//!             filled = Some(fill);
//!         }
//!     }
//! }
//! match &filled {
//!     Some(fill) => println!("filled {} at {}", fill.qty, fill.price),
//!     None => println!("not filled yet: see client.orders().get(&order.id)"),
//! }
//! # assert_eq!(filled.expect("the sandbox fills a market order").symbol, "AAPL");
//! # Ok::<(), trading_client::Error>(())
//! ```
//!
//! Try it without an account: the workspace's `service-clients-sandbox` runs a paper-trading
//! engine (`cargo run -p trading-client --example trading_quote_ticker -- AAPL`).
//!
//! # What it covers
//! | resource | calls |
//! |---|---|
//! | `markets()` | `quote(symbol)`, `quotes(&symbols)`, `bars`, `orderbook`, `trades` |
//! | `orders()` | `place`, `place_checked`, `get`, `get_by_client_order_id`, `list`/`iter`/`iter_from`/`pages` (by status, symbols, side, dates, direction, change), `replace`, `cancel`, `cancel_all` |
//! | `positions()` | `list`, `get`, `close(symbol, Close::All \| Qty \| Percent)`, `close_all` |
//! | `assets()` | `get(symbol)`, `list(status)`; `Asset::check(&order)` |
//! | `account()` | `get`, `portfolio_history(&PortfolioQuery)` |
//! | `activities()` | `list`/`iter`/`iter_from`/`pages` (fills and cash movements, by type and date) |
//! | `clock()` | `get` (open now, next open and close), `calendar(start, end)` |
//! | `history()` | `list`/`iter_from`/`pages(&ListBars::new(symbol, timeframe))`: twenty years, paged lazily |
//! | `news()` | `list`/`iter_from`/`pages(&ListNews::new(&symbols).start(t).end(t))` |
//! | `stream()` | `subscribe_quotes`/`trades`/`bars(&symbols)`, `subscribe_orders`, `subscribe_account` |
//!
//! # Behaviour
//! - **Writes.** Orders are placed once. Each order carries a `client_order_id` (yours, or a
//!   UUID), the same on every retry; when the outcome is uncertain (timeout, reset, 5xx),
//!   the client looks the order up before answering, so you get the order or
//!   `Error::NotProcessed` (no trace of it yet: the first request may still arrive, so
//!   place it again only with the same `client_order_id`, which `Error::repeat_with`
//!   names), all within the client's timeout.
//! - **Retries.** Reads, and order POSTs (deduplicated by `client_order_id`), are retried on
//!   connection failures, 408, 429 (after `Retry-After`) and 5xx, twice by default. A 4xx
//!   refusal is returned as it is.
//! - **Checks.** Orders are built by constructors that take exactly their prices and legs
//!   (`market`, `limit`, `stop`, `stop_limit`, `trailing_stop`, `bracket`, `oco`, `oto`): an
//!   order missing a price does not compile. Checked before sending: positive amounts and
//!   prices, a symbol, a client order id of 1 to 48 characters, extended hours only on a
//!   simple day limit. `orders().place_checked` also checks the order against its asset
//!   (tradable, whole shares, smallest quantity, price on the tick) and sends nothing when
//!   it would be refused.
//! - **Decoding.** Exact money: every price, quantity and amount is a `Decimal`, read from
//!   the exact text of the JSON number or string and written as exact decimal text
//!   (`187.10`, never `187.1000000001` or `1e-7`). A quote without a readable price is an
//!   error, not a zero. Money the answer does not carry is `None` (an account's cash,
//!   buying power and equity, a position's quantity and prices, an order's filled quantity
//!   and price), never a zero; money that is there but not exactly a `Decimal` (a word,
//!   more than 28 decimal places, beyond 7.9e28) is a decode error. An execution without
//!   its quantity or price reaches the stream as an error naming the order, never as a fill
//!   of zero. Ids sent as JSON integers keep their digits (up to 64 bits; a larger one is a decode error).
//! - **Errors.** Errors carry the HTTP status, the server's code and message, and the
//!   request id; a refused stream says which environment (paper or live) refused.
//! - **Limits.** `builder().rate_limit(Plan::Free)` paces calls under 200 a minute;
//!   `with_plan(Plan::Free)` makes `stream()` refuse before connecting (streaming and
//!   history are in Pro).
//! - **History.** `history().iter_from(&ListBars::new(..))` fetches a page at a time as you iterate (one
//!   page in memory), stops fetching when you stop, and can resume from a page token.
//! - **Streams.** Quotes, trades and minute bars per symbol, fills and order changes, account
//!   changes. Pings, dead-connection detection, reconnects with jittered backoff,
//!   subscriptions replayed; after each reconnect, fills missed in the gap are fetched
//!   through REST (every page) and delivered once (`recovered: true`), then
//!   `Event::Reconnected { gap }`; a reconciliation that fails says so
//!   (`Event::RecoveryPending`) until it succeeds. Quotes, trades and bars are dropped,
//!   oldest first and counted, only if you fall 10,000 behind; fills never are.
//! - **Configuration.** Calls and streams go through the proxy in `HTTPS_PROXY`, `HTTP_PROXY` or `ALL_PROXY`
//!   (upper or lower case; `NO_PROXY` hosts directly), by an HTTP `CONNECT` tunnel;
//!   `builder().proxy(url, &bypass)` overrides the environment and `builder().no_proxy()`
//!   turns proxies off; a proxy's credentials (`http://user:pass@host:port`) go only to it
//!   and are never shown. A company's root: `builder().root_certificates_pem(pem)`, or the
//!   system's store with `builder().system_roots()` (feature `system-roots`); a gateway
//!   that asks for a client certificate: `builder().client_certificate_pem(chain, key)`;
//!   calls and streams alike. Feature `tracing`: a span per call, an event per attempt;
//!   `builder().observer(..)` sees every attempt without `tracing`.
//!   Paper by default: `Client::new` and `from_env` trade on paper; live
//!   trading is asked for by name (`Client::live`, `TRADING_ENVIRONMENT=live`).
//!   `Client::from_env()` reads `TRADING_BASE_URL` and `TRADING_API_KEY` (plus
//!   `TRADING_ENVIRONMENT`, `TRADING_STREAM_URL`, `TRADING_PLAN`, `TRADING_MAX_RETRIES`,
//!   `TRADING_TIMEOUT_SECS`, `TRADING_RATE_BUDGET`).
//! - **Secrets.** The API key is never printed (`Debug` shows `***`), put in a URL or an
//!   error, and goes only to the base URL's origin and the stream.
//! - **Logging.** The client logs through the `log` crate (calls and retries at debug,
//!   stream frames at trace), never a key. No log of any crate holds one at any level: below
//!   the HTTP layer a credential is a stand-in, swapped for it only at the socket.
//!
//! The wire format and every choice made where the service's document is silent are in
//! the workspace's `docs/trading.md`.
#![forbid(unsafe_code)]
// docs.rs (nightly, `--cfg docsrs`) labels each item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod account;
pub mod activities;
pub mod assets;
mod client;
pub mod clock;
pub mod history;
pub mod markets;
mod money;
pub mod news;
pub mod orders;
pub mod positions;
pub mod stream;

pub use client::{Client, Environment, Plan};
/// The decimal type of every price, quantity and amount.
pub use rust_decimal::Decimal;

core_http::reexports!();

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
