//! The stream: quotes, fills and order changes, account changes, on core-http's
//! reconnecting WebSocket session. After every reconnect the orders are reconciled
//! through REST (orders changed since the last one seen before the gap), so a fill that
//! happened while the connection was down is still delivered; fills are de-duplicated by
//! execution id, so none is delivered twice; then [`Event::Reconnected`] tells how long
//! the gap was. A reconciliation that fails is tried again with backoff until it
//! succeeds, and the caller is told meanwhile ([`Event::RecoveryPending`]).

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::time::{Duration, Instant};

use core_http::ws::{
    Handler, Inbound, Protocol, Session, Stream, StreamItem, StreamStats, WsError,
};
use core_http::{Backoff, Error, RequestOptions, Result};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use time::OffsetDateTime;

use crate::account::Account;
use crate::client::{Client, Environment, Plan};
use crate::markets::{Quote, check_symbols};
use crate::orders::{ListOrders, Order, OrderId, Side};

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

/// What to subscribe to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subscription {
    channels: Vec<&'static str>,
    symbols: Vec<String>,
}

/// The stream's wire protocol.
#[derive(Debug, Default)]
pub(crate) struct TradingProtocol {
    channels: BTreeSet<&'static str>,
    symbols: BTreeSet<String>,
}

fn message(action: &str, channels: &[&str], symbols: &[String]) -> String {
    serde_json::json!({"action": action, "channels": channels, "symbols": symbols}).to_string()
}

#[derive(Deserialize)]
struct Head {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct OrderMessage {
    #[serde(default)]
    order: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct AccountMessage {
    #[serde(default)]
    account: Option<Box<RawValue>>,
}

impl TradingProtocol {
    fn one(&self, raw: &str) -> Option<Inbound<Event>> {
        // The common case first: a quote written type-first (as the service writes
        // them) is read in one pass. Anything else takes the general path below.
        if raw.starts_with(r#"{"type":"quote","#)
            && let Ok(q) = serde_json::from_str::<Quote>(raw)
        {
            return Some(Inbound::lossy(Event::Quote(q)).on_channel("quotes"));
        }
        let head: Head = serde_json::from_str(raw).ok()?;
        let kind = head.kind.unwrap_or_default();
        let unknown = || Event::Unknown {
            kind: kind.clone(),
            data: serde_json::from_str(raw).unwrap_or_default(),
        };
        Some(match kind.as_str() {
            "subscribed" => Inbound::Ack,
            "unsubscribed" => return None,
            "error" => Inbound::Refused(
                head.message
                    .unwrap_or_else(|| "the server reported an error".into()),
            ),
            "quote" => match serde_json::from_str::<Quote>(raw) {
                Ok(q) => Inbound::lossy(Event::Quote(q)).on_channel("quotes"),
                Err(_) => Inbound::lossless(unknown()),
            },
            "fill" => match serde_json::from_str::<Fill>(raw) {
                Ok(f) => Inbound::lossless(Event::Fill(f)).on_channel("orders"),
                Err(e) => Inbound::Invalid(unreadable_fill(raw, &e)),
            },
            "order" => {
                let body = serde_json::from_str::<OrderMessage>(raw)
                    .ok()
                    .and_then(|m| m.order)
                    .map(|o| o.get().to_owned())
                    .unwrap_or_else(|| raw.to_owned());
                match serde_json::from_str::<Order>(&body) {
                    Ok(o) => Inbound::lossless(Event::Order(Box::new(o))).on_channel("orders"),
                    Err(_) => Inbound::lossless(unknown()),
                }
            }
            "account" => {
                let body = serde_json::from_str::<AccountMessage>(raw)
                    .ok()
                    .and_then(|m| m.account)
                    .map(|a| a.get().to_owned())
                    .unwrap_or_else(|| raw.to_owned());
                match serde_json::from_str::<Account>(&body) {
                    Ok(a) => Inbound::lossless(Event::Account(a)).on_channel("account"),
                    Err(_) => Inbound::lossless(unknown()),
                }
            }
            // A type this version does not know: kept, but on the lossy lane, so that a
            // flood of them cannot grow the client without bound.
            _ => Inbound::lossy(unknown()),
        })
    }
}

/// What a fill that could not be read becomes: an error naming its order and execution,
/// never a fill of zero.
fn unreadable_fill(raw: &str, error: &serde_json::Error) -> String {
    #[derive(Deserialize)]
    struct Ids {
        #[serde(default, deserialize_with = "core_http::de::opt_text")]
        order_id: Option<String>,
        #[serde(default, deserialize_with = "core_http::de::opt_text")]
        execution_id: Option<String>,
    }
    let ids = serde_json::from_str::<Ids>(raw).ok();
    let order = ids
        .as_ref()
        .and_then(|i| i.order_id.as_deref())
        .unwrap_or("?");
    let execution = ids
        .as_ref()
        .and_then(|i| i.execution_id.as_deref())
        .unwrap_or("?");
    format!(
        "a fill of order {order} (execution {execution}) could not be read ({error}); \
         read the order with orders().get(\"{order}\")"
    )
}

impl Protocol for TradingProtocol {
    type Event = Event;
    type Subscription = Subscription;

    fn subscribe(&mut self, s: &Subscription) -> Vec<String> {
        self.channels.extend(s.channels.iter().copied());
        self.symbols.extend(s.symbols.iter().cloned());
        vec![message("subscribe", &s.channels, &s.symbols)]
    }

    fn unsubscribe(&mut self, s: &Subscription) -> Vec<String> {
        for c in &s.channels {
            self.channels.remove(c);
        }
        for symbol in &s.symbols {
            self.symbols.remove(symbol);
        }
        vec![message("unsubscribe", &s.channels, &s.symbols)]
    }

    fn replay(&self) -> Vec<String> {
        if self.channels.is_empty() {
            return Vec::new();
        }
        let channels: Vec<&str> = self.channels.iter().copied().collect();
        let symbols: Vec<String> = self.symbols.iter().cloned().collect();
        vec![message("subscribe", &channels, &symbols)]
    }

    fn decode(&mut self, frame: &str, out: &mut Vec<Inbound<Event>>) {
        // One object or an array of them per frame.
        let trimmed = frame.trim_start();
        if trimmed.starts_with('[') {
            let items: Vec<&RawValue> = serde_json::from_str(trimmed).unwrap_or_default();
            out.extend(items.iter().filter_map(|raw| self.one(raw.get())));
        } else {
            out.extend(self.one(trimmed));
        }
    }
}

/// An open stream: [`Client::stream`]. Iterate it (each item waits), or call
/// [`next_timeout`](Self::next_timeout). Dropping it closes it.
///
/// ```no_run
/// use trading_client::Event;
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
    match e {
        Error::WebSocket(WsError::Unauthorized { status, message }) => {
            Error::WebSocket(WsError::Unauthorized {
                status,
                message: format!(
                    "{message} (the {environment} environment at {url} refused the stream; \
                     check that the key is a {environment} key on a plan with streaming)"
                ),
            })
        }
        other => other,
    }
}

impl TradingStream {
    pub(crate) fn open(
        client: &Client,
        configure: impl FnOnce(core_http::ws::StreamConfig) -> core_http::ws::StreamConfig,
    ) -> Result<TradingStream> {
        if client.plan() == Some(Plan::Free) {
            return Err(Error::InvalidRequest(
                "streaming is included in the Pro plan; this client is on the Free plan".into(),
            ));
        }
        let url = client.stream_url();
        let config = configure(client.http().stream_config(&url)?);
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
        let symbols = check_symbols(symbols)?;
        self.session.stream().subscribe_confirmed(
            Subscription {
                channels: vec!["quotes"],
                symbols: symbols.split(',').map(str::to_owned).collect(),
            },
            SUBSCRIBE_TIMEOUT,
        )
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
        let symbols = check_symbols(symbols)?;
        self.session.stream().unsubscribe(Subscription {
            channels: Vec::new(),
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
            for order in &existing {
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

/// How many orders one reconciliation reads.
const RECONCILE_LIMIT: u32 = 500;

/// A reconciliation to do: after a reconnect (or a reader that fell behind), until it
/// succeeds.
#[derive(Debug)]
struct Recovery {
    /// The start of the window: orders changed since then are read.
    since: Option<OffsetDateTime>,
    /// The `Reconnected` still to give, after the first attempt.
    announce: Option<Duration>,
    attempts: u32,
    due: Instant,
    /// A `RecoveryPending` was given: a `Recovered` closes it.
    told: bool,
}

/// The stream's handler: fills de-duplicated by execution id, and the reconciliation
/// after a reconnect.
pub(crate) struct Fills {
    client: Client,
    url: String,
    seen: HashSet<String>,
    seen_order: VecDeque<String>,
    latest: Option<OffsetDateTime>,
    orders: bool,
    recovery: Option<Recovery>,
    backoff: Backoff,
}

impl Fills {
    fn new(client: Client, url: String) -> Self {
        Fills {
            client,
            url,
            seen: HashSet::new(),
            seen_order: VecDeque::new(),
            latest: None,
            orders: false,
            recovery: None,
            backoff: Backoff::reconnect(),
        }
    }

    /// Starts (or restarts, keeping the earliest window) a reconciliation.
    fn start_recovery(&mut self, announce: Option<Duration>) {
        let since = self.latest.map(|l| l - RECONCILE_MARGIN);
        match &mut self.recovery {
            Some(r) => {
                r.due = Instant::now();
                r.announce = r.announce.or(announce);
            }
            None => {
                self.recovery = Some(Recovery {
                    since,
                    announce,
                    attempts: 0,
                    due: Instant::now(),
                    told: false,
                });
            }
        }
    }

    /// One reconciliation attempt, within `deadline`: fills that happened while
    /// disconnected, found through REST, queued in time order.
    fn recover(&mut self, deadline: Option<Instant>, out: &mut VecDeque<Result<Event>>) {
        let Some(mut recovery) = self.recovery.take() else {
            return;
        };
        let mut params = ListOrders::new().all().limit(RECONCILE_LIMIT);
        if let Some(since) = recovery.since {
            params = params.updated_since(since);
        }
        let client = match deadline {
            None => self.client.clone(),
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                self.client.with_options(
                    &RequestOptions::new().timeout(left.min(self.client.http().timeout())),
                )
            }
        };
        let listed = client.orders().list(&params);
        let announce = recovery
            .announce
            .take()
            .map(|gap| Ok(Event::Reconnected { gap }));
        match listed {
            Ok(orders) if orders.len() >= RECONCILE_LIMIT as usize => {
                // More changed than one answer holds: what it holds is delivered, and the
                // caller is told the window may hold more (trying again would bring the
                // same answer).
                self.deliver(&orders, out);
                out.extend(announce);
                out.push_back(Ok(Event::RecoveryPending {
                    since: recovery.since,
                    attempts: recovery.attempts + 1,
                    retry_in: Duration::ZERO,
                    error: format!(
                        "{RECONCILE_LIMIT} or more orders changed during the gap; read them \
                         with orders().list(&ListOrders::new().all().updated_since(..))"
                    ),
                }));
            }
            Ok(orders) => {
                self.deliver(&orders, out);
                out.extend(announce);
                if recovery.told {
                    out.push_back(Ok(Event::Recovered {
                        since: recovery.since,
                    }));
                }
            }
            Err(e) => {
                recovery.attempts += 1;
                let retry_in = self.backoff.random_delay(recovery.attempts - 1);
                recovery.due = Instant::now() + retry_in;
                recovery.told = true;
                out.extend(announce);
                out.push_back(Ok(Event::RecoveryPending {
                    since: recovery.since,
                    attempts: recovery.attempts,
                    retry_in,
                    error: e.to_string(),
                }));
                self.recovery = Some(recovery);
            }
        }
    }

    /// Queues the fills of `orders` not delivered yet, marked recovered, in time order.
    fn deliver(&mut self, orders: &[Order], out: &mut VecDeque<Result<Event>>) {
        let mut missed: Vec<Fill> = Vec::new();
        for order in orders {
            self.note_order(order);
            for fill in fills_of(order) {
                match fill {
                    Ok(mut fill) => {
                        if self.remember(&fill.execution_id) {
                            fill.recovered = true;
                            missed.push(fill);
                        }
                    }
                    Err(e) => out.push_back(Err(e)),
                }
            }
        }
        missed.sort_by_key(|f| f.timestamp);
        for fill in missed {
            if let Some(t) = fill.timestamp {
                self.latest = Some(self.latest.map_or(t, |l| l.max(t)));
            }
            out.push_back(Ok(Event::Fill(fill)));
        }
    }

    fn note_order(&mut self, order: &Order) {
        if let Some(t) = order.updated_at {
            self.latest = Some(self.latest.map_or(t, |l| l.max(t)));
        }
    }

    /// Records an execution id; `false` when it was already seen.
    fn remember(&mut self, execution_id: &str) -> bool {
        if execution_id.is_empty() {
            return true;
        }
        if !self.seen.insert(execution_id.to_owned()) {
            return false;
        }
        self.seen_order.push_back(execution_id.to_owned());
        if self.seen_order.len() > SEEN_FILLS
            && let Some(old) = self.seen_order.pop_front()
        {
            self.seen.remove(&old);
        }
        true
    }
}

impl Handler<TradingProtocol> for Fills {
    type Event = Event;

    fn item(
        &mut self,
        item: Result<StreamItem<Event>>,
        _stream: &Stream<TradingProtocol>,
        out: &mut VecDeque<Result<Event>>,
    ) {
        match item {
            Ok(StreamItem::Event(Event::Fill(fill))) => {
                if !self.remember(&fill.execution_id) {
                    return;
                }
                if let Some(t) = fill.timestamp {
                    self.latest = Some(self.latest.map_or(t, |l| l.max(t)));
                }
                out.push_back(Ok(Event::Fill(fill)));
            }
            Ok(StreamItem::Event(Event::Order(order))) => {
                self.note_order(&order);
                out.push_back(Ok(Event::Order(order)));
            }
            Ok(StreamItem::Event(event)) => out.push_back(Ok(event)),
            Ok(StreamItem::Reconnected { gap, .. }) => {
                if self.orders {
                    // Reconciled at once, within the caller's time (see `run_due`).
                    self.start_recovery(Some(gap));
                } else {
                    out.push_back(Ok(Event::Reconnected { gap }));
                }
            }
            Ok(_) => {}
            Err(e) => out.push_back(Err(explain(e, self.client.environment(), &self.url))),
        }
    }

    fn due(&self) -> Option<Instant> {
        self.recovery.as_ref().map(|r| r.due)
    }

    fn run_due(
        &mut self,
        deadline: Option<Instant>,
        _stream: &Stream<TradingProtocol>,
        out: &mut VecDeque<Result<Event>>,
    ) {
        if deadline.is_some_and(|d| d <= Instant::now()) {
            return;
        }
        self.recover(deadline, out);
    }
}

/// The fills of an order and its legs, as stream events: an execution whose quantity
/// or price the answer does not carry is an error naming the order, never a fill of zero.
fn fills_of(order: &Order) -> Vec<Result<Fill>> {
    let mut out: Vec<Result<Fill>> = order
        .fills
        .iter()
        .map(|e| match (e.qty, e.price) {
            (Some(qty), Some(price)) => Ok(Fill {
                execution_id: e.execution_id.clone(),
                order_id: order.id.clone(),
                client_order_id: order.client_order_id.clone(),
                symbol: order.symbol.clone(),
                side: order.side.clone(),
                qty,
                price,
                timestamp: e.timestamp,
                recovered: false,
            }),
            _ => Err(Error::UnexpectedBody {
                status: 200,
                message: format!(
                    "order {} reports an execution {:?} without a readable quantity or \
                     price; read the order with orders().get",
                    order.id, e.execution_id
                ),
            }),
        })
        .collect();
    for leg in &order.legs {
        out.extend(fills_of(leg));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    impl TradingProtocol {
        /// What one frame decodes to.
        fn decoded(&mut self, frame: &str) -> Vec<Inbound<Event>> {
            let mut out = Vec::new();
            self.decode(frame, &mut out);
            out
        }
    }

    #[test]
    fn frames_of_one_object_or_many_decode_exactly() {
        let mut p = TradingProtocol::default();
        let frame = r#"[{"type":"quote","symbol":"AAPL","price":187.23,"bid":"187.22"},{"type":"fill","execution_id":"ex1","order_id":"o1","qty":0.5,"price":187.25},{"type":"halt","symbol":"AAPL"}]"#;
        let decoded = p.decoded(frame);
        assert_eq!(decoded.len(), 3);
        match &decoded[0] {
            Inbound::Event {
                event: Event::Quote(q),
                ..
            } => {
                assert_eq!(q.price.to_string(), "187.23");
                assert_eq!(q.bid.unwrap().to_string(), "187.22");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&decoded[1], Inbound::Event { event: Event::Fill(f), .. } if f.qty.to_string() == "0.5")
        );
        assert!(
            matches!(&decoded[2], Inbound::Event { event: Event::Unknown { kind, .. }, .. } if kind == "halt")
        );
        assert!(matches!(
            p.decoded(r#"{"type":"subscribed"}"#)[..],
            [Inbound::Ack]
        ));
        assert!(p.decoded(r#"{"type":"unsubscribed"}"#).is_empty());
        assert!(p.decoded("not json").is_empty());
    }

    #[test]
    fn subscriptions_are_replayed_together() {
        let mut p = TradingProtocol::default();
        assert!(p.replay().is_empty());
        p.subscribe(&Subscription {
            channels: vec!["quotes"],
            symbols: vec!["AAPL".into()],
        });
        p.subscribe(&Subscription {
            channels: vec!["orders"],
            symbols: vec![],
        });
        assert_eq!(
            p.replay(),
            [r#"{"action":"subscribe","channels":["orders","quotes"],"symbols":["AAPL"]}"#]
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        #[test]
        fn no_frame_panics_the_decoder(frame in "\\PC{0,200}") {
            let _ = TradingProtocol::default().decoded(&frame);
        }

        #[test]
        fn no_json_frame_panics_the_decoder(
            kind in proptest::sample::select(vec!["quote", "fill", "order", "account", "error", "subscribed", "x"]),
            body in testkit::arb::json(),
            batch in proptest::bool::ANY,
        ) {
            let mut message = match body {
                serde_json::Value::Object(m) => m,
                other => [("order".to_owned(), other)].into_iter().collect(),
            };
            message.insert("type".into(), kind.into());
            let text = serde_json::Value::Object(message).to_string();
            let frame = if batch { format!("[{text},{text}]") } else { text };
            let decoded = TradingProtocol::default().decoded(&frame);
            proptest::prop_assert!(decoded.len() <= 2);
        }
    }
}
