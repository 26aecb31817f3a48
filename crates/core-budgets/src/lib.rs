//! Rate budgets shared beyond one process, for the service clients built on core-http:
//! every process of one machine that calls a service with one key paces as one through
//! a 16-byte file ([`Budget::Machine`]), and every process of many machines through
//! Redis ([`Budget::Redis`]). A client takes one with `builder().shared(..)`, or from
//! `<SERVICE>_RATE_BUDGET` (`process`, `machine`, or a `redis://` / `rediss://` URL).
//!
//! A store is a hint, never a trap. core-http judges every answer: no call waits past
//! its own time, nor a minute for a turn; a `Retry-After` a service gave one process holds
//! the others only as a retry would (within the call's time and 60 s, else the call ends
//! at once with `Error::RateLimited`, nothing sent); a state that cannot be true (a file
//! overwritten, a clock stepped back, a Redis answering nonsense) is started afresh or
//! paced without, and said once. Each store bounds its own step too: the file's lock is
//! waited for at most 250 ms and the call's time; a Redis step takes at most 500 ms and
//! the call's time on a socket held to that deadline, with no thread of its own and at
//! most 64 KiB of an answer read.
//!
//! ```
//! use core_budgets::Budget;
//! let budget: Budget = "machine".parse()?;
//! assert_eq!(budget, Budget::machine());
//! let shared: Budget = "rediss://:secret@redis.internal:6380/2".parse()?;
//! assert!(!format!("{shared:?}").contains("secret"));
//! # Ok::<(), core_http::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod machine;
mod redis;

use std::fmt;

use core_http::service::{BudgetStore, Opening, Scope, SharedBudget};

pub use redis::RedisUrl;

/// Who spends a client's rate budget with it
/// ([`ClientBuilder::shared`](core_http::ClientBuilder::shared)).
///
/// ```
/// use core_budgets::Budget;
/// use core_http::config::RateLimit;
/// let client = core_http::HttpClient::builder()
///     .base_url("https://api.example.com")
///     .api_key("sk_test")
///     .rate_limit(RateLimit::per_minute(200))
///     // Every cron job and script of this machine with this key paces as one.
///     .shared(Budget::machine())
///     .build()?;
/// # let _ = client;
/// # Ok::<(), core_http::Error>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Budget {
    /// The clones of the client in this process (the default): each process paces
    /// alone, and several processes with one key spend the account's budget several
    /// times over.
    #[default]
    Process,
    /// Every process of this machine's user calling the same base URL with the same key
    /// at the same rate: a 16-byte state file under the user's cache directory
    /// (`$XDG_CACHE_HOME` or `~/.cache`, `service-clients/budgets/`), updated under an OS
    /// file lock that a process dying releases, named by a keyed hash, never the key.
    /// A 429's `Retry-After` holds back every process sharing it. One request of the
    /// burst is kept in hand (the service's bucket starts refilling when the first
    /// request arrives, a little after its turn was taken). A file that is not 16 bytes,
    /// or holds a next turn further ahead than a true one can be, or is not a plain file,
    /// is damaged: the budget starts full, and the client says so once. When the file
    /// cannot be used (a read-only disk, a lock held past 250 ms or the call's time),
    /// the client paces alone and says so once, and again when it shares again. When
    /// its folder cannot be made at all, a client told to wait for the budget is refused
    /// at build (a `Config` error), since every call would time out.
    Machine,
    /// Every process of every machine calling the same base URL with the same key at
    /// the same rate, through the Redis server this `redis://` or `rediss://` URL names
    /// (a password in the URL is never shown): one atomic step (a Lua script, on the
    /// server's clock) per request, its key a hash of the base URL, the key and the rate.
    /// Each step takes at most what is left of the call's time, and 500 ms, connecting
    /// included, on a socket held to that deadline: a silent, trickling or flooding
    /// peer costs a call at most that, and nothing outlives the step (no thread, at most
    /// 64 KiB of an answer). While Redis cannot be reached the client paces alone, says
    /// so once, tries again every second, and says when it shares again. A step costs a
    /// round trip to Redis.
    Redis(RedisUrl),
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Budget::Process => f.write_str("Process"),
            Budget::Machine => f.write_str("Machine"),
            Budget::Redis(url) => f.debug_tuple("Redis").field(url).finish(),
        }
    }
}

impl Budget {
    /// [`Budget::Process`].
    ///
    /// ```
    /// assert_eq!(core_budgets::Budget::process(), core_budgets::Budget::default());
    /// ```
    pub fn process() -> Budget {
        Budget::Process
    }

    /// [`Budget::Machine`].
    ///
    /// ```
    /// assert_eq!("machine".parse::<core_budgets::Budget>()?, core_budgets::Budget::machine());
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn machine() -> Budget {
        Budget::Machine
    }

    /// [`Budget::Redis`] on the server `url` names (`redis://[[user]:password@]host[:port][/db]`,
    /// or `rediss://` for TLS). A URL that cannot be used is refused when the client is
    /// built, in words that never show its password.
    ///
    /// ```
    /// use core_budgets::Budget;
    /// let budget = Budget::redis("rediss://:secret@redis.internal:6380/2");
    /// assert!(!format!("{budget:?}").contains("secret"));
    /// ```
    pub fn redis(url: impl Into<String>) -> Budget {
        Budget::Redis(RedisUrl::new(url.into()))
    }

    /// The budget `<name>` (an environment variable such as `TRADING_RATE_BUDGET`) gives
    /// as `value`: [`FromStr`](std::str::FromStr), with an error that names the variable
    /// and never shows the value (a mistyped Redis URL holds a password).
    ///
    /// ```
    /// use core_budgets::Budget;
    /// let err = Budget::from_setting("TRADING_RATE_BUDGET", "redis:/:hunter2@host").unwrap_err();
    /// assert!(err.to_string().contains("TRADING_RATE_BUDGET"));
    /// assert!(!err.to_string().contains("hunter2"));
    /// ```
    ///
    /// # Errors
    ///
    /// A configuration error saying what the value should be.
    pub fn from_setting(name: &str, value: &str) -> core_http::Result<Budget> {
        let value = value.trim();
        match value.to_ascii_lowercase().as_str() {
            "process" | "" => return Ok(Budget::Process),
            "machine" => return Ok(Budget::Machine),
            lower if lower.starts_with("redis://") || lower.starts_with("rediss://") => {
                return Ok(Budget::redis(value));
            }
            _ => {}
        }
        let hint = if value.starts_with(['"', '\'']) {
            " (it is in quotes, which a .env file keeps as part of the value: remove them)"
        } else if value.to_ascii_lowercase().starts_with("redis") {
            " (a Redis URL starts with redis:// or rediss://)"
        } else {
            ""
        };
        Err(core_http::Error::Config(format!(
            "{name} is not `process`, `machine` or a redis:// or rediss:// URL{hint}; its \
             value is not shown, as a Redis URL may hold a password"
        )))
    }
}

impl std::str::FromStr for Budget {
    type Err = core_http::Error;

    /// `process`, `machine`, or a `redis://` / `rediss://` URL, as `<SERVICE>_RATE_BUDGET`
    /// gives it ([`Budget::from_setting`]).
    fn from_str(s: &str) -> core_http::Result<Budget> {
        Budget::from_setting("the rate budget", s)
    }
}

impl SharedBudget for Budget {
    fn name(&self) -> &'static str {
        match self {
            Budget::Process => "process",
            Budget::Machine => "machine",
            Budget::Redis(_) => "redis",
        }
    }

    fn open(&self, scope: &Scope<'_>) -> Result<Option<Box<dyn BudgetStore>>, Opening> {
        match self {
            Budget::Process => Ok(None),
            Budget::Machine => machine::MachineStore::open(scope)
                .map(|store| Some(Box::new(store) as Box<dyn BudgetStore>)),
            Budget::Redis(url) => redis::RedisStore::open(url, scope)
                .map(|store| Some(Box::new(store) as Box<dyn BudgetStore>)),
        }
    }
}

/// The budget's name: 128 bits of keyed hash of the base URL, the key and the rate.
#[allow(deprecated)] // SipHasher is SipHash-2-4, fixed for good: every build names alike.
fn identity(
    secret: &[u8; 32],
    base_url: &str,
    identity: &str,
    limit: core_http::config::RateLimit,
) -> String {
    use std::hash::Hasher;
    let word = |i: usize| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&secret[i * 8..i * 8 + 8]);
        u64::from_le_bytes(bytes)
    };
    let mut out = String::new();
    for (k0, k1) in [(word(0), word(1)), (word(2), word(3))] {
        let mut h = std::hash::SipHasher::new_with_keys(k0, k1);
        for part in [
            base_url.trim_end_matches('/').as_bytes(),
            b"\0",
            identity.as_bytes(),
            b"\0",
        ] {
            h.write(part);
        }
        h.write_u32(limit.requests);
        h.write_u64(u64::try_from(limit.per.as_nanos()).unwrap_or(u64::MAX));
        h.write_u32(limit.burst);
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
