//! `cargo xtask test` (every check CI runs) and `cargo xtask fuzz`.

use std::fs;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::bench::{dependency_budget, quick_benches};
use crate::demo::fixtures;
use crate::run::{Runner, Tally, run_step, step};
use crate::{cargo, has_nextest, root};

pub(crate) fn test() -> Result<(), String> {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let result = run_checks(&tally);
    let t = tally.lock().map(|t| *t).unwrap_or_default();
    // One plain closing line for whoever reads the end of the log.
    println!("tests: {} passed, {} failed", t.passed, t.failed);
    result
}

pub(crate) fn run_checks(tally: &Arc<Mutex<Tally>>) -> Result<(), String> {
    let started = Instant::now();
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    step("fmt --check", fmt)?;

    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
        // The declared rust-version is honest: no std API newer than it.
        "-D",
        "clippy::incompatible_msrv",
    ]);
    step("clippy -D warnings (and the rust-version honoured)", clippy)?;
    crate::structure::check()?;
    crate::semver::check()?;
    crate::publish::install_lines()?;

    // Each crate's feature sets built once: everything with every feature in the test
    // run below; core-http without its features and the clients without their default
    // ones checked here (a feature can never be needed to compile another).
    let nextest = has_nextest();
    let mut lean = cargo();
    lean.args(["check", "-p", "core-http", "--no-default-features", "--lib"]);
    for client in crate::CLIENTS {
        lean.args(["-p", client]);
    }
    run_step(
        "core-http without features, the clients without defaults",
        lean,
        None,
    )?;

    let (tests, runner) = whole_suite(nextest);
    run_step("tests", tests, Some((runner, tally)))?;

    // The whole suite again at a moment that breaks what assumes the day: the last 30 s
    // of a year that ends on a Saturday (the market closed for the weekend, then a new
    // day, month and year, and a holiday), each test binary run under libfaketime (the
    // wall clock moved; the monotonic clock stays the system's, which waits need), and
    // the e2e sandboxes starting there too. Without faketime, the e2e sandboxes alone
    // start there.
    let mut moved = cargo();
    if let Some(faked) = faketime_runner(MOVED_TO)? {
        (moved, _) = whole_suite(nextest);
        moved.arg("--config").arg(faked);
    } else {
        println!(
            "faketime is missing (apt-get install faketime): only the e2e sandboxes start at \
             {MOVED_TO}, the tests' own clocks stay today's"
        );
        let dated = dated_test_files()?;
        if nextest {
            moved.args(["nextest", "run", "-p", "e2e", "--no-fail-fast", "-E"]);
            moved.arg(
                dated
                    .iter()
                    .map(|name| format!("binary({name})"))
                    .collect::<Vec<_>>()
                    .join(" | "),
            );
        } else {
            moved.args(["test", "-p", "e2e"]);
            for name in &dated {
                moved.args(["--test", name]);
            }
        }
    }
    moved.env("E2E_SANDBOX_START", MOVED_TO);
    run_step(
        &format!("every test again at {MOVED_TO}"),
        moved,
        Some((runner, tally)),
    )?;

    // A program outside the workspace with one client crate as its only dependency:
    // every type a user meets must be reachable through it. Same versions as the
    // workspace (its lock file copied), same target folder (its build reused).
    let external = root().join("tests/external");
    fs::copy(root().join("Cargo.lock"), external.join("Cargo.lock"))
        .map_err(|e| format!("cannot copy Cargo.lock to {external:?}: {e}"))?;
    let mut one_dependency = cargo();
    one_dependency
        .args(["build", "--manifest-path"])
        .arg(external.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root().join("target"));
    run_step(
        "a program with one client crate as its dependency",
        one_dependency,
        None,
    )?;

    crate::readmes::run_all()?;

    quick_benches()?;
    dependency_budget()?;
    crate::soak::quick_soak()?;

    crate::examples::doc_tests(tally)?;
    crate::scripts::run_all()?;

    let mut doc = cargo();
    doc.args(["doc", "--workspace", "--no-deps", "--all-features"])
        .env("RUSTDOCFLAGS", "-D warnings");
    step("doc -D warnings", doc)?;
    // The published crates' docs with their default features, as users who build them
    // locally get them (a link to a feature's item fails here): one run for all.
    let mut defaults = cargo();
    defaults
        .args(["doc", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings");
    for krate in crate::publish::published()? {
        defaults.args(["-p", &krate.name]);
    }
    step("doc of every published crate, default features", defaults)?;

    fixtures(true)?;
    crate::publish::packaging()?;

    println!(
        "all checks passed in {:.0}s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The whole test suite, with nextest when it is there, and the runner that reads its
/// output.
fn whole_suite(nextest: bool) -> (std::process::Command, Runner) {
    let mut suite = cargo();
    if nextest {
        suite.args([
            "nextest",
            "run",
            "--workspace",
            "--all-features",
            "--no-fail-fast",
        ]);
        (suite, Runner::Nextest)
    } else {
        suite.args([
            "test",
            "--workspace",
            "--all-features",
            "--lib",
            "--bins",
            "--tests",
            "--examples",
        ]);
        (suite, Runner::Libtest)
    }
}

/// The moment the suite runs at a second time: 30 s before a new year that starts on a
/// Sunday, a Saturday night.
const MOVED_TO: &str = "2033-12-31T23:59:30Z";

/// A test runner (as `cargo --config` takes it) that runs each test binary with its wall
/// clock moved to `moment` (RFC 3339) as the run starts, through libfaketime preloaded
/// (its thread-safe build) with one offset for every process, so that the programs a
/// test starts agree on the time; the monotonic clock stays the system's. `None` when
/// libfaketime is not on this machine.
fn faketime_runner(moment: &str) -> Result<Option<String>, String> {
    let Some(library) = [
        "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
        "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
        "/usr/lib/faketime/libfaketimeMT.so.1",
        "/usr/local/lib/faketime/libfaketimeMT.so.1",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists()) else {
        return Ok(None);
    };
    let target = unix_seconds(moment)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| format!("the clock is before 1970: {e}"))?
        .as_secs();
    let offset = i128::from(target) - i128::from(now);
    Ok(Some(format!(
        "target.'cfg(all())'.runner = [\"env\", \"LD_PRELOAD={library}\", \
         \"FAKETIME={offset:+}\", \"FAKETIME_DONT_FAKE_MONOTONIC=1\"]"
    )))
}

/// The seconds since 1970 of `YYYY-MM-DDTHH:MM:SSZ`.
fn unix_seconds(moment: &str) -> Result<u64, String> {
    let bad = || format!("{moment:?} is not YYYY-MM-DDTHH:MM:SSZ");
    let n = |range: std::ops::Range<usize>| -> Result<i64, String> {
        moment
            .get(range)
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)
    };
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hh * 3_600 + mm * 60 + ss).map_err(|_| bad())
}

/// The end-to-end test files (their names) that start a sandbox through the suite's
/// helpers (`e2e::sandbox`, `e2e::sandbox_builder`, `e2e::sandbox_time_builder`), whose
/// clock starts at `E2E_SANDBOX_START`.
fn dated_test_files() -> Result<Vec<String>, String> {
    let dir = root().join("tests/tests");
    let entries = fs::read_dir(&dir).map_err(|e| format!("cannot list {dir:?}: {e}"))?;
    let mut names = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot list {dir:?}: {e}"))?
            .path();
        if path.extension().is_some_and(|x| x == "rs") {
            let text =
                fs::read_to_string(&path).map_err(|e| format!("cannot read {path:?}: {e}"))?;
            if text.contains("e2e::sandbox")
                && let Some(name) = path.file_stem().and_then(|s| s.to_str())
            {
                names.push(name.to_owned());
            }
        }
    }
    names.sort();
    if names.is_empty() {
        return Err(format!("no test file in {dir:?} starts a dated sandbox"));
    }
    Ok(names)
}

/// Runs the property tests with many more cases until `--secs N` (default 60) have
/// passed; each round draws new random cases.
pub(crate) fn fuzz(args: &[String]) -> Result<(), String> {
    let secs: u64 = match args.iter().position(|a| a == "--secs") {
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or("--secs needs a whole number of seconds")?,
        None => 60,
    };
    let started = Instant::now();
    let mut round = 0;
    while started.elapsed().as_secs() < secs {
        round += 1;
        // The decoders' property tests of every client, and core-http's own.
        let mut clients = cargo();
        clients
            .args(["test", "--release", "--workspace", "--all-features"])
            .args(["--test", "properties"])
            .env("PROPTEST_CASES", "20000");
        step(&format!("fuzz round {round}: clients"), clients)?;
        let mut core = cargo();
        core.args(["test", "--release", "-p", "core-http", "--all-features"])
            .args(["--lib", "properties"])
            .env("PROPTEST_CASES", "20000");
        step(&format!("fuzz round {round}: core-http"), core)?;
    }
    println!(
        "fuzzed for {:.0}s in {round} rounds",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_moment_is_read_as_unix_seconds() {
        assert_eq!(super::unix_seconds("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(
            super::unix_seconds("2033-12-31T23:59:30Z"),
            Ok(2_019_686_370)
        );
        assert_eq!(
            super::unix_seconds("2024-02-29T12:00:00Z"),
            Ok(1_709_208_000)
        );
        assert!(super::unix_seconds("yesterday").is_err());
    }
}
