//! Historical bars, up to twenty years back: a lazy iterator over page tokens whose
//! memory does not grow with the range, paced by the client's rate limit, resumable
//! from a page token, and fetching nothing more once the caller stops.

use core_http::{Error, Result, TokenPage, TokenPaginator};
use serde::Deserialize;
use time::OffsetDateTime;

use crate::client::Client;
use crate::markets::{Bar, Timeframe};

/// The largest page the service serves.
pub const MAX_PAGE_SIZE: u32 = 10_000;

/// Fetches one page of bars by token.
type FetchPage = Box<dyn FnMut(Option<&str>) -> Result<TokenPage<Bar>> + Send>;

#[derive(Deserialize)]
struct Page {
    #[serde(deserialize_with = "core_http::de::or_default")]
    bars: Vec<Bar>,
    #[serde(default)]
    next_page_token: Option<String>,
}

/// The history resource: `client.history()`.
#[derive(Debug, Clone, Copy)]
pub struct History<'a> {
    client: &'a Client,
}

impl<'a> History<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        History { client }
    }

    /// A query of `symbol`'s bars of `timeframe`; set the range, then page or iterate.
    ///
    /// ```no_run
    /// use time::macros::datetime;
    /// use trading_client::Timeframe;
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let mut bars = client
    ///     .history()
    ///     .bars("AAPL", Timeframe::Minute)
    ///     .start(datetime!(2016-01-01 00:00 UTC))
    ///     .end(datetime!(2026-01-01 00:00 UTC))
    ///     .iter();
    /// for bar in bars.by_ref().take(1_000) {
    ///     let bar = bar?;
    ///     println!("{} {}", bar.t, bar.c);
    /// }
    /// // Later, or in another process: go on from where it stopped.
    /// let token = bars.resume_token().map(str::to_owned);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn bars(&self, symbol: &str, timeframe: Timeframe) -> BarsQuery {
        BarsQuery {
            client: self.client.clone(),
            symbol: symbol.to_owned(),
            timeframe,
            start: None,
            end: None,
            page_size: None,
            max_pages: core_http::DEFAULT_MAX_PAGES,
        }
    }
}

/// Which bars to fetch: [`History::bars`].
#[derive(Debug, Clone)]
#[must_use = "a query does nothing until it is paged or iterated"]
pub struct BarsQuery {
    client: Client,
    symbol: String,
    timeframe: Timeframe,
    start: Option<OffsetDateTime>,
    end: Option<OffsetDateTime>,
    page_size: Option<u32>,
    max_pages: u64,
}

/// One page of bars and the token of the next.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BarPage {
    /// The bars, oldest first.
    pub bars: Vec<Bar>,
    /// The token of the next page; `None` on the last.
    pub next_page_token: Option<String>,
}

impl BarsQuery {
    /// From `t` (included). Defaults to a day before the end.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::{Timeframe, time::{Duration, OffsetDateTime}};
    /// let week_ago = OffsetDateTime::now_utc() - Duration::days(7);
    /// let bars = client.history().bars("AAPL", Timeframe::Hour).start(week_ago).iter();
    /// println!("{} hourly bars this week", bars.count());
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn start(mut self, t: OffsetDateTime) -> Self {
        self.start = Some(t);
        self
    }

    /// Up to `t` (excluded). Defaults to now.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::{Timeframe, time::{Duration, OffsetDateTime}};
    /// let end = OffsetDateTime::now_utc() - Duration::days(365);
    /// let query = client.history().bars("AAPL", Timeframe::Day).start(end - Duration::days(30)).end(end);
    /// let page = query.page(None)?;
    /// println!("{} daily bars a year ago", page.bars.len());
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn end(mut self, t: OffsetDateTime) -> Self {
        self.end = Some(t);
        self
    }

    /// Bars per page (1 to 10,000). Defaults to the service's (1,000).
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::Timeframe;
    /// let page = client.history().bars("AAPL", Timeframe::Minute).page_size(10_000).page(None)?;
    /// assert!(page.bars.len() <= 10_000);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn page_size(mut self, n: u32) -> Self {
        self.page_size = Some(n);
        self
    }

    /// The most pages one iteration fetches. Defaults to
    /// [`DEFAULT_MAX_PAGES`](core_http::DEFAULT_MAX_PAGES).
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::Timeframe;
    /// // At most 5 pages of 1,000: a bounded sample, however long the range.
    /// let sample = client.history().bars("AAPL", Timeframe::Minute).page_size(1_000).max_pages(5);
    /// println!("{} bars", sample.iter().count());
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.max_pages = pages;
        self
    }

    /// One page: the first, or the one `token` names. `GET /v1/history`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::Timeframe;
    /// let query = client.history().bars("AAPL", Timeframe::Day).page_size(100);
    /// let first = query.page(None)?;
    /// if let Some(token) = &first.next_page_token {
    ///     let second = query.page(Some(token))?;
    ///     println!("{} + {} bars", first.bars.len(), second.bars.len());
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn page(&self, token: Option<&str>) -> Result<BarPage> {
        if self.symbol.trim().is_empty() {
            return Err(Error::InvalidRequest("the symbol is empty".into()));
        }
        if let (Some(s), Some(e)) = (self.start, self.end)
            && s >= e
        {
            return Err(Error::InvalidRequest("start must be before end".into()));
        }
        core_http::check_page_size(self.page_size, MAX_PAGE_SIZE)?;
        let page: Page = self
            .client
            .http()
            .get("/v1/history")
            .query("symbol", self.symbol.to_ascii_uppercase())
            .query("timeframe", &self.timeframe)
            .query_opt("start", self.start.map(core_http::timestamp::format))
            .query_opt("end", self.end.map(core_http::timestamp::format))
            .query_opt("limit", self.page_size)
            .query_opt("page_token", token)
            .send_json()?;
        Ok(BarPage {
            bars: page.bars,
            next_page_token: page.next_page_token.filter(|t| !t.is_empty()),
        })
    }

    /// Every bar of the range, fetched a page at a time as the iteration reaches it.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::Timeframe;
    /// for bar in client.history().bars("AAPL", Timeframe::Minute).iter() {
    ///     let bar = bar?;
    ///     println!("{} close {}", bar.t, bar.c);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn iter(self) -> BarIter {
        self.iter_inner(None)
    }

    /// As [`iter`](Self::iter), starting at the page `token` names (from
    /// [`BarIter::resume_token`]).
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::Timeframe;
    /// // The token saved by an earlier run (`BarIter::resume_token`).
    /// let token = std::fs::read_to_string("aapl.resume")?;
    /// for bar in client.history().bars("AAPL", Timeframe::Minute).iter_from(token.trim()) {
    ///     println!("{}", bar?.t);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn iter_from(self, token: impl Into<String>) -> BarIter {
        self.iter_inner(Some(token.into()))
    }

    fn iter_inner(self, token: Option<String>) -> BarIter {
        let max = self.max_pages;
        let fetch: FetchPage = Box::new(move |token| {
            let page = self.page(token)?;
            Ok(TokenPage {
                items: page.bars,
                next_token: page.next_page_token,
            })
        });
        let pages = match token {
            Some(t) => TokenPaginator::starting_at(t, fetch),
            None => TokenPaginator::new(fetch),
        };
        BarIter {
            pages: pages.max_pages(max),
        }
    }
}

/// Bars, one page in memory at a time: [`BarsQuery::iter`].
pub struct BarIter {
    pages: TokenPaginator<Bar, FetchPage>,
}

impl BarIter {
    /// The token of the next page to fetch once the bars already fetched are used up:
    /// give it to [`BarsQuery::iter_from`] to go on later. `None` at the end.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::Timeframe;
    /// let mut bars = client.history().bars("AAPL", Timeframe::Minute).iter();
    /// for bar in bars.by_ref().take(5_000) {
    ///     println!("{}", bar?.t);
    /// }
    /// // Drain what is buffered, then save where to go on.
    /// let buffered = bars.buffered();
    /// for bar in bars.by_ref().take(buffered) {
    ///     println!("{}", bar?.t);
    /// }
    /// if let Some(token) = bars.resume_token() {
    ///     std::fs::write("aapl.resume", token)?;
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resume_token(&self) -> Option<&str> {
        self.pages.resume_token()
    }

    /// Bars fetched but not yet yielded.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::Timeframe;
    /// let mut bars = client.history().bars("AAPL", Timeframe::Minute).page_size(1_000).iter();
    /// let first = bars.next().transpose()?;
    /// println!("{first:?}, {} more in memory", bars.buffered());
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn buffered(&self) -> usize {
        self.pages.buffered()
    }
}

impl Iterator for BarIter {
    type Item = Result<Bar>;

    fn next(&mut self) -> Option<Self::Item> {
        self.pages.next()
    }
}

impl std::fmt::Debug for BarIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BarIter")
            .field("pages", &self.pages)
            .finish()
    }
}
