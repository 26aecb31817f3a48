//! Historical bars, up to twenty years back: a lazy iterator over page tokens whose
//! memory does not grow with the range, paced by the client's rate limit, resumable
//! from a page token, and fetching nothing more once the caller stops.

use core_http::{
    Error, Result,
    pagination::{TokenPage, TokenPages, TokenPaginator},
};
use serde::Deserialize;
use time::OffsetDateTime;

use crate::client::Client;
use crate::markets::{Bar, Timeframe};

/// The largest page the service serves.
pub const MAX_PAGE_SIZE: u32 = 10_000;

#[derive(Deserialize)]
struct BarList {
    #[serde(deserialize_with = "core_http::de::or_default")]
    bars: Vec<Bar>,
    #[serde(default)]
    next_page_token: Option<String>,
}

/// Which bars: a symbol's bars of a timeframe (both required), from and to when, how
/// many a page, from which page.
///
/// ```
/// use trading_client::history::ListBars;
/// use trading_client::markets::Timeframe;
/// use trading_client::timestamp;
/// let decade = ListBars::new("AAPL", Timeframe::Minute)
///     .start(timestamp::parse("2016-01-01T00:00:00Z")?)
///     .end(timestamp::parse("2026-01-01T00:00:00Z")?)
///     .limit(10_000);
/// # Ok::<(), trading_client::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListBars {
    /// The symbol.
    pub(crate) symbol: String,
    /// The bars' timeframe.
    pub(crate) timeframe: Timeframe,
    /// From this instant (included). Defaults to a day before the end.
    pub(crate) start: Option<OffsetDateTime>,
    /// Up to this instant (excluded). Defaults to now.
    pub(crate) end: Option<OffsetDateTime>,
    /// Bars a page (1 to 10,000). Defaults to the service's (1,000).
    pub(crate) limit: Option<u32>,
    /// The page a `next_page_token` names.
    pub(crate) page_token: Option<String>,
}

core_http::token_params!(ListBars);

impl ListBars {
    /// `symbol`'s bars of `timeframe`.
    pub fn new(symbol: impl Into<String>, timeframe: Timeframe) -> Self {
        ListBars {
            symbol: symbol.into(),
            timeframe,
            start: None,
            end: None,
            limit: None,
            page_token: None,
        }
    }

    /// From `t` (included).
    pub fn start(mut self, t: OffsetDateTime) -> Self {
        self.start = Some(t);
        self
    }

    /// Up to `t` (excluded).
    pub fn end(mut self, t: OffsetDateTime) -> Self {
        self.end = Some(t);
        self
    }

    /// At most `n` bars a page (1 to 10,000).
    pub fn limit(mut self, n: u32) -> Self {
        self.limit = Some(n);
        self
    }

    /// The page `token` names (a `next_page_token`, or a `resume_token()` saved by an
    /// earlier iteration).
    pub fn page_token(mut self, token: impl Into<String>) -> Self {
        self.page_token = Some(token.into());
        self
    }
}

/// The history resource: `client.history()`. Bars are always a symbol's, so there is
/// no `iter()` without one: [`iter_from`](Self::iter_from) with a [`ListBars`]. An
/// iteration holds one page in memory at a time, however long the range, and fetches
/// nothing more once the caller stops.
#[derive(Debug, Clone, Copy)]
pub struct History<'a> {
    client: &'a Client,
}

impl<'a> History<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        History { client }
    }

    /// One page of bars, oldest first: the first, or the one `params.page_token` names.
    /// `GET /v1/history?symbol&timeframe&start&end&limit&page_token`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::{history::ListBars, markets::Timeframe};
    /// let first = client.history().list(&ListBars::new("AAPL", Timeframe::Day).limit(100))?;
    /// println!("{} bars, more: {}", first.data.len(), first.next_page_token.is_some());
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn list(&self, params: &ListBars) -> Result<TokenPage<Bar>> {
        if params.symbol.trim().is_empty() {
            return Err(Error::InvalidRequest("the symbol is empty".into()));
        }
        if let (Some(s), Some(e)) = (params.start, params.end)
            && s >= e
        {
            return Err(Error::InvalidRequest("start must be before end".into()));
        }
        core_http::service::check_page_size(params.limit, MAX_PAGE_SIZE)?;
        let response = self
            .client
            .http()
            .get("/v1/history")
            .query("symbol", params.symbol.to_ascii_uppercase())
            .query("timeframe", &params.timeframe)
            .query_opt("start", params.start.map(core_http::timestamp::format))
            .query_opt("end", params.end.map(core_http::timestamp::format))
            .query_opt("limit", params.limit)
            .query_opt("page_token", params.page_token.as_deref())
            .send()?;
        let page: BarList = response.json()?;
        let (bars, token) = (page.bars, page.next_page_token);
        Ok(TokenPage::new(bars, token))
    }

    /// Every bar `params` selects, oldest first, a page at a time as the iteration
    /// reaches it; `resume_token()` tells where to go on later (in another process too),
    /// `max_pages(n)` bounds it.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::{history::ListBars, markets::Timeframe};
    /// use trading_client::timestamp;
    /// let decade = ListBars::new("AAPL", Timeframe::Minute)
    ///     .start(timestamp::parse("2016-01-01T00:00:00Z")?)
    ///     .end(timestamp::parse("2026-01-01T00:00:00Z")?);
    /// let mut bars = client.history().iter_from(&decade);
    /// for bar in bars.by_ref().take(1_000) {
    ///     let bar = bar?;
    ///     println!("{} {}", bar.t, bar.c);
    /// }
    /// // Later, or in another process: go on from where it stopped.
    /// if let Some(token) = bars.resume_token() {
    ///     let rest = client.history().iter_from(&decade.clone().page_token(token));
    ///     # let _ = rest;
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn iter_from(&self, params: &ListBars) -> TokenPaginator<Bar> {
        let client = self.client.clone();
        TokenPaginator::over(self.client.http(), params, move |p| {
            client.history().list(p)
        })
    }

    /// The bars `params` selects, page by page.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::{history::ListBars, markets::Timeframe};
    /// for page in client.history().pages(&ListBars::new("AAPL", Timeframe::Day).limit(1_000)) {
    ///     println!("{} bars", page?.data.len());
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn pages(&self, params: &ListBars) -> TokenPages<Bar> {
        let client = self.client.clone();
        TokenPages::over(self.client.http(), params, move |p| {
            client.history().list(p)
        })
    }
}

/// Reached from the client.
impl Client {
    /// Historical bars, up to twenty years back, fetched lazily page by page.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::{history::ListBars, markets::Timeframe};
    /// let page = client.history().list(&ListBars::new("AAPL", Timeframe::Day))?;
    /// println!("{} daily bars", page.data.len());
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn history(&self) -> History<'_> {
        History::new(self)
    }
}
