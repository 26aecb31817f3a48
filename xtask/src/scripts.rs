//! Every example program a user reads, run to its end against the local sandbox: the
//! demo, and each crate's `examples/` (the whole scripts: send, wait, download; place,
//! wait, report; schedule, wait; a webhook listener). Each gets a deadline and must exit
//! 0; `EXAMPLES` must name every file in `crates/*/examples/`, so a new example cannot be
//! left out.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::{cargo, root};

/// Each example's crate, name and arguments (none needs the network or a key: without
/// the service's variables each starts a sandbox in its own process).
const EXAMPLES: &[(&str, &str, &[&str])] = &[
    ("core-http", "tour", &[]),
    ("esign-client", "esign_quickstart", &[]),
    ("esign-client", "download_progress", &[]),
    ("projects-client", "projects_quickstart", &[]),
    ("projects-client", "cleanup", &["demo-", "--dry-run"]),
    ("social-client", "social_quickstart", &[]),
    (
        "social-client",
        "schedule_post",
        &["Our webinar starts soon", "30"],
    ),
    ("social-client", "webhook_receiver", &[]),
    ("trading-client", "place_and_wait", &["AAPL", "2"]),
    ("trading-client", "bracket_order", &[]),
    ("trading-client", "day_report", &[]),
    ("trading-client", "fill_logger", &["3"]),
    ("trading-client", "history_csv", &["AAPL", "5"]),
    (
        "trading-client",
        "trading_quote_ticker",
        &["AAPL", "MSFT", "--count", "3"],
    ),
    ("vision-client", "vision_quickstart", &[]),
    ("worlds-client", "create_world", &[]),
    ("worlds-client", "tail_world", &["--count", "3"]),
];

/// The longest an example may run (the demo included).
const DEADLINE: Duration = Duration::from_secs(180);

/// The examples in `crates/*/examples/` that `EXAMPLES` does not name.
fn unlisted() -> Result<Vec<String>, String> {
    let mut missing = Vec::new();
    let crates = root().join("crates");
    let entries = std::fs::read_dir(&crates).map_err(|e| format!("cannot read {crates:?}: {e}"))?;
    for entry in entries.flatten() {
        let package = entry.file_name().to_string_lossy().into_owned();
        let Ok(files) = std::fs::read_dir(entry.path().join("examples")) else {
            continue;
        };
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            if let Some(example) = name.strip_suffix(".rs")
                && !EXAMPLES
                    .iter()
                    .any(|(p, e, _)| *p == package && *e == example)
            {
                missing.push(format!("{package}/examples/{name}"));
            }
        }
    }
    Ok(missing)
}

/// Runs one program to its end within [`DEADLINE`]; its output is shown only when it
/// fails.
fn run(label: &str, mut cmd: std::process::Command) -> Result<(), String> {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {label}: {e}"))?;
    // The output is read on threads of its own, so a chatty example never blocks.
    let out = child.stdout.take().map(read_all);
    let err = child.stderr.take().map(read_all);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("{label}: {e}"))? {
            break Some(status);
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = |h: Option<std::thread::JoinHandle<String>>| {
        h.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    let (out, err) = (text(out), text(err));
    match status {
        Some(status) if status.success() => {
            println!("  ok  {label} ({:.1} s)", started.elapsed().as_secs_f64());
            Ok(())
        }
        Some(status) => Err(format!("{label} failed ({status}):\n{out}\n{err}")),
        None => Err(format!(
            "{label} ran past {} s and was stopped:\n{out}\n{err}",
            DEADLINE.as_secs()
        )),
    }
}

fn read_all(mut from: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Builds every example once, then runs the demo and each of them.
pub(crate) fn run_all() -> Result<(), String> {
    println!("==> every example program, run against the local sandbox");
    let missing = unlisted()?;
    if !missing.is_empty() {
        return Err(format!(
            "examples not run by `cargo xtask test` (add them to xtask/src/scripts.rs): {}",
            missing.join(", ")
        ));
    }
    let mut build = cargo();
    build.args(["build", "-q", "--workspace", "--examples", "--all-features"]);
    crate::run::step("build the examples", build)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    // The binaries just built, run directly (a `cargo run` per example could rebuild
    // with other features).
    let program = |name: &str| {
        let mut cmd = std::process::Command::new(
            target
                .join("debug/examples")
                .join(format!("{name}{}", std::env::consts::EXE_SUFFIX)),
        );
        cmd.current_dir(root());
        // Never a real service, whatever the caller's environment holds.
        for service in ["SOCIAL", "PROJECTS", "VISION", "ESIGN", "TRADING", "WORLDS"] {
            cmd.env_remove(format!("{service}_BASE_URL"));
            cmd.env_remove(format!("{service}_API_KEY"));
        }
        cmd.env_remove("SOCIAL_WEBHOOK_SECRET");
        cmd
    };
    let mut failures = Vec::new();
    if let Err(e) = run("the demo (cargo xtask demo)", program("demo")) {
        failures.push(e);
    }
    for (package, example, args) in EXAMPLES {
        let mut cmd = program(example);
        cmd.args(*args);
        if let Err(e) = run(&format!("{package} --example {example}"), cmd) {
            failures.push(e);
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n\n"))
    }
}
