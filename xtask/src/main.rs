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
  test       every check CI runs, in order, failing on any cargo warning:
               fmt --check; clippy -D warnings; core-http with no features, each
               feature alone (its tests), all features; the social and e-signature
               clients without their default webhook feature; every test of the workspace
               (property tests included); the end-to-end suite again starting just
               before midnight; a program outside the workspace that depends on one
               client crate; every benchmark in quick mode; the dependency budget of
               the REST-only clients; doc tests; docs -D warnings; fixtures --check
  bench      release-mode benchmarks; writes docs/benchmarks.md (--quick: every one
               small, on the debug build, in under a minute; figures not written)
  demo       a tour of the clients against the local sandbox (no key, no network)
  fixtures   re-record the fixtures from the sandbox (--check: fail when stale)
  fuzz       the property tests with many more cases, for --secs N seconds (default 60)";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(),
        Some("bench") => bench(&args[1..]),
        Some("demo") => demo(),
        Some("fixtures") => fixtures(args.iter().any(|a| a == "--check")),
        Some("fuzz") => fuzz(&args[1..]),
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

/// Runs one named step, prints a summary line, and stops at the first failure (or at
/// any cargo warning).
fn step(name: &str, cmd: Command) -> Result<(), String> {
    run_step(name, cmd, None)
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

/// Which summary line a step's runner closes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    /// nextest: one `Summary [..] N tests run: N passed, N failed` line for the run.
    /// (The libtest lines it echoes from failed tests' output are not counted again.)
    Nextest,
    /// libtest: one `test result: ok. N passed; N failed` line per test binary.
    Libtest,
}

impl Tally {
    fn read(&mut self, runner: Runner, line: &str) {
        let counted = match runner {
            Runner::Nextest => line.contains("Summary [") && line.contains("tests run:"),
            Runner::Libtest => line.trim_start().starts_with("test result:"),
        };
        if !counted {
            return;
        }
        let number_before = |word: &str| -> Option<u64> {
            let i = line.find(word)?;
            line[..i].split_whitespace().last()?.parse().ok()
        };
        self.passed += number_before(" passed").unwrap_or(0);
        self.failed += number_before(" failed").unwrap_or(0);
    }
}

/// A line of cargo's own output that is a warning (`warning: ...`), which fails the
/// step: an unnoticed warning today is an error tomorrow.
fn is_cargo_warning(line: &str) -> bool {
    line.starts_with("warning:") && !line.contains("tests were not run")
}

/// Runs a step, echoing its output, failing on a cargo warning and, with a runner,
/// counting the tests it reports.
fn run_step(
    name: &str,
    mut cmd: Command,
    count: Option<(Runner, &Arc<Mutex<Tally>>)>,
) -> Result<(), String> {
    println!("==> {name}");
    let started = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("step '{name}' could not start: {e}"))?;
    let warnings = Arc::new(Mutex::new(Vec::<String>::new()));
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
        let tally = count.map(|(runner, tally)| (runner, Arc::clone(tally)));
        let warnings = Arc::clone(&warnings);
        readers.push(thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if to_stderr {
                    eprintln!("{line}");
                } else {
                    println!("{line}");
                }
                if let Some((runner, tally)) = &tally
                    && let Ok(mut t) = tally.lock()
                {
                    t.read(*runner, &line);
                }
                if is_cargo_warning(&line)
                    && let Ok(mut w) = warnings.lock()
                {
                    w.push(line);
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
    let result = report(name, started, status);
    let warnings = warnings.lock().map(|w| w.clone()).unwrap_or_default();
    if result.is_ok() && !warnings.is_empty() {
        println!(
            "FAILED: {name}: cargo printed {} warning(s)",
            warnings.len()
        );
        for w in &warnings {
            println!("  {w}");
        }
        return Err(format!("step '{name}' printed cargo warnings"));
    }
    result
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

    // core-http with no features and with each feature alone: a feature can never break
    // the others unseen (all features together are the workspace run below).
    let nextest = has_nextest();
    let mut variants = vec![(
        "no features".to_owned(),
        vec!["--no-default-features".to_owned()],
    )];
    for feature in core_http_features()? {
        variants.push((
            format!("feature {feature}"),
            vec![
                "--no-default-features".to_owned(),
                "--features".to_owned(),
                feature,
            ],
        ));
    }
    for (label, flags) in variants {
        let mut cmd = cargo();
        if nextest {
            cmd.args(["nextest", "run", "-p", "core-http", "--no-fail-fast"]);
        } else {
            cmd.args(["test", "-p", "core-http", "--lib", "--tests"]);
        }
        cmd.args(&flags);
        let runner = if nextest {
            Runner::Nextest
        } else {
            Runner::Libtest
        };
        run_step(&format!("core-http, {label}"), cmd, Some((runner, tally)))?;
    }

    // The clients whose webhook support is a default feature build without it too.
    let mut lean = cargo();
    lean.args([
        "check",
        "-p",
        "social-client",
        "-p",
        "esign-client",
        "--no-default-features",
        "--lib",
    ]);
    run_step("clients without default features", lean, None)?;

    let mut tests = cargo();
    let runner = if nextest {
        tests.args([
            "nextest",
            "run",
            "--workspace",
            "--all-features",
            "--no-fail-fast",
        ]);
        Runner::Nextest
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
        Runner::Libtest
    };
    run_step("tests", tests, Some((runner, tally)))?;

    // The end-to-end suite again, its sandboxes starting 30 s before midnight: a test
    // that assumes the day does not change fails here, not at 23:59 on someone's machine.
    let mut midnight = cargo();
    if nextest {
        midnight.args(["nextest", "run", "-p", "e2e", "--no-fail-fast"]);
    } else {
        midnight.args(["test", "-p", "e2e", "--tests"]);
    }
    midnight.env("E2E_SANDBOX_START", "2026-03-02T23:59:30Z");
    run_step(
        "e2e starting before midnight",
        midnight,
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

    quick_benches()?;
    dependency_budget()?;

    let mut doctests = cargo();
    doctests.args(["test", "--workspace", "--all-features", "--doc"]);
    run_step("doc tests", doctests, Some((Runner::Libtest, tally)))?;

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

/// The features core-http declares, read from its Cargo.toml.
fn core_http_features() -> Result<Vec<String>, String> {
    let path = root().join("crates/core-http/Cargo.toml");
    let text = fs::read_to_string(&path).map_err(|e| format!("cannot read {path:?}: {e}"))?;
    let mut in_features = false;
    let mut features = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        if in_features && let Some((name, _)) = line.split_once('=') {
            let name = name.trim();
            if !name.is_empty() && !name.starts_with('#') && name != "default" {
                features.push(name.to_owned());
            }
        }
    }
    Ok(features)
}

/// Runs the property tests with many more cases until `--secs N` (default 60) have
/// passed; each round draws new random cases.
fn fuzz(args: &[String]) -> Result<(), String> {
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

/// The benchmarks: package, bench target, title.
const BENCHES: [(&str, &str, &str); 6] = [
    ("core-http", "transport", "core-http transport vs raw ureq"),
    ("esign-client", "download", "esign 1 GiB download to a file"),
    (
        "trading-client",
        "history",
        "trading: 20 years of minute bars",
    ),
    (
        "trading-client",
        "quotes",
        "trading: quotes through the stream",
    ),
    (
        "social-client",
        "scale",
        "social: 10,000 posts created and iterated",
    ),
    ("e2e", "limits", "limits: pacing and quotas"),
];

/// Every benchmark, small and on the debug build the tests made: they cannot rot unseen.
/// (Their figures mean little; `cargo xtask bench` measures.)
fn quick_benches() -> Result<(), String> {
    for (package, bench, _) in BENCHES {
        let mut quick = cargo();
        quick
            .args(["bench", "--profile", "dev", "-p", package, "--bench", bench])
            .args(["--", "--quick"]);
        step(&format!("benchmark {bench}, quick"), quick)?;
    }
    Ok(())
}

/// Runs each benchmark program (release builds), each writing its Markdown section, and
/// gathers the sections into `docs/benchmarks.md`.
fn bench(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "--quick") {
        return quick_benches();
    }
    let sections = root().join("target/bench");
    fs::create_dir_all(&sections).map_err(|e| format!("cannot create {sections:?}: {e}"))?;
    let mut report = format!(
        "# Benchmarks\n\nGenerated by `cargo xtask bench` in one run on one machine ({}); \
         each section measures our code side by side with its baselines (raw `ureq`, \
         `tungstenite`, `reqwest`, `curl`).\n",
        machine()
    );
    for (package, bench, title) in BENCHES {
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
    // The peers (reqwest; the build cost), in their own workspace so that reqwest and
    // its runtime stay out of the project's build.
    let peers = root().join("tests/peers");
    let mut build = cargo();
    build
        .args(["build", "--release", "--manifest-path"])
        .arg(peers.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root().join("target"));
    step("bench: build the peers", build)?;
    let section = sections.join("peers.md");
    let mut run = Command::new(root().join("target/release/peers"));
    run.args(["--build", "--write"]).arg(&section);
    step(
        "bench: a call against reqwest and ureq; the build cost",
        run,
    )?;
    let text = fs::read_to_string(&section).map_err(|e| format!("cannot read {section:?}: {e}"))?;
    report.push('\n');
    report.push_str(&text);
    report.push('\n');
    report.push_str(&dependency_section()?);
    let out = root().join("docs/benchmarks.md");
    fs::write(&out, report).map_err(|e| format!("cannot write {out:?}: {e}"))?;
    println!("written to {}", out.display());
    Ok(())
}

/// The most crates a client without streams may pull in (`cargo tree -e normal`, each
/// counted once, the client itself included), its default features off.
const DEPENDENCY_BUDGET: usize = 45;

/// The clients without streams: they must stay within [`DEPENDENCY_BUDGET`].
const REST_CLIENTS: [&str; 4] = [
    "social-client",
    "esign-client",
    "vision-client",
    "projects-client",
];

/// Every client, for the dependency table.
const CLIENTS: [&str; 6] = [
    "social-client",
    "esign-client",
    "vision-client",
    "projects-client",
    "trading-client",
    "worlds-client",
];

/// How many crates `package` pulls in, itself included, each counted once.
fn dependency_count(package: &str, default_features: bool) -> Result<usize, String> {
    let mut tree = cargo();
    tree.args([
        "tree", "-q", "-e", "normal", "--prefix", "none", "-p", package,
    ]);
    if !default_features {
        tree.arg("--no-default-features");
    }
    let out = tree
        .output()
        .map_err(|e| format!("cannot start cargo tree: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo tree -p {package} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let crates: std::collections::BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_end_matches(" (*)").to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    Ok(crates.len())
}

/// Fails when a client without streams pulls in more than [`DEPENDENCY_BUDGET`] crates.
fn dependency_budget() -> Result<(), String> {
    let started = Instant::now();
    for package in REST_CLIENTS {
        let count = dependency_count(package, false)?;
        if count > DEPENDENCY_BUDGET {
            return Err(format!(
                "{package} pulls in {count} crates without its default features (budget {DEPENDENCY_BUDGET})"
            ));
        }
    }
    println!(
        "ok: dependency budget, at most {DEPENDENCY_BUDGET} crates each ({:.1}s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The benchmarks page's table of what each client pulls in.
fn dependency_section() -> Result<String, String> {
    let mut rows = String::new();
    for package in CLIENTS {
        let without = dependency_count(package, false)?;
        let with = dependency_count(package, true)?;
        let verdict = if !REST_CLIENTS.contains(&package) {
            "(streams: no budget)"
        } else if without <= DEPENDENCY_BUDGET {
            "met"
        } else {
            "**missed**"
        };
        rows.push_str(&format!(
            "| `{package}` | {without} | {with} | {verdict} |\n"
        ));
    }
    Ok(format!(
        "## Dependencies of each client\n\n`cargo tree -e normal`, each crate counted once, the \
client itself included. Budget for a client without streams, default features off: at most \
{DEPENDENCY_BUDGET}.\n\n| client | default features off | default features | budget |\n\
|---|---|---|---|\n{rows}"
    ))
}

/// The machine, in a few words: CPU model and count, memory, rustc.
fn machine() -> String {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("an unknown CPU".to_owned(), |m| m.trim().to_owned());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok())
        .map_or("?".to_owned(), |kib| {
            format!("{:.0} GiB", kib / 1024.0 / 1024.0)
        });
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("{model}, {cpus} CPUs, {memory} of memory, {rustc}")
}

fn demo() -> Result<(), String> {
    println!("building the demo (the first run takes a minute or two)...");
    let mut build = cargo();
    build.args(["build", "-p", "e2e", "--example", "demo"]);
    let status = build
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !status.success() {
        return Err(format!("the demo did not build ({status})"));
    }
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "-p", "e2e", "--example", "demo"]);
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start the demo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the demo failed ({status})"))
    }
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
