//! Listing orders: which ones ([`ListOrders`]), and a page of them ([`OrderPage`]).

use time::OffsetDateTime;

use super::{OrderStatus, Side};

/// Which orders by where they stand: open, closed, all, or those of one status.
///
/// An *open* order is one that may still fill (new, accepted, partially filled, held,
/// or a parent one of whose legs still works); [`OrderStatus`] has no `Open` because
/// open is several statuses: filter with `StatusFilter::Open` (or
/// [`ListOrders::open`]).
///
/// ```
/// use trading_client::orders::{ListOrders, OrderStatus, StatusFilter};
/// let open = ListOrders::new().status(StatusFilter::Open);
/// let filled = ListOrders::new().status(OrderStatus::Filled);
/// assert_eq!(StatusFilter::from(OrderStatus::Filled), StatusFilter::Is(OrderStatus::Filled));
/// assert_eq!(StatusFilter::Open.as_str(), "open");
/// # let _ = (open, filled);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[doc(alias = "Open")]
pub enum StatusFilter {
    /// Orders that may still fill (the service's default).
    Open,
    /// Orders that will not change any more.
    Closed,
    /// Every order.
    All,
    /// Orders of exactly this status (`status=filled`, for example).
    Is(OrderStatus),
}

impl StatusFilter {
    /// The wire spelling: `open`, `closed`, `all`, or the status's own.
    ///
    /// ```
    /// use trading_client::orders::{OrderStatus, StatusFilter};
    /// assert_eq!(StatusFilter::Closed.as_str(), "closed");
    /// assert_eq!(StatusFilter::from(OrderStatus::Filled).as_str(), "filled");
    /// ```
    pub fn as_str(&self) -> &str {
        match self {
            StatusFilter::Open => "open",
            StatusFilter::Closed => "closed",
            StatusFilter::All => "all",
            StatusFilter::Is(status) => status.as_str(),
        }
    }
}

impl From<OrderStatus> for StatusFilter {
    fn from(status: OrderStatus) -> Self {
        StatusFilter::Is(status)
    }
}

/// The order of a listing by creation time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Direction {
    /// Oldest first.
    Asc,
    /// Newest first (the default).
    #[default]
    Desc,
}

impl Direction {
    /// The wire spelling: `asc` or `desc`.
    ///
    /// ```
    /// assert_eq!(trading_client::orders::Direction::Asc.as_str(), "asc");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Asc => "asc",
            Direction::Desc => "desc",
        }
    }
}

/// Which orders to list, and how. Every filter is optional; together they narrow the
/// list (symbols *and* side *and* dates *and* status).
///
/// ```
/// use trading_client::orders::{Direction, ListOrders, OrderStatus, Side};
/// use trading_client::timestamp;
/// let params = ListOrders::new()
///     .status(OrderStatus::Filled)
///     .symbols(&["AAPL", "MSFT"])
///     .side(Side::Buy)
///     .after(timestamp::parse("2026-11-02T00:00:00Z")?)
///     .until(timestamp::parse("2026-11-07T00:00:00Z")?)
///     .direction(Direction::Asc)
///     .limit(500);
/// # Ok::<(), trading_client::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListOrders {
    /// Where they stand. Defaults to none (the service's default: open).
    pub(crate) status: Option<StatusFilter>,
    /// Only orders in these symbols. Defaults to every symbol.
    pub(crate) symbols: Vec<String>,
    /// Only buys, or only sells. Defaults to both.
    pub(crate) side: Option<Side>,
    /// Only orders placed after this instant.
    pub(crate) after: Option<OffsetDateTime>,
    /// Only orders placed at or before this instant.
    pub(crate) until: Option<OffsetDateTime>,
    /// Newest first (the default) or oldest first. A listing by change
    /// (`updated_since`) is always oldest change first.
    pub(crate) direction: Option<Direction>,
    /// Only orders changed since then (and then oldest change first).
    pub(crate) updated_since: Option<OffsetDateTime>,
    /// At most this many a page (1 to 500). Defaults to none (the service's default:
    /// 100).
    pub(crate) limit: Option<u32>,
    /// The page to read: a `next_page_token` of an earlier page. Defaults to the first.
    pub(crate) page_token: Option<String>,
}

core_http::token_params!(ListOrders);

impl ListOrders {
    /// Open orders, the service's default page.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let open = client.orders().list(&trading_client::orders::ListOrders::new())?;
    /// println!("{} open orders on the first page", open.data.len());
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Orders that stand as `status` says: a [`StatusFilter`] or one [`OrderStatus`].
    pub fn status(mut self, status: impl Into<StatusFilter>) -> Self {
        self.status = Some(status.into());
        self
    }

    /// Open orders only (as the service does when no status is given).
    pub fn open(self) -> Self {
        self.status(StatusFilter::Open)
    }

    /// Every order, open or not.
    pub fn all(self) -> Self {
        self.status(StatusFilter::All)
    }

    /// Closed orders only.
    pub fn closed(self) -> Self {
        self.status(StatusFilter::Closed)
    }

    /// Only orders in these symbols (at most 100).
    pub fn symbols<S: AsRef<str>>(mut self, symbols: &[S]) -> Self {
        self.symbols = symbols
            .iter()
            .map(|s| s.as_ref().trim().to_ascii_uppercase())
            .collect();
        self
    }

    /// Only buys or only sells.
    pub fn side(mut self, side: Side) -> Self {
        self.side = Some(side);
        self
    }

    /// Only orders placed after `t`.
    pub fn after(mut self, t: OffsetDateTime) -> Self {
        self.after = Some(t);
        self
    }

    /// Only orders placed at or before `t`.
    pub fn until(mut self, t: OffsetDateTime) -> Self {
        self.until = Some(t);
        self
    }

    /// Newest first (the default) or oldest first.
    pub fn direction(mut self, direction: Direction) -> Self {
        self.direction = Some(direction);
        self
    }

    /// Only orders changed since `t`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// use trading_client::{time::{Duration, OffsetDateTime}, orders::ListOrders};
    /// let hour_ago = OffsetDateTime::now_utc() - Duration::hours(1);
    /// for order in client.orders().iter_from(&ListOrders::new().all().updated_since(hour_ago)) {
    ///     let order = order?;
    ///     println!("{} is {}", order.id, order.status);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn updated_since(mut self, t: OffsetDateTime) -> Self {
        self.updated_since = Some(t);
        self
    }

    /// At most `n` orders (1 to 500).
    pub fn limit(mut self, n: u32) -> Self {
        self.limit = Some(n);
        self
    }

    /// The page a `next_page_token` names.
    pub fn page_token(mut self, token: impl Into<String>) -> Self {
        self.page_token = Some(token.into());
        self
    }

    /// The query of `GET /v1/orders`.
    pub(crate) fn apply<'c>(
        &self,
        request: core_http::transport::RequestBuilder<'c>,
    ) -> core_http::transport::RequestBuilder<'c> {
        let format = core_http::timestamp::format;
        request
            .query_opt("status", self.status.as_ref().map(StatusFilter::as_str))
            .query_opt(
                "symbols",
                (!self.symbols.is_empty()).then(|| self.symbols.join(",")),
            )
            .query_opt("side", self.side.as_ref().map(Side::as_str))
            .query_opt("after", self.after.map(format))
            .query_opt("until", self.until.map(format))
            .query_opt("direction", self.direction.map(Direction::as_str))
            .query_opt("updated_since", self.updated_since.map(format))
            .query_opt("limit", self.limit)
            .query_opt("page_token", self.page_token.as_deref())
    }
}
