//! Offset/limit lists: item by item, or page by page, under one set of stopping rules.

use std::collections::VecDeque;
use std::fmt;

use serde::Serialize;

use super::ahead::{self, Ahead};
use super::{DEFAULT_MAX_PAGES, Page, PageParams, SeenKeys};
use crate::error::{CutShort, Error, Result};

/// The page fetcher of the iterators list methods return, boxed so that their types can
/// be named: `OffsetPaginator<Post>`, `OffsetPages<Post>`.
pub type OffsetFetch<T> = Box<dyn FnMut(u64, u32) -> Result<Page<T>> + Send>;

/// An offset page fetch, on the caller's thread or one page ahead.
type Fetcher<T, F> = Ahead<F, (u64, u32), Page<T>>;

/// Fetches the page at `offset` of `limit` items.
fn call<T, F: FnMut(u64, u32) -> Result<Page<T>>>(
    fetch: &mut F,
    (offset, limit): (u64, u32),
) -> Result<Page<T>> {
    fetch(offset, limit)
}

/// Starts the fetch of a list method's page on a thread of its own.
fn spawn<T: Send + 'static>(
    fetch: &std::sync::Arc<std::sync::Mutex<OffsetFetch<T>>>,
    at: (u64, u32),
    dropped: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::sync::mpsc::Receiver<Result<Page<T>>> {
    ahead::on_thread(fetch, at, dropped, call)
}

/// Where a list method's iteration starts, and its fetch over offsets, one page ahead
/// when `client` says so: what [`OffsetPaginator::over`] and [`OffsetPages::over`] both
/// begin with.
fn start<T: Send + 'static>(
    client: &crate::HttpClient,
    params: &PageParams,
    max: u32,
    mut fetch: impl FnMut(&PageParams) -> Result<Page<T>> + Send + 'static,
) -> (u64, u32, Fetcher<T, OffsetFetch<T>>) {
    let by_offset: OffsetFetch<T> =
        Box::new(move |offset, limit| fetch(&PageParams::new().limit(limit).offset(offset)));
    let fetcher = Ahead::new(by_offset).set(client.inner.config.prefetch.then_some(spawn::<T>));
    (
        params.offset.unwrap_or(0),
        params.limit.unwrap_or(max),
        fetcher,
    )
}

/// Iterates an offset/limit list item by item.
///
/// It stops after an error, at an empty page, at a page shorter than the page size, or
/// when the offset reaches the server's `total`, whichever comes first. A list that
/// cannot be read to its end (a page whose items were already given by any page before
/// it: a server that ignores `offset`, or serves two pages in turn; or
/// [`max_pages`](Self::max_pages) pages) ends with [`Error::ListCutShort`], never
/// silently. So a missing, wrong or huge `total` cannot make it loop forever, and a list
/// that ends without that error is whole. Pages are remembered as 128-bit keyed hashes
/// of their items (16 bytes a page), as page-token lists remember their tokens.
pub struct OffsetPaginator<T, F = OffsetFetch<T>> {
    fetch: Fetcher<T, F>,
    cursor: OffsetCursor<T>,
    buffer: VecDeque<T>,
    progress: super::Progress,
}

/// Where an offset/limit iteration stands, and the stopping rules that
/// [`OffsetPaginator`] and [`OffsetPages`] share.
struct OffsetCursor<T> {
    page_size: u32,
    offset: u64,
    /// The pages read so far, by their items.
    seen: SeenKeys,
    pages: u64,
    max_pages: u64,
    done: bool,
    _items: std::marker::PhantomData<fn(&T)>,
}

impl<T: Serialize> OffsetCursor<T> {
    fn new(offset: u64, page_size: u32) -> Self {
        OffsetCursor {
            page_size: page_size.max(1),
            offset,
            seen: SeenKeys::default(),
            pages: 0,
            max_pages: DEFAULT_MAX_PAGES,
            done: false,
            _items: std::marker::PhantomData,
        }
    }

    /// Fetches the next page with `fetch(offset, limit)`: `None` once the iteration has
    /// ended, [`Error::ListCutShort`] at the page cap, the fetch's error (which ends it).
    fn fetch<P>(&mut self, fetch: impl FnOnce(u64, u32) -> Result<P>) -> Option<Result<P>> {
        if self.done {
            return None;
        }
        if self.pages >= self.max_pages {
            self.done = true;
            return Some(Err(Error::ListCutShort {
                pages: self.pages,
                reason: CutShort::PageCap,
            }));
        }
        self.pages += 1;
        let page = fetch(self.offset, self.page_size);
        if page.is_err() {
            self.done = true;
        }
        Some(page)
    }

    /// The page the caller will ask for next, unless it stops: none once the list has
    /// ended or at the page cap.
    fn next_page(&self) -> Option<(u64, u32)> {
        (!self.done && self.pages < self.max_pages).then_some((self.offset, self.page_size))
    }

    /// Fetches the next page through `fetch` (the one fetched ahead, when it is that
    /// one), as [`fetch`](Self::fetch) does.
    fn fetch_from<F: FnMut(u64, u32) -> Result<Page<T>>>(
        &mut self,
        fetch: &mut Fetcher<T, F>,
    ) -> Option<Result<Page<T>>> {
        self.fetch(|offset, limit| fetch.get((offset, limit), call))
    }

    /// Takes a fetched page's items in: [`Error::ListCutShort`] (and the end) when they
    /// are a page already read (a server that ignores `offset`, or serves pages in
    /// turn); otherwise the offset moves on, and an empty or short page, or the server's
    /// `total` reached, ends the iteration.
    fn accept(&mut self, items: &[T], total: Option<u64>) -> Result<()> {
        if !items.is_empty() && !self.seen.insert_new(&items) {
            log::warn!(
                "the server sent a page it had sent before, at offset {}; the list is cut short",
                self.offset
            );
            self.done = true;
            return Err(Error::ListCutShort {
                pages: self.pages,
                reason: CutShort::RepeatedPage,
            });
        }
        let n = items.len() as u64;
        self.offset = self.offset.saturating_add(n);
        let reached_total = total.is_some_and(|t| self.offset >= t);
        if n == 0 || n < u64::from(self.page_size) || reached_total {
            self.done = true;
        }
        Ok(())
    }
}

impl<T, F> OffsetPaginator<T, F>
where
    T: Serialize,
    F: FnMut(u64, u32) -> Result<Page<T>>,
{
    /// An iterator that calls `fetch(offset, limit)` for each page, starting at offset 0.
    pub fn new(page_size: u32, fetch: F) -> Self {
        Self::starting_at(0, page_size, fetch)
    }

    /// An iterator starting at `offset`.
    pub fn starting_at(offset: u64, page_size: u32, fetch: F) -> Self {
        OffsetPaginator {
            fetch: Ahead::new(fetch),
            cursor: OffsetCursor::new(offset, page_size),
            buffer: VecDeque::new(),
            progress: super::Progress::default(),
        }
    }

    /// Fetches at most `pages` pages. Defaults to [`DEFAULT_MAX_PAGES`].
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.cursor.max_pages = pages;
        self
    }

    /// The offset of the next page to fetch, once the items fetched so far are used up
    /// (start a new iteration there).
    pub fn next_offset(&self) -> u64 {
        self.cursor.offset
    }

    /// Items fetched but not yet yielded (a page fetched ahead is not among them).
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Calls `progress(items, total)` after each page with the items fetched so far and
    /// the list's total when the page gave it: for a progress bar over a long list.
    pub fn on_progress(mut self, progress: impl FnMut(u64, Option<u64>) + Send + 'static) -> Self {
        self.progress.set(progress);
        self
    }
}

impl<T: Serialize + Send + 'static> OffsetPaginator<T> {
    /// Every item of the list `fetch` reads a page of, from `params.offset` (0 when
    /// unset), `params.limit` a page (`max`, the service's largest, when unset): a list
    /// method's whole iterator, `OffsetPaginator::over(http, params, MAX, move |p|
    /// client.posts().list(p))`. The next page is fetched while the caller reads the
    /// current one when `client` does that
    /// ([`ClientBuilder::prefetch`](crate::ClientBuilder::prefetch)).
    pub fn over(
        client: &crate::HttpClient,
        params: &PageParams,
        max: u32,
        fetch: impl FnMut(&PageParams) -> Result<Page<T>> + Send + 'static,
    ) -> Self {
        let (offset, page_size, fetch) = start(client, params, max, fetch);
        OffsetPaginator {
            fetch,
            cursor: OffsetCursor::new(offset, page_size),
            buffer: VecDeque::new(),
            progress: super::Progress::default(),
        }
    }

    /// Whether this list fetches its next page while the caller reads the current one:
    /// `false` asks for each page only when the caller comes to it. The client's
    /// setting by default ([`ClientBuilder::prefetch`](crate::ClientBuilder::prefetch)).
    pub fn prefetch(mut self, on: bool) -> Self {
        self.fetch = self.fetch.set(on.then_some(spawn::<T>));
        self
    }
}

impl<T, F> Iterator for OffsetPaginator<T, F>
where
    T: Serialize,
    F: FnMut(u64, u32) -> Result<Page<T>>,
{
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(item) = self.buffer.pop_front() {
            return Some(Ok(item));
        }
        let page = match self.cursor.fetch_from(&mut self.fetch)? {
            Ok(page) => page,
            Err(e) => return Some(Err(e)),
        };
        let total = page.total();
        if let Err(cut) = self.cursor.accept(&page.data, total) {
            return Some(Err(cut));
        }
        if let Some(next) = self.cursor.next_page() {
            self.fetch.next_is(next);
        }
        self.progress.add(page.data.len(), total);
        self.buffer.extend(page.data);
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
/// the server's `total`; cut short with [`Error::ListCutShort`] at a page that repeats
/// the previous one and after [`max_pages`](Self::max_pages) pages.
pub struct OffsetPages<T, F = OffsetFetch<T>> {
    fetch: Fetcher<T, F>,
    cursor: OffsetCursor<T>,
}

impl<T, F> OffsetPages<T, F>
where
    T: Serialize,
    F: FnMut(u64, u32) -> Result<Page<T>>,
{
    /// Pages of `page_size` items from `offset`, each fetched by `fetch(offset, limit)`.
    pub fn starting_at(offset: u64, page_size: u32, fetch: F) -> Self {
        OffsetPages {
            fetch: Ahead::new(fetch),
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

impl<T: Serialize + Send + 'static> OffsetPages<T> {
    /// The pages of the list `fetch` reads, as [`OffsetPaginator::over`] reads them.
    pub fn over(
        client: &crate::HttpClient,
        params: &PageParams,
        max: u32,
        fetch: impl FnMut(&PageParams) -> Result<Page<T>> + Send + 'static,
    ) -> Self {
        let (offset, page_size, fetch) = start(client, params, max, fetch);
        OffsetPages {
            fetch,
            cursor: OffsetCursor::new(offset, page_size),
        }
    }

    /// Whether the next page is fetched while the caller reads the current one, as
    /// [`OffsetPaginator::prefetch`] says.
    pub fn prefetch(mut self, on: bool) -> Self {
        self.fetch = self.fetch.set(on.then_some(spawn::<T>));
        self
    }
}

impl<T, F> Iterator for OffsetPages<T, F>
where
    T: Serialize,
    F: FnMut(u64, u32) -> Result<Page<T>>,
{
    type Item = Result<Page<T>>;

    fn next(&mut self) -> Option<Self::Item> {
        let page = match self.cursor.fetch_from(&mut self.fetch)? {
            Ok(page) => page,
            Err(e) => return Some(Err(e)),
        };
        // An empty page ends the pages without being one.
        if page.data.is_empty() {
            self.cursor.done = true;
            return None;
        }
        if let Err(cut) = self.cursor.accept(&page.data, page.total()) {
            return Some(Err(cut));
        }
        if let Some(next) = self.cursor.next_page() {
            self.fetch.next_is(next);
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
