//! News and earnings. `GET /v1/news?symbols&start&end&limit&page_token`.

use core_http::{Result, TokenPage, TokenPaginator};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::client::Client;
use crate::markets::check_symbols;

/// The largest page the service serves.
pub const MAX_PAGE_SIZE: u32 = 50;

core_http::string_enum! {
    /// What a news item is.
    pub enum NewsKind {
        /// An article.
        News = "news",
        /// An earnings report.
        Earnings = "earnings",
    }
}

/// An earnings report's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Earnings {
    /// The quarter, such as `Q1 2026`.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub fiscal_period: String,
    /// The expected earnings per share.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub eps_estimate: Option<Decimal>,
    /// The reported earnings per share.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub eps_actual: Option<Decimal>,
}

/// A news item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewsItem {
    /// Its id.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub id: String,
    /// News or earnings.
    #[serde(default)]
    pub kind: NewsKind,
    /// The headline.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub headline: String,
    /// A summary.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub summary: String,
    /// Where it comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The symbols it is about.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub symbols: Vec<String>,
    /// A link to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// When it was published.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_at: Option<OffsetDateTime>,
    /// The figures of an earnings report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earnings: Option<Earnings>,
}

/// One page of news and the token of the next.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct NewsPage {
    /// The items, newest first.
    #[serde(deserialize_with = "core_http::de::or_default")]
    pub news: Vec<NewsItem>,
    /// The token of the next page; `None` on the last.
    #[serde(default)]
    pub next_page_token: Option<String>,
}

/// The news resource: `client.news()`.
#[derive(Debug, Clone, Copy)]
pub struct News<'a> {
    client: &'a Client,
}

impl<'a> News<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        News { client }
    }

    /// A query of news about `symbols`, to narrow to a date range, then page or
    /// iterate.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::time::{Duration, OffsetDateTime};
    /// let end = OffsetDateTime::now_utc();
    /// let last_week = client.news().query(&["AAPL"]).start(end - Duration::days(7)).end(end);
    /// for item in last_week.iter() {
    ///     let item = item?;
    ///     println!("{:?} {}", item.created_at, item.headline);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn query<S: AsRef<str>>(&self, symbols: &[S]) -> NewsQuery {
        NewsQuery {
            client: self.client.clone(),
            symbols: symbols.iter().map(|s| s.as_ref().to_owned()).collect(),
            start: None,
            end: None,
        }
    }

    /// One page of news about `symbols`, newest first: the first, or the one `token`
    /// names. `limit` is 1 to 50.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let page = client.news().page(&["AAPL"], 10, None)?;
    /// for item in &page.news {
    ///     println!("{}", item.headline);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn page<S: AsRef<str>>(
        &self,
        symbols: &[S],
        limit: u32,
        token: Option<&str>,
    ) -> Result<NewsPage> {
        self.query(symbols).page(limit, token)
    }

    /// Every item about `symbols`, newest first, fetched 50 at a time as the iteration
    /// reaches them.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// for item in client.news().iter(&["AAPL"]).take(20) {
    ///     println!("{}", item?.headline);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn iter<S: AsRef<str>>(&self, symbols: &[S]) -> TokenPaginator<NewsItem> {
        self.query(symbols).iter()
    }

    /// As [`iter`](Self::iter), from the page `token` names (a
    /// [`resume_token`](TokenPaginator::resume_token) of an earlier iteration).
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let mut news = client.news().iter(&["AAPL"]);
    /// for item in news.by_ref().take(10) {
    ///     println!("{}", item?.headline);
    /// }
    /// // Later: the next items, from where the first iteration stopped.
    /// let token = news.resume_token().map(str::to_owned);
    /// for item in client.news().iter_from(&["AAPL"], token.as_deref()).take(10) {
    ///     println!("{}", item?.headline);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn iter_from<S: AsRef<str>>(
        &self,
        symbols: &[S],
        token: Option<&str>,
    ) -> TokenPaginator<NewsItem> {
        self.query(symbols).iter_from(token)
    }
}

/// A query of news: about which symbols, and (optionally) from and to when. Built by
/// [`News::query`].
#[derive(Debug, Clone)]
#[must_use = "a query does nothing until it is paged or iterated"]
pub struct NewsQuery {
    client: Client,
    symbols: Vec<String>,
    start: Option<OffsetDateTime>,
    end: Option<OffsetDateTime>,
}

impl NewsQuery {
    /// Only items published at or after `t`.
    ///
    /// ```
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::time::macros::datetime;
    /// let since_monday = client.news().query(&["AAPL"]).start(datetime!(2026-11-23 00:00 UTC));
    /// # let _ = since_monday;
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn start(mut self, t: OffsetDateTime) -> Self {
        self.start = Some(t);
        self
    }

    /// Only items published at or before `t`.
    ///
    /// ```
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::time::macros::datetime;
    /// let last_year = client.news().query(&["AAPL"]).end(datetime!(2025-12-31 23:59:59 UTC));
    /// # let _ = last_year;
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn end(mut self, t: OffsetDateTime) -> Self {
        self.end = Some(t);
        self
    }

    /// One page, newest first: the first, or the one `token` names. `limit` is 1 to
    /// 50. `GET /v1/news?symbols&start&end&limit&page_token`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::time::macros::datetime;
    /// let query = client.news().query(&["AAPL"]).start(datetime!(2026-11-23 00:00 UTC));
    /// let first = query.page(50, None)?;
    /// if let Some(token) = first.next_page_token.as_deref() {
    ///     let second = query.page(50, Some(token))?;
    ///     println!("{} more", second.news.len());
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn page(&self, limit: u32, token: Option<&str>) -> Result<NewsPage> {
        let symbols = check_symbols(&self.symbols)?;
        core_http::check_page_size(Some(limit), MAX_PAGE_SIZE)?;
        if let (Some(start), Some(end)) = (self.start, self.end)
            && start > end
        {
            return Err(core_http::Error::InvalidRequest(
                "the news range starts after it ends".into(),
            ));
        }
        let format = core_http::timestamp::format;
        let mut page: NewsPage = self
            .client
            .http()
            .get("/v1/news")
            .query("symbols", symbols)
            .query_opt("start", self.start.map(format))
            .query_opt("end", self.end.map(format))
            .query("limit", limit)
            .query_opt("page_token", token)
            .send_json()?;
        page.next_page_token = page.next_page_token.filter(|t| !t.is_empty());
        Ok(page)
    }

    /// Every item, newest first, fetched 50 at a time as the iteration reaches them.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::time::macros::datetime;
    /// let week = client.news().query(&["AAPL", "MSFT"]).start(datetime!(2026-11-16 00:00 UTC)).end(datetime!(2026-11-23 00:00 UTC));
    /// for item in week.iter() {
    ///     println!("{}", item?.headline);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn iter(&self) -> TokenPaginator<NewsItem> {
        self.iter_from(None)
    }

    /// As [`iter`](Self::iter), from the page `token` names.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let query = client.news().query(&["AAPL"]);
    /// let mut items = query.iter();
    /// let first: Vec<_> = items.by_ref().take(5).collect();
    /// let token = items.resume_token().map(str::to_owned);
    /// for item in query.iter_from(token.as_deref()).take(5) {
    ///     println!("{}", item?.headline);
    /// }
    /// # let _ = first;
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn iter_from(&self, token: Option<&str>) -> TokenPaginator<NewsItem> {
        let query = self.clone();
        TokenPaginator::boxed(token.map(str::to_owned), move |token| {
            let page = query.page(MAX_PAGE_SIZE, token)?;
            Ok(TokenPage {
                items: page.news,
                next_token: page.next_page_token,
            })
        })
    }
}
