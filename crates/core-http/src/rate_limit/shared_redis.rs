//! A rate budget shared by the processes of many machines through Redis (feature
//! `redis`): one atomic step per request, a Lua script on the server that reads the
//! budget's GCRA state (the next request's arrival time and the end of a 429's
//! `Retry-After`), reserves the first moment it allows and writes it back, all on the
//! server's clock (`TIME`), so machines whose clocks disagree still pace as one and no two
//! processes race. The key is a keyed hash of the base URL, the key and the rate
//! (`service-clients:budget:<32 hex digits>`), never the key.
//!
//! Each step is bounded: connecting and each round trip get what is left of the call's
//! time (at most [`STEP_LIMIT`]). While Redis cannot be reached, a new connection is
//! tried at most every [`RETRY_EVERY`], and the client paces alone in between.

use std::sync::Mutex;
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
    state: Mutex<Link>,
}

/// The connection, or when to try for one again.
#[derive(Default)]
struct Link {
    connection: Option<redis::Connection>,
    retry_at: Option<Instant>,
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
            state: Mutex::new(Link::default()),
        })
    }

    /// Reserves the next moment the budget allows: how long to wait for it, or `None`
    /// (nothing reserved) when that is `within` or more away.
    pub(crate) fn acquire(
        &self,
        within: Option<Duration>,
    ) -> Result<Option<Duration>, Unavailable> {
        let micros = |d: Duration| i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
        let answer: i64 = self.step(within, |script, connection| {
            script
                .key(&self.key)
                .arg("acquire")
                .arg(micros(self.interval))
                .arg(micros(self.tolerance))
                .arg(within.map_or(-1, micros))
                .invoke(connection)
        })?;
        Ok(u64::try_from(answer).ok().map(Duration::from_micros))
    }

    /// Holds every process back for `pause` (a 429's `Retry-After`).
    pub(crate) fn back_off(&self, pause: Duration) -> Result<(), Unavailable> {
        let micros = i64::try_from(pause.as_micros()).unwrap_or(i64::MAX);
        self.step(None, |script, connection| {
            script
                .key(&self.key)
                .arg("back_off")
                .arg(micros)
                .invoke::<i64>(connection)
        })
        .map(|_| ())
    }

    /// Runs one step on the connection (made if needed), within `within` and
    /// [`STEP_LIMIT`]; a failed step drops the connection.
    fn step<T>(
        &self,
        within: Option<Duration>,
        run: impl FnOnce(&redis::Script, &mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Unavailable> {
        let limit = within
            .map_or(STEP_LIMIT, |w| w.min(STEP_LIMIT))
            .max(Duration::from_millis(1));
        let mut link = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if link.connection.is_none() {
            if link.retry_at.is_some_and(|at| Instant::now() < at) {
                return Err(Unavailable(
                    "Redis could not be reached a moment ago".into(),
                ));
            }
            let connection = self
                .client
                .get_connection_with_timeout(limit)
                .and_then(|c| {
                    c.set_read_timeout(Some(limit))?;
                    c.set_write_timeout(Some(limit))?;
                    Ok(c)
                })
                .map_err(|e| {
                    link.retry_at = Some(Instant::now() + RETRY_EVERY);
                    Unavailable(format!("cannot reach Redis: {}", described(&e)))
                })?;
            link.connection = Some(connection);
            link.retry_at = None;
        }
        let Some(connection) = link.connection.as_mut() else {
            return Err(Unavailable("no Redis connection".into()));
        };
        let _ = connection.set_read_timeout(Some(limit));
        match run(&self.script, connection) {
            Ok(value) => Ok(value),
            Err(e) => {
                link.connection = None;
                link.retry_at = Some(Instant::now() + RETRY_EVERY);
                Err(Unavailable(format!("Redis failed: {}", described(&e))))
            }
        }
    }
}

/// What went wrong with Redis, in words that carry no password: its kind and code, and
/// the server's own detail (a server's message never holds the client's password).
fn described(e: &redis::RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_owned(),
        _ if e.is_timeout() => "timed out".into(),
        _ if e.is_io_error() => "the connection failed".into(),
        _ => format!("{:?}", e.kind()),
    }
}

/// The keys of the budget names on Redis: public (every machine must name a budget
/// alike), so the name is a 128-bit hash of the base URL, the key and the rate.
const PUBLIC_KEYS: [u8; 32] = *b"service-clients rate budget, v1.";
