//! Positions: list, get one, close one (all or part), close all. Closing is an action: it
//! places a market order the other way under a `client_order_id` the client makes (the
//! same on every attempt, so a retried close answers the first close's order), never
//! twice.

use core_http::Result;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::client::Client;
use crate::orders::Order;

/// A position in one symbol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Position {
    /// The symbol (empty when not given).
    #[serde(default, deserialize_with = "core_http::de::text_or_empty")]
    pub symbol: String,
    /// Shares held, negative when short; `None` when the answer does not say, never a
    /// position of zero.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub qty: Option<Decimal>,
    /// The average price paid, when given.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub avg_entry_price: Option<Decimal>,
    /// What the shares are worth now, when given.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub market_value: Option<Decimal>,
    /// Gain or loss not yet realised, when given.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub unrealized_pl: Option<Decimal>,
    /// The current price, when given.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub current_price: Option<Decimal>,
}

/// How much of a position to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Close {
    /// All of it.
    All,
    /// This many shares (at most the position).
    Qty(Decimal),
    /// This percentage of it (0 to 100; the quantity rounded down to 4 decimals).
    Percent(Decimal),
}

#[derive(Deserialize)]
struct PositionList {
    #[serde(deserialize_with = "core_http::de::or_default")]
    positions: Vec<Position>,
}

/// The positions resource: `client.positions()`.
#[derive(Debug, Clone, Copy)]
pub struct Positions<'a> {
    client: &'a Client,
}

impl<'a> Positions<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Positions { client }
    }

    /// Every open position. `GET /v1/positions`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// for p in client.positions().list()? {
    ///     println!("{} {:?}", p.symbol, p.qty);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn list(&self) -> Result<Vec<Position>> {
        let list: PositionList = self.client.http().get("/v1/positions").send_json()?;
        Ok(list.positions)
    }

    /// The position in `symbol`. `GET /v1/positions/{symbol}`; none is
    /// `404 position_not_found` (`ErrorKind::NotFound`).
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let aapl = client.positions().get("AAPL")?;
    /// println!("{:?} shares, P/L {:?}", aapl.qty, aapl.unrealized_pl);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn get(&self, symbol: &str) -> Result<Position> {
        crate::markets::check_symbols(&[symbol])?;
        let path = format!(
            "/v1/positions/{}",
            core_http::service::path_segment("a symbol", symbol)?
        );
        let position: Position = self.client.http().get(&path).send_json()?;
        core_http::service::check_answered(
            "position",
            &symbol.to_ascii_uppercase(),
            &position.symbol.to_ascii_uppercase(),
        )?;
        Ok(position)
    }

    /// Closes all or part of the position in `symbol` with a market order the other
    /// way; answers that order. `DELETE /v1/positions/{symbol}?qty|percentage&client_order_id`.
    /// The `client_order_id` is made once and sent on every attempt: a retried close
    /// answers the first close's order and never closes twice. The order answered is
    /// checked (this symbol, at the market, the quantity asked): another is
    /// [`Error::IdConflict`](crate::Error::IdConflict).
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::{Decimal, positions::Close};
    /// let order = client.positions().close("AAPL", Close::Percent(Decimal::from(50)))?;
    /// println!("selling {:?} in {}", order.qty, order.id);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn close(&self, symbol: &str, how: Close) -> Result<Order> {
        // A checked symbol (letters, digits, `.`, `-`) is one path segment as it is.
        crate::markets::check_symbols(&[symbol])?;
        let (name, value) = match how {
            Close::All => (None, None),
            Close::Qty(q) if q > Decimal::ZERO => (Some("qty"), Some(q)),
            Close::Percent(p) if p > Decimal::ZERO && p <= Decimal::from(100) => {
                (Some("percentage"), Some(p))
            }
            Close::Qty(_) => {
                return Err(core_http::Error::InvalidRequest(
                    "the quantity to close is positive".into(),
                ));
            }
            Close::Percent(_) => {
                return Err(core_http::Error::InvalidRequest(
                    "the percentage to close is above 0 and at most 100".into(),
                ));
            }
        };
        let path = format!(
            "/v1/positions/{}",
            core_http::service::path_segment("a symbol", symbol)?
        );
        let client_order_id = core_http::service::uuid_v4();
        let mut request = self
            .client
            .http()
            .delete(&path)
            .query("client_order_id", &client_order_id)
            // The service answers a repeated client_order_id with the first close.
            .replay_safe(true);
        if let (Some(name), Some(value)) = (name, value) {
            request = request.query(name, value.normalize().to_string());
        }
        let order: Order = request
            .send_json()
            .map_err(|e| crate::orders::unsettled(e, &client_order_id))?;
        let qty = match how {
            Close::Qty(q) => Some(q),
            _ => None,
        };
        crate::orders::check_closed(symbol, qty, &client_order_id, &order)?;
        Ok(order)
    }

    /// Closes every position with market orders. `DELETE /v1/positions`, under one
    /// `client_order_id` the service extends per symbol, so a retry closes nothing twice.
    ///
    /// The answer says what happened to each position: the orders placed to close them
    /// in [`done`](core_http::BulkOutcome::done), the positions the service could not
    /// close (a `207 Multi-Status` with a status per symbol) in
    /// [`failed`](core_http::BulkOutcome::failed). An answer without its list is an
    /// error, never "nothing to close".
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let outcome = client.positions().close_all()?;
    /// println!("{} positions closing", outcome.done.len());
    /// let orders = outcome.into_complete()?; // an error if any position stays open
    /// # let _ = orders;
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn close_all(&self) -> Result<core_http::BulkOutcome<Order>> {
        self.client
            .http()
            .delete("/v1/positions")
            .query("client_order_id", core_http::service::uuid_v4())
            .replay_safe(true)
            .send()?
            .bulk("orders")
    }
}

/// Reached from the client.
impl Client {
    /// Positions: list, get one, close one (all or part), close all.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let closing = client.positions().close_all()?;
    /// println!("{} positions closing, {} not", closing.done.len(), closing.failed.len());
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn positions(&self) -> Positions<'_> {
        Positions::new(self)
    }
}
