//! The stream's handler: fills de-duplicated by execution id, and the reconciliation
//! through REST after a reconnect, within the caller's time, retried until it succeeds.

use std::collections::hash_map::RandomState;
use std::collections::{HashSet, VecDeque};
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use core_http::{
    Error, Result,
    config::{Backoff, RequestOptions},
};
use core_streams::{Handler, Stream, StreamItem};
use time::OffsetDateTime;

use super::protocol::TradingProtocol;
use super::{Event, Fill, RECONCILE_MARGIN, SEEN_FILLS, explain};
use crate::client::Client;
use crate::orders::{ListOrders, Order};

/// How many orders one reconciliation reads.
/// How many pages one reconciliation reads at most (50,000 orders).
const RECONCILE_PAGES: u32 = 100;

pub(super) const RECONCILE_LIMIT: u32 = 500;

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
    /// The next page to read (the pages before it are delivered).
    page_token: Option<String>,
    /// The pages read so far.
    pages: u32,
}

/// The stream's handler: fills de-duplicated by execution id, and the reconciliation
/// after a reconnect.
pub(crate) struct Fills {
    pub(super) client: Client,
    pub(super) url: String,
    seen: SeenFills,
    latest: Option<OffsetDateTime>,
    pub(super) orders: bool,
    recovery: Option<Recovery>,
    backoff: Backoff,
}

impl Fills {
    pub(super) fn new(client: Client, url: String) -> Self {
        Fills {
            client,
            url,
            seen: SeenFills::new(),
            latest: None,
            orders: false,
            recovery: None,
            backoff: Backoff::reconnect(),
        }
    }

    /// Starts (or restarts, keeping the earliest window) a reconciliation.
    pub(super) fn start_recovery(&mut self, announce: Option<Duration>) {
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
                    page_token: None,
                    pages: 0,
                });
            }
        }
    }

    /// One reconciliation attempt, within `deadline`: fills that happened while
    /// disconnected, found through REST, queued in time order.
    pub(super) fn recover(&mut self, deadline: Option<Instant>, out: &mut VecDeque<Result<Event>>) {
        let Some(mut recovery) = self.recovery.take() else {
            return;
        };
        let mut params = ListOrders::new().all().limit(RECONCILE_LIMIT);
        if let Some(since) = recovery.since {
            params = params.updated_since(since);
        }
        // Every page of the window, each within the time left; the pages read are
        // delivered at once and not read again after a failure.
        let failed = loop {
            let client = match deadline {
                None => self.client.clone(),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        // Out of the caller's time between pages: go on at the next call.
                        recovery.due = Instant::now();
                        self.recovery = Some(recovery);
                        return;
                    }
                    self.client.with_options(
                        &RequestOptions::new().timeout(left.min(self.client.http().timeout())),
                    )
                }
            };
            params.page_token = recovery.page_token.clone();
            match client.orders().list(&params) {
                Ok(page) => {
                    self.deliver(&page.data, out);
                    recovery.pages += 1;
                    match page.next_page_token {
                        None => break None,
                        Some(_) if recovery.pages >= RECONCILE_PAGES => {
                            break Some((
                                format!(
                                    "more than {} orders changed during the gap; read the \
                                     rest with orders().iter_from(&ListOrders::new().all()\
                                     .updated_since(..))",
                                    RECONCILE_PAGES * RECONCILE_LIMIT
                                ),
                                false,
                            ));
                        }
                        token => recovery.page_token = token,
                    }
                }
                Err(e) => break Some((e.to_string(), true)),
            }
        };
        let announce = recovery
            .announce
            .take()
            .map(|gap| Ok(Event::Reconnected { gap }));
        out.extend(announce);
        match failed {
            None => {
                if recovery.told {
                    out.push_back(Ok(Event::Recovered {
                        since: recovery.since,
                    }));
                }
            }
            // Beyond the page cap: trying again would not help; the caller is told.
            Some((error, false)) => out.push_back(Ok(Event::RecoveryPending {
                since: recovery.since,
                attempts: recovery.attempts + 1,
                retry_in: Duration::ZERO,
                error,
            })),
            Some((error, true)) => {
                recovery.attempts += 1;
                let retry_in = self.backoff.random_delay(recovery.attempts - 1);
                recovery.due = Instant::now() + retry_in;
                recovery.told = true;
                out.push_back(Ok(Event::RecoveryPending {
                    since: recovery.since,
                    attempts: recovery.attempts,
                    retry_in,
                    error,
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

    pub(super) fn note_order(&mut self, order: &Order) {
        if let Some(t) = order.updated_at {
            self.latest = Some(self.latest.map_or(t, |l| l.max(t)));
        }
    }

    /// Records an execution id; `false` when it was already seen.
    pub(super) fn remember(&mut self, execution_id: &str) -> bool {
        if execution_id.is_empty() {
            return true;
        }
        self.seen.insert(execution_id)
    }
}

impl Fills {
    /// An item other than market data: a fill (de-duplicated), an order change, a
    /// reconnect (which starts the reconciliation), an error.
    fn other_item(&mut self, item: Result<StreamItem<Event>>) -> Option<Result<Event>> {
        match item {
            Ok(StreamItem::Event(Event::Fill(fill))) => {
                if !self.remember(&fill.execution_id) {
                    return None;
                }
                if let Some(t) = fill.timestamp {
                    self.latest = Some(self.latest.map_or(t, |l| l.max(t)));
                }
                Some(Ok(Event::Fill(fill)))
            }
            Ok(StreamItem::Event(Event::Order(order))) => {
                self.note_order(&order);
                Some(Ok(Event::Order(order)))
            }
            Ok(StreamItem::Event(event)) => Some(Ok(event)),
            Ok(StreamItem::Reconnected { gap, .. }) => {
                if self.orders {
                    // Reconciled at once, within the caller's time (see `run_due`).
                    self.start_recovery(Some(gap));
                    None
                } else {
                    Some(Ok(Event::Reconnected { gap }))
                }
            }
            Ok(_) => None,
            Err(e) => Some(Err(explain(e, self.client.environment(), &self.url))),
        }
    }
}

impl Handler<TradingProtocol> for Fills {
    type Event = Event;

    fn item(
        &mut self,
        item: Result<StreamItem<Event>>,
        _stream: &Stream<TradingProtocol>,
        _out: &mut VecDeque<Result<Event>>,
    ) -> Option<Result<Event>> {
        match item {
            // Market data passes through as it is (the common case).
            Ok(StreamItem::Event(
                event @ (Event::Quote(_) | Event::Trade(_) | Event::Bar(_) | Event::Account(_)),
            )) => Some(Ok(event)),
            other => self.other_item(other),
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
pub(super) fn fills_of(order: &Order) -> Vec<Result<Fill>> {
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

/// How many execution ids there is room for at first (about half a MiB: a table of
/// 16,384 slots filled to seven eighths); the room doubles as ids come, up to
/// [`SEEN_FILLS`] (about 4.3 MiB).
const SEEN_AT_FIRST: usize = 14_336;

/// The execution ids seen, the last [`SEEN_FILLS`] of them, each kept as a 128-bit digest
/// (two SipHash values under keys drawn at random for this stream): 32 bytes an id and
/// no allocation for each, where the ids themselves took about 150. Two different ids
/// share a digest with a chance of about 10^-29 among 100,000, and a server cannot aim
/// for it without the keys.
struct SeenFills {
    keys: (RandomState, RandomState),
    set: HashSet<u128>,
    order: VecDeque<u128>,
}

impl SeenFills {
    fn new() -> Self {
        SeenFills {
            keys: (RandomState::new(), RandomState::new()),
            set: HashSet::with_capacity(SEEN_AT_FIRST),
            order: VecDeque::with_capacity(SEEN_AT_FIRST),
        }
    }

    /// Records `id`; `false` when it was already seen.
    fn insert(&mut self, id: &str) -> bool {
        let digest =
            (u128::from(self.keys.0.hash_one(id)) << 64) | u128::from(self.keys.1.hash_one(id));
        if !self.set.insert(digest) {
            return false;
        }
        self.order.push_back(digest);
        if self.order.len() > SEEN_FILLS
            && let Some(old) = self.order.pop_front()
        {
            self.set.remove(&old);
        }
        true
    }
}

#[cfg(test)]
mod seen_tests {
    use super::*;

    #[test]
    fn an_id_is_seen_once_and_the_oldest_is_forgotten_past_the_limit() {
        let mut seen = SeenFills::new();
        assert!(seen.insert("exec_1"));
        assert!(!seen.insert("exec_1"));
        assert!(seen.insert("exec_2"));
        for i in 0..SEEN_FILLS {
            assert!(seen.insert(&format!("fill_{i}")));
        }
        // exec_1 and exec_2 were the oldest: both forgotten, the rest remembered.
        assert!(seen.insert("exec_1"));
        assert!(!seen.insert("fill_99999"));
        assert!(!seen.insert(&format!("fill_{}", SEEN_FILLS - 1)));
        assert_eq!(seen.set.len(), SEEN_FILLS);
        assert_eq!(seen.order.len(), SEEN_FILLS);
    }
}
