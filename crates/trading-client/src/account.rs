//! The account: balances, buying power, positions and status. `GET /v1/account`.

use core_http::Result;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::client::Client;
use crate::positions::Position;

core_http::string_enum! {
    /// Whether the account can trade.
    pub enum AccountStatus in account {
        /// Open and trading.
        Active = "active",
        /// Being opened.
        Onboarding = "onboarding",
        /// Restricted by the service.
        Restricted = "restricted",
        /// Closed.
        Closed = "closed",
    }
}

/// The account's money and holdings. The documents name the account's fields but not
/// their shape, so every money figure is an `Option`: `None` when the answer does not
/// carry it, a decode error when it carries something that is not exactly a number, and
/// never a zero standing in for a figure the service did not give.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Account {
    /// Its id, when the service gives one (a JSON integer is kept as its digits).
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<String>,
    /// Whether it can trade.
    #[serde(default)]
    pub status: AccountStatus,
    /// Its currency (`USD`), when given.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub currency: Option<String>,
    /// Cash; `None` when the answer does not say (never a zero in its place).
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub cash: Option<Decimal>,
    /// What can be spent on new buys (cash not promised to open orders); `None` when
    /// the answer does not say.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub buying_power: Option<Decimal>,
    /// Cash plus the market value of the positions; `None` when the answer does not say.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub equity: Option<Decimal>,
    /// The positions held.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub positions: Vec<Position>,
}

/// The account resource: `client.account()`.
#[derive(Debug, Clone, Copy)]
pub struct AccountHandle<'a> {
    client: &'a Client,
}

impl<'a> AccountHandle<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        AccountHandle { client }
    }

    /// The account as it stands. `GET /v1/account`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let account = client.account().get()?;
    /// if let Some(power) = account.buying_power {
    ///     println!("{power} buying power");
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn get(&self) -> Result<Account> {
        self.client.http().get("/v1/account").send_json()
    }

    /// The portfolio's equity and profit or loss over a period, a point a step.
    /// `GET /v1/account/history?period&timeframe&end`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::activities::{Period, PortfolioQuery, Step};
    /// let week = client.account().portfolio_history(&PortfolioQuery::new(Period::Week, Step::Hour))?;
    /// if let Some(last) = week.points.last() {
    ///     println!("equity {} ({:?} this week)", last.equity, last.profit_loss);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn portfolio_history(
        &self,
        query: &crate::activities::PortfolioQuery,
    ) -> Result<crate::activities::PortfolioHistory> {
        query.send(self.client)
    }
}

/// Reached from the client.
impl Client {
    /// The account: balances, buying power, positions, status.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let account = client.account().get()?;
    /// println!("buying power {:?}", account.buying_power);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn account(&self) -> AccountHandle<'_> {
        AccountHandle::new(self)
    }
}
