//! A rate budget shared by every process of one machine's user that calls one service
//! with one key: a 16-byte state file under the user's cache directory, read and written
//! under an OS file lock (the standard library's `File::try_lock`: `flock` on Unix,
//! `LockFileEx` on Windows), which the system releases when its holder dies, so a
//! process killed holding it cannot wedge the others.
//!
//! The state is a GCRA's (the generic cell rate algorithm, a token bucket kept as one
//! time): the theoretical arrival time of the next request, and the moment until which a
//! 429's `Retry-After` holds every process back, both in nanoseconds of the wall clock
//! (the one clock processes share). A request takes the lock, reads the state, reserves
//! the first moment the budget allows (never before `Retry-After` runs out), writes the
//! state back and lets go, then sleeps outside the lock until its moment: the lock is
//! held for microseconds, and the processes are paced in the order they asked.
//!
//! The file is named by a keyed hash of the base URL, the key and the rate (SipHash-2-4
//! twice, keyed by a random secret of the user's kept beside the budgets, created once,
//! readable by the user alone): two keys never share a budget, one key always does, and
//! the name says nothing of the key.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::RateLimit;

/// How long a request tries for the lock before pacing alone for that request: a
/// holder never keeps it longer than a read and a write, unless it is stopped (a
/// debugger, `SIGSTOP`) or its disk hangs.
const LOCK_PATIENCE: Duration = Duration::from_millis(250);

/// The budget one machine's processes share for one key and rate.
#[derive(Debug)]
pub(crate) struct MachineBudget {
    path: PathBuf,
    /// The time between two requests at the paced rate.
    interval: Duration,
    /// How far ahead of its arrival time a request may go: the burst less one interval.
    tolerance: Duration,
}

/// Why the shared state could not be used for a request.
#[derive(Debug)]
pub(crate) struct Unavailable(pub(crate) String);

impl MachineBudget {
    /// The budget for `limit` at `base_url` with credentials `key`, its file under `dir`
    /// (made if missing).
    pub(crate) fn new(
        dir: &Path,
        base_url: &str,
        key: &str,
        limit: RateLimit,
    ) -> Result<Self, Unavailable> {
        std::fs::create_dir_all(dir)
            .map_err(|e| Unavailable(format!("cannot make {}: {e}", dir.display())))?;
        let secret = secret(dir)?;
        let name = identity(&secret, base_url, key, limit);
        let (interval, tolerance) = pace(limit);
        Ok(MachineBudget {
            path: dir.join(format!("{name}.budget")),
            interval,
            tolerance,
        })
    }

    /// The file holding the state.
    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Reserves the next moment the budget allows and returns how long to wait for it;
    /// `Ok(None)` (nothing reserved) when that is `within` or more away. The lock is
    /// waited for at most `bound` (and [`LOCK_PATIENCE`]).
    pub(crate) fn acquire(
        &self,
        within: Option<Duration>,
        bound: Duration,
    ) -> Result<Option<Duration>, Unavailable> {
        self.update(bound, |state, now| {
            let allowed = state
                .tat
                .saturating_sub(nanos(self.tolerance))
                .max(now)
                .max(state.blocked);
            let wait = Duration::from_nanos(allowed - now);
            if within.is_some_and(|w| wait >= w) {
                return None;
            }
            state.tat = state.tat.max(allowed) + nanos(self.interval);
            Some(wait)
        })
    }

    /// Holds every process back for `pause` from now (a 429's `Retry-After`), waiting
    /// for the lock at most `bound`.
    pub(crate) fn back_off(&self, pause: Duration, bound: Duration) -> Result<(), Unavailable> {
        self.update(bound, |state, now| {
            state.blocked = state.blocked.max(now + nanos(pause));
        })
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
        lock(&file, &self.path, bound.min(LOCK_PATIENCE))?;
        let mut bytes = [0u8; 16];
        let mut read = 0;
        while read < bytes.len() {
            match file.read(&mut bytes[read..]) {
                Ok(0) => break,
                Ok(n) => read += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(failed("read", e)),
            }
        }
        // A new (or damaged) file starts a full budget.
        let mut state = if read == bytes.len() {
            State::from_bytes(&bytes)
        } else {
            State::default()
        };
        let now = nanos(
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default(),
        );
        let answer = change(&mut state, now);
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.write_all(&state.to_bytes()))
            .map_err(|e| failed("write", e))?;
        // The lock goes with the file.
        drop(file);
        Ok(answer)
    }
}

/// Takes `file`'s lock, trying for `patience`.
fn lock(file: &File, path: &Path, patience: Duration) -> Result<(), Unavailable> {
    let started = Instant::now();
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

/// The shared state: the next request's arrival time and the end of a `Retry-After`.
#[derive(Debug, Default, Clone, Copy)]
struct State {
    tat: u64,
    blocked: u64,
}

impl State {
    fn from_bytes(b: &[u8; 16]) -> State {
        let (tat, blocked) = b.split_at(8);
        State {
            tat: u64::from_le_bytes(tat.try_into().unwrap_or_default()),
            blocked: u64::from_le_bytes(blocked.try_into().unwrap_or_default()),
        }
    }

    fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.tat.to_le_bytes());
        b[8..].copy_from_slice(&self.blocked.to_le_bytes());
        b
    }
}

/// A shared budget's pace for `limit`: the time between two requests (the documented
/// rate less the pacing margin), and how far ahead of its time a request may go (the
/// burst). One request of the burst is kept in hand: the service's bucket starts
/// refilling when the first request arrives, which (several processes starting at once,
/// each connecting) can be some milliseconds after the turn was taken, where the pacing
/// margin gives the first refill only a few.
pub(super) fn pace(limit: RateLimit) -> (Duration, Duration) {
    let rate = f64::from(limit.requests.max(1)) / limit.per.as_secs_f64().max(1e-9)
        * (1.0 - super::PACING_MARGIN);
    let interval = Duration::from_secs_f64(1.0 / rate);
    (interval, interval * limit.burst.max(2).saturating_sub(2))
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

/// The budget's name: 128 bits of keyed hash of the base URL, the key and the rate.
#[allow(deprecated)] // SipHasher is SipHash-2-4, fixed for good: every build names alike.
pub(super) fn identity(secret: &[u8; 32], base_url: &str, key: &str, limit: RateLimit) -> String {
    use std::hash::Hasher;
    let word =
        |i: usize| u64::from_le_bytes(secret[i * 8..i * 8 + 8].try_into().unwrap_or_default());
    let mut out = String::new();
    for (k0, k1) in [(word(0), word(1)), (word(2), word(3))] {
        let mut h = std::hash::SipHasher::new_with_keys(k0, k1);
        for part in [
            base_url.trim_end_matches('/').as_bytes(),
            b"\0",
            key.as_bytes(),
            b"\0",
        ] {
            h.write(part);
        }
        h.write_u32(limit.requests);
        h.write_u64(nanos(limit.per));
        h.write_u32(limit.burst);
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
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
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("budget-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn two_holders_of_one_budget_share_its_burst_then_its_pace() {
        let dir = dir("share");
        let limit = RateLimit::per_minute(600).with_burst(4);
        let a = MachineBudget::new(&dir, "https://api.example.com", "sk_1", limit).unwrap();
        let b = MachineBudget::new(&dir, "https://api.example.com/", "sk_1", limit).unwrap();
        assert_eq!(a.path(), b.path(), "one key, one budget");
        let waits: Vec<Duration> = (0..6)
            .map(|i| {
                if i % 2 == 0 { &a } else { &b }
                    .acquire(None, LOCK_PATIENCE)
                    .unwrap()
                    .unwrap()
            })
            .collect();
        // Three at once (the burst less the one kept in hand), then the others an
        // interval (100 ms, and 1 %) apart.
        assert!(
            waits[..3].iter().all(|w| *w < Duration::from_millis(20)),
            "{waits:?}"
        );
        assert!(waits[3] > Duration::from_millis(80), "{waits:?}");
        assert!(waits[4] > waits[3] + Duration::from_millis(80), "{waits:?}");
        assert!(waits[5] > waits[4] + Duration::from_millis(80), "{waits:?}");
        // Another key never shares it; its name says nothing of the key.
        let other = MachineBudget::new(&dir, "https://api.example.com", "sk_2", limit).unwrap();
        assert_ne!(other.path(), a.path());
        assert!(!a.path().to_string_lossy().contains("sk_1"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_retry_after_holds_every_holder_back_and_a_wait_past_the_deadline_reserves_nothing() {
        let dir = dir("back-off");
        let limit = RateLimit::per_minute(6_000).with_burst(10);
        let a = MachineBudget::new(&dir, "https://api.example.com", "sk", limit).unwrap();
        let b = MachineBudget::new(&dir, "https://api.example.com", "sk", limit).unwrap();
        a.back_off(Duration::from_secs(2), LOCK_PATIENCE).unwrap();
        let wait = b.acquire(None, LOCK_PATIENCE).unwrap().unwrap();
        assert!(wait > Duration::from_millis(1_900), "{wait:?}");
        assert_eq!(
            b.acquire(Some(Duration::from_secs(1)), LOCK_PATIENCE)
                .unwrap(),
            None
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_shared_step_takes_microseconds() {
        let dir = dir("cost");
        let limit = RateLimit::per_minute(u32::MAX);
        let budget = MachineBudget::new(&dir, "https://api.example.com", "sk", limit).unwrap();
        let started = Instant::now();
        for _ in 0..1_000 {
            budget.acquire(None, LOCK_PATIENCE).unwrap();
        }
        let each = started.elapsed() / 1_000;
        eprintln!("one shared step (open, lock, read, write, unlock): {each:?}");
        assert!(each < Duration::from_millis(2), "{each:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_lock_held_too_long_is_given_up_in_time_and_its_release_is_seen() {
        let dir = dir("held");
        let limit = RateLimit::per_minute(60);
        let budget = MachineBudget::new(&dir, "https://api.example.com", "sk", limit).unwrap();
        budget.acquire(None, LOCK_PATIENCE).unwrap();
        // Another holder (a process stopped with the lock; its death releases it).
        let holder = File::open(budget.path()).unwrap();
        holder.lock().unwrap();
        let started = Instant::now();
        let err = budget.acquire(None, LOCK_PATIENCE).unwrap_err();
        assert!(
            started.elapsed() < LOCK_PATIENCE * 2,
            "{:?}",
            started.elapsed()
        );
        assert!(err.0.contains("stayed locked"), "{}", err.0);
        // A call with less time left than the patience waits only that long.
        let started = Instant::now();
        let err = budget
            .acquire(Some(Duration::from_millis(20)), Duration::from_millis(20))
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_millis(120),
            "{:?}",
            started.elapsed()
        );
        assert!(err.0.contains("stayed locked for 20ms"), "{}", err.0);
        drop(holder);
        assert!(budget.acquire(None, LOCK_PATIENCE).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unwritable_folder_is_reported() {
        let file = std::env::temp_dir().join(format!("budget-not-a-dir-{}", std::process::id()));
        std::fs::write(&file, b"x").unwrap();
        let err = MachineBudget::new(
            &file.join("budgets"),
            "https://a",
            "k",
            RateLimit::per_minute(1),
        )
        .unwrap_err();
        assert!(err.0.contains("cannot make"), "{}", err.0);
        let _ = std::fs::remove_file(&file);
    }
}
