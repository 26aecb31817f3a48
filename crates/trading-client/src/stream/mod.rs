//! The stream: quotes, fills and order changes, account changes, on core-http's
//! reconnecting WebSocket session. After every reconnect the orders are reconciled
//! through REST (orders changed since the last one seen before the gap), so a fill that
//! happened while the connection was down is still delivered; fills are de-duplicated by
//! execution id, so none is delivered twice; then [`Event::Reconnected`] tells how long
//! the gap was. A reconciliation that fails is tried again with backoff until it
//! succeeds, and the caller is told meanwhile ([`Event::RecoveryPending`]).

mod protocol;
mod recovery;

use std::time::Duration;

use core_http::{Error, Result};
/// The stream's settings and counters, and why it failed.
pub use core_streams::{ReconnectPolicy, StreamConfig, StreamStats, WsError};
use core_streams::{Session, Stream};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::account::Account;
use crate::client::{Client, Environment, Plan};
use crate::markets::{Bar, Quote, Trade, check_symbols};
use crate::orders::{ListOrders, Order, OrderId, Side};
use protocol::{Subscription, TradingProtocol};
use recovery::{Fills, RECONCILE_LIMIT, fills_of};

/// How many execution ids are remembered to drop repeated fills.
const SEEN_FILLS: usize = 100_000;
/// How far before the last change seen a reconciliation looks.
const RECONCILE_MARGIN: time::Duration = time::Duration::minutes(5);
/// How long a subscription may take to be acknowledged.
const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(10);

/// A fill: one execution of one of your orders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Fill {
    /// The execution's id (each fill is delivered once, by this id; required).
    #[serde(deserialize_with = "core_http::de::text")]
    pub execution_id: String,
    /// The order it filled.
    pub order_id: OrderId,
    /// The order's client order id.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub client_order_id: String,
    /// The symbol.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub symbol: String,
    /// Buy or sell.
    #[serde(default)]
    pub side: Side,
    /// Shares filled (required: never a fill of zero in place of one that could not be
    /// read).
    #[serde(deserialize_with = "crate::money::required_decimal")]
    pub qty: Decimal,
    /// The price (required).
    #[serde(deserialize_with = "crate::money::required_decimal")]
    pub price: Decimal,
    /// When.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<OffsetDateTime>,
    /// `true` when it was found by the reconciliation after a reconnect rather than
    /// received on the stream.
    #[serde(default)]
    pub recovered: bool,
}

/// What the stream delivers.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A quote of a subscribed symbol (quotes may be dropped when you fall far behind:
    /// see [`TradingStream::stats`]).
    Quote(Quote),
    /// A trade on the market in a symbol subscribed with
    /// [`subscribe_trades`](TradingStream::subscribe_trades) (on the same lossy lane as
    /// quotes).
    Trade(Trade),
    /// A minute bar of a symbol subscribed with
    /// [`subscribe_bars`](TradingStream::subscribe_bars), once its minute is over (on the
    /// lossy lane).
    Bar(Bar),
    /// A fill of one of your orders. Never dropped, never repeated.
    Fill(Fill),
    /// One of your orders changed.
    Order(Box<Order>),
    /// The account changed.
    Account(Account),
    /// The connection was lost and is back, subscriptions restored and fills
    /// reconciled (or, if the reconciliation failed, [`Event::RecoveryPending`] follows):
    /// events of the gap other than fills (quotes, order and account changes) may be
    /// missing, so re-read what you need.
    Reconnected {
        /// How long the stream was down.
        gap: Duration,
    },
    /// The fills of a gap (a reconnect, or a reader that fell behind) could not be
    /// recovered yet: the reconciliation through REST failed. It is tried again with
    /// backoff (within your `next_timeout`) until it succeeds; the fills it finds then
    /// come as [`Event::Fill`] marked `recovered`, followed by [`Event::Recovered`].
    /// Until then, fills made since `since` may be missing.
    RecoveryPending {
        /// The start of the window not yet recovered: the last order change seen before
        /// the gap, less a margin of 5 minutes (`None`: since the account opened).
        since: Option<OffsetDateTime>,
        /// The attempts that failed so far.
        attempts: u32,
        /// When the next attempt is made.
        retry_in: Duration,
        /// Why the last attempt failed.
        error: String,
    },
    /// A reconciliation that was pending succeeded: every fill since `since` has now
    /// been delivered.
    Recovered {
        /// The start of the window recovered.
        since: Option<OffsetDateTime>,
    },
    /// A message type this version does not know, kept whole.
    Unknown {
        /// Its `type`.
        kind: String,
        /// The message.
        data: serde_json::Value,
    },
}

/// An open stream: [`Client::stream`]. Iterate it (each item waits), or call
/// [`next_timeout`](Self::next_timeout). Dropping it closes it.
///
/// ```no_run
/// use trading_client::stream::Event;
/// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
/// let mut stream = client.stream()?;
/// stream.subscribe_quotes(&["AAPL"])?;
/// stream.subscribe_orders()?;
/// for event in stream.by_ref().take(10) {
///     match event? {
///         Event::Quote(q) => println!("{} {}", q.symbol, q.price),
///         Event::Fill(f) => println!("filled {} {} at {}", f.qty, f.symbol, f.price),
///         Event::Reconnected { gap } => println!("back after {gap:?}"),
///         _ => {}
///     }
/// }
/// # Ok::<(), trading_client::Error>(())
/// ```
pub struct TradingStream {
    session: Session<TradingProtocol, Fills>,
}

impl std::fmt::Debug for TradingStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TradingStream")
            .field("url", &self.session.handler().url)
            .field("stats", &self.session.stats())
            .finish_non_exhaustive()
    }
}

/// Names the environment and URL in an upgrade refusal.
fn explain(e: Error, environment: Environment, url: &str) -> Error {
    match e.downcast_ref::<WsError>() {
        Some(WsError::Unauthorized { status, message }) => Error::from(WsError::Unauthorized {
            status: *status,
            message: format!(
                "{message} (the {environment} environment at {url} refused the stream; \
                 check that the key is a {environment} key on a plan with streaming)"
            ),
        }),
        _ => e,
    }
}

impl TradingStream {
    pub(crate) fn open(
        client: &Client,
        configure: impl FnOnce(core_streams::StreamConfig) -> core_streams::StreamConfig,
    ) -> Result<TradingStream> {
        if client.plan() == Some(Plan::Free) {
            return Err(Error::InvalidRequest(
                "streaming is included in the Pro plan; this client is on the Free plan".into(),
            ));
        }
        let url = client.stream_url();
        let config = configure(core_streams::stream_config(client.http(), &url)?);
        let stream = Stream::connect(config, TradingProtocol::default())
            .map_err(|e| explain(e, client.environment(), &url))?;
        Ok(TradingStream {
            session: Session::new(stream, Fills::new(client.clone(), url)),
        })
    }

    /// Receives quotes of `symbols` (1 to 100 of them). Returns once the server has
    /// acknowledged the subscription.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_quotes(&["AAPL", "MSFT"])?;
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn subscribe_quotes<S: AsRef<str>>(&mut self, symbols: &[S]) -> Result<()> {
        self.subscribe_market("quotes", symbols)
    }

    /// Stops the quotes of `symbols`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_quotes(&["AAPL", "MSFT"])?;
    /// stream.unsubscribe_quotes(&["MSFT"])?; // AAPL only from here on
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn unsubscribe_quotes<S: AsRef<str>>(&mut self, symbols: &[S]) -> Result<()> {
        self.unsubscribe_market("quotes", symbols)
    }

    /// Receives the market's trades in `symbols` ([`Event::Trade`]), on the lossy lane
    /// like quotes. Returns once the server has acknowledged the subscription.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::stream::Event;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_trades(&["AAPL"])?;
    /// if let Some(Ok(Event::Trade(t))) = stream.next() {
    ///     println!("{} traded {:?} at {}", t.symbol, t.size, t.price);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn subscribe_trades<S: AsRef<str>>(&mut self, symbols: &[S]) -> Result<()> {
        self.subscribe_market("trades", symbols)
    }

    /// Stops the trades of `symbols`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_trades(&["AAPL", "MSFT"])?;
    /// stream.unsubscribe_trades(&["MSFT"])?; // AAPL's trades only from here on
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn unsubscribe_trades<S: AsRef<str>>(&mut self, symbols: &[S]) -> Result<()> {
        self.unsubscribe_market("trades", symbols)
    }

    /// Receives a one-minute bar of each of `symbols` as each minute ends
    /// ([`Event::Bar`]), on the lossy lane like quotes. Returns once the server has
    /// acknowledged the subscription.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::stream::Event;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_bars(&["AAPL"])?;
    /// if let Some(Ok(Event::Bar(bar))) = stream.next() {
    ///     println!("{:?} {} o {} c {}", bar.symbol, bar.t, bar.o, bar.c);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn subscribe_bars<S: AsRef<str>>(&mut self, symbols: &[S]) -> Result<()> {
        self.subscribe_market("bars", symbols)
    }

    /// Stops the bars of `symbols`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_bars(&["AAPL", "MSFT"])?;
    /// stream.unsubscribe_bars(&["AAPL"])?; // MSFT's bars only from here on
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn unsubscribe_bars<S: AsRef<str>>(&mut self, symbols: &[S]) -> Result<()> {
        self.unsubscribe_market("bars", symbols)
    }

    fn subscribe_market<S: AsRef<str>>(
        &mut self,
        channel: &'static str,
        symbols: &[S],
    ) -> Result<()> {
        let symbols = check_symbols(symbols)?;
        self.session.stream().subscribe_confirmed(
            Subscription {
                channels: vec![channel],
                symbols: symbols.split(',').map(str::to_owned).collect(),
            },
            SUBSCRIBE_TIMEOUT,
        )
    }

    fn unsubscribe_market<S: AsRef<str>>(
        &mut self,
        channel: &'static str,
        symbols: &[S],
    ) -> Result<()> {
        let symbols = check_symbols(symbols)?;
        self.session.stream().unsubscribe(Subscription {
            channels: vec![channel],
            symbols: symbols.split(',').map(str::to_owned).collect(),
        });
        Ok(())
    }

    /// Receives fills and order changes. Returns once the server has acknowledged the
    /// subscription; from then on no fill is missed. The fills your orders already had
    /// are recorded first (one REST call) so that only new ones are delivered, and the
    /// orders are reconciled once more after the acknowledgement, so a fill between the
    /// two is delivered too.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_orders()?; // from here on, no fill is missed
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn subscribe_orders(&mut self) -> Result<()> {
        let (stream, fills, out) = self.session.parts();
        let first = !fills.orders;
        if first {
            let existing = fills
                .client
                .orders()
                .list(&ListOrders::new().all().limit(RECONCILE_LIMIT))?;
            for order in &existing.data {
                fills.note_order(order);
                for fill in fills_of(order).into_iter().flatten() {
                    fills.remember(&fill.execution_id);
                }
            }
            fills.orders = true;
        }
        stream.subscribe_confirmed(
            Subscription {
                channels: vec!["orders"],
                symbols: Vec::new(),
            },
            SUBSCRIBE_TIMEOUT,
        )?;
        if first {
            // A fill between the list and the acknowledgement: found now, with the
            // client's own timeout (this call is a REST call).
            fills.start_recovery(None);
            fills.recover(None, out);
        }
        Ok(())
    }

    /// Receives account changes. Returns once the server has acknowledged the
    /// subscription.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_account()?;
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn subscribe_account(&mut self) -> Result<()> {
        self.session.stream().subscribe_confirmed(
            Subscription {
                channels: vec!["account"],
                symbols: Vec::new(),
            },
            SUBSCRIBE_TIMEOUT,
        )
    }

    /// The next event, waiting at most `timeout`; `None` when none came in time or the
    /// stream has ended ([`is_closed`](Self::is_closed)). The reconciliation after a
    /// reconnect runs inside this call and keeps to `timeout` too: a REST call made for
    /// it gets no more than the time left, and one that fails is tried again later.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use std::time::Duration;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_orders()?;
    /// while let Some(event) = stream.next_timeout(Duration::from_secs(30)) {
    ///     println!("{:?}", event?);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn next_timeout(&mut self, timeout: Duration) -> Option<Result<Event>> {
        self.session.next_timeout(timeout)
    }

    /// Waits until the order is filled, on this stream's events when it is subscribed
    /// to orders ([`subscribe_orders`](Self::subscribe_orders)), else by reading the
    /// order again and again as
    /// [`Orders::wait_until_filled`](crate::orders::Orders::wait_until_filled) does.
    ///
    /// On the stream: the order is read once first (one REST call: it may have filled
    /// before this call), then each order change of the stream is judged, and after a
    /// reconnect (whose gap may hide the change) the order is read again. **Nothing is
    /// taken from you:** every event that came meanwhile (the fills and the order's own
    /// changes too) is still yours, returned by the next reads in order. Ends as the
    /// polling wait does: the filled order; `WaitError::Ended` for an order canceled,
    /// expired, rejected or replaced; `WaitError::TimedOut` after `timeout`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use std::time::Duration;
    /// use trading_client::Decimal;
    /// use trading_client::orders::{Amount, OrderRequest, Side};
    /// let mut stream = client.stream()?;
    /// stream.subscribe_orders()?;
    /// let order = client
    ///     .orders()
    ///     .place(&OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::from(1))))?;
    /// let filled = stream.wait_until_filled(&order.id, Duration::from_secs(30))?;
    /// for event in stream.by_ref().take(3) {
    ///     println!("{:?}", event?); // the fill is still here
    /// }
    /// # let _ = filled;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wait_until_filled(
        &mut self,
        id: impl Into<OrderId>,
        timeout: Duration,
    ) -> std::result::Result<Order, core_http::wait::WaitError<Order>> {
        use core_http::wait::{Check, WaitError};
        let id = id.into();
        let client = self.session.handler().client.clone();
        if !self.session.handler().orders {
            return client.orders().wait_until_filled(id, timeout);
        }
        let started = std::time::Instant::now();
        let read = |left: Duration| {
            let options =
                core_http::config::RequestOptions::new().timeout(client.http().timeout().min(left));
            client.with_options(&options).orders().get(&id)
        };
        let first = read(timeout).map_err(WaitError::Call)?;
        let seen = crate::orders::fill_seen(&first);
        match seen.check {
            Check::Reached => return Ok(first),
            Check::Ended => {
                return Err(WaitError::Ended {
                    what: format!("order {id} to be filled"),
                    state: seen.state,
                    last: Box::new(first),
                });
            }
            _ => {}
        }
        let deadline = started.checked_add(timeout);
        let read_again = || {
            let left = deadline.map_or(timeout, |d| {
                d.saturating_duration_since(std::time::Instant::now())
            });
            // A failed reading is no verdict: the stream's own events go on.
            let order = read(left).ok()?;
            Some((crate::orders::fill_seen(&order), order))
        };
        self.session.wait_for(
            format!("order {id} to be filled"),
            timeout.saturating_sub(started.elapsed()),
            Some((first, seen.state)),
            |item| match item {
                Ok(Event::Order(order)) if order.id == id => {
                    Some((crate::orders::fill_seen(order), (**order).clone()))
                }
                // Events may have been missed: the order as it is now.
                Ok(Event::Reconnected { .. } | Event::Recovered { .. }) => read_again(),
                // An event that could not be read, about this order: read it instead.
                // One about another order does not concern this wait.
                Err(e) if e.to_string().contains(id.as_str()) => read_again(),
                _ => None,
            },
            |event| matches!(event, Event::Quote(_) | Event::Trade(_) | Event::Bar(_)),
        )
    }

    /// `true` once the stream has ended and every event has been read.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use std::time::Duration;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_account()?;
    /// while !stream.is_closed() {
    ///     if let Some(event) = stream.next_timeout(Duration::from_secs(1)) {
    ///         println!("{:?}", event?);
    ///     }
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn is_closed(&self) -> bool {
        self.session.is_closed()
    }

    /// The stream's counters: reconnects, quotes dropped because the caller fell behind,
    /// events received, age of the last message.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let stream = client.stream()?;
    /// let stats = stream.stats();
    /// println!("{} reconnects, {} quotes dropped", stats.reconnects, stats.dropped);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn stats(&self) -> StreamStats {
        self.session.stats()
    }

    /// Closes the stream: a close handshake, and within 5 s in every case.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_quotes(&["AAPL"])?;
    /// stream.close();
    /// assert!(stream.next().is_none() || stream.is_closed());
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn close(&mut self) {
        self.session.close();
    }
}

impl Iterator for TradingStream {
    type Item = Result<Event>;

    /// Waits for the next event; `None` once the stream has ended.
    fn next(&mut self) -> Option<Self::Item> {
        self.session.next()
    }
}

/// Reached from the client.
impl Client {
    /// Opens the stream (quotes, fills and orders, account changes): connected before
    /// this returns, then kept connected. Streaming is included in the Pro plan: a
    /// client told it is on Free refuses here, and a server that refuses says which
    /// environment refused.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::stream::Event;
    /// let mut stream = client.stream()?;
    /// stream.subscribe_orders()?;
    /// for event in stream.by_ref() {
    ///     if let Event::Fill(fill) = event? {
    ///         println!("filled {} of {}", fill.qty, fill.symbol);
    ///     }
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn stream(&self) -> Result<TradingStream> {
        TradingStream::open(self, |config| config)
    }

    /// As [`stream`](Self::stream), with the stream's settings adjusted first (its
    /// reconnect policy, ping and silence timers, quote queue, staleness timers).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let stream = client.stream_with(|config| {
    ///     config
    ///         .lossy_capacity(1_000)
    ///         .stale_after("quotes", Duration::from_secs(30))
    /// })?;
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn stream_with(
        &self,
        configure: impl FnOnce(StreamConfig) -> StreamConfig,
    ) -> Result<TradingStream> {
        TradingStream::open(self, configure)
    }
}
