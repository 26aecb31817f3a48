//! Project tasks: `cargo xtask test | bench | demo | fixtures | fuzz | soak`.
//!
//! Kept free of dependencies: it only runs cargo and reports.

mod bench;
mod demo;
mod examples;
mod publish;
mod readmes;
mod run;
mod scripts;
mod semver;
mod soak;
mod structure;
mod test;

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use bench::bench;
use demo::{demo, fixtures};
use soak::soak;
use test::{fuzz, test};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  test       every check CI runs, in order, failing on any cargo warning:
               fmt --check; clippy -D warnings; the structure (no import circle in
               any crate, no core-http function over 80 lines); the semver list of
               external types; every install line a path dependency; core-http
               with no features, each
               feature alone (its tests), all features; the social and e-signature
               clients without their default webhook feature; every test of the workspace
               (property tests included); the end-to-end suite again starting just
               before midnight; a program outside the workspace that depends on one
               client crate; each README's first example pasted as shown into a
               new project with only its crate and run against the sandbox program;
               every benchmark in quick mode; the dependency budget of
               the REST-only clients; a 20-second soak; doc tests against one sandbox,
               then the front pages' and READMEs' examples again on it; every example
               program and the demo run to their end; docs -D warnings
               (the workspace with all features, then each published crate alone);
               fixtures --check; the published crates' metadata and packaging
  bench      release-mode benchmarks; writes docs/benchmarks.md (--quick: every one
               small, on the debug build, in under a minute; figures not written)
  package    the published crates' metadata, and each packaged as crates.io takes it
  structure  no crate's modules import each other in a circle, and none of
               core-http's functions is over 80 lines
  semver     the other crates' types in the libraries' public signatures are those
               docs/semver.md lists
  demo       a tour of the clients against the local sandbox (no key, no network)
  examples   every example program (crates/*/examples) and the demo, run to their end
               against the local sandbox
  readmes    each README's first example, pasted as shown into a new project with only
               its crate, run against the sandbox program
  fixtures   re-record the fixtures from the sandbox (--check: fail when stale)
  fuzz       the property tests with many more cases, for --secs N seconds (default 60)
  soak       the trading stream and a worlds channel against the sandbox for --minutes N
               (default 30) with faults injected at random (--seed S to repeat a run);
               checks every fill once and the world's users, prints the figures";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(),
        Some("bench") => bench(&args[1..]),
        Some("demo") => demo(),
        Some("examples") => scripts::run_all(),
        Some("readmes") => readmes::run_all(),
        Some("fixtures") => fixtures(args.iter().any(|a| a == "--check")),
        Some("fuzz") => fuzz(&args[1..]),
        Some("soak") => soak(&args[1..]),
        Some("package") => publish::packaging(),
        Some("structure") => structure::check(),
        Some("semver") => semver::check(),
        Some("-h" | "--help" | "help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command {other:?}\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The crates the clients stand on: the call engine and the products beside it.
pub(crate) const SHARED: [&str; 4] = ["core-http", "core-budgets", "core-webhooks", "core-streams"];

/// The six service crates, in the order the documents list them.
pub(crate) const CLIENTS: [&str; 6] = [
    "social-client",
    "esign-client",
    "vision-client",
    "projects-client",
    "trading-client",
    "worlds-client",
];

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    if ci(env::var("CI").ok().as_deref()) {
        // A clean clone builds everything once: incremental caches would only fill the disk.
        cmd.env("CARGO_INCREMENTAL", "0");
    }
    cmd
}

/// Whether `CI` (its value, when set) says this is a CI run: set, and not empty, `0` or
/// `false` (so `CI=false` on a developer's machine keeps incremental builds).
fn ci(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        let v = v.trim();
        !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false"))
    })
}

pub(crate) fn has_nextest() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[cfg(test)]
mod tests {
    use super::ci;

    #[test]
    fn ci_is_on_only_when_set_to_something_other_than_off() {
        for on in ["true", "1", "yes", "TRUE"] {
            assert!(ci(Some(on)), "{on}");
        }
        for off in [
            None,
            Some(""),
            Some("0"),
            Some("false"),
            Some("False"),
            Some(" "),
        ] {
            assert!(!ci(off), "{off:?}");
        }
    }
}
