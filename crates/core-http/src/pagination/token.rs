//! Page-token lists: item by item, or page by page, under one set of stopping rules
//! (the [`TokenCursor`]).

use std::collections::VecDeque;
use std::fmt;

use serde::Serialize;

use super::ahead::{self, Ahead};
use super::{DEFAULT_MAX_PAGES, SeenKeys};
use crate::error::{CutShort, Error, Result};

/// The page fetcher of the iterators list methods return, boxed so that their types can
/// be named: `TokenPaginator<World>`, `TokenPages<World>`.
pub type TokenFetch<T> = Box<dyn FnMut(Option<&str>) -> Result<TokenPage<T>> + Send>;

/// A page-token fetch, on the caller's thread or one page ahead.
type Fetcher<T, F> = Ahead<F, Option<String>, TokenPage<T>>;

/// Fetches the page `token` names (the first for `None`).
fn call<T, F: FnMut(Option<&str>) -> Result<TokenPage<T>>>(
    fetch: &mut F,
    token: Option<String>,
) -> Result<TokenPage<T>> {
    fetch(token.as_deref())
}

/// Starts the fetch of a list method's page on a thread of its own.
fn spawn<T: Send + 'static>(
    fetch: &std::sync::Arc<std::sync::Mutex<TokenFetch<T>>>,
    token: Option<String>,
    dropped: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::sync::mpsc::Receiver<Result<TokenPage<T>>> {
    ahead::on_thread(fetch, token, dropped, call)
}

/// A list method's fetch from `params`, one page ahead when `client` says so; and the
/// token it starts at.
fn start<T: Send + 'static, P: TokenParams>(
    client: &crate::HttpClient,
    params: &P,
    mut fetch: impl FnMut(&P) -> Result<TokenPage<T>> + Send + 'static,
) -> (Option<String>, Fetcher<T, TokenFetch<T>>) {
    let mut asked = params.clone();
    let by_token: TokenFetch<T> = Box::new(move |token| {
        asked.set_token(token);
        fetch(&asked)
    });
    let fetcher = Ahead::new(by_token).set(client.inner.config.prefetch.then_some(spawn::<T>));
    (params.token().map(str::to_owned), fetcher)
}

/// Where a page-token listing stands, and its stopping rules, for both iterators: after
/// an error, at the last page (no token, or an empty one), and cut short with a final
/// [`Error::ListCutShort`] at a token the server already gave or after `max_pages`
/// pages.
struct TokenCursor {
    next: Option<String>,
    /// The page tokens used so far.
    seen: SeenKeys,
    started: bool,
    pages: u64,
    max_pages: u64,
    done: bool,
    /// Why the list stops short, to be told as its last item.
    cut: Option<CutShort>,
}

impl TokenCursor {
    fn starting_at(token: Option<String>) -> Self {
        TokenCursor {
            started: token.is_some(),
            next: token,
            seen: SeenKeys::default(),
            pages: 0,
            max_pages: DEFAULT_MAX_PAGES,
            done: false,
            cut: None,
        }
    }

    /// Whether no page is left to fetch.
    fn finished(&self) -> bool {
        self.done || (self.started && self.next.is_none())
    }

    /// The token of the page the caller will ask for next, unless it stops: none once
    /// the list has ended, is cut short or at the page cap.
    fn next_page(&self) -> Option<Option<String>> {
        (self.cut.is_none() && !self.finished() && self.pages < self.max_pages)
            .then(|| self.next.clone())
    }

    /// Fetches the next page through `fetch` (the one fetched ahead, when it is that
    /// one) and asks for the one after it ahead, as [`fetch`](Self::fetch) does.
    fn fetch_from<T, F: FnMut(Option<&str>) -> Result<TokenPage<T>>>(
        &mut self,
        fetch: &mut Fetcher<T, F>,
    ) -> Option<Result<TokenPage<T>>> {
        let page = self.fetch(|token| {
            fetch.get(token.map(str::to_owned), call).map(|page| {
                let next = page.next_page_token.clone();
                (page, next)
            })
        });
        if let Some(next) = self.next_page() {
            fetch.next_is(next);
        }
        page
    }

    /// Fetches the next page with `fetch(token)` and records the token it gives; after a
    /// list cut short, the [`Error::ListCutShort`] that says so; `None` once finished.
    fn fetch<P>(
        &mut self,
        fetch: impl FnOnce(Option<&str>) -> Result<(P, Option<String>)>,
    ) -> Option<Result<P>> {
        if let Some(reason) = self.cut.take() {
            self.done = true;
            return Some(Err(Error::ListCutShort {
                pages: self.pages,
                reason,
            }));
        }
        if self.finished() {
            return None;
        }
        if self.pages >= self.max_pages {
            self.done = true;
            return Some(Err(Error::ListCutShort {
                pages: self.pages,
                reason: CutShort::PageCap,
            }));
        }
        self.started = true;
        self.pages += 1;
        let (page, next) = match fetch(self.next.as_deref()) {
            Ok(answer) => answer,
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        if let Some(t) = self.next.take() {
            self.seen.insert(&t);
        }
        self.next = next.filter(|t| !t.is_empty());
        if let Some(t) = &self.next
            && self.seen.contains(t)
        {
            log::warn!("the server repeated a page token; the list is cut short");
            self.next = None;
            self.cut = Some(CutShort::RepeatedToken);
        }
        Some(Ok(page))
    }
}

/// Iterates a page-token list page by page: `fetch(token)` gives a page and the token of
/// the next (`None` or empty after the last). It stops after an error and at the last
/// page; a list that cannot be read to its end (a token the server already gave, or
/// [`max_pages`](Self::max_pages) pages) ends with [`Error::ListCutShort`], never
/// silently.
pub struct TokenPages<T, F = TokenFetch<T>> {
    fetch: Fetcher<T, F>,
    cursor: TokenCursor,
    _item: std::marker::PhantomData<fn() -> T>,
}

impl<T, F> TokenPages<T, F>
where
    F: FnMut(Option<&str>) -> Result<TokenPage<T>>,
{
    /// Pages from the first (`token` `None`) or from the one `token` names.
    pub fn starting_at(token: Option<String>, fetch: F) -> Self {
        TokenPages {
            fetch: Ahead::new(fetch),
            cursor: TokenCursor::starting_at(token),
            _item: std::marker::PhantomData,
        }
    }

    /// Fetches at most `pages` pages. Defaults to [`DEFAULT_MAX_PAGES`].
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.cursor.max_pages = pages;
        self
    }

    /// The token of the next page (start a new iteration there); `None` after the last.
    pub fn resume_token(&self) -> Option<&str> {
        self.cursor.next.as_deref()
    }
}

impl<T: Send + 'static> TokenPages<T> {
    /// The pages of the list `fetch` reads, as [`TokenPaginator::over`] reads them.
    pub fn over<P: TokenParams>(
        client: &crate::HttpClient,
        params: &P,
        fetch: impl FnMut(&P) -> Result<TokenPage<T>> + Send + 'static,
    ) -> Self {
        let (token, fetch) = start(client, params, fetch);
        TokenPages {
            fetch,
            cursor: TokenCursor::starting_at(token),
            _item: std::marker::PhantomData,
        }
    }

    /// Whether the next page is fetched while the caller reads the current one, as
    /// [`TokenPaginator::prefetch`] says.
    pub fn prefetch(mut self, on: bool) -> Self {
        self.fetch = self.fetch.set(on.then_some(spawn::<T>));
        self
    }
}

impl<T, F> Iterator for TokenPages<T, F>
where
    F: FnMut(Option<&str>) -> Result<TokenPage<T>>,
{
    type Item = Result<TokenPage<T>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.cursor.fetch_from(&mut self.fetch)
    }
}

impl<T, F> fmt::Debug for TokenPages<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenPages")
            .field("next", &self.cursor.next)
            .field("pages", &self.cursor.pages)
            .field("done", &self.cursor.done)
            .finish()
    }
}

/// One page of a page-token list: its items and the token of the next page, whatever
/// the service calls them on the wire.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TokenPage<T> {
    /// The items of the page.
    pub data: Vec<T>,
    /// The token of the next page; `None` on the last page.
    pub next_page_token: Option<String>,
}

impl<T> TokenPage<T> {
    /// A page from its items and the next page's token (an empty token reads as none).
    ///
    /// ```
    /// let page = core_http::pagination::TokenPage::new(vec![1, 2], Some(String::new()));
    /// assert_eq!(page.next_page_token, None);
    /// ```
    pub fn new(data: Vec<T>, next_page_token: Option<String>) -> Self {
        TokenPage {
            data,
            next_page_token: next_page_token.filter(|t| !t.is_empty()),
        }
    }
}

/// Iterates a page-token list item by item.
///
/// It stops after an error and when the next token is missing or empty. When the server
/// hands back a token it has already given (which would otherwise loop forever), or
/// after [`max_pages`](Self::max_pages) pages, its last item is
/// [`Error::ListCutShort`]: a list that ends without that error is whole.
/// [`resume_token`](Self::resume_token) tells where to start again later.
pub struct TokenPaginator<T, F = TokenFetch<T>> {
    fetch: Fetcher<T, F>,
    cursor: TokenCursor,
    buffer: VecDeque<T>,
    progress: super::Progress,
}

impl<T, F> TokenPaginator<T, F>
where
    F: FnMut(Option<&str>) -> Result<TokenPage<T>>,
{
    /// An iterator that calls `fetch(token)` for each page, with `None` for the first.
    pub fn new(fetch: F) -> Self {
        TokenPaginator {
            fetch: Ahead::new(fetch),
            cursor: TokenCursor::starting_at(None),
            buffer: VecDeque::new(),
            progress: super::Progress::default(),
        }
    }

    /// An iterator whose first page is the one `token` names (a token from
    /// [`resume_token`](Self::resume_token) of an earlier iteration).
    pub fn starting_at(token: impl Into<String>, fetch: F) -> Self {
        TokenPaginator {
            fetch: Ahead::new(fetch),
            cursor: TokenCursor::starting_at(Some(token.into())),
            buffer: VecDeque::new(),
            progress: super::Progress::default(),
        }
    }

    /// Fetches at most `pages` pages. Defaults to [`DEFAULT_MAX_PAGES`].
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.cursor.max_pages = pages;
        self
    }

    /// The token of the next page to fetch, once the items fetched so far are used up:
    /// start a new iteration there with [`starting_at`](Self::starting_at). `None` when
    /// there are no more pages, or before the first page.
    pub fn resume_token(&self) -> Option<&str> {
        self.cursor.next.as_deref()
    }

    /// Items fetched but not yet yielded.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Calls `progress(items, None)` after each page with the items fetched so far (a
    /// token list does not say its total): for a progress bar over a long list (twenty
    /// years of minute bars).
    ///
    /// ```
    /// use core_http::pagination::{TokenPage, TokenPaginator};
    /// let pages = TokenPaginator::new(|token: Option<&str>| {
    ///     Ok(match token {
    ///         None => TokenPage::new(vec![1, 2], Some("p2".into())),
    ///         Some(_) => TokenPage::new(vec![3], None),
    ///     })
    /// });
    /// let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// let items: Vec<i32> = pages
    ///     .on_progress(move |done, _| log.lock().unwrap().push(done))
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(items, [1, 2, 3]);
    /// assert_eq!(*seen.lock().unwrap(), [2, 3]);
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn on_progress(mut self, progress: impl FnMut(u64, Option<u64>) + Send + 'static) -> Self {
        self.progress.set(progress);
        self
    }
}

impl<T: Send + 'static> TokenPaginator<T> {
    /// Every item of the list `fetch` reads a page of: each page asked for with
    /// `params` and the token the page before gave (the first with `params`' own token,
    /// if any). A list method's whole iterator: `TokenPaginator::over(http, params, move
    /// |p| client.orders().list(p))`. The next page is fetched while the caller reads
    /// the current one when `client` does that
    /// ([`ClientBuilder::prefetch`](crate::ClientBuilder::prefetch)).
    pub fn over<P: TokenParams>(
        client: &crate::HttpClient,
        params: &P,
        fetch: impl FnMut(&P) -> Result<TokenPage<T>> + Send + 'static,
    ) -> Self {
        let (token, fetch) = start(client, params, fetch);
        TokenPaginator {
            fetch,
            cursor: TokenCursor::starting_at(token),
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

/// A page-token list's parameters, as [`TokenPaginator::over`] and [`TokenPages::over`]
/// move them from page to page; written by [`token_params!`](crate::token_params).
pub trait TokenParams: Clone + Send + 'static {
    /// The token of the page to start from; `None`: the first page.
    fn token(&self) -> Option<&str>;
    /// Points these parameters at the page `token` names.
    fn set_token(&mut self, token: Option<&str>);
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
            let items = match self.cursor.fetch_from(&mut self.fetch)? {
                Ok(page) => page.data,
                Err(e) => return Some(Err(e)),
            };
            self.progress.add(items.len(), None);
            self.buffer.extend(items);
        }
    }
}

impl<T, F> fmt::Debug for TokenPaginator<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenPaginator")
            .field("next", &self.cursor.next)
            .field("pages", &self.cursor.pages)
            .field("buffered", &self.buffer.len())
            .field("done", &self.cursor.done)
            .finish()
    }
}
