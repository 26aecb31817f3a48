//! A rate budget shared by every process of one machine's user that calls one service
//! with one key: a 16-byte state file under the user's cache directory, read and written
//! under an OS file lock (the standard library's `File::try_lock`: `flock` on Unix,
//! `LockFileEx` on Windows), which the system releases when its holder dies, so a
//! process killed holding it cannot wedge the others.
//!
//! The state is a GCRA's (a token bucket kept as one time): the theoretical arrival time
//! of the next request, and the moment until which a 429's `Retry-After` holds every
//! process back, both in nanoseconds of the wall clock (the one clock processes share).
//! A request takes the lock, reads the state, takes the first moment the budget allows
//! (never before `Retry-After` runs out), writes the state back and lets go, then sleeps
//! outside the lock until its moment: the lock is held for microseconds, and the
//! processes are paced in the order they asked.
//!
//! Nothing in the file is taken at its word: a file of another length, a next turn or a
//! `Retry-After` further ahead than a true state can hold (overwritten, or a wall clock
//! stepped back), or a path that is not a plain file (a FIFO would block a read), is
//! damaged, and the budget starts full; the arithmetic saturates.
//!
//! The file is named by a keyed hash of the base URL, the key and the rate (SipHash-2-4
//! twice, keyed by a random secret of the user's kept beside the budgets, created once,
//! readable by the user alone): two keys never share a budget, one key always does, and
//! the name says nothing of the key.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use core_http::config::RateLimit;
use core_http::service::{BudgetStore, LONGEST_HOLD, Opening, Scope, Take, Turn, Unavailable};

/// How long a request tries for the lock before pacing alone for that request: a
/// holder never keeps it longer than a read and a write, unless it is stopped (a
/// debugger, `SIGSTOP`) or its disk hangs.
const LOCK_PATIENCE: Duration = Duration::from_millis(250);

/// The budget one machine's processes share for one key and rate.
#[derive(Debug)]
pub(crate) struct MachineStore {
    path: PathBuf,
    /// The time between two requests at the paced rate.
    interval: u64,
    /// How far ahead of its arrival time a request may go.
    tolerance: u64,
}

impl MachineStore {
    /// The budget for `scope`, its file under the user's cache directory (made if
    /// missing).
    pub(crate) fn open(scope: &Scope<'_>) -> Result<Self, Opening> {
        let dir = default_dir().ok_or_else(|| {
            Opening::Unavailable(Unavailable(
                "no cache directory (neither XDG_CACHE_HOME nor HOME is set)".into(),
            ))
        })?;
        Self::open_in(&dir, (scope.base_url, scope.identity, scope.limit))
            .map_err(Opening::Unavailable)
    }

    /// [`MachineStore::open`] with its file under `dir`, for a base URL, a credential
    /// and a rate.
    pub(crate) fn open_in(
        dir: &Path,
        (base_url, identity, limit): (&str, &str, RateLimit),
    ) -> Result<Self, Unavailable> {
        std::fs::create_dir_all(dir)
            .map_err(|e| Unavailable(format!("cannot make {}: {e}", dir.display())))?;
        let secret = secret(dir)?;
        let name = crate::identity(&secret, base_url, identity, limit);
        let (interval, tolerance) = limit.gcra();
        Ok(MachineStore {
            path: dir.join(format!("{name}.budget")),
            interval: nanos(interval),
            tolerance: nanos(tolerance),
        })
    }

    /// The file holding the state.
    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `change` on the state under the lock (waited for at most `bound`) and
    /// writes it back.
    fn update<T>(
        &self,
        bound: Duration,
        change: impl FnOnce(&mut State, u64) -> T,
    ) -> Result<T, Unavailable> {
        let failed = |what: &str, e: std::io::Error| {
            Unavailable(format!("cannot {what} {}: {e}", self.path.display()))
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)
            .map_err(|e| failed("open", e))?;
        // Not a plain file (a FIFO put in its place would block a read for good).
        let meta = file.metadata().map_err(|e| failed("read", e))?;
        if !meta.is_file() {
            return Err(Unavailable(format!(
                "{} is not a plain file",
                self.path.display()
            )));
        }
        lock(&file, &self.path, bound.min(LOCK_PATIENCE))?;
        let mut bytes = Vec::with_capacity(17);
        (&mut file)
            .take(17)
            .read_to_end(&mut bytes)
            .map_err(|e| failed("read", e))?;
        let now = nanos(
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default(),
        );
        // A new file starts a full budget; one of another length is damaged.
        let mut state = match <[u8; 16]>::try_from(bytes.as_slice()) {
            Ok(b) => State::from_bytes(&b),
            Err(_) if bytes.is_empty() => State::default(),
            Err(_) => State::damaged(format!(
                "its file held a state that cannot be true ({} bytes, not 16)",
                if bytes.len() > 16 {
                    "more than 16".to_owned()
                } else {
                    bytes.len().to_string()
                }
            )),
        };
        let answer = change(&mut state, now);
        file.set_len(16)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(&state.to_bytes()))
            .map_err(|e| failed("write", e))?;
        // The lock goes with the file.
        drop(file);
        Ok(answer)
    }
}

impl BudgetStore for MachineStore {
    fn name(&self) -> &'static str {
        "machine"
    }

    fn take(&self, take: &Take) -> Result<Turn, Unavailable> {
        let (horizon, believable) = (nanos(take.horizon), nanos(take.believable));
        self.update(take.bound, |state, now| {
            if let Some(why) = state.impossible(now, believable) {
                *state = State::default();
                return Turn::Damaged(why);
            }
            let allowed = state
                .tat
                .saturating_sub(self.tolerance)
                .max(now)
                .max(state.blocked);
            let wait = allowed - now;
            if wait >= horizon {
                let held = state.blocked > now && state.blocked == allowed;
                let wait = Duration::from_nanos(wait);
                return if held {
                    Turn::Held(wait)
                } else {
                    Turn::Later(wait)
                };
            }
            state.tat = state.tat.max(allowed).saturating_add(self.interval);
            Turn::Go(Duration::from_nanos(wait))
        })
    }

    fn hold_back(&self, pause: Duration, bound: Duration) -> Result<(), Unavailable> {
        let pause = nanos(pause.min(LONGEST_HOLD));
        self.update(bound, |state, now| {
            if state.impossible(now, u64::MAX).is_some() {
                *state = State::default();
            }
            state.blocked = state.blocked.max(now.saturating_add(pause));
        })
    }
}

/// Takes `file`'s lock, trying for `patience` (the system's clock: the lock is the
/// system's).
fn lock(file: &File, path: &Path, patience: Duration) -> Result<(), Unavailable> {
    let started = core_http::service::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < patience => {
                std::thread::sleep(Duration::from_micros(200));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Unavailable(format!(
                    "{} stayed locked for {patience:?}",
                    path.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(Unavailable(format!("cannot lock {}: {e}", path.display())));
            }
        }
    }
}

/// The shared state: the next request's arrival time and the end of a `Retry-After`;
/// and, read from a damaged file, why it is damaged.
#[derive(Debug, Default, Clone)]
struct State {
    tat: u64,
    blocked: u64,
    damage: Option<String>,
}

impl State {
    fn from_bytes(b: &[u8; 16]) -> State {
        let (mut tat, mut blocked) = ([0u8; 8], [0u8; 8]);
        tat.copy_from_slice(&b[..8]);
        blocked.copy_from_slice(&b[8..]);
        State {
            tat: u64::from_le_bytes(tat),
            blocked: u64::from_le_bytes(blocked),
            damage: None,
        }
    }

    fn damaged(why: String) -> State {
        State {
            damage: Some(why),
            ..State::default()
        }
    }

    fn to_bytes(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.tat.to_le_bytes());
        b[8..].copy_from_slice(&self.blocked.to_le_bytes());
        b
    }

    /// Why the state cannot be true at `now`, when it cannot: damaged when read, a next
    /// turn more than `believable` ahead, a `Retry-After` longer than any kept.
    fn impossible(&self, now: u64, believable: u64) -> Option<String> {
        let ahead = |t: u64| Duration::from_nanos(t.saturating_sub(now));
        if let Some(why) = &self.damage {
            return Some(why.clone());
        }
        if self.tat.saturating_sub(now) > believable {
            return Some(format!(
                "its file held a state that cannot be true (a next turn {} ahead, where at \
                 most {} can be: overwritten, or the wall clock stepped back)",
                core_http::service::rounded(ahead(self.tat)),
                core_http::service::rounded(Duration::from_nanos(believable))
            ));
        }
        if self.blocked.saturating_sub(now) > nanos(LONGEST_HOLD) {
            return Some(format!(
                "its file held a state that cannot be true (a Retry-After {} ahead, where at \
                 most a day is kept)",
                core_http::service::rounded(ahead(self.blocked))
            ));
        }
        None
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The user's secret that keys the budgets' names: 32 random bytes in `dir/secret`,
/// made once (readable by the user alone on Unix).
fn secret(dir: &Path) -> Result<[u8; 32], Unavailable> {
    let path = dir.join("secret");
    if let Ok(bytes) = std::fs::read(&path)
        && let Ok(secret) = <[u8; 32]>::try_from(bytes.as_slice())
    {
        return Ok(secret);
    }
    let mut secret = [0u8; 32];
    getrandom::getrandom(&mut secret)
        .map_err(|e| Unavailable(format!("no randomness for the budget's secret: {e}")))?;
    // Written beside, then moved in place: a process that finds the file finds it whole;
    // two making it at once keep whichever lands last, and read it again.
    let temp = dir.join(format!("secret.{}", std::process::id()));
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(&temp)
        .and_then(|mut f| f.write_all(&secret))
        .and_then(|()| std::fs::rename(&temp, &path))
        .map_err(|e| Unavailable(format!("cannot write {}: {e}", path.display())))?;
    let bytes = std::fs::read(&path)
        .map_err(|e| Unavailable(format!("cannot read {}: {e}", path.display())))?;
    <[u8; 32]>::try_from(bytes.as_slice())
        .map_err(|_| Unavailable(format!("{} is not a budget secret", path.display())))
}

/// Where budgets live: `$XDG_CACHE_HOME/service-clients/budgets`, or
/// `~/.cache/service-clients/budgets` (`%LOCALAPPDATA%` on Windows).
pub(crate) fn default_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let cache = var("XDG_CACHE_HOME")
        .or_else(|| var("LOCALAPPDATA"))
        .or_else(|| var("HOME").map(|h| h.join(".cache")))?;
    Some(cache.join("service-clients").join("budgets"))
}

#[cfg(test)]
mod tests;
