//! A rate budget shared by the processes of many machines through Redis: one atomic step
//! per request, a Lua script on the server that reads the budget's GCRA state (the next
//! turn and the end of a 429's `Retry-After`), checks it could be true, takes the first
//! moment it allows and writes it back, all on the server's clock (`TIME`), so machines
//! whose clocks disagree still pace as one and no two processes race. The key is a
//! keyed hash of the base URL, the key and the rate (`service-clients:budget:<32 hex
//! digits>`), never the key.
//!
//! Each step runs on the calling thread over core-http's connection stack, on a socket
//! held to one deadline (what is left of the call's time, and [`STEP_LIMIT`],
//! connecting and logging in included), reading at most 64 KiB of an answer: a silent,
//! trickling or flooding peer costs a call that much, and nothing outlives a step given
//! up on (its connection is closed; there is no thread to leave behind). Connections
//! wait idle between steps, one per caller thread stepping at once, at most
//! [`IDLE_MAX`] kept. While Redis cannot be reached, a new connection is tried at most
//! every [`RETRY_EVERY`], and the client paces alone in between.
//!
//! Written here rather than with the `redis` crate, whose timeouts bound each read and
//! write, not an exchange, and which reads a bulk string of any announced length: a
//! trickling or flooding peer held a thread and its memory past the step.

mod resp;
mod url;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use core_http::config::Clock;
use core_http::net::{Dialer, Link};
use core_http::service::{BudgetStore, LONGEST_HOLD, Opening, Scope, Take, Turn, Unavailable};

use resp::Reply;
pub use url::RedisUrl;
use url::Server;

/// The most one step on Redis may take, connecting included.
const STEP_LIMIT: Duration = Duration::from_millis(500);

/// How often a client that lost Redis tries to reach it again.
const RETRY_EVERY: Duration = Duration::from_secs(1);

/// The most connections kept idle.
const IDLE_MAX: usize = 8;

/// The step. `ARGV`: the operation (`take`, `hold`), how far ahead a true state's next
/// turn can be and the longest `Retry-After` kept (microseconds); then for `take` the
/// interval, the tolerance and the horizon, for `hold` the pause. Answers `{kind, µs}`:
/// 0 go after the wait (or held back, for `hold`), 1 the next turn is that far (not
/// taken), 2 a `Retry-After` holds everyone that long (not taken), 3 the state could
/// not be true and was started afresh.
const SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('HGET', KEYS[1], 'tat') or '0')
local blocked = tonumber(redis.call('HGET', KEYS[1], 'blocked') or '0')
local believable = tonumber(ARGV[2])
local longest = tonumber(ARGV[3])
local damaged = tat == nil or blocked == nil or tat ~= tat or blocked ~= blocked
  or tat - now > believable or blocked - now > longest
if damaged then
  redis.call('DEL', KEYS[1])
  tat = 0
  blocked = 0
end
if ARGV[1] == 'hold' then
  local till = now + tonumber(ARGV[4])
  if till > blocked then
    blocked = till
    redis.call('HSET', KEYS[1], 'blocked', string.format('%d', till))
  end
  redis.call('PEXPIRE', KEYS[1], math.ceil((math.max(blocked, tat) - now) / 1000) + 60000)
  return {0, 0}
end
if damaged then
  return {3, 0}
end
local interval = tonumber(ARGV[4])
local tolerance = tonumber(ARGV[5])
local horizon = tonumber(ARGV[6])
local allowed = math.max(tat - tolerance, now, blocked)
local wait = allowed - now
if wait >= horizon then
  if blocked > now and blocked >= tat - tolerance then
    return {2, wait}
  end
  return {1, wait}
end
tat = math.max(tat, allowed) + interval
redis.call('HSET', KEYS[1], 'tat', string.format('%d', tat))
redis.call('PEXPIRE', KEYS[1], math.ceil((math.max(tat, blocked) - now) / 1000) + 60000)
return {0, wait}
";

/// The keys of the budget names on Redis: public (every machine must name a budget
/// alike), so the name is a 128-bit hash of the base URL, the key and the rate.
const PUBLIC_KEYS: [u8; 32] = *b"service-clients rate budget, v1.";

/// A budget kept on a Redis server.
pub(crate) struct RedisStore {
    server: Server,
    dialer: Arc<Dialer>,
    clock: Arc<dyn Clock>,
    key: String,
    interval: Duration,
    tolerance: Duration,
    /// Connections between steps.
    idle: Mutex<Vec<Link>>,
    /// When a new connection may be tried again, after a failure.
    retry_at: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Neither the password nor the key's hash.
        f.debug_struct("RedisStore")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// The budget for `scope` on the Redis `url` names. A URL that cannot be read is
    /// refused here; a server that cannot be reached is found out at the first request
    /// (and paced alone until it can).
    pub(crate) fn open(url: &RedisUrl, scope: &Scope<'_>) -> Result<Self, Opening> {
        let server = Server::parse(url.expose()).map_err(|why| {
            Opening::Config(format!(
                "the Redis URL of the rate budget cannot be used: {why}"
            ))
        })?;
        let (interval, tolerance) = scope.limit.gcra();
        Ok(RedisStore {
            server,
            dialer: Arc::clone(&scope.connect),
            clock: Arc::clone(&scope.clock),
            key: format!(
                "service-clients:budget:{}",
                crate::identity(&PUBLIC_KEYS, scope.base_url, scope.identity, scope.limit)
            ),
            interval,
            tolerance,
            idle: Mutex::new(Vec::new()),
            retry_at: Mutex::new(None),
        })
    }

    /// Runs `args` through the script on an idle connection or a new one, within
    /// `bound` and [`STEP_LIMIT`]. A connection that fails is dropped, with those idle
    /// beside it (Redis went away, or restarted).
    fn step(&self, bound: Duration, args: &[String]) -> Result<(i64, i64), Unavailable> {
        let bound = bound.min(STEP_LIMIT).max(Duration::from_millis(1));
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut link = match idle {
            Some(mut link) => {
                link.limit(bound);
                link
            }
            None => {
                let retry_at = *self.retry_at.lock().unwrap_or_else(PoisonError::into_inner);
                if retry_at.is_some_and(|at| self.clock.now() < at) {
                    return Err(Unavailable(
                        "Redis could not be reached a moment ago".into(),
                    ));
                }
                self.connect(bound).map_err(|why| self.failed(why))?
            }
        };
        let mut command: Vec<&[u8]> = vec![b"EVAL", SCRIPT.as_bytes(), b"1", self.key.as_bytes()];
        command.extend(args.iter().map(|a| a.as_bytes()));
        let answer = exchange(&mut link, &command).and_then(|reply| turn_numbers(&reply));
        match answer {
            Ok(numbers) => {
                let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
                if idle.len() < IDLE_MAX {
                    idle.push(link);
                }
                Ok(numbers)
            }
            Err(why) => Err(self.failed(why)),
        }
    }

    /// A step failed: its connection is gone, the idle ones too, and a new one waits.
    fn failed(&self, why: String) -> Unavailable {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        *self.retry_at.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(self.clock.now() + RETRY_EVERY);
        Unavailable(why)
    }

    /// A new connection, logged in and on its database, within `bound`.
    fn connect(&self, bound: Duration) -> Result<Link, String> {
        let s = &self.server;
        let mut link = self
            .dialer
            .connect_direct(&s.host, s.port, s.tls, bound)
            .map_err(|e| format!("cannot reach Redis: {e}"))?;
        if let Some(password) = &s.password {
            let mut auth: Vec<&[u8]> = vec![b"AUTH"];
            auth.extend(s.user.as_deref().map(str::as_bytes));
            auth.push(password.as_bytes());
            match exchange(&mut link, &auth)? {
                Reply::Status(_) => {}
                Reply::Error(e) if e.contains("WRONGPASS") || e.contains("invalid password") => {
                    return Err(
                        "cannot reach Redis: it refused the password (or user) the URL gives"
                            .into(),
                    );
                }
                other => return Err(format!("cannot log in to Redis: {}", said(&other))),
            }
        }
        if s.db != 0 {
            let db = s.db.to_string();
            match exchange(&mut link, &[b"SELECT", db.as_bytes()])? {
                Reply::Status(_) => {}
                other => {
                    return Err(format!(
                        "cannot use database {db} on Redis: {}",
                        said(&other)
                    ));
                }
            }
        }
        Ok(link)
    }
}

impl BudgetStore for RedisStore {
    fn name(&self) -> &'static str {
        "redis"
    }

    fn take(&self, take: &Take) -> Result<Turn, Unavailable> {
        let args = [
            "take".to_owned(),
            micros(take.believable),
            micros(LONGEST_HOLD),
            micros(self.interval),
            micros(self.tolerance),
            micros(take.horizon),
        ];
        let (kind, wait) = self.step(take.bound, &args)?;
        let wait = Duration::from_micros(wait.unsigned_abs());
        Ok(match kind {
            0 => Turn::Go(wait),
            1 => Turn::Later(wait),
            2 => Turn::Held(wait),
            _ => Turn::Damaged("Redis held a state that cannot be true".into()),
        })
    }

    fn hold_back(&self, pause: Duration, bound: Duration) -> Result<(), Unavailable> {
        let args = [
            "hold".to_owned(),
            micros(Duration::MAX),
            micros(LONGEST_HOLD),
            micros(pause.min(LONGEST_HOLD)),
        ];
        self.step(bound, &args).map(|_| ())
    }
}

/// One command and its answer on `link`, by its deadline.
fn exchange(link: &mut Link, args: &[&[u8]]) -> Result<Reply, String> {
    use std::io::Write;
    link.write_all(&resp::command(args))
        .and_then(|()| link.flush())
        .map_err(|e| format!("Redis failed: the connection failed ({})", e.kind()))?;
    resp::read_reply(link).map_err(|why| format!("Redis failed: {why}"))
}

/// The script's answer, `{kind, µs}`, checked: a kind it never answers, or a negative
/// wait, is not the script's.
fn turn_numbers(reply: &Reply) -> Result<(i64, i64), String> {
    match reply {
        Reply::Array(items) => match items.as_slice() {
            [Reply::Int(kind), Reply::Int(wait)] if (0..=3).contains(kind) && *wait >= 0 => {
                Ok((*kind, *wait))
            }
            [Reply::Int(_), Reply::Int(wait)] if *wait < 0 => Err(format!(
                "Redis answered a wait of {wait} µs, which cannot be"
            )),
            _ => Err("Redis answered the step with something it never answers".into()),
        },
        Reply::Error(e) => Err(format!("Redis refused the step: {}", first_words(e))),
        other => Err(format!(
            "Redis answered the step with {}, which it never answers",
            said(other)
        )),
    }
}

/// What an answer is, in a few words (a server's error as it said it, shortened).
fn said(reply: &Reply) -> String {
    match reply {
        Reply::Status(s) => format!("the status {}", first_words(s)),
        Reply::Error(e) => first_words(e),
        Reply::Int(n) => format!("the number {n}"),
        Reply::Bulk(_) => "a string".into(),
        Reply::Array(_) => "a list".into(),
    }
}

/// The first 120 characters of a server's text.
fn first_words(text: &str) -> String {
    text.chars().take(120).collect()
}

/// A duration in whole microseconds, as the script counts.
fn micros(d: Duration) -> String {
    u64::try_from(d.as_micros())
        .unwrap_or(u64::MAX)
        .min(1 << 62)
        .to_string()
}
