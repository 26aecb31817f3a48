//! A client's pace: its own bucket, or a budget shared beyond the process with the bucket
//! to fall back on. Every answer of a shared store is judged here, whoever wrote the
//! store: a turn is waited for within the call's time and never past
//! [`LONGEST_QUEUE`]; a service's `Retry-After` held for every sharer is waited out only
//! as a retry would (within the call's time and 60 s), else the call ends at once with
//! [`Error::RateLimited`](crate::Error::RateLimited), nothing sent; a state that cannot
//! be true is damaged, started afresh, and said once, as a store out of reach is.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::shared::{
    BudgetStore, LONGEST_HOLD, LONGEST_QUEUE, Opening, Scope, SharedBudget, Take, Turn, Unavailable,
};
use super::{RateLimit, TokenBucket, WhenUnavailable};
use crate::time::{Clock, Sleeper};

/// How often a client that waits for its shared budget tries it again.
const WAIT_RETRY: Duration = Duration::from_millis(100);

/// Why a request is not cleared to go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Its turn is further off than the call can wait (the client's own bucket, or a
    /// queue of other programs' calls on the shared budget).
    TooFar(Duration),
    /// A service's `Retry-After`, held for every sharer, runs past what the call can
    /// wait.
    Held(Duration),
    /// The shared budget stayed out of reach for all of the call's time, and the client
    /// was told to wait for it.
    Unreachable,
}

/// A client's pace.
#[derive(Debug)]
pub(crate) struct Pacer {
    local: TokenBucket,
    shared: Option<Box<dyn BudgetStore>>,
    /// How far ahead a shared state's next turn can truly be: a queue of
    /// [`LONGEST_QUEUE`] and the plan's whole burst.
    believable: Duration,
    when_unavailable: WhenUnavailable,
    /// The longest a call's first request spends on its shared budget: the client's
    /// timeout.
    patience: Duration,
    /// Whether the last use of the shared budget failed (said once, and once again when
    /// it works again).
    alone: AtomicBool,
    observer: crate::observe::Observers,
    clock: Arc<dyn Clock>,
    sleeper: Arc<dyn Sleeper>,
}

/// What a client's pace is made of: the settings [`Pacer::new`] reads.
pub(crate) struct PaceSettings<'a> {
    pub(crate) limit: RateLimit,
    pub(crate) shared: Option<&'a dyn SharedBudget>,
    pub(crate) when_unavailable: WhenUnavailable,
    pub(crate) patience: Duration,
    pub(crate) observer: crate::observe::Observers,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) sleeper: Arc<dyn Sleeper>,
}

impl Pacer {
    /// The pace of `settings`, its shared budget opened for `scope`. A setting that can
    /// never work is a configuration error; a store out of reach is said once and paced
    /// without (refused when the client is told to wait for it).
    pub(crate) fn new(settings: PaceSettings<'_>, scope: &Scope<'_>) -> crate::Result<Pacer> {
        let limit = settings.limit;
        let window = Duration::from_secs_f64(
            f64::from(limit.burst.max(1)) / limit.tokens_per_sec().max(1e-9),
        )
        .min(LONGEST_HOLD);
        let mut pacer = Pacer {
            local: TokenBucket::new(limit, settings.clock.now()),
            shared: None,
            believable: LONGEST_QUEUE + window,
            when_unavailable: settings.when_unavailable,
            patience: settings.patience,
            alone: AtomicBool::new(false),
            observer: settings.observer,
            clock: settings.clock,
            sleeper: settings.sleeper,
        };
        let Some(budget) = settings.shared else {
            return Ok(pacer);
        };
        match budget.open(scope) {
            Ok(store) => pacer.shared = store,
            Err(Opening::Config(why)) => return Err(crate::Error::config(why)),
            // Told to wait for a budget that cannot be opened: a client whose every
            // call would time out is refused now instead.
            Err(Opening::Unavailable(why)) if pacer.when_unavailable == WhenUnavailable::Wait => {
                return Err(crate::Error::config(format!(
                    "the shared rate budget cannot be used ({}), and this client is told to \
                     wait for it",
                    why.0
                )));
            }
            Err(Opening::Unavailable(why)) => pacer.lost(budget.name(), &why),
        }
        Ok(pacer)
    }

    /// Takes the next request's turn and returns how long to wait for it, within
    /// `within` (the call's time left; for a call's first request, `None`: its own
    /// bucket's turn is waited for however long, the caller having asked for the pace,
    /// and a shared turn within the client's timeout).
    pub(crate) fn acquire(&self, within: Option<Duration>) -> Result<Duration, Refusal> {
        if let Some(store) = &self.shared
            && let Some(cleared) = self.acquire_shared(store.as_ref(), within)
        {
            return cleared;
        }
        let wait = self.local.acquire(self.clock.now());
        match within {
            Some(within) if wait >= within => Err(Refusal::TooFar(wait)),
            _ => Ok(wait),
        }
    }

    /// The shared budget's answer; `None` to pace alone for this request.
    fn acquire_shared(
        &self,
        store: &dyn BudgetStore,
        within: Option<Duration>,
    ) -> Option<Result<Duration, Refusal>> {
        let started = self.clock.now();
        let give_up = started
            .checked_add(within.unwrap_or(self.patience))
            .unwrap_or(started + crate::time::FOREVER);
        loop {
            let left = give_up.saturating_duration_since(self.clock.now());
            let take = Take {
                horizon: left.min(LONGEST_QUEUE),
                bound: left,
                believable: self.believable,
            };
            let turn = match store.take(&take) {
                Ok(turn) => turn,
                Err(why) => {
                    self.lost(store.name(), &why);
                    if self.when_unavailable == WhenUnavailable::PaceAlone {
                        return None;
                    }
                    if give_up.saturating_duration_since(self.clock.now()) <= WAIT_RETRY {
                        return Some(Err(Refusal::Unreachable));
                    }
                    self.sleeper.sleep(WAIT_RETRY);
                    continue;
                }
            };
            let judged = self.judge(turn, take.horizon);
            if judged.is_ok() {
                self.regained(store.name());
            }
            match judged {
                Ok(Turn::Go(wait)) => return Some(Ok(wait)),
                Ok(Turn::Held(hold)) if hold < take.horizon => {
                    // The service's word, waited out as a retry would; then a turn.
                    log::debug!("the shared rate budget holds every sharer for {hold:?}");
                    self.sleeper.sleep(hold);
                }
                Ok(Turn::Held(hold)) => return Some(Err(Refusal::Held(hold))),
                Ok(Turn::Later(wait)) => return Some(Err(Refusal::TooFar(wait))),
                Ok(Turn::Damaged(why)) | Err(why) => {
                    self.lost(store.name(), &Unavailable(why));
                    return None;
                }
            }
        }
    }

    /// `turn` as it may be believed: a wait longer than anything true (a store that
    /// ignored the horizon, a file overwritten, a clock stepped back) is damage.
    fn judge(&self, turn: Turn, horizon: Duration) -> Result<Turn, String> {
        let shown = crate::error::rounded;
        match turn {
            Turn::Go(wait) | Turn::Later(wait) if wait > self.believable => Err(format!(
                "it held a state that cannot be true (a next turn {} away, where at most {} \
                 can be)",
                shown(wait),
                shown(self.believable)
            )),
            Turn::Held(hold) if hold > LONGEST_HOLD => Err(format!(
                "it held a state that cannot be true (a Retry-After of {}, where at most {} \
                 is kept)",
                shown(hold),
                shown(LONGEST_HOLD)
            )),
            // A turn taken at or past the horizon: not one this call can wait for.
            Turn::Go(wait) if wait >= horizon => Ok(Turn::Later(wait)),
            Turn::Damaged(why) => Err(format!("{why}: it was started afresh")),
            turn => Ok(turn),
        }
    }

    /// A 429 said to wait `pause`: every process sharing the budget waits it out. The
    /// step takes at most `within` (what is left of the call's time).
    pub(crate) fn back_off(&self, pause: Duration, within: Duration) {
        if let Some(store) = &self.shared
            && let Err(why) = store.hold_back(pause.min(LONGEST_HOLD), within)
        {
            self.lost(store.name(), &why);
        }
    }

    /// The shared budget could not be used: said once, until it works again.
    fn lost(&self, store: &'static str, why: &Unavailable) {
        if !self.alone.swap(true, Ordering::AcqRel) {
            let then = match self.when_unavailable {
                WhenUnavailable::PaceAlone => "this client paces alone until it can",
                WhenUnavailable::Wait => "waiting for it",
            };
            log::warn!("{} cannot be used ({}): {then}", budget_on(store), why.0);
            self.observer.budget(crate::observe::BudgetEvent::Lost {
                store,
                reason: why.0.clone(),
            });
        }
    }

    /// The shared budget answered: said once after it could not be used.
    fn regained(&self, store: &'static str) {
        if self.alone.swap(false, Ordering::AcqRel) {
            log::warn!("{} works again: this client shares it", budget_on(store));
            self.observer
                .budget(crate::observe::BudgetEvent::Regained { store });
        }
    }
}

/// The words a warning uses for a store.
fn budget_on(store: &str) -> String {
    match store {
        "redis" => "the rate budget on Redis".into(),
        "machine" => "the machine's rate budget".into(),
        other => format!("the rate budget kept by {other}"),
    }
}
