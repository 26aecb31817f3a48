//! The seam to a rate budget kept beyond this process (the `core-budgets` crate keeps one
//! in a file for a machine and one in Redis for many): what a client's pace asks of a
//! store, and the bounds every answer is held to. A store is a hint, never a trap:
//! whatever it holds or answers, core-http waits no longer than the call's time, never
//! past [`LONGEST_QUEUE`] for a turn, and takes a state that cannot be true as damaged.

use std::fmt;
use std::time::Duration;

use super::RateLimit;

/// The longest a request queues for a turn of a shared budget, however long its call's
/// time: the longest wait a service asks for that a retry sleeps through
/// ([`RetryPolicy`](crate::config::RetryPolicy)'s 60 s). A turn further off ends the
/// call at once with [`Error::RateLimited`](crate::Error::RateLimited), nothing sent.
pub const LONGEST_QUEUE: Duration = Duration::from_secs(60);

/// The longest a service's `Retry-After` is kept for every sharer: a day. A longer one is
/// kept as a day; a state holding one longer than this is damaged.
pub const LONGEST_HOLD: Duration = Duration::from_secs(24 * 3600);

/// What a client gives [`ClientBuilder::shared`](crate::ClientBuilder::shared): where its
/// rate budget is kept, opened once the client knows what the budget is for.
/// `core-budgets`' `Budget` is one (this process alone, the machine's file, Redis).
pub trait SharedBudget: Send + Sync + fmt::Debug {
    /// Where it is kept, as texts and [`BudgetEvent`](crate::config::BudgetEvent) name it
    /// (`"process"`, `"machine"`, `"redis"`).
    fn name(&self) -> &'static str;

    /// The store for `scope`'s budget; `Ok(None)` when the budget is this process's own
    /// (the clones of one client share its bucket).
    ///
    /// # Errors
    ///
    /// [`Opening::Config`] for a setting that can never work (a URL that is not one);
    /// [`Opening::Unavailable`] for a store out of reach now (a folder that cannot be
    /// made), which the client says once and paces alone for, or refuses at build when
    /// told to [`WhenUnavailable::Wait`](crate::config::WhenUnavailable::Wait).
    fn open(&self, scope: &Scope<'_>) -> Result<Option<Box<dyn BudgetStore>>, Opening>;
}

/// What names a shared budget: the service's base URL, the credential it is spent for
/// (never shown: a store names the budget by a keyed hash of it), and the rate.
#[derive(Clone)]
#[non_exhaustive]
pub struct Scope<'a> {
    /// The base URL, without a trailing `/`.
    pub base_url: &'a str,
    /// The key, the key header's value, or the OAuth client's id.
    pub identity: &'a str,
    /// The rate, as the client paces it.
    pub limit: RateLimit,
    /// How the client connects: for a store on the network (Redis), its TLS roots and
    /// name resolution ([`Dialer::connect_direct`](crate::net::Dialer::connect_direct),
    /// never its HTTP proxy).
    pub connect: std::sync::Arc<crate::net::Dialer>,
    /// The client's clock, for every wait a store decides (a lock's patience and a
    /// socket's deadline are the system's).
    pub clock: std::sync::Arc<dyn crate::time::Clock>,
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("base_url", &self.base_url)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

/// Why a shared budget could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub enum Opening {
    /// A setting that can never work, in words that show no password.
    Config(String),
    /// Out of reach now.
    Unavailable(Unavailable),
}

/// Why a store could not be used for a request, in words that show no password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

/// Where a rate budget shared beyond this process is kept: a step each for a request's
/// turn and for a service's `Retry-After`. Every step ends within its `bound`, whatever
/// the store does (a lock held, a peer silent or trickling).
pub trait BudgetStore: Send + Sync + fmt::Debug {
    /// Where it is kept, as texts and [`BudgetEvent`](crate::config::BudgetEvent) name it
    /// (`"machine"`, `"redis"`).
    fn name(&self) -> &'static str;

    /// Takes the next turn, unless it is `take.horizon` or more away.
    ///
    /// # Errors
    ///
    /// [`Unavailable`] when the store cannot be used now.
    fn take(&self, take: &Take) -> Result<Turn, Unavailable>;

    /// Holds every sharer back for `pause` from now (a 429's `Retry-After`, at most
    /// [`LONGEST_HOLD`]), in at most `bound`.
    ///
    /// # Errors
    ///
    /// [`Unavailable`] when the store cannot be used now.
    fn hold_back(&self, pause: Duration, bound: Duration) -> Result<(), Unavailable>;
}

/// A request asking a store for its turn.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Take {
    /// A turn this far away or further is not taken ([`Turn::Later`]).
    pub horizon: Duration,
    /// The step ends within this, whatever the store does.
    pub bound: Duration,
    /// The furthest ahead a true state's next turn can be: [`LONGEST_QUEUE`] and the
    /// plan's whole burst. A state further ahead (a wall clock stepped back, a file
    /// overwritten) is damaged: the store starts a full budget ([`Turn::Damaged`]).
    pub believable: Duration,
}

impl Take {
    /// A request for a turn less than `horizon` away, in at most `bound`, from a state
    /// whose next turn is at most `believable` ahead.
    pub fn new(horizon: Duration, bound: Duration, believable: Duration) -> Take {
        Take {
            horizon,
            bound,
            believable,
        }
    }
}

/// A store's answer to [`Take`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Turn {
    /// Taken: go after this wait (less than the horizon).
    Go(Duration),
    /// Not taken: the next turn is this far off (the horizon or more).
    Later(Duration),
    /// Not taken: a service's `Retry-After` holds every sharer back this long.
    Held(Duration),
    /// Not taken: the state could not be true (why, in words); the store started a full
    /// budget.
    Damaged(String),
}
