//! Helpers shared by the core-http integration tests: a sleeper that records instead of
//! sleeping, a manual clock, and the hostile server for the failures mockito cannot
//! produce (stalls, dropped connections, truncated bodies).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

/// `testkit`'s hostile HTTP server, the same file compiled in: core-http's tests cannot
/// depend on testkit, which turns core-http features on and would hide a test run
/// without them.
#[path = "../../../testkit/src/hostile.rs"]
pub mod hostile;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use core_http::config::{Clock, Sleeper};

/// Records every requested sleep and, when given a clock, advances it instead of waiting.
#[derive(Debug, Default)]
pub struct RecordingSleeper {
    pub slept: Mutex<Vec<Duration>>,
    pub clock: Option<Arc<ManualClock>>,
}

impl RecordingSleeper {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
    pub fn with_clock(clock: Arc<ManualClock>) -> Arc<Self> {
        Arc::new(RecordingSleeper {
            slept: Mutex::default(),
            clock: Some(clock),
        })
    }
    pub fn slept(&self) -> Vec<Duration> {
        self.slept.lock().unwrap().clone()
    }
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, d: Duration) {
        self.slept.lock().unwrap().push(d);
        if let Some(c) = &self.clock {
            c.advance(d);
        }
    }
}

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct ManualClock(Mutex<Instant>);

impl ManualClock {
    pub fn new() -> Arc<Self> {
        Arc::new(ManualClock(Mutex::new(Instant::now())))
    }
    pub fn advance(&self, d: Duration) {
        *self.0.lock().unwrap() += d;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.0.lock().unwrap()
    }
}

/// The failure inside the [`core_http::Error::Unsettled`] that an action without a key
/// ends in when its outcome is unknown; panics unless it is one, without an id to
/// repeat with, whose text advises a look before repeating.
pub fn unsettled(err: &core_http::Error) -> &core_http::Error {
    match err {
        core_http::Error::Unsettled {
            repeat_with: None,
            source,
        } => {
            assert!(
                err.to_string()
                    .contains("look at the service's state before repeating it"),
                "{err}"
            );
            source
        }
        other => panic!("expected Unsettled without an id, got {other:?}"),
    }
}
