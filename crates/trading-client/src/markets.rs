//! Market data: quotes, OHLCV bars, order books and recent trades, for one or more
//! symbols. `GET /v1/markets?symbols=A,B&kind=...`.

use core_http::{Error, Result};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::client::Client;

/// The most symbols one market-data call takes.
pub const MAX_SYMBOLS: usize = 100;

core_http::string_enum! {
    /// A bar size.
    pub enum Timeframe in markets {
        /// One minute.
        Minute = "1Min",
        /// Five minutes.
        FiveMinutes = "5Min",
        /// One hour.
        Hour = "1Hour",
        /// One day.
        Day = "1Day",
    }
}

/// A quote: the last price, and the best bid and ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Quote {
    /// The symbol.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub symbol: String,
    /// The last price (required: a quote without a readable price is an error).
    #[serde(deserialize_with = "crate::money::required_decimal")]
    pub price: Decimal,
    /// The best bid.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub bid: Option<Decimal>,
    /// The best ask.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub ask: Option<Decimal>,
    /// Shares bid at the best bid.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub bid_size: Option<u64>,
    /// Shares offered at the best ask.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub ask_size: Option<u64>,
    /// When it was quoted.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<OffsetDateTime>,
}

/// An OHLCV bar (open, high, low, close, volume) starting at `t`. Its time and four
/// prices are needed to be a bar at all: one without them, or with a price that is not a
/// number, is a decode error rather than a zero. The volume is `None` when not given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Bar {
    /// The symbol, when the answer names it (market data does; history gives one
    /// symbol per call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// When the bar starts.
    #[serde(with = "core_http::timestamp")]
    pub t: OffsetDateTime,
    /// The first price.
    #[serde(deserialize_with = "crate::money::required_decimal")]
    pub o: Decimal,
    /// The highest price.
    #[serde(deserialize_with = "crate::money::required_decimal")]
    pub h: Decimal,
    /// The lowest price.
    #[serde(deserialize_with = "crate::money::required_decimal")]
    pub l: Decimal,
    /// The last price.
    #[serde(deserialize_with = "crate::money::required_decimal")]
    pub c: Decimal,
    /// Shares traded, when given.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub v: Option<u64>,
}

/// A level of an order book.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Level {
    /// The price.
    #[serde(deserialize_with = "crate::money::required_decimal")]
    pub price: Decimal,
    /// Shares at that price, when given.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub size: Option<Decimal>,
}

/// An order book: the best bids (highest first) and asks (lowest first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OrderBook {
    /// The symbol.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub symbol: String,
    /// When it was taken.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<OffsetDateTime>,
    /// The bids.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub bids: Vec<Level>,
    /// The asks.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub asks: Vec<Level>,
}

/// A trade that happened on the market.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Trade {
    /// Its id, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The symbol.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub symbol: String,
    /// The price.
    #[serde(deserialize_with = "crate::money::required_decimal")]
    pub price: Decimal,
    /// Shares traded, when given.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub size: Option<Decimal>,
    /// When.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<OffsetDateTime>,
}

#[derive(Deserialize)]
struct Quotes {
    #[serde(deserialize_with = "core_http::de::or_default")]
    quotes: Vec<Quote>,
}

#[derive(Deserialize)]
struct Bars {
    #[serde(deserialize_with = "core_http::de::or_default")]
    bars: Vec<Bar>,
}

#[derive(Deserialize)]
struct Books {
    #[serde(deserialize_with = "core_http::de::or_default")]
    orderbooks: Vec<OrderBook>,
}

#[derive(Deserialize)]
struct Trades {
    #[serde(deserialize_with = "core_http::de::or_default")]
    trades: Vec<Trade>,
}

/// Checks the symbols of a call: 1 to 100, none empty.
pub(crate) fn check_symbols<S: AsRef<str>>(symbols: &[S]) -> Result<String> {
    if symbols.is_empty() || symbols.len() > MAX_SYMBOLS {
        return Err(Error::InvalidRequest(format!(
            "give 1 to {MAX_SYMBOLS} symbols, got {}",
            symbols.len()
        )));
    }
    for s in symbols {
        let s = s.as_ref();
        if s.trim().is_empty() || s.contains(',') || s.chars().any(char::is_whitespace) {
            return Err(Error::InvalidRequest(format!("{s:?} is not a symbol")));
        }
    }
    Ok(symbols
        .iter()
        .map(|s| s.as_ref().to_ascii_uppercase())
        .collect::<Vec<_>>()
        .join(","))
}

/// The markets resource: `client.markets()`.
#[derive(Debug, Clone, Copy)]
pub struct Markets<'a> {
    client: &'a Client,
}

impl<'a> Markets<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Markets { client }
    }

    /// The current quotes of `symbols`. `GET /v1/markets?symbols=..&kind=quotes`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// for quote in client.markets().quotes(&["AAPL", "MSFT"])? {
    ///     println!("{} {}", quote.symbol, quote.price);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn quotes<S: AsRef<str>>(&self, symbols: &[S]) -> Result<Vec<Quote>> {
        let symbols = check_symbols(symbols)?;
        let answer: Quotes = self
            .client
            .http()
            .get("/v1/markets")
            .query("symbols", symbols)
            .query("kind", "quotes")
            .send_json()?;
        Ok(answer.quotes)
    }

    /// The current quote of one symbol. `GET /v1/markets?symbols=AAPL&kind=quotes`;
    /// an answer without that symbol's quote is [`Error::UnexpectedBody`], never
    /// another symbol's.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let aapl = client.markets().quote("AAPL")?;
    /// println!("AAPL {} (bid {:?}, ask {:?})", aapl.price, aapl.bid, aapl.ask);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn quote(&self, symbol: &str) -> Result<Quote> {
        let wanted = check_symbols(&[symbol])?;
        self.quotes(&[symbol])?
            .into_iter()
            .find(|q| q.symbol.eq_ignore_ascii_case(&wanted))
            .ok_or_else(|| Error::UnexpectedBody {
                status: 200,
                message: format!("the answer has no quote of {wanted}"),
            })
    }

    /// The last `limit` (1 to 1,000) bars of `timeframe` for each symbol.
    /// `GET /v1/markets?kind=bars&timeframe=..&limit=..`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::markets::Timeframe;
    /// for bar in client.markets().bars(&["AAPL"], Timeframe::FiveMinutes, 12)? {
    ///     println!("{} o {} c {} v {:?}", bar.t, bar.o, bar.c, bar.v);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn bars<S: AsRef<str>>(
        &self,
        symbols: &[S],
        timeframe: Timeframe,
        limit: u32,
    ) -> Result<Vec<Bar>> {
        let symbols = check_symbols(symbols)?;
        core_http::service::check_page_size(Some(limit), 1000)?;
        let answer: Bars = self
            .client
            .http()
            .get("/v1/markets")
            .query("symbols", symbols)
            .query("kind", "bars")
            .query("timeframe", timeframe)
            .query("limit", limit)
            .send_json()?;
        Ok(answer.bars)
    }

    /// Each symbol's order book, `depth` (1 to 50) levels a side.
    /// `GET /v1/markets?kind=orderbook&depth=..`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let books = client.markets().orderbook(&["AAPL"], 5)?;
    /// println!("best bid {:?}", books[0].bids.first().map(|l| l.price));
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn orderbook<S: AsRef<str>>(&self, symbols: &[S], depth: u32) -> Result<Vec<OrderBook>> {
        let symbols = check_symbols(symbols)?;
        core_http::service::check_page_size(Some(depth), 50)?;
        let answer: Books = self
            .client
            .http()
            .get("/v1/markets")
            .query("symbols", symbols)
            .query("kind", "orderbook")
            .query("depth", depth)
            .send_json()?;
        Ok(answer.orderbooks)
    }

    /// Each symbol's last `limit` (1 to 1,000) trades. `GET /v1/markets?kind=trades`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// for trade in client.markets().trades(&["AAPL"], 10)? {
    ///     println!("{:?} x {}", trade.size, trade.price);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn trades<S: AsRef<str>>(&self, symbols: &[S], limit: u32) -> Result<Vec<Trade>> {
        let symbols = check_symbols(symbols)?;
        core_http::service::check_page_size(Some(limit), 1000)?;
        let answer: Trades = self
            .client
            .http()
            .get("/v1/markets")
            .query("symbols", symbols)
            .query("kind", "trades")
            .query("limit", limit)
            .send_json()?;
        Ok(answer.trades)
    }
}

/// Reached from the client.
impl Client {
    /// Market data: quotes, bars, order books, trades.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// for quote in client.markets().quotes(&["AAPL", "MSFT"])? {
    ///     println!("{} {}", quote.symbol, quote.price);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn markets(&self) -> Markets<'_> {
        Markets::new(self)
    }
}
