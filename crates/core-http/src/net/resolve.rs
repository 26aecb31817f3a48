//! Host names to addresses, within a deadline, for calls and streams alike.
//!
//! The system's resolver has no timeout of its own, so a lookup runs on one of a few
//! threads kept for lookups (started when needed, at most [`WORKERS`], each gone after
//! [`IDLE`] without work) while the caller waits no longer than its deadline; a caller
//! that gives up leaves the answer to the cache. Answers are kept for [`TTL`], so a
//! client talking to one service looks its host up about twice a minute. An address
//! written as one (`127.0.0.1`, `[::1]`) is never looked up.

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// How long an answer is reused.
const TTL: Duration = Duration::from_secs(30);

/// The most lookup threads of the process.
const WORKERS: usize = 4;

/// How long a lookup thread waits for work before it ends.
const IDLE: Duration = Duration::from_secs(30);

/// The most hosts a cache keeps.
const HOSTS: usize = 64;

/// Why a host has no address.
#[derive(Debug)]
pub(crate) enum ResolveError {
    /// The name is not known (or the system could not look it up).
    NotFound(String),
    /// The deadline passed first.
    TimedOut,
}

type Answer = Result<Vec<SocketAddr>, String>;

/// One lookup: its name and port, and where its answer goes.
struct Job {
    host: String,
    port: u16,
    slot: Arc<Slot>,
}

/// An answer on its way to whoever waits for it.
#[derive(Default)]
struct Slot {
    answer: Mutex<Option<Answer>>,
    ready: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The process's lookup threads and the work waiting for them.
#[derive(Default)]
struct Pool {
    state: Mutex<PoolState>,
    work: Condvar,
}

#[derive(Default)]
struct PoolState {
    jobs: VecDeque<Job>,
    threads: usize,
    idle: usize,
}

impl Pool {
    fn get() -> &'static Pool {
        static POOL: OnceLock<Pool> = OnceLock::new();
        POOL.get_or_init(Pool::default)
    }

    /// Queues `job`, starting a thread for it when none is free (and fewer than
    /// [`WORKERS`] run).
    fn submit(&'static self, job: Job) {
        let mut state = lock(&self.state);
        state.jobs.push_back(job);
        if state.idle == 0 && state.threads < WORKERS {
            let started = std::thread::Builder::new()
                .name("core-http-resolve".into())
                .spawn(move || self.work());
            if started.is_ok() {
                state.threads += 1;
            }
        }
        drop(state);
        self.work.notify_one();
    }

    fn work(&self) {
        let mut state = lock(&self.state);
        loop {
            if let Some(job) = state.jobs.pop_front() {
                drop(state);
                let answer = (job.host.as_str(), job.port)
                    .to_socket_addrs()
                    .map(Vec::from_iter)
                    .map_err(|e| e.to_string());
                *lock(&job.slot.answer) = Some(answer);
                job.slot.ready.notify_all();
                state = lock(&self.state);
                continue;
            }
            state.idle += 1;
            let (next, waited) = self
                .work
                .wait_timeout(state, IDLE)
                .unwrap_or_else(PoisonError::into_inner);
            state = next;
            state.idle -= 1;
            if waited.timed_out() && state.jobs.is_empty() {
                state.threads -= 1;
                return;
            }
        }
    }
}

/// One client's resolver: its cache, and the lookups on their way.
#[derive(Default)]
pub(crate) struct Resolver {
    cache: Mutex<Vec<Cached>>,
}

struct Cached {
    host: String,
    port: u16,
    at: Instant,
    /// The answer, or the lookup on its way (shared by every caller that waits).
    slot: Arc<Slot>,
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolver").finish_non_exhaustive()
    }
}

impl Resolver {
    /// The addresses of `host` (bare: no brackets) and `port`, by `deadline`.
    pub(crate) fn resolve(
        &self,
        host: &str,
        port: u16,
        deadline: Instant,
    ) -> Result<Vec<SocketAddr>, ResolveError> {
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        let slot = self.slot(host, port);
        let mut answer = lock(&slot.answer);
        loop {
            match &*answer {
                Some(Ok(addrs)) if !addrs.is_empty() => return Ok(addrs.clone()),
                Some(Ok(_)) => {
                    return Err(ResolveError::NotFound(format!("{host} has no address")));
                }
                Some(Err(e)) => return Err(ResolveError::NotFound(e.clone())),
                None => {}
            }
            let left = deadline.saturating_duration_since(crate::time::now());
            if left.is_zero() {
                return Err(ResolveError::TimedOut);
            }
            answer = slot
                .ready
                .wait_timeout(answer, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// The cached answer (or lookup on its way) for `host:port`, or a new lookup.
    fn slot(&self, host: &str, port: u16) -> Arc<Slot> {
        let mut cache = lock(&self.cache);
        let now = crate::time::now();
        // A failed lookup is not kept: the next call asks again.
        cache.retain(|c| {
            now.saturating_duration_since(c.at) < TTL
                && !matches!(&*lock(&c.slot.answer), Some(Err(_)))
        });
        if let Some(cached) = cache.iter().find(|c| c.port == port && c.host == host) {
            return cached.slot.clone();
        }
        let slot = Arc::new(Slot::default());
        if cache.len() >= HOSTS {
            cache.remove(0);
        }
        cache.push(Cached {
            host: host.to_owned(),
            port,
            at: now,
            slot: slot.clone(),
        });
        drop(cache);
        Pool::get().submit(Job {
            host: host.to_owned(),
            port,
            slot: slot.clone(),
        });
        slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_not_looked_up_and_a_name_is_cached() {
        let resolver = Resolver::default();
        let soon = crate::time::now() + Duration::from_secs(5);
        let addrs = resolver.resolve("127.0.0.1", 80, soon).unwrap_or_default();
        assert_eq!(addrs, [SocketAddr::from(([127, 0, 0, 1], 80))]);
        let v6 = resolver.resolve("::1", 443, soon).unwrap_or_default();
        assert_eq!(v6.len(), 1);
        let first = resolver
            .resolve("localhost", 8080, soon)
            .unwrap_or_default();
        assert!(!first.is_empty());
        assert!(
            first
                .iter()
                .all(|a| a.port() == 8080 && a.ip().is_loopback())
        );
        // The second answer comes from the cache: the same slot.
        let a = resolver.slot("localhost", 8080);
        let b = resolver.slot("localhost", 8080);
        assert!(Arc::ptr_eq(&a, &b));
        assert!(matches!(
            resolver.resolve("no-such-host.invalid", 80, soon),
            Err(ResolveError::NotFound(_))
        ));
    }
}
