//! The account: balances, buying power, positions and status. `GET /v1/account`.

use core_http::Result;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::client::Client;

core_http::string_enum! {
    /// Whether the account can trade.
    pub enum AccountStatus {
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

/// The account's money and holdings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Account {
    /// Its id, when the service gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Whether it can trade.
    #[serde(default)]
    pub status: AccountStatus,
    /// Its currency (`USD`).
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub currency: String,
    /// Cash.
    #[serde(default, deserialize_with = "crate::money::decimal")]
    pub cash: Decimal,
    /// What can be spent on new buys (cash not promised to open orders).
    #[serde(default, deserialize_with = "crate::money::decimal")]
    pub buying_power: Decimal,
    /// Cash plus the market value of the positions.
    #[serde(default, deserialize_with = "crate::money::decimal")]
    pub equity: Decimal,
    /// The positions held.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub positions: Vec<Position>,
}

/// A position in one symbol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Position {
    /// The symbol.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub symbol: String,
    /// Shares held (negative when short).
    #[serde(default, deserialize_with = "crate::money::decimal")]
    pub qty: Decimal,
    /// The average price paid.
    #[serde(default, deserialize_with = "crate::money::decimal")]
    pub avg_entry_price: Decimal,
    /// What the shares are worth now.
    #[serde(default, deserialize_with = "crate::money::decimal")]
    pub market_value: Decimal,
    /// Gain or loss not yet realised.
    #[serde(default, deserialize_with = "crate::money::decimal")]
    pub unrealized_pl: Decimal,
    /// The current price, when given.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub current_price: Option<Decimal>,
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
    /// println!("{} {} buying power", account.buying_power, account.currency);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn get(&self) -> Result<Account> {
        self.client.http().get("/v1/account").send_json()
    }
}
