//! A rate budget shared by the processes of many machines through Redis (feature
//! `redis`): one atomic step per request, a Lua script on the server that reads the
//! budget's GCRA state (the next request's arrival time and the end of a 429's
//! `Retry-After`), reserves the first moment it allows and writes it back, all on the
//! server's clock (`TIME`), so machines whose clocks disagree still pace as one and no two
//! processes race. The key is a keyed hash of the base URL, the key and the rate
//! (`service-clients:budget:<32 hex digits>`), never the key.
//!
//! Each step is bounded whatever the socket does: a connection is owned by a thread of
//! its own (a [`Link`]), which connects and runs the steps it is handed, while the
//! caller waits for the answer at most what is left of the call's time, and
//! [`STEP_LIMIT`]. The `redis` crate's own timeouts bound each read and write, not a
//! whole exchange (its handshake takes up to three reads, a script two round trips, and
//! a peer may trickle), so they only let a link given up on end soon after. Links wait
//! idle between steps, one per thread of the caller's that needs one at once, so no
//! step waits on another's. While Redis cannot be reached, a new connection is tried at
//! most every [`RETRY_EVERY`], and the client paces alone in between.

use std::sync::Mutex;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::RateLimit;
use super::machine::Unavailable;

/// The most one step on Redis may take, connecting included.
const STEP_LIMIT: Duration = Duration::from_millis(500);

/// How often a client that lost Redis tries to reach it again.
const RETRY_EVERY: Duration = Duration::from_secs(1);

/// The step: `acquire interval tolerance within` (microseconds; `within` negative for
/// none) returns the wait in microseconds, or -1 (nothing reserved) when it would be
/// `within` or more; `back_off pause` holds every process back for `pause`.
const SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('HGET', KEYS[1], 'tat') or '0')
local blocked = tonumber(redis.call('HGET', KEYS[1], 'blocked') or '0')
if ARGV[1] == 'back_off' then
  local till = now + tonumber(ARGV[2])
  if till > blocked then
    redis.call('HSET', KEYS[1], 'blocked', string.format('%d', till))
  end
  redis.call('PEXPIRE', KEYS[1], math.ceil((math.max(till, tat) - now) / 1000) + 60000)
  return 0
end
local interval = tonumber(ARGV[2])
local tolerance = tonumber(ARGV[3])
local within = tonumber(ARGV[4])
local allowed = math.max(tat - tolerance, now, blocked)
local wait = allowed - now
if within >= 0 and wait >= within then
  return -1
end
tat = math.max(tat, allowed) + interval
redis.call('HSET', KEYS[1], 'tat', string.format('%d', tat))
redis.call('PEXPIRE', KEYS[1], math.ceil((tat - now) / 1000) + 60000)
return wait
";

/// A budget kept on a Redis server.
pub(crate) struct RedisBudget {
    client: redis::Client,
    key: String,
    interval: Duration,
    tolerance: Duration,
    script: redis::Script,
    /// Links between steps.
    idle: Mutex<Vec<Link>>,
    /// When a new connection may be tried again, after a failure.
    retry_at: Mutex<Option<Instant>>,
}

/// The most links kept idle.
const IDLE_MAX: usize = 8;

/// A step for the script: its name (`acquire`, `back_off`) and numbers.
type Step = (&'static str, Vec<i64>);

/// One connection to Redis, owned by its thread: it connects, then runs each step's
/// arguments through the script and sends back the answer, until its link is dropped.
struct Link {
    steps: mpsc::Sender<Step>,
    answers: mpsc::Receiver<Result<i64, String>>,
}

impl Link {
    /// A new link to the server `client` names, connecting on its own thread.
    fn open(client: redis::Client, script: redis::Script, key: String) -> Result<Link, String> {
        let (steps, step) = mpsc::channel::<Step>();
        let (answer, answers) = mpsc::channel();
        std::thread::Builder::new()
            .name("core-http redis budget".into())
            .spawn(move || {
                let connected = client
                    .get_connection_with_timeout(STEP_LIMIT)
                    .and_then(|c| {
                        // Each read and write, so that a link given up on ends soon.
                        c.set_read_timeout(Some(STEP_LIMIT))?;
                        c.set_write_timeout(Some(STEP_LIMIT))?;
                        Ok(c)
                    });
                let mut connection = match connected {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = answer.send(Err(format!("cannot reach Redis: {}", described(&e))));
                        return;
                    }
                };
                while let Ok((name, args)) = step.recv() {
                    let mut invocation = script.key(&key);
                    invocation.arg(name);
                    for a in &args {
                        invocation.arg(*a);
                    }
                    let done = invocation
                        .invoke::<i64>(&mut connection)
                        .map_err(|e| format!("Redis failed: {}", described(&e)));
                    let failed = done.is_err();
                    if answer.send(done).is_err() || failed {
                        return;
                    }
                }
            })
            .map_err(|e| format!("cannot start a thread for Redis: {e}"))?;
        Ok(Link { steps, answers })
    }
}

impl std::fmt::Debug for RedisBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Neither the URL (its password) nor the key's hash.
        f.debug_struct("RedisBudget").finish_non_exhaustive()
    }
}

impl RedisBudget {
    /// The budget for `limit` at `base_url` with `key`, on the Redis `url` names. A URL
    /// that cannot be parsed is refused here; a server that cannot be reached is found
    /// out at the first request (and paced alone until it can).
    pub(crate) fn new(
        url: &str,
        base_url: &str,
        key: &str,
        limit: RateLimit,
    ) -> crate::Result<Self> {
        let client = redis::Client::open(url).map_err(|e| {
            crate::Error::config(format!(
                "the Redis URL of the rate budget cannot be used: {}",
                e.detail()
                    .unwrap_or("it is not a redis:// or rediss:// URL")
            ))
        })?;
        let (interval, tolerance) = super::machine::pace(limit);
        Ok(RedisBudget {
            client,
            key: format!(
                "service-clients:budget:{}",
                super::machine::identity(&PUBLIC_KEYS, base_url, key, limit)
            ),
            interval,
            tolerance,
            script: redis::Script::new(SCRIPT),
            idle: Mutex::new(Vec::new()),
            retry_at: Mutex::new(None),
        })
    }

    /// Reserves the next moment the budget allows: how long to wait for it, or `None`
    /// (nothing reserved) when that is `within` or more away. The step takes at most
    /// `bound`.
    pub(crate) fn acquire(
        &self,
        within: Option<Duration>,
        bound: Duration,
    ) -> Result<Option<Duration>, Unavailable> {
        let answer = self.step(
            bound,
            (
                "acquire",
                vec![
                    micros(self.interval),
                    micros(self.tolerance),
                    within.map_or(-1, micros),
                ],
            ),
        )?;
        Ok(u64::try_from(answer).ok().map(Duration::from_micros))
    }

    /// Holds every process back for `pause` (a 429's `Retry-After`), in at most
    /// `bound`.
    pub(crate) fn back_off(&self, pause: Duration, bound: Duration) -> Result<(), Unavailable> {
        self.step(bound, ("back_off", vec![micros(pause)]))
            .map(|_| ())
    }

    /// When a new connection may be tried again.
    fn retry_at(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.retry_at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs one step on an idle link or a new one, waiting for
    /// its answer at most `bound` and [`STEP_LIMIT`], connecting included. A link that
    /// fails or is given up on is dropped, with those idle beside it (Redis went away,
    /// or restarted).
    fn step(&self, bound: Duration, step: Step) -> Result<i64, Unavailable> {
        let started = Instant::now();
        let bound = bound.min(STEP_LIMIT).max(Duration::from_millis(1));
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        let link = match idle {
            Some(link) => link,
            None => {
                if self.retry_at().is_some_and(|at| started < at) {
                    return Err(Unavailable(
                        "Redis could not be reached a moment ago".into(),
                    ));
                }
                Link::open(self.client.clone(), self.script.clone(), self.key.clone())
                    .map_err(Unavailable)?
            }
        };
        let answer = match link.steps.send(step) {
            Ok(()) => match link
                .answers
                .recv_timeout(bound.saturating_sub(started.elapsed()))
            {
                Ok(answer) => answer,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    Err(format!("Redis did not answer within {bound:?}"))
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    Err("the connection to Redis ended".into())
                }
            },
            Err(_) => Err("the connection to Redis ended".into()),
        };
        match answer {
            Ok(value) => {
                let mut idle = self
                    .idle
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if idle.len() < IDLE_MAX {
                    idle.push(link);
                }
                Ok(value)
            }
            Err(why) => {
                self.idle
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clear();
                *self.retry_at() = Some(Instant::now() + RETRY_EVERY);
                Err(Unavailable(why))
            }
        }
    }
}

/// A duration in whole microseconds, as the script counts.
fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// What went wrong with Redis, in words that carry no password: its kind and code, and
/// the server's own detail (a server's message never holds the client's password).
fn described(e: &redis::RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_owned(),
        _ if e.kind() == redis::ErrorKind::AuthenticationFailed => {
            "it refused the password (or user) the URL gives".into()
        }
        _ if e.is_timeout() => "timed out".into(),
        _ if e.is_io_error() => "the connection failed".into(),
        _ => format!("{:?}", e.kind()),
    }
}

/// The keys of the budget names on Redis: public (every machine must name a budget
/// alike), so the name is a 128-bit hash of the base URL, the key and the rate.
const PUBLIC_KEYS: [u8; 32] = *b"service-clients rate budget, v1.";
