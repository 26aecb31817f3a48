//! Orders: what to place (a type that carries its own prices, so an invalid order does
//! not compile), and placing it exactly once.

mod check;
mod list;
mod model;
mod replace;
mod request;
#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

use core_http::pagination::{TokenPages, TokenPaginator};
use core_http::{Error, Result};
use log::debug;
use serde::Deserialize;

use crate::client::Client;
pub(crate) use check::closed as check_closed;
pub use list::{Direction, ListOrders, StatusFilter};
pub use model::{Execution, Order, OrderClass, OrderId, OrderKind, OrderStatus, Side, TimeInForce};
pub use replace::ReplaceOrder;
pub use request::{Amount, Entry, Exit, OrderRequest, OrderType, StopLoss, Trail};

/// The most of a call's timeout [`Orders::place`] keeps for looking an order up.
const LOOKUP_RESERVE: Duration = Duration::from_secs(5);

/// The longest `client_order_id` the service takes.
pub const MAX_CLIENT_ORDER_ID: usize = 48;

#[derive(Deserialize)]
pub(crate) struct OrderList {
    #[serde(deserialize_with = "core_http::de::or_default")]
    pub(crate) orders: Vec<Order>,
    #[serde(default, deserialize_with = "core_http::de::opt_text")]
    next_page_token: Option<String>,
}

/// The answer to a lookup by client order id. Its absence of an order is a proof that
/// the order was not placed, so the list must be there: an answer without it is an
/// error, never "no such order".
#[derive(Deserialize)]
struct Lookup {
    orders: Vec<Order>,
}

/// The orders resource: `client.orders()`.
#[derive(Debug, Clone, Copy)]
pub struct Orders<'a> {
    client: &'a Client,
}

impl<'a> Orders<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Orders { client }
    }

    /// Places an order, exactly once. `POST /v1/orders`.
    ///
    /// The order carries a `client_order_id` (yours, or a UUID the client makes), the
    /// same on every attempt; the service never places two orders with one id, so the
    /// POST is retried after a dropped connection or a 5xx. When the outcome is still
    /// uncertain after the retries (a timeout, a reset, a 5xx), the client looks the
    /// order up by that id before answering: you get the order, or
    /// [`Error::NotProcessed`] when the service has no order under it yet. The first
    /// request may still reach the service then (a slow server goes on after the client
    /// gave up), so place it again only **with the same id**
    /// ([`OrderRequest::client_order_id`] with [`Error::repeat_with`]'s id): the service
    /// places one order per id and answers a repeat with it. A failure the lookup could
    /// not settle either is [`Error::Unsettled`], with the same advice.
    ///
    /// The service answers a `client_order_id` it already has with the order first placed
    /// under it. So the answer (or the order the lookup finds) is checked against this
    /// request (symbol, side, quantity or notional, type, time in force, prices, class,
    /// extended hours): the same order is `Ok` (placing it again is idempotent); a
    /// different one is [`Error::IdConflict`] (`ErrorKind::Conflict`), naming the id:
    /// the id was already used for other work, and nothing new was placed.
    ///
    /// All of it fits in the client's timeout: the POST and its retries get the timeout
    /// less a reserve (a quarter of it, at most 5 s) that the lookup may use. When even
    /// the lookup cannot settle it, [`get_by_client_order_id`](Self::get_by_client_order_id)
    /// answers later.
    ///
    /// ```no_run
    /// use trading_client::{Decimal, Error};
    /// use trading_client::orders::{Amount, OrderRequest, Side};
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let order = OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::from(5)));
    /// let placed = match client.orders().place(&order) {
    ///     // Not placed as far as the service shows, or not known: the one safe repeat
    ///     // carries the same client_order_id.
    ///     Err(e) if e.repeat_with().is_some() => {
    ///         let id = e.repeat_with().map(|(_, id)| id.to_owned()).unwrap_or_default();
    ///         client.orders().place(&order.clone().client_order_id(id))?
    ///     }
    ///     other => other?,
    /// };
    /// println!("{} is {}", placed.id, placed.status);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    ///
    /// ```no_run
    /// use trading_client::Decimal;
    /// use trading_client::orders::{Amount, OrderRequest, Side};
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let order = client
    ///     .orders()
    ///     .place(&OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::from(5))))?;
    /// println!("{} is {}", order.id, order.status);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn place(&self, order: &OrderRequest) -> Result<Order> {
        order.validate()?;
        let client_order_id = order
            .client_order_id
            .clone()
            .unwrap_or_else(core_http::service::uuid_v4);
        // The whole operation fits in the client's timeout: the POST and its retries get
        // all of it but a reserve (a quarter, at most 5 s) kept for the lookup.
        let started = Instant::now();
        let budget = self.client.http().timeout();
        let reserve = (budget / 4).min(LOOKUP_RESERVE);
        let result = self
            .client
            .http()
            .post("/v1/orders")
            .bytes(
                "application/json",
                order.body(&client_order_id).into_bytes(),
            )
            // The service answers a repeated client_order_id with the first order.
            .replay_safe(true)
            .timeout(budget.saturating_sub(reserve))
            .send()
            .and_then(|response| response.json::<Order>());
        match result {
            Ok(placed) => check::placed(order, &client_order_id, &placed).map(|()| placed),
            Err(e) if uncertain(&e) => {
                let left = budget.saturating_sub(started.elapsed());
                debug!("order {client_order_id}: {e}; looking it up within {left:?}");
                if left.is_zero() {
                    return Err(unsettled(e, &client_order_id));
                }
                match self.lookup(&client_order_id, left) {
                    Ok(Some(found)) => {
                        check::placed(order, &client_order_id, &found).map(|()| found)
                    }
                    // Not there yet: the first request may still arrive, so the only safe
                    // repeat is one under the same id.
                    Ok(None) => Err(Error::NotProcessed {
                        reason: format!("no order has client_order_id {client_order_id}"),
                        id_name: "client_order_id",
                        id: client_order_id,
                        source: Box::new(e),
                    }),
                    // The lookup failed too: the original uncertainty stands.
                    Err(_) => Err(unsettled(e, &client_order_id)),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Looks an order up by client order id within `timeout` (the client's retries of a
    /// GET included).
    fn lookup(&self, client_order_id: &str, timeout: Duration) -> Result<Option<Order>> {
        let options = core_http::config::RequestOptions::new().timeout(timeout);
        self.client
            .with_options(&options)
            .orders()
            .get_by_client_order_id(client_order_id)
    }

    /// Places an order after checking it against its asset (one `GET /v1/assets/{symbol}`
    /// first): an asset not tradable, a fraction of a share of one that trades whole, a
    /// quantity below its smallest, or a price off its tick is refused with
    /// [`Error::InvalidRequest`] and nothing is sent. The service refuses the same
    /// orders either way ([`place`](Self::place) lets it); this is for scripts that
    /// would rather know before. Then as [`place`](Self::place): exactly once.
    ///
    /// ```no_run
    /// use trading_client::{Decimal, orders::{OrderRequest, Side}};
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let half = OrderRequest::limit("BRK.A", Side::Buy, "0.5".parse().unwrap(), Decimal::from(700_000));
    /// match client.orders().place_checked(&half) {
    ///     Err(trading_client::Error::InvalidRequest(why)) => println!("not sent: {why}"),
    ///     other => println!("{other:?}"),
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn place_checked(&self, order: &OrderRequest) -> Result<Order> {
        order.validate()?;
        self.client.assets().get(&order.symbol)?.check(order)?;
        self.place(order)
    }

    /// An order by id. `GET /v1/orders/{id}`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let order = client.orders().get("ord_123")?;
    /// println!("{:?} filled of {:?}: {}", order.filled_qty, order.qty, order.status);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn get(&self, id: impl Into<OrderId>) -> Result<Order> {
        let id = id.into();
        let path = format!("/v1/orders/{}", id.segment()?);
        let order: Order = self.client.http().get(&path).send_json()?;
        core_http::service::check_answered("order", id.as_str(), order.id.as_str())?;
        Ok(order)
    }

    /// Waits until the order is filled, reading it again and again
    /// (`GET /v1/orders/{id}`) within `wait` (a `Duration`, or a
    /// [`Wait`](core_http::wait::Wait) for the pace): the filled order. An order
    /// canceled, expired, rejected or replaced ends the wait at once with
    /// [`WaitError::Ended`](core_http::wait::WaitError::Ended), holding the order as read
    /// (its `filled_qty` says how much was filled before); the deadline passing first is
    /// [`WaitError::TimedOut`](core_http::wait::WaitError::TimedOut) with the last
    /// reading (a limit order still open). With a stream open and subscribed to orders,
    /// [`TradingStream::wait_until_filled`](crate::stream::TradingStream::wait_until_filled)
    /// waits on its events instead.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use std::time::Duration;
    /// let order = client.orders().wait_until_filled("ord_123", Duration::from_secs(60))?;
    /// println!("filled {:?} at {:?}", order.filled_qty, order.filled_avg_price);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wait_until_filled(
        &self,
        id: impl Into<OrderId>,
        wait: impl Into<core_http::wait::Wait>,
    ) -> std::result::Result<Order, core_http::wait::WaitError<Order>> {
        let id = id.into();
        let path = match id.segment() {
            Ok(segment) => format!("/v1/orders/{segment}"),
            Err(e) => return Err(core_http::wait::WaitError::Call(e)),
        };
        self.client.http().wait_for(
            format!("order {id} to be filled"),
            &wait.into(),
            |http| {
                let order: Order = http.get(&path).send_json()?;
                core_http::service::check_answered("order", id.as_str(), order.id.as_str())?;
                Ok(order)
            },
            fill_seen,
        )
    }

    /// The order placed with `client_order_id`, if there is one.
    /// `GET /v1/orders?client_order_id=..&status=all`. `None` only when the service
    /// answers no order at all; an answer with other orders only (a service that ignored
    /// the filter) is an error, since it says nothing about this one.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// match client.orders().get_by_client_order_id("my-order-1")? {
    ///     Some(order) => println!("placed: {}", order.id),
    ///     None => println!("not placed"),
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn get_by_client_order_id(&self, client_order_id: &str) -> Result<Option<Order>> {
        if client_order_id.is_empty() || client_order_id.len() > MAX_CLIENT_ORDER_ID {
            return Err(Error::InvalidRequest(format!(
                "a client order id is 1 to {MAX_CLIENT_ORDER_ID} characters"
            )));
        }
        let list: Lookup = self
            .client
            .http()
            .get("/v1/orders")
            .query("client_order_id", client_order_id)
            .query("status", "all")
            .send_json()?;
        let answered = list.orders.len();
        match list
            .orders
            .into_iter()
            .find(|o| o.client_order_id == client_order_id)
        {
            Some(order) => Ok(Some(order)),
            None if answered == 0 => Ok(None),
            // Orders, none of them the one asked for: the filter was not applied, so
            // this answer says nothing about whether the order exists.
            None => Err(Error::UnexpectedBody {
                status: 200,
                message: format!(
                    "the lookup of client_order_id {client_order_id} answered {answered} \
                     other orders: the service ignored the filter, so whether it exists \
                     is unknown"
                ),
            }),
        }
    }

    /// One page of orders, newest first (or, with `updated_since`, oldest change first),
    /// and the token of the next. `GET /v1/orders?status&updated_since&limit&page_token`.
    /// Listing by change (`updated_since`) pages with a cursor after the last change
    /// read: an order that changes while you page comes again later, never skipped.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::orders::ListOrders;
    /// let first = client.orders().list(&ListOrders::new().all().limit(500))?;
    /// if let Some(token) = first.next_page_token {
    ///     let second = client.orders().list(&ListOrders::new().all().limit(500).page_token(token))?;
    ///     println!("{} more", second.data.len());
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn list(&self, params: &ListOrders) -> Result<core_http::pagination::TokenPage<Order>> {
        core_http::service::check_page_size(params.limit, 500)?;
        let list: OrderList = params
            .apply(self.client.http().get("/v1/orders"))
            .send_json()?;
        Ok(core_http::pagination::TokenPage::new(
            list.orders,
            list.next_page_token,
        ))
    }

    /// Every open order, newest first, page after page.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// for order in client.orders().iter() {
    ///     println!("{}", order?.id);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn iter(&self) -> TokenPaginator<Order> {
        self.iter_from(&ListOrders::new())
    }

    /// Every order `params` selects, page after page (from `params.page_token`, or the
    /// first); `resume_token()` tells where to go on later.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::orders::ListOrders;
    /// for order in client.orders().iter_from(&ListOrders::new().all().limit(500)) {
    ///     println!("{}", order?.id);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn iter_from(&self, params: &ListOrders) -> TokenPaginator<Order> {
        let client = self.client.clone();
        TokenPaginator::over(self.client.http(), params, move |p| client.orders().list(p))
    }

    /// The orders `params` selects, page by page.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::orders::ListOrders;
    /// for page in client.orders().pages(&ListOrders::new().all().limit(500)) {
    ///     println!("{} orders", page?.data.len());
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn pages(&self, params: &ListOrders) -> TokenPages<Order> {
        let client = self.client.clone();
        TokenPages::over(self.client.http(), params, move |p| client.orders().list(p))
    }

    /// Cancels an open order (and its working legs); answers the order as it stands.
    /// `DELETE /v1/orders/{id}`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let order = client.orders().cancel("ord_123")?;
    /// println!("{}", order.status);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn cancel(&self, id: impl Into<OrderId>) -> Result<Order> {
        let path = format!("/v1/orders/{}", id.into().segment()?);
        self.client.http().delete(&path).send_json()
    }

    /// Replaces an open order in one step (no cancel-then-place race): a new order with
    /// the changes, linked both ways (`replaces`, `replaced_by`); the old one becomes
    /// `replaced`. `PATCH /v1/orders/{id}`. Sent under a `client_order_id` made once, so
    /// a retried replace answers the first replacement, never two. The answer is checked:
    /// an order that replaces another than `id`, or lacks a change asked for (a
    /// `client_order_id` of yours already used for other work) is [`Error::IdConflict`]. An order that filled
    /// (in part or whole) or ended before the replace is `409 order_not_replaceable`
    /// (`ErrorKind::Conflict`): read it with [`get`](Self::get).
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::{Decimal, orders::ReplaceOrder};
    /// let new = client.orders().replace("ord_123", &ReplaceOrder::new().limit_price(Decimal::from(186)))?;
    /// println!("{} replaces {:?}", new.id, new.replaces);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn replace(&self, id: impl Into<OrderId>, change: &ReplaceOrder) -> Result<Order> {
        change.validate()?;
        let id = id.into();
        let path = format!("/v1/orders/{}", id.segment()?);
        let client_order_id = change
            .client_order_id
            .clone()
            .unwrap_or_else(core_http::service::uuid_v4);
        let order: Order = self
            .client
            .http()
            .patch(&path)
            .bytes(
                "application/json",
                change.body(&client_order_id).into_bytes(),
            )
            // The service answers a repeated client_order_id with the first replacement.
            .replay_safe(true)
            .send_json()
            .map_err(|e| unsettled(e, &client_order_id))?;
        check::replaced(&id, change, &client_order_id, &order)?;
        Ok(order)
    }

    /// Cancels every open order and working leg (a filled entry's exits too).
    /// `DELETE /v1/orders`. Repeating it cancels nothing more, so it is retried like a
    /// read.
    ///
    /// The answer says what happened to each order: those canceled (with their legs) in
    /// [`done`](core_http::BulkOutcome::done), those the service could not cancel (an
    /// order that filled meanwhile: a `207 Multi-Status` with a status per order) in
    /// [`failed`](core_http::BulkOutcome::failed), with the status and message given.
    /// An answer without its list is an error, never "nothing was canceled".
    /// [`into_complete`](core_http::BulkOutcome::into_complete) turns a partial
    /// answer into an error.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let outcome = client.orders().cancel_all()?;
    /// println!("{} orders canceled", outcome.done.len());
    /// for failure in &outcome.failed {
    ///     eprintln!("not canceled: {failure}");
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn cancel_all(&self) -> Result<core_http::BulkOutcome<Order>> {
        self.client
            .http()
            .delete("/v1/orders")
            .send()?
            .bulk("orders")
    }
}

/// The failure of an action made under `client_order_id` that may have been carried out
/// ([`Error::Unsettled`]): it names the id to repeat it with, the one repeat that cannot
/// do it twice.
pub(crate) fn unsettled(error: Error, client_order_id: &str) -> Error {
    match error {
        Error::Unsettled { .. } | Error::NotProcessed { .. } => error,
        e if e.delivery() == core_http::Delivery::MayHaveBeenProcessed => Error::Unsettled {
            repeat_with: Some(("client_order_id", client_order_id.to_owned())),
            source: Box::new(e),
        },
        e => e,
    }
}

/// Whether an order may or may not have been placed: the server may have acted, and
/// its answer did not settle it.
fn uncertain(e: &Error) -> bool {
    // An answer that could not be used (the order may be there) is settled by the lookup
    // too.
    e.delivery() == core_http::Delivery::MayHaveBeenProcessed || e.action_succeeded()
}

/// What a reading of an order shows to a wait for its fill: filled is reached, any other
/// final status ends the wait, the rest (new, partially filled, held...) is pending.
pub(crate) fn fill_seen(order: &Order) -> core_http::wait::Seen {
    use core_http::wait::Seen;
    match &order.status {
        OrderStatus::Filled => Seen::reached(&order.status),
        status if status.is_terminal() => Seen::ended(status),
        status => Seen::pending(status),
    }
}

/// Reached from the client.
impl Client {
    /// Orders: place (never twice), get, look up by client order id, list, cancel.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let open = client.orders().list(&trading_client::orders::ListOrders::new())?;
    /// println!("{} open orders on the first page", open.data.len());
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn orders(&self) -> Orders<'_> {
        Orders::new(self)
    }
}
