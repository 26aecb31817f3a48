//! The account's past: activities (fills and cash movements), paged and filtered, at
//! `GET /v1/activities`; and the portfolio's history (equity and profit or loss over a
//! period) at `GET /v1/account/history`.

use core_http::{
    Result,
    pagination::{TokenPage, TokenPages, TokenPaginator},
};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::client::Client;
use crate::orders::{Direction, OrderId, Side};

core_http::string_enum! {
    /// What an activity was.
    pub enum ActivityType in activities {
        /// One execution of an order.
        Fill = "fill",
        /// Money paid in.
        Deposit = "deposit",
        /// Money paid out.
        Withdrawal = "withdrawal",
        /// A dividend paid.
        Dividend = "dividend",
        /// A fee charged.
        Fee = "fee",
    }
}

/// One activity: a fill, or a movement of cash. Only `id` is required; amounts the
/// answer does not carry are `None`, never zero.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Activity {
    /// Its id (a fill's is its execution id).
    #[serde(deserialize_with = "core_http::de::text")]
    pub id: String,
    /// What it was.
    #[serde(default)]
    pub activity_type: ActivityType,
    /// When.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub transaction_time: Option<OffsetDateTime>,
    /// A fill's symbol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// A fill's side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// A fill's quantity.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub qty: Option<Decimal>,
    /// A fill's price.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub price: Option<Decimal>,
    /// What it did to cash: negative for a buy or a withdrawal, positive for a sale or
    /// a deposit.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub net_amount: Option<Decimal>,
    /// A fill's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_id: Option<OrderId>,
    /// A cash movement's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Which activities to list. Every filter is optional.
///
/// ```
/// use trading_client::{activities::{ActivityType, ListActivities}, orders::Direction};
/// use trading_client::timestamp;
/// let params = ListActivities::new()
///     .types(&[ActivityType::Fill])
///     .after(timestamp::parse("2026-11-01T00:00:00Z")?)
///     .direction(Direction::Asc)
///     .limit(100);
/// # Ok::<(), trading_client::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListActivities {
    /// Only these types (none: every type).
    pub(crate) types: Vec<ActivityType>,
    /// Only activities after this instant.
    pub(crate) after: Option<OffsetDateTime>,
    /// Only activities at or before this instant.
    pub(crate) until: Option<OffsetDateTime>,
    /// Newest first (the default) or oldest first.
    pub(crate) direction: Option<Direction>,
    /// At most this many a page (1 to 100; the service's default is 50).
    pub(crate) limit: Option<u32>,
    /// The page a `next_page_token` names.
    pub(crate) page_token: Option<String>,
}

core_http::token_params!(ListActivities);

impl ListActivities {
    /// Every activity, newest first.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only activities of these types.
    pub fn types(mut self, types: &[ActivityType]) -> Self {
        self.types = types.to_vec();
        self
    }

    /// Only activities after `t`.
    pub fn after(mut self, t: OffsetDateTime) -> Self {
        self.after = Some(t);
        self
    }

    /// Only activities at or before `t`.
    pub fn until(mut self, t: OffsetDateTime) -> Self {
        self.until = Some(t);
        self
    }

    /// Newest first (the default) or oldest first.
    pub fn direction(mut self, direction: Direction) -> Self {
        self.direction = Some(direction);
        self
    }

    /// At most `n` a page (1 to 100).
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

/// A page of activities as the service answers it.
#[derive(Deserialize)]
struct ActivityList {
    #[serde(deserialize_with = "core_http::de::or_default")]
    activities: Vec<Activity>,
    #[serde(default, deserialize_with = "core_http::de::opt_text")]
    next_page_token: Option<String>,
}

core_http::string_enum! {
    /// The span of a portfolio history.
    pub enum Period in activities {
        /// One day.
        Day = "1D",
        /// One week.
        Week = "1W",
        /// One month (30 days).
        Month = "1M",
        /// Three months (90 days).
        ThreeMonths = "3M",
        /// One year.
        Year = "1A",
    }
}

core_http::string_enum! {
    /// The step between the points of a portfolio history.
    pub enum Step in activities {
        /// One minute.
        Minute = "1Min",
        /// Five minutes.
        FiveMinutes = "5Min",
        /// Fifteen minutes.
        FifteenMinutes = "15Min",
        /// One hour.
        Hour = "1H",
        /// One day.
        Day = "1D",
    }
}

/// One point of a portfolio history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EquityPoint {
    /// When.
    #[serde(with = "core_http::timestamp")]
    pub timestamp: OffsetDateTime,
    /// The account's value then (cash and positions at the prices then).
    #[serde(deserialize_with = "crate::money::required_decimal")]
    pub equity: Decimal,
    /// Gain or loss since the first point.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub profit_loss: Option<Decimal>,
    /// The same as a fraction of the first point's equity (0.01 is 1 %).
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub profit_loss_pct: Option<Decimal>,
}

/// The portfolio's equity over a period, oldest point first.
///
/// Read from `{"points": [{timestamp, equity, profit_loss, profit_loss_pct}], ...}` (the
/// sandbox's shape), or from the parallel arrays other brokers answer
/// (`{"timestamp": [..], "equity": [..], "profit_loss": [..], "profit_loss_pct": [..]}`,
/// timestamps as RFC 3339 or Unix seconds), whose lengths must agree. An answer with
/// neither is a decode error, never an empty history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "HistoryWire")]
#[non_exhaustive]
pub struct PortfolioHistory {
    /// The step between points, as the service gave it.
    #[serde(default)]
    pub timeframe: Step,
    /// The equity the profit or loss is measured against (the first point's).
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub base_value: Option<Decimal>,
    /// The points, oldest first.
    pub points: Vec<EquityPoint>,
}

/// A portfolio history as it may come: points, or parallel arrays.
#[derive(Deserialize)]
struct HistoryWire {
    #[serde(default)]
    timeframe: Step,
    #[serde(default, deserialize_with = "crate::money::opt_decimal")]
    base_value: Option<Decimal>,
    #[serde(default)]
    points: Option<Vec<EquityPoint>>,
    #[serde(default)]
    timestamp: Option<Vec<Stamp>>,
    #[serde(default)]
    equity: Option<Vec<Money>>,
    #[serde(default)]
    profit_loss: Option<Vec<MaybeMoney>>,
    #[serde(default)]
    profit_loss_pct: Option<Vec<MaybeMoney>>,
}

/// A point's time: RFC 3339, or Unix seconds.
struct Stamp(OffsetDateTime);

impl<'de> Deserialize<'de> for Stamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Seconds(i64),
            Text(String),
        }
        let at = match Either::deserialize(d)? {
            Either::Seconds(s) => OffsetDateTime::from_unix_timestamp(s).ok(),
            Either::Text(t) => core_http::timestamp::parse(&t).ok(),
        };
        at.map(Stamp)
            .ok_or_else(|| serde::de::Error::custom("a timestamp is RFC 3339 or Unix seconds"))
    }
}

#[derive(Deserialize)]
struct Money(#[serde(deserialize_with = "crate::money::required_decimal")] Decimal);

#[derive(Deserialize)]
struct MaybeMoney(#[serde(deserialize_with = "crate::money::opt_decimal")] Option<Decimal>);

impl TryFrom<HistoryWire> for PortfolioHistory {
    type Error = String;

    fn try_from(wire: HistoryWire) -> std::result::Result<Self, String> {
        let points = match (wire.points, wire.timestamp, wire.equity) {
            (Some(points), _, _) => points,
            (None, Some(times), Some(equity)) => {
                let n = times.len();
                let same = |name: &str, len: Option<usize>| match len {
                    Some(len) if len != n => Err(format!(
                        "the history's {name} has {len} values for {n} timestamps"
                    )),
                    _ => Ok(()),
                };
                same("equity", Some(equity.len()))?;
                same("profit_loss", wire.profit_loss.as_ref().map(Vec::len))?;
                same(
                    "profit_loss_pct",
                    wire.profit_loss_pct.as_ref().map(Vec::len),
                )?;
                let nth = |list: &Option<Vec<MaybeMoney>>, i: usize| {
                    list.as_ref().and_then(|l| l.get(i)).and_then(|m| m.0)
                };
                times
                    .into_iter()
                    .zip(equity)
                    .enumerate()
                    .map(|(i, (t, e))| EquityPoint {
                        timestamp: t.0,
                        equity: e.0,
                        profit_loss: nth(&wire.profit_loss, i),
                        profit_loss_pct: nth(&wire.profit_loss_pct, i),
                    })
                    .collect()
            }
            _ => {
                return Err(
                    "the history has neither `points` nor `timestamp` and `equity` \
                            arrays: its shape is not one the client knows"
                        .into(),
                );
            }
        };
        Ok(PortfolioHistory {
            timeframe: wire.timeframe,
            base_value: wire.base_value,
            points,
        })
    }
}

/// The activities resource: `client.activities()`.
#[derive(Debug, Clone, Copy)]
pub struct Activities<'a> {
    client: &'a Client,
}

impl<'a> Activities<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Activities { client }
    }

    /// One page of activities.
    /// `GET /v1/activities?types&after&until&direction&page_size&page_token` (`limit` is
    /// sent as `page_size`).
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::activities::{ActivityType, ListActivities};
    /// let page = client.activities().list(&ListActivities::new().types(&[ActivityType::Fill]))?;
    /// for a in &page.data {
    ///     println!("{} {:?} {:?} at {:?}", a.id, a.side, a.qty, a.price);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn list(&self, params: &ListActivities) -> Result<TokenPage<Activity>> {
        core_http::service::check_page_size(params.limit, 100)?;
        let format = core_http::timestamp::format;
        let types = params
            .types
            .iter()
            .map(ActivityType::as_str)
            .collect::<Vec<_>>()
            .join(",");
        let page: ActivityList = self
            .client
            .http()
            .get("/v1/activities")
            .query_opt("types", (!types.is_empty()).then_some(types))
            .query_opt("after", params.after.map(format))
            .query_opt("until", params.until.map(format))
            .query_opt("direction", params.direction.map(Direction::as_str))
            .query_opt("page_size", params.limit)
            .query_opt("page_token", params.page_token.as_deref())
            .send_json()?;
        Ok(TokenPage::new(page.activities, page.next_page_token))
    }

    /// Every activity, newest first, page after page as the iteration reaches them.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::Decimal;
    /// let mut cash = Decimal::ZERO;
    /// for a in client.activities().iter() {
    ///     cash += a?.net_amount.unwrap_or_default();
    /// }
    /// println!("net cash moved: {cash}");
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn iter(&self) -> TokenPaginator<Activity> {
        self.iter_from(&ListActivities::new())
    }

    /// Every activity `params` selects, from the page its token names (the first without
    /// one); `resume_token()` tells where to go on.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::activities::{ActivityType, ListActivities};
    /// let fills = ListActivities::new().types(&[ActivityType::Fill]).limit(100);
    /// for a in client.activities().iter_from(&fills) {
    ///     println!("{}", a?.id);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn iter_from(&self, params: &ListActivities) -> TokenPaginator<Activity> {
        let client = self.client.clone();
        TokenPaginator::over(self.client.http(), params, move |p| {
            client.activities().list(p)
        })
    }

    /// The activities `params` selects, page by page.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::activities::ListActivities;
    /// for page in client.activities().pages(&ListActivities::new().limit(100)) {
    ///     println!("{} activities", page?.data.len());
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn pages(&self, params: &ListActivities) -> TokenPages<Activity> {
        let client = self.client.clone();
        TokenPages::over(self.client.http(), params, move |p| {
            client.activities().list(p)
        })
    }
}

/// The query of a portfolio history (`None`s leave the service's defaults: a month, a
/// point a day (five minutes for a day), ending now).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PortfolioQuery {
    /// The span.
    pub(crate) period: Option<Period>,
    /// The step between points.
    pub(crate) timeframe: Option<Step>,
    /// The last point (default now).
    pub(crate) end: Option<OffsetDateTime>,
}

impl PortfolioQuery {
    /// `period` in steps of `timeframe`, ending now.
    pub fn new(period: Period, timeframe: Step) -> Self {
        PortfolioQuery {
            period: Some(period),
            timeframe: Some(timeframe),
            end: None,
        }
    }

    /// Ending at `t` rather than now.
    pub fn end(mut self, t: OffsetDateTime) -> Self {
        self.end = Some(t);
        self
    }

    pub(crate) fn send(&self, client: &Client) -> Result<PortfolioHistory> {
        client
            .http()
            .get("/v1/account/history")
            .query_opt("period", self.period.as_ref().map(Period::as_str))
            .query_opt("timeframe", self.timeframe.as_ref().map(Step::as_str))
            .query_opt("end", self.end.map(core_http::timestamp::format))
            .send_json()
    }
}

/// Reached from the client.
impl Client {
    /// Account activities: fills and cash movements, paged and filtered.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// for activity in client.activities().iter().take(10) {
    ///     let a = activity?;
    ///     println!("{} {} {:?}", a.id, a.activity_type, a.net_amount);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn activities(&self) -> Activities<'_> {
        Activities::new(self)
    }
}
