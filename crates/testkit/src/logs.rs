//! A logger for tests that look for secrets in log output: it records every record at
//! every level (of the targets a test keeps), as `LEVEL target message` lines. The logger
//! is process-global: install it once per test binary.

use std::sync::{Mutex, OnceLock};

struct Capture {
    keep: fn(&str) -> bool,
    lines: Mutex<Vec<String>>,
}

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        let target = record.target();
        if (self.keep)(target)
            && let Ok(mut lines) = self.lines.lock()
        {
            lines.push(format!("{} {target} {}", record.level(), record.args()));
        }
    }

    fn flush(&self) {}
}

static CAPTURE: OnceLock<Capture> = OnceLock::new();

/// Installs the logger at TRACE, recording the targets `keep` accepts (the first call
/// decides; later calls do nothing).
pub fn install(keep: fn(&str) -> bool) {
    let mut fresh = false;
    let capture = CAPTURE.get_or_init(|| {
        fresh = true;
        Capture {
            keep,
            lines: Mutex::new(Vec::new()),
        }
    });
    if fresh && log::set_logger(capture).is_ok() {
        log::set_max_level(log::LevelFilter::Trace);
    }
}

/// Every target.
pub fn all_targets(_: &str) -> bool {
    true
}

/// What was recorded so far.
pub fn lines() -> Vec<String> {
    CAPTURE
        .get()
        .and_then(|c| c.lines.lock().ok().map(|l| l.clone()))
        .unwrap_or_default()
}
