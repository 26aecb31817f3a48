//! Offset/limit lists: item by item, or page by page, under one set of stopping rules.

use std::collections::VecDeque;
use std::fmt;

use serde::Serialize;

use super::{DEFAULT_MAX_PAGES, Page, PageParams, SeenKeys};
use crate::error::{CutShort, Error, Result};

/// The page fetcher of the iterators list methods return, boxed so that their types can
/// be named: `OffsetPaginator<Post>`, `OffsetPages<Post>`.
pub type OffsetFetch<T> = Box<dyn FnMut(u64, u32) -> Result<Page<T>> + Send>;

/// Where a list method's iteration starts, and its fetch over offsets: what
/// [`OffsetPaginator::over`] and [`OffsetPages::over`] both begin with.
fn start<T>(
    params: &PageParams,
    max: u32,
    mut fetch: impl FnMut(&PageParams) -> Result<Page<T>> + Send + 'static,
) -> (u64, u32, OffsetFetch<T>) {
    let by_offset: OffsetFetch<T> =
        Box::new(move |offset, limit| fetch(&PageParams::new().limit(limit).offset(offset)));
    (
        params.offset.unwrap_or(0),
        params.limit.unwrap_or(max),
        by_offset,
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
    fetch: F,
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
            fetch,
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

    /// The offset of the next page to fetch.
    pub fn next_offset(&self) -> u64 {
        self.cursor.offset
    }

    /// Calls `progress(items, total)` after each page with the items fetched so far and
    /// the list's total when the page gave it: for a progress bar over a long list.
    pub fn on_progress(mut self, progress: impl FnMut(u64, Option<u64>) + Send + 'static) -> Self {
        self.progress.set(progress);
        self
    }
}

impl<T: Serialize> OffsetPaginator<T> {
    /// Every item of the list `fetch` reads a page of, from `params.offset` (0 when
    /// unset), `params.limit` a page (`max`, the service's largest, when unset): a list
    /// method's whole iterator, `OffsetPaginator::over(params, MAX, move |p|
    /// client.posts().list(p))`.
    pub fn over(
        params: &PageParams,
        max: u32,
        fetch: impl FnMut(&PageParams) -> Result<Page<T>> + Send + 'static,
    ) -> Self {
        let (offset, page_size, fetch) = start(params, max, fetch);
        Self::starting_at(offset, page_size, fetch)
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
        let page = match self.cursor.fetch(&mut self.fetch)? {
            Ok(page) => page,
            Err(e) => return Some(Err(e)),
        };
        let total = page.total();
        if let Err(cut) = self.cursor.accept(&page.data, total) {
            return Some(Err(cut));
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
    fetch: F,
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

impl<T: Serialize> OffsetPages<T> {
    /// The pages of the list `fetch` reads, as [`OffsetPaginator::over`] reads them.
    pub fn over(
        params: &PageParams,
        max: u32,
        fetch: impl FnMut(&PageParams) -> Result<Page<T>> + Send + 'static,
    ) -> Self {
        let (offset, page_size, fetch) = start(params, max, fetch);
        Self::starting_at(offset, page_size, fetch)
    }
}

impl<T, F> Iterator for OffsetPages<T, F>
where
    T: Serialize,
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
        if let Err(cut) = self.cursor.accept(&page.data, page.total()) {
            return Some(Err(cut));
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
