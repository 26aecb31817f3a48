//! `cargo xtask bench`: the limits a plan sets, met without waste and without a refusal.
//!
//! - **Pacing**: N calls on the projects service's Free plan (100 a minute, bursts of
//!   150) through a client told its plan, against the sandbox on the real clock: the
//!   429s met (the target is none) and the time taken over the plan's theoretical
//!   minimum, (N - 150) × 0.6 s (the target is at most 1.02).
//! - **Quota**: vision calls on the Free plan's monthly quota until the service refuses:
//!   how many succeed (the target is exactly the quota), the refusal's kind, and how many
//!   retries the refusal caused (the target is none).
//!
//! Options: `--quick` (N = 160 instead of 300), `--write <file>` to also write the
//! results as a Markdown section.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use core_http::{
    ErrorKind,
    config::{Sleeper, ThreadSleeper},
};

/// The most the paced run may take over the plan's minimum.
const TARGET_RATIO: f64 = 1.02;

fn main() {
    let quick = testkit::bench::flag("--quick");
    let calls: u32 = if quick { 160 } else { 300 };

    let sandbox = sandbox::Sandbox::start().unwrap();

    // Pacing.
    let client = projects_client::Client::builder()
        .base_url(sandbox.service_url(sandbox::Service::Projects))
        .api_key("sk_test_free")
        .rate_limit(projects_client::Plan::Free)
        .max_retries(0)
        .build()
        .unwrap();
    let started = Instant::now();
    let mut refused = 0;
    for _ in 0..calls {
        match client
            .projects()
            .list(&projects_client::projects::ListProjects::new().limit(1))
        {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::RateLimited => refused += 1,
            Err(e) => panic!("{e}"),
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let minimum = f64::from(calls - 150) * 0.6;
    let ratio = elapsed / minimum;
    println!(
        "pacing: {calls} calls in {elapsed:.2} s, {ratio:.3} of the minimum {minimum:.1} s, {refused} refused"
    );

    // Quota.
    let sleeps = Arc::new(Counting::default());
    let vision = vision_client::Client::builder()
        .base_url(sandbox.service_url(sandbox::Service::Vision))
        .api_key("sk_test_free")
        .sleeper(sleeps.clone())
        .build()
        .unwrap();
    let quota = vision.status().get().unwrap().usage.calls_limit;
    let request =
        vision_client::analyses::ClassifyRequest::new("https://images.example.com/cat.jpg");
    let mut succeeded = 0u64;
    let refusal = loop {
        match vision.analyses().classify(&request) {
            Ok(_) => succeeded += 1,
            Err(e) => break e,
        }
        assert!(succeeded <= quota + 5, "the quota is never enforced");
    };
    let retries = sleeps.count();
    println!(
        "quota: {succeeded} of {quota} calls succeeded, then {:?} after {retries} retries",
        refusal.kind()
    );

    let paced = refused == 0 && ratio <= TARGET_RATIO;
    let exact = succeeded == quota && refusal.kind() == ErrorKind::QuotaExceeded && retries == 0;
    let verdict = |met: bool| if met { "met" } else { "**missed**" };
    let section = format!(
        "\n## Limits: pacing and quotas\n\n\
Release build, one run, against the sandbox on the real clock in this process.\n\n\
**Pacing.** {calls} calls (`projects().list`) through a client given `Plan::Free` (100 a \
minute, bursts of 150), retries off so that a 429 would show: {refused} refused (target \
none); {elapsed:.2} s against the plan's theoretical minimum of {minimum:.1} s \
(({calls} - 150) × 0.6 s): **{ratio:.3}** (target at most {TARGET_RATIO}: {}).\n\n\
**Quota.** vision analyses with the Free key until the service refuses: **{succeeded}** \
succeeded of a monthly quota of {quota}; the next was refused as `{:?}` after {retries} \
retries (target: exactly the quota, `QuotaExceeded`, no retry: {}).\n",
        verdict(paced),
        refusal.kind(),
        verdict(exact),
    );
    if let Some(path) = testkit::bench::option("--write") {
        std::fs::write(path, section).unwrap();
    }
}

/// Sleeps as the default sleeper does, counting the sleeps (each retry sleeps first).
#[derive(Debug, Default)]
struct Counting(Mutex<u64>);

impl Counting {
    fn count(&self) -> u64 {
        *self.0.lock().unwrap()
    }
}

impl Sleeper for Counting {
    fn sleep(&self, duration: Duration) {
        *self.0.lock().unwrap() += 1;
        ThreadSleeper.sleep(duration);
    }
}
