//! Project tasks: `cargo xtask test | bench | demo | fixtures`.
//!
//! Kept free of dependencies: it only runs cargo and reports.

use std::env;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Instant;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  test       every check CI runs: fmt, clippy, tests, doc tests, docs
  bench      release-mode benchmarks; writes docs/benchmarks.md
  demo       a tour of the clients against the local sandbox (no key, no network)
  fixtures   re-record the fixtures from the sandbox (--check: fail when stale)";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(),
        Some("bench") => bench(),
        Some("demo") => demo(),
        Some("fixtures") => fixtures(args.iter().any(|a| a == "--check")),
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

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn cargo() -> Command {
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

fn has_nextest() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs one named step, prints a summary line, and stops at the first failure.
fn step(name: &str, mut cmd: Command) -> Result<(), String> {
    println!("==> {name}");
    let started = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("step '{name}' could not start: {e}"))?;
    report(name, started, status)
}

/// Prints a step's summary line and turns its exit status into the step's result.
fn report(name: &str, started: Instant, status: std::process::ExitStatus) -> Result<(), String> {
    let secs = started.elapsed().as_secs_f64();
    if status.success() {
        println!("ok: {name} ({secs:.1}s)");
        Ok(())
    } else {
        println!("FAILED: {name} ({secs:.1}s)");
        Err(format!("step '{name}' failed ({status})"))
    }
}

/// Passed and failed test counts, read from the runners' own summary lines.
#[derive(Default, Debug, Clone, Copy)]
struct Tally {
    passed: u64,
    failed: u64,
}

impl Tally {
    /// Reads nextest's `N tests run: N passed, N failed` and libtest's
    /// `test result: ok. N passed; N failed`.
    fn read(&mut self, line: &str) {
        let number_before = |word: &str| -> Option<u64> {
            let i = line.find(word)?;
            line[..i].split_whitespace().last()?.parse().ok()
        };
        if line.contains("tests run:") || line.contains("test result:") {
            self.passed += number_before(" passed").unwrap_or(0);
            self.failed += number_before(" failed").unwrap_or(0);
        }
    }
}

/// Like [`step`], echoing the output while counting the tests it reports.
fn counted_step(name: &str, mut cmd: Command, tally: &Arc<Mutex<Tally>>) -> Result<(), String> {
    println!("==> {name}");
    let started = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("step '{name}' could not start: {e}"))?;
    let mut readers = Vec::new();
    for (pipe, to_stderr) in [
        (
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
            false,
        ),
        (
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
            true,
        ),
    ] {
        let Some(pipe) = pipe else { continue };
        let tally = Arc::clone(tally);
        readers.push(thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if to_stderr {
                    eprintln!("{line}");
                } else {
                    println!("{line}");
                }
                if let Ok(mut t) = tally.lock() {
                    t.read(&line);
                }
            }
        }));
    }
    let status = child
        .wait()
        .map_err(|e| format!("step '{name}' did not finish: {e}"))?;
    for r in readers {
        let _ = r.join();
    }
    report(name, started, status)
}

fn test() -> Result<(), String> {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let result = run_checks(&tally);
    let t = tally.lock().map(|t| *t).unwrap_or_default();
    // One plain closing line for whoever reads the end of the log.
    println!("tests: {} passed, {} failed", t.passed, t.failed);
    result
}

fn run_checks(tally: &Arc<Mutex<Tally>>) -> Result<(), String> {
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
    ]);
    step("clippy -D warnings", clippy)?;

    let mut tests = cargo();
    if has_nextest() {
        tests.args([
            "nextest",
            "run",
            "--workspace",
            "--all-features",
            "--no-fail-fast",
        ]);
    } else {
        tests.args([
            "test",
            "--workspace",
            "--all-features",
            "--lib",
            "--bins",
            "--tests",
            "--examples",
        ]);
    }
    counted_step("tests", tests, tally)?;

    let mut doctests = cargo();
    doctests.args(["test", "--workspace", "--all-features", "--doc"]);
    counted_step("doc tests", doctests, tally)?;

    let mut doc = cargo();
    doc.args(["doc", "--workspace", "--no-deps", "--all-features"])
        .env("RUSTDOCFLAGS", "-D warnings");
    step("doc -D warnings", doc)?;

    fixtures(true)?;

    println!(
        "all checks passed in {:.0}s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs each benchmark program (release builds), each writing its Markdown section, and
/// gathers the sections into `docs/benchmarks.md`.
fn bench() -> Result<(), String> {
    let sections = root().join("target/bench");
    fs::create_dir_all(&sections).map_err(|e| format!("cannot create {sections:?}: {e}"))?;
    let benches = [
        ("core-http", "transport", "core-http transport vs raw ureq"),
        ("esign-client", "download", "esign 1 GiB download to a file"),
    ];
    let mut report = String::from(
        "# Benchmarks\n\nGenerated by `cargo xtask bench` on one machine in one run; each \
         section compares our code with a raw `ureq` baseline measured side by side.\n",
    );
    for (package, bench, title) in benches {
        let section = sections.join(format!("{bench}.md"));
        let mut cmd = cargo();
        cmd.args(["bench", "-p", package, "--bench", bench, "--", "--write"])
            .arg(&section);
        step(&format!("bench: {title}"), cmd)?;
        let text =
            fs::read_to_string(&section).map_err(|e| format!("cannot read {section:?}: {e}"))?;
        report.push('\n');
        report.push_str(&text);
    }
    let out = root().join("docs/benchmarks.md");
    fs::write(&out, report).map_err(|e| format!("cannot write {out:?}: {e}"))?;
    println!("written to {}", out.display());
    Ok(())
}

fn demo() -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "-p", "e2e", "--example", "demo"]);
    step("demo", cmd)
}

/// Re-records the client crates' fixtures from an in-process sandbox (the recorder is a
/// binary of the e2e crate, which depends on the sandbox and every client).
fn fixtures(check: bool) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--quiet",
        "-p",
        "e2e",
        "--bin",
        "record-fixtures",
        "--",
    ]);
    if check {
        cmd.arg("--check");
    }
    step(
        if check {
            "fixtures --check"
        } else {
            "fixtures"
        },
        cmd,
    )
}
