//! A list's page fetch, run when the caller needs the page or one page ahead: once the
//! caller has a page, the next is asked for on a thread of its own, and its answer (or
//! error) is handed over only when the caller comes to it.
//!
//! One thread a prefetched page (a median 67 µs to start and hand its page over, on a
//! busy 2-core machine, against a page's milliseconds over a network), ending with its
//! request: no thread outlives a request, nothing waits in the background, and nothing
//! is asked once the iterator is dropped. The thread's call looks before each attempt
//! ([`abandoned`]): a page waiting for the rate limit, a `Retry-After` or a retry's
//! backoff when the list is dropped is never asked (a request already on its way ends
//! on its thread within the call's timeout; its answer is thrown away). At most one page
//! is ahead, so a list holds at most two pages. A page fetched ahead that failed in a
//! way that may mend (a timeout, a 503: [`Error::transient`](crate::Error)) is asked
//! again when the caller comes to it, as it would be without fetching ahead; another
//! failure is handed over as it is.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::Result;

/// What starts the fetch of a page on a thread: made where the fetch is known to be
/// `Send + 'static` (a list method's boxed fetch), absent where it is not (a closure
/// that borrows).
type Spawn<F, A, P> = fn(&Arc<Mutex<F>>, A, &Arc<AtomicBool>) -> Receiver<Result<P>>;

thread_local! {
    /// On a thread fetching a page ahead: set once its list is dropped.
    static DROPPED: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Whether this thread fetches a page ahead for a list that has been dropped since: its
/// call then asks nothing more.
pub(crate) fn abandoned() -> bool {
    DROPPED.with(|d| {
        d.borrow()
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Acquire))
    })
}

/// A page fetch, on the caller's thread or one page ahead.
pub(crate) struct Ahead<F, A, P> {
    fetch: Arc<Mutex<F>>,
    spawn: Option<Spawn<F, A, P>>,
    /// The page asked for ahead: its argument, and where its answer arrives.
    pending: Option<(A, Receiver<Result<P>>)>,
    /// Set when the list is dropped, for the thread fetching ahead.
    dropped: Arc<AtomicBool>,
}

impl<F, A, P> Drop for Ahead<F, A, P> {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::Release);
    }
}

impl<F, A: PartialEq + Clone, P> Ahead<F, A, P> {
    /// A fetch on the caller's thread only.
    pub(crate) fn new(fetch: F) -> Self {
        Ahead {
            fetch: Arc::new(Mutex::new(fetch)),
            spawn: None,
            pending: None,
            dropped: Arc::default(),
        }
    }

    /// Fetches ahead with `spawn`, or (`None`) only on the caller's thread; a page
    /// already asked for is still used.
    pub(crate) fn set(mut self, spawn: Option<Spawn<F, A, P>>) -> Self {
        self.spawn = spawn;
        self
    }

    /// The page `arg` names: the one fetched ahead when it is that page, otherwise
    /// fetched now with `call`.
    pub(crate) fn get(&mut self, arg: A, call: impl FnOnce(&mut F, A) -> Result<P>) -> Result<P> {
        if let Some((asked, answer)) = self.pending.take()
            && asked == arg
            // A fetch that never answered (its thread could not run it to the end), or
            // failed in a way that may mend by now, is made again here: a list's page
            // is a read.
            && let Ok(page) = answer.recv()
            && !page.as_ref().is_err_and(crate::Error::transient)
        {
            return page;
        }
        let mut fetch = self.fetch.lock().unwrap_or_else(PoisonError::into_inner);
        call(&mut fetch, arg)
    }

    /// The caller will ask for `arg` next, unless it stops: asks for it now, on a thread,
    /// when fetching ahead.
    pub(crate) fn next_is(&mut self, arg: A) {
        if self.pending.is_none()
            && let Some(spawn) = self.spawn
        {
            self.pending = Some((arg.clone(), spawn(&self.fetch, arg, &self.dropped)));
        }
    }
}

/// Runs `call` with the fetch on a new thread; its answer arrives on the receiver. When
/// no thread can be started, the receiver finds its sender gone and the page is fetched
/// on the caller's thread instead.
pub(crate) fn on_thread<F, A, P>(
    fetch: &Arc<Mutex<F>>,
    arg: A,
    dropped: &Arc<AtomicBool>,
    call: fn(&mut F, A) -> Result<P>,
) -> Receiver<Result<P>>
where
    F: Send + 'static,
    A: Send + 'static,
    P: Send + 'static,
{
    let (tx, rx) = mpsc::sync_channel(1);
    let fetch = Arc::clone(fetch);
    let dropped = Arc::clone(dropped);
    let _ = std::thread::Builder::new()
        .name("core-http-next-page".into())
        .spawn(move || {
            DROPPED.with(|d| *d.borrow_mut() = Some(dropped));
            let mut fetch = fetch.lock().unwrap_or_else(PoisonError::into_inner);
            let _ = tx.send(call(&mut fetch, arg));
        });
    rx
}
