//! Lazy iterators over paged lists: offset/limit pages and page-token pages. A list
//! method's iterator (`over`) asks for the next page as soon as the caller has the
//! current one, on a thread of its own, and hands it over when the caller comes to it:
//! at most one page ahead, nothing asked once the iterator is dropped, every request
//! through the client's rate limiter and retries, and every error, cut and resume token
//! where it would be without it (`prefetch(false)`, or the client's
//! [`ClientBuilder::prefetch`](crate::ClientBuilder::prefetch), asks for each page only
//! when the previous one is used up). They never loop forever on a server that omits
//! the total or repeats a token.

mod ahead;
pub(crate) use ahead::abandoned;
mod offset;
mod token;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A callback told how far a long operation has got: the amount done so far (items of a
/// list, bytes of a download) and the total when the service said it. One shape for
/// every iterator's and download's `on_progress`.
pub type OnProgress = Box<dyn FnMut(u64, Option<u64>) + Send>;

/// Counts what a paginator has fetched and tells its [`OnProgress`], if any.
#[derive(Default)]
pub(crate) struct Progress {
    done: u64,
    hook: Option<OnProgress>,
}

impl Progress {
    fn set(&mut self, hook: impl FnMut(u64, Option<u64>) + Send + 'static) {
        self.hook = Some(Box::new(hook));
    }

    /// `items` more were fetched, of `total` when known.
    fn add(&mut self, items: usize, total: Option<u64>) {
        self.done = self.done.saturating_add(items as u64);
        if let Some(hook) = &mut self.hook {
            hook(self.done, total);
        }
    }
}
/// What a listing has already been given (page tokens, pages), to notice a server that
/// hands one back: kept as 128-bit keyed hashes (keys random per process, so a server
/// cannot aim a collision), 16 bytes each however long the token or page is.
#[derive(Default)]
pub(crate) struct SeenKeys {
    keys: (std::hash::RandomState, std::hash::RandomState),
    hashes: std::collections::HashSet<(u64, u64)>,
}

impl SeenKeys {
    fn key(&self, value: &(impl Serialize + ?Sized)) -> (u64, u64) {
        use std::hash::{BuildHasher, Hasher};
        /// Feeds what serde writes into both hashers, never holding it.
        struct Feed<A, B>(A, B);
        impl<A: Hasher, B: Hasher> std::io::Write for Feed<A, B> {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.write(bytes);
                self.1.write(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut feed = Feed(self.keys.0.build_hasher(), self.keys.1.build_hasher());
        // Writing into hashers cannot fail; a value serde cannot write hashes as far as
        // it got, which is as good a key.
        let _ = serde_json::to_writer(&mut feed, value);
        (feed.0.finish(), feed.1.finish())
    }

    /// Records `value`; `false` when it was recorded already.
    fn insert_new(&mut self, value: &(impl Serialize + ?Sized)) -> bool {
        let key = self.key(value);
        self.hashes.insert(key)
    }

    fn insert(&mut self, value: &(impl Serialize + ?Sized)) {
        self.insert_new(value);
    }

    fn contains(&self, value: &(impl Serialize + ?Sized)) -> bool {
        self.hashes.contains(&self.key(value))
    }
}

pub use offset::{OffsetFetch, OffsetPages, OffsetPaginator};
pub use token::{TokenFetch, TokenPage, TokenPages, TokenPaginator, TokenParams};

/// One page of a `{"data": [...], "meta": {"total", "limit", "offset"}}` list, the
/// offset/limit convention the services share. A missing `meta` decodes as `None`; a
/// missing `data` is a decode error: an answer that does not carry its list says
/// nothing about what the list holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Page<T> {
    /// The items.
    pub data: Vec<T>,
    /// Paging figures, when the server sent them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<PageMeta>,
}

/// The paging figures of a [`Page`]. Each is read exactly (a number, an integral float
/// or a numeric string; see [`de`](crate::de)); unknown members are skipped, a member
/// given twice is an error.
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

impl<T> Page<T> {
    /// A page from its items and the total the server gave, if any.
    ///
    /// ```
    /// let page = core_http::pagination::Page::new(vec!["a", "b"], Some(7));
    /// assert_eq!(page.total(), Some(7));
    /// ```
    pub fn new(data: Vec<T>, total: Option<u64>) -> Self {
        Page {
            data,
            meta: total.map(|total| PageMeta {
                total: Some(total),
                limit: None,
                offset: None,
            }),
        }
    }

    /// How many items the list holds in all, when the server said.
    pub fn total(&self) -> Option<u64> {
        self.meta.as_ref().and_then(|m| m.total)
    }
}

/// Which page of a `{data, meta}` list to fetch: `?limit&offset`, each sent only when
/// set, so the service's defaults apply otherwise. Give it to
/// [`RequestBuilder::page`](crate::builder::RequestBuilder::page), which checks the limit.
///
/// ```
/// let params = core_http::pagination::PageParams::new().limit(50).offset(100);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageParams {
    /// Page size; the service's default when `None`.
    pub(crate) limit: Option<u32>,
    /// How many items to skip; 0 when `None`.
    pub(crate) offset: Option<u64>,
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

/// The most pages one iteration fetches unless told otherwise: 10,000 (a million items
/// at 100 a page). Change it with `max_pages`.
pub const DEFAULT_MAX_PAGES: u64 = 10_000;

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
        // A server that ignores the offset: the repeat ends it, and says so.
        let same = |_: u64, _: u32| -> Result<Page<u32>> { Ok(page(&[1, 2], None)) };
        let ends: Vec<_> = OffsetPages::starting_at(0, 2, same).collect();
        assert_eq!(ends.len(), 2);
        assert!(matches!(
            ends[1],
            Err(Error::ListCutShort {
                pages: 2,
                reason: crate::CutShort::RepeatedPage
            })
        ));
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
        assert!(matches!(
            last,
            Err(Error::ListCutShort {
                pages: 5,
                reason: crate::CutShort::PageCap
            })
        ));
    }

    #[test]
    fn token_pages_follow_tokens_resume_and_stop_on_a_repeat() {
        let fetch = |token: Option<&str>| -> Result<TokenPage<u32>> {
            let (item, next) = match token {
                None => (1, Some("b")),
                Some("b") => (2, Some("c")),
                Some("c") => (3, Some("b")), // a token already given
                Some(_) => (0, None),
            };
            Ok(TokenPage::new(vec![item], next.map(str::to_owned)))
        };
        let pages: Vec<Result<TokenPage<u32>>> = TokenPages::starting_at(None, fetch).collect();
        assert_eq!(pages.len(), 4);
        let read: Vec<u32> = pages[..3]
            .iter()
            .map(|p| p.as_ref().unwrap().data[0])
            .collect();
        assert_eq!(read, [1, 2, 3]);
        assert!(matches!(
            pages[3],
            Err(Error::ListCutShort {
                pages: 3,
                reason: crate::CutShort::RepeatedToken
            })
        ));
        let mut from_c = TokenPages::starting_at(Some("c".into()), fetch);
        assert_eq!(from_c.next().unwrap().unwrap().data, [3]);
        assert_eq!(from_c.resume_token(), Some("b"));
    }
}
