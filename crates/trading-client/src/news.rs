//! News and earnings. `GET /v1/news?symbols&start&end&limit&page_token`.

use core_http::{
    Result,
    pagination::{TokenPage, TokenPages, TokenPaginator},
};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::client::Client;
use crate::markets::check_symbols;

/// The largest page the service serves.
pub const MAX_PAGE_SIZE: u32 = 50;

core_http::string_enum! {
    /// What a news item is.
    pub enum NewsKind in news {
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

/// A page of news as the service answers it.
#[derive(Deserialize)]
struct NewsList {
    #[serde(deserialize_with = "core_http::de::or_default")]
    news: Vec<NewsItem>,
    #[serde(default)]
    next_page_token: Option<String>,
}

/// Which news: about which symbols (1 to 50, required), from and to when, how many a
/// page, from which page. `ListNews::new(&["AAPL"]).start(t).end(t).limit(20)`.
///
/// ```
/// use trading_client::news::ListNews;
/// use trading_client::timestamp;
/// let week = ListNews::new(&["AAPL", "MSFT"])
///     .start(timestamp::parse("2026-11-16T00:00:00Z")?)
///     .end(timestamp::parse("2026-11-23T00:00:00Z")?)
///     .limit(50);
/// # Ok::<(), trading_client::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListNews {
    /// The symbols the news is about.
    pub(crate) symbols: Vec<String>,
    /// Only items published at or after this instant.
    pub(crate) start: Option<OffsetDateTime>,
    /// Only items published at or before this instant.
    pub(crate) end: Option<OffsetDateTime>,
    /// Items a page (1 to 50). Defaults to the service's (50).
    pub(crate) limit: Option<u32>,
    /// The page a `next_page_token` names.
    pub(crate) page_token: Option<String>,
}

core_http::token_params!(ListNews);

impl ListNews {
    /// News about `symbols`, newest first.
    pub fn new<S: AsRef<str>>(symbols: &[S]) -> Self {
        ListNews {
            symbols: symbols.iter().map(|s| s.as_ref().to_owned()).collect(),
            ..Self::default()
        }
    }

    /// Only items published at or after `t`.
    pub fn start(mut self, t: OffsetDateTime) -> Self {
        self.start = Some(t);
        self
    }

    /// Only items published at or before `t`.
    pub fn end(mut self, t: OffsetDateTime) -> Self {
        self.end = Some(t);
        self
    }

    /// At most `n` items a page (1 to 50).
    pub fn limit(mut self, n: u32) -> Self {
        self.limit = Some(n);
        self
    }

    /// The page `token` names.
    pub fn page_token(mut self, token: impl Into<String>) -> Self {
        self.page_token = Some(token.into());
        self
    }
}

/// The news resource: `client.news()`. News is always about symbols, so there is no
/// `iter()` without them: [`iter_from`](Self::iter_from) with a [`ListNews`].
#[derive(Debug, Clone, Copy)]
pub struct News<'a> {
    client: &'a Client,
}

impl<'a> News<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        News { client }
    }

    /// One page of news, newest first: the first, or the one `params.page_token` names.
    /// `GET /v1/news?symbols&start&end&limit&page_token`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::news::ListNews;
    /// let page = client.news().list(&ListNews::new(&["AAPL"]).limit(10))?;
    /// for item in &page.data {
    ///     println!("{}", item.headline);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn list(&self, params: &ListNews) -> Result<TokenPage<NewsItem>> {
        let symbols = check_symbols(&params.symbols)?;
        core_http::service::check_page_size(params.limit, MAX_PAGE_SIZE)?;
        if let (Some(start), Some(end)) = (params.start, params.end)
            && start > end
        {
            return Err(core_http::Error::InvalidRequest(
                "the news range starts after it ends".into(),
            ));
        }
        let format = core_http::timestamp::format;
        let page: NewsList = self
            .client
            .http()
            .get("/v1/news")
            .query("symbols", symbols)
            .query_opt("start", params.start.map(format))
            .query_opt("end", params.end.map(format))
            .query_opt("limit", params.limit)
            .query_opt("page_token", params.page_token.as_deref())
            .send_json()?;
        Ok(TokenPage::new(page.news, page.next_page_token))
    }

    /// Every item `params` selects, newest first, from the page its token names (the
    /// first without one), fetched as the iteration reaches them; `resume_token()` tells
    /// where to go on later.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::news::ListNews;
    /// use trading_client::time::{Duration, OffsetDateTime};
    /// let end = OffsetDateTime::now_utc();
    /// let last_week = ListNews::new(&["AAPL"]).start(end - Duration::days(7)).end(end);
    /// let mut items = client.news().iter_from(&last_week);
    /// for item in items.by_ref().take(20) {
    ///     println!("{}", item?.headline);
    /// }
    /// let go_on_from = items.resume_token().map(str::to_owned);
    /// # let _ = go_on_from;
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn iter_from(&self, params: &ListNews) -> TokenPaginator<NewsItem> {
        let client = self.client.clone();
        TokenPaginator::over(self.client.http(), params, move |p| client.news().list(p))
    }

    /// The items `params` selects, page by page.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::news::ListNews;
    /// for page in client.news().pages(&ListNews::new(&["AAPL"]).limit(50)) {
    ///     println!("{} items", page?.data.len());
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn pages(&self, params: &ListNews) -> TokenPages<NewsItem> {
        let client = self.client.clone();
        TokenPages::over(self.client.http(), params, move |p| client.news().list(p))
    }
}

/// Reached from the client.
impl Client {
    /// News and earnings.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::news::ListNews;
    /// for item in client.news().iter_from(&ListNews::new(&["AAPL"])).take(5) {
    ///     println!("{}", item?.headline);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn news(&self) -> News<'_> {
        News::new(self)
    }
}
