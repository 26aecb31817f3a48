//! Lazy iterators over paged lists: offset/limit pages and page-token pages. They fetch
//! a page only when the previous one is used up, and never loop forever on a server that
//! omits the total or repeats a token.

use std::collections::{HashSet, VecDeque};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One page of a `{"data": [...], "meta": {"total", "limit", "offset"}}` list, the
/// offset/limit convention the services share. A missing `meta` or `data` decodes as
/// `None` or empty rather than failing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Page<T> {
    /// The items.
    #[serde(default = "Vec::new")]
    pub data: Vec<T>,
    /// Paging figures, when the server sent them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<PageMeta>,
}

/// The paging figures of a [`Page`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PageMeta {
    /// How many items there are in all, when the server said. A negative, fractional or
    /// non-numeric total is a decode error, never a total to stop at.
    #[serde(
        default,
        deserialize_with = "crate::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub total: Option<u64>,
    /// The page size used.
    #[serde(
        default,
        deserialize_with = "crate::de::opt_u32",
        skip_serializing_if = "Option::is_none"
    )]
    pub limit: Option<u32>,
    /// The offset used.
    #[serde(
        default,
        deserialize_with = "crate::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub offset: Option<u64>,
}

impl<T> From<Page<T>> for OffsetPage<T> {
    fn from(page: Page<T>) -> Self {
        OffsetPage {
            total: page.meta.and_then(|m| m.total),
            items: page.data,
        }
    }
}

/// Which page of a `{data, meta}` list to fetch: `?limit&offset`, each sent only when
/// set, so the service's defaults apply otherwise. Give it to
/// [`RequestBuilder::page`](crate::RequestBuilder::page), which checks the limit.
///
/// ```
/// # mod social_client { pub use core_http::*; pub type Client = core_http::HttpClient; }
/// let params = social_client::PageParams::new().limit(50).offset(100);
/// assert_eq!((params.limit, params.offset), (Some(50), Some(100)));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageParams {
    /// Page size; the service's default when `None`.
    pub limit: Option<u32>,
    /// How many items to skip; 0 when `None`.
    pub offset: Option<u64>,
}

impl PageParams {
    /// The first page at the service's default size.
    pub fn new() -> Self {
        PageParams::default()
    }

    /// Sets the page size (checked against the service's largest before sending).
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Sets how many items to skip.
    pub fn offset(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }
}

/// Refuses a page size outside `1..=max` before anything is sent, with an error that
/// says what was wrong.
pub fn check_page_size(limit: Option<u32>, max: u32) -> Result<()> {
    match limit {
        Some(limit) if !(1..=max).contains(&limit) => Err(Error::InvalidRequest(format!(
            "limit must be from 1 to {max}, got {limit}"
        ))),
        _ => Ok(()),
    }
}

/// One page of an offset/limit list.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetPage<T> {
    /// The items of the page.
    pub items: Vec<T>,
    /// The total number of items, when the server gave it.
    pub total: Option<u64>,
}

/// The most pages one iteration fetches unless told otherwise: 10,000 (a million items
/// at 100 a page). Change it with `max_pages`.
pub const DEFAULT_MAX_PAGES: u64 = 10_000;

/// Iterates an offset/limit list item by item.
///
/// It stops after an error, at an empty page, at a page shorter than the page size, when
/// the offset reaches the server's `total`, or when a page repeats the previous page's
/// items (a server that ignores `offset`), whichever comes first; and after
/// [`max_pages`](Self::max_pages) pages it yields [`Error::TooManyPages`] and stops. So a
/// missing, wrong or huge `total` cannot make it loop forever.
pub struct OffsetPaginator<T, F> {
    fetch: F,
    cursor: OffsetCursor<T>,
    buffer: VecDeque<T>,
}

/// Where an offset/limit iteration stands, and the stopping rules that
/// [`OffsetPaginator`] and [`OffsetPages`] share.
struct OffsetCursor<T> {
    page_size: u32,
    offset: u64,
    previous: Vec<T>,
    pages: u64,
    max_pages: u64,
    done: bool,
}

impl<T: Clone + PartialEq> OffsetCursor<T> {
    fn new(offset: u64, page_size: u32) -> Self {
        OffsetCursor {
            page_size: page_size.max(1),
            offset,
            previous: Vec::new(),
            pages: 0,
            max_pages: DEFAULT_MAX_PAGES,
            done: false,
        }
    }

    /// Fetches the next page with `fetch(offset, limit)`: `None` once the iteration has
    /// ended, [`Error::TooManyPages`] at the page cap, the fetch's error (which ends it).
    fn fetch<P>(&mut self, fetch: impl FnOnce(u64, u32) -> Result<P>) -> Option<Result<P>> {
        if self.done {
            return None;
        }
        if self.pages >= self.max_pages {
            self.done = true;
            return Some(Err(Error::TooManyPages { pages: self.pages }));
        }
        self.pages += 1;
        let page = fetch(self.offset, self.page_size);
        if page.is_err() {
            self.done = true;
        }
        Some(page)
    }

    /// Takes a fetched page's items in: `false` (and the end) when they repeat the
    /// previous page's (a server that ignores `offset`); otherwise the offset moves on,
    /// and an empty or short page, or the server's `total` reached, ends the iteration.
    fn accept(&mut self, items: &[T], total: Option<u64>) -> bool {
        if !items.is_empty() && items == self.previous.as_slice() {
            log::warn!(
                "the server sent the same page again at offset {}; stopping the iteration",
                self.offset
            );
            self.done = true;
            return false;
        }
        let n = items.len() as u64;
        self.offset = self.offset.saturating_add(n);
        let reached_total = total.is_some_and(|t| self.offset >= t);
        if n == 0 || n < u64::from(self.page_size) || reached_total {
            self.done = true;
        } else {
            self.previous.clear();
            self.previous.extend_from_slice(items);
        }
        true
    }
}

impl<T, F> OffsetPaginator<T, F>
where
    T: Clone + PartialEq,
    F: FnMut(u64, u32) -> Result<OffsetPage<T>>,
{
    /// An iterator that calls `fetch(offset, limit)` for each page, starting at offset 0.
    pub fn new(page_size: u32, fetch: F) -> Self {
        Self::starting_at(0, page_size, fetch)
    }

    /// An iterator starting at `offset`.
    pub fn starting_at(offset: u64, page_size: u32, fetch: F) -> Self {
        OffsetPaginator {
            fetch,
            cursor: OffsetCursor::new(offset, page_size),
            buffer: VecDeque::new(),
        }
    }

    /// Fetches at most `pages` pages. Defaults to [`DEFAULT_MAX_PAGES`].
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.cursor.max_pages = pages;
        self
    }

    /// The offset of the next page to fetch.
    pub fn next_offset(&self) -> u64 {
        self.cursor.offset
    }
}

impl<T, F> Iterator for OffsetPaginator<T, F>
where
    T: Clone + PartialEq,
    F: FnMut(u64, u32) -> Result<OffsetPage<T>>,
{
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(item) = self.buffer.pop_front() {
            return Some(Ok(item));
        }
        let page = match self.cursor.fetch(&mut self.fetch)? {
            Ok(page) => page,
            Err(e) => return Some(Err(e)),
        };
        if !self.cursor.accept(&page.items, page.total) {
            return None;
        }
        self.buffer.extend(page.items);
        self.buffer.pop_front().map(Ok)
    }
}

impl<T, F> fmt::Debug for OffsetPaginator<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OffsetPaginator")
            .field("page_size", &self.cursor.page_size)
            .field("offset", &self.cursor.offset)
            .field("pages", &self.cursor.pages)
            .field("buffered", &self.buffer.len())
            .field("done", &self.cursor.done)
            .finish()
    }
}

/// Iterates an offset/limit list page by page (`{data, meta}` pages), with the same
/// stopping rules as [`OffsetPaginator`]: after an error, at an empty or short page, at
/// the server's `total`, at a page that repeats the previous one, and after
/// [`max_pages`](Self::max_pages) pages ([`Error::TooManyPages`]).
pub struct OffsetPages<T, F> {
    fetch: F,
    cursor: OffsetCursor<T>,
}

impl<T, F> OffsetPages<T, F>
where
    T: Clone + PartialEq,
    F: FnMut(u64, u32) -> Result<Page<T>>,
{
    /// Pages of `page_size` items from `offset`, each fetched by `fetch(offset, limit)`.
    pub fn starting_at(offset: u64, page_size: u32, fetch: F) -> Self {
        OffsetPages {
            fetch,
            cursor: OffsetCursor::new(offset, page_size),
        }
    }

    /// Fetches at most `pages` pages. Defaults to [`DEFAULT_MAX_PAGES`].
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.cursor.max_pages = pages;
        self
    }

    /// The offset of the next page to fetch.
    pub fn next_offset(&self) -> u64 {
        self.cursor.offset
    }
}

impl<T, F> Iterator for OffsetPages<T, F>
where
    T: Clone + PartialEq,
    F: FnMut(u64, u32) -> Result<Page<T>>,
{
    type Item = Result<Page<T>>;

    fn next(&mut self) -> Option<Self::Item> {
        let page = match self.cursor.fetch(&mut self.fetch)? {
            Ok(page) => page,
            Err(e) => return Some(Err(e)),
        };
        // An empty page ends the pages without being one.
        if page.data.is_empty() {
            self.cursor.done = true;
            return None;
        }
        let total = page.meta.as_ref().and_then(|m| m.total);
        if !self.cursor.accept(&page.data, total) {
            return None;
        }
        Some(Ok(page))
    }
}

impl<T, F> fmt::Debug for OffsetPages<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OffsetPages")
            .field("page_size", &self.cursor.page_size)
            .field("offset", &self.cursor.offset)
            .field("pages", &self.cursor.pages)
            .field("done", &self.cursor.done)
            .finish()
    }
}

/// The page tokens a listing has used, to notice a server that hands one back: kept as
/// 128-bit keyed hashes (keys random per process, so a server cannot aim a collision), 16
/// bytes a page however long the tokens are.
#[derive(Default)]
struct SeenTokens {
    keys: (std::hash::RandomState, std::hash::RandomState),
    hashes: HashSet<(u64, u64)>,
}

impl SeenTokens {
    fn key(&self, token: &str) -> (u64, u64) {
        use std::hash::BuildHasher;
        (self.keys.0.hash_one(token), self.keys.1.hash_one(token))
    }

    fn insert(&mut self, token: &str) {
        let key = self.key(token);
        self.hashes.insert(key);
    }

    fn contains(&self, token: &str) -> bool {
        self.hashes.contains(&self.key(token))
    }
}

/// Iterates a page-token list page by page: `fetch(token)` gives a page and the token of
/// the next (`None` or empty after the last). It stops after an error, at the last page,
/// at a token the server already gave, and after [`max_pages`](Self::max_pages) pages
/// ([`Error::TooManyPages`]).
pub struct TokenPages<P, F> {
    fetch: F,
    next: Option<String>,
    seen: SeenTokens,
    started: bool,
    pages: u64,
    max_pages: u64,
    done: bool,
    _page: std::marker::PhantomData<fn() -> P>,
}

impl<P, F> TokenPages<P, F>
where
    F: FnMut(Option<&str>) -> Result<(P, Option<String>)>,
{
    /// Pages from the first (`token` `None`) or from the one `token` names.
    pub fn starting_at(token: Option<String>, fetch: F) -> Self {
        TokenPages {
            fetch,
            started: token.is_some(),
            next: token,
            seen: SeenTokens::default(),
            pages: 0,
            max_pages: DEFAULT_MAX_PAGES,
            done: false,
            _page: std::marker::PhantomData,
        }
    }

    /// Fetches at most `pages` pages. Defaults to [`DEFAULT_MAX_PAGES`].
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.max_pages = pages;
        self
    }

    /// The token of the next page (start a new iteration there); `None` after the last.
    pub fn resume_token(&self) -> Option<&str> {
        self.next.as_deref()
    }
}

impl<P, F> Iterator for TokenPages<P, F>
where
    F: FnMut(Option<&str>) -> Result<(P, Option<String>)>,
{
    type Item = Result<P>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || (self.started && self.next.is_none()) {
            return None;
        }
        if self.pages >= self.max_pages {
            self.done = true;
            return Some(Err(Error::TooManyPages { pages: self.pages }));
        }
        self.started = true;
        self.pages += 1;
        let (page, next) = match (self.fetch)(self.next.as_deref()) {
            Ok(answer) => answer,
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        if let Some(t) = self.next.take() {
            self.seen.insert(&t);
        }
        self.next = next.filter(|t| !t.is_empty() && !self.seen.contains(t));
        Some(Ok(page))
    }
}

impl<P, F> fmt::Debug for TokenPages<P, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenPages")
            .field("next", &self.next)
            .field("pages", &self.pages)
            .field("done", &self.done)
            .finish()
    }
}

/// One page of a page-token list.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenPage<T> {
    /// The items of the page.
    pub items: Vec<T>,
    /// The token of the next page; `None` or empty on the last page.
    pub next_token: Option<String>,
}

/// Iterates a page-token list item by item.
///
/// It stops after an error, when the next token is missing or empty, or when the server
/// hands back a token it has already given (which would otherwise loop forever); after
/// [`max_pages`](Self::max_pages) pages it yields [`Error::TooManyPages`] and stops.
/// [`resume_token`](Self::resume_token) tells where to start again later.
pub struct TokenPaginator<T, F> {
    fetch: F,
    next: Option<String>,
    seen: SeenTokens,
    buffer: VecDeque<T>,
    started: bool,
    pages: u64,
    max_pages: u64,
    done: bool,
}

impl<T, F> TokenPaginator<T, F>
where
    F: FnMut(Option<&str>) -> Result<TokenPage<T>>,
{
    /// An iterator that calls `fetch(token)` for each page, with `None` for the first.
    pub fn new(fetch: F) -> Self {
        TokenPaginator {
            fetch,
            next: None,
            seen: SeenTokens::default(),
            buffer: VecDeque::new(),
            started: false,
            pages: 0,
            max_pages: DEFAULT_MAX_PAGES,
            done: false,
        }
    }

    /// An iterator whose first page is the one `token` names (a token from
    /// [`resume_token`](Self::resume_token) of an earlier iteration).
    pub fn starting_at(token: impl Into<String>, fetch: F) -> Self {
        let mut paginator = Self::new(fetch);
        paginator.next = Some(token.into());
        paginator.started = true;
        paginator
    }

    /// Fetches at most `pages` pages. Defaults to [`DEFAULT_MAX_PAGES`].
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.max_pages = pages;
        self
    }

    /// The token of the next page to fetch, once the items fetched so far are used up:
    /// start a new iteration there with [`starting_at`](Self::starting_at). `None` when
    /// there are no more pages, or before the first page.
    pub fn resume_token(&self) -> Option<&str> {
        self.next.as_deref()
    }

    /// Items fetched but not yet yielded.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }
}

impl<T, F> Iterator for TokenPaginator<T, F>
where
    F: FnMut(Option<&str>) -> Result<TokenPage<T>>,
{
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.buffer.pop_front() {
                return Some(Ok(item));
            }
            if self.done || (self.started && self.next.is_none()) {
                return None;
            }
            if self.pages >= self.max_pages {
                self.done = true;
                return Some(Err(Error::TooManyPages { pages: self.pages }));
            }
            self.started = true;
            self.pages += 1;
            let page = match (self.fetch)(self.next.as_deref()) {
                Ok(page) => page,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            if let Some(t) = self.next.take() {
                self.seen.insert(&t);
            }
            self.next = page.next_token.filter(|t| !t.is_empty());
            if let Some(t) = &self.next
                && self.seen.contains(t)
            {
                log::warn!("the server repeated page token {t:?}; stopping the iteration");
                self.next = None;
            }
            if page.items.is_empty() && self.next.is_none() {
                return None;
            }
            self.buffer.extend(page.items);
        }
    }
}

impl<T, F> fmt::Debug for TokenPaginator<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenPaginator")
            .field("next", &self.next)
            .field("pages", &self.pages)
            .field("buffered", &self.buffer.len())
            .field("done", &self.done)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn page(items: &[u32], total: Option<u64>) -> Page<u32> {
        Page {
            data: items.to_vec(),
            meta: total.map(|t| PageMeta {
                total: Some(t),
                limit: None,
                offset: None,
            }),
        }
    }

    #[test]
    fn offset_pages_stop_at_total_short_pages_repeats_and_the_cap() {
        let all: Vec<u32> = (0..7).collect();
        let fetch = |offset: u64, limit: u32| -> Result<Page<u32>> {
            let o = offset as usize;
            Ok(page(&all[o.min(7)..(o + limit as usize).min(7)], Some(7)))
        };
        let sizes: Vec<usize> = OffsetPages::starting_at(0, 3, fetch)
            .map(|p| p.unwrap().data.len())
            .collect();
        assert_eq!(sizes, [3, 3, 1]);
        // A server that ignores the offset: the repeat ends it.
        let same = |_: u64, _: u32| -> Result<Page<u32>> { Ok(page(&[1, 2], None)) };
        assert_eq!(OffsetPages::starting_at(0, 2, same).count(), 1);
        // An endless list: the cap ends it with an error.
        let mut n = 0u32;
        let endless = move |_: u64, _: u32| -> Result<Page<u32>> {
            n += 2;
            Ok(page(&[n, n + 1], None))
        };
        let last = OffsetPages::starting_at(0, 2, endless)
            .max_pages(5)
            .last()
            .unwrap();
        assert!(matches!(last, Err(Error::TooManyPages { pages: 5 })));
    }

    #[test]
    fn token_pages_follow_tokens_resume_and_stop_on_a_repeat() {
        let fetch = |token: Option<&str>| -> Result<(u32, Option<String>)> {
            Ok(match token {
                None => (1, Some("b".into())),
                Some("b") => (2, Some("c".into())),
                Some("c") => (3, Some("b".into())), // a token already given
                Some(_) => (0, None),
            })
        };
        let pages: Vec<u32> = TokenPages::starting_at(None, fetch)
            .map(|p| p.unwrap())
            .collect();
        assert_eq!(pages, [1, 2, 3]);
        let mut from_c = TokenPages::starting_at(Some("c".into()), fetch);
        assert_eq!(from_c.next().unwrap().unwrap(), 3);
        assert_eq!(from_c.resume_token(), Some("b"));
    }
}
