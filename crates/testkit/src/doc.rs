//! What the documentation examples run against: an in-process sandbox, started at a
//! fixed instant with its clock frozen (so an example never depends on the date or the
//! hour), kept for the life of the example's process, and a deadline: an example that
//! hangs (waits for an event that never comes, reads a made-up id forever) ends its
//! process with a message after [`DEADLINE`] instead of holding the test run.
//!
//! Each helper gives the base URL and key of one service, as an example's first (hidden)
//! line: `# let (base_url, api_key) = testkit::doc::trading();`.

use std::sync::OnceLock;
use std::time::Duration;

/// The longest an example may take.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// The sandbox of this process, started on first use at 2026-03-02 14:30 UTC (a Monday,
/// the market open), its clock frozen.
pub fn sandbox() -> &'static sandbox::Sandbox {
    static SANDBOX: OnceLock<sandbox::Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| {
        std::thread::spawn(|| {
            std::thread::sleep(DEADLINE);
            eprintln!("the example did not finish within {DEADLINE:?}");
            std::process::exit(101);
        });
        sandbox::Sandbox::builder()
            .frozen_at(time::macros::datetime!(2026-03-02 14:30 UTC))
            .start()
            .expect("the sandbox starts")
    })
}

macro_rules! service {
    ($($name:ident),+) => {$(
        #[doc = concat!("The `", stringify!($name), "` service of [`sandbox()`]: its base URL and the key of its most generous plan.")]
        pub fn $name() -> (String, String) {
            let sandbox = sandbox();
            (sandbox.$name().url(), sandbox.api_key().to_owned())
        }
    )+};
}

service!(social, esign, vision, projects, trading, worlds);
