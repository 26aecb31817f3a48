//! Running one step: a command, its output watched for cargo warnings and test tallies.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Instant;

/// Runs one named step, prints a summary line, and stops at the first failure (or at
/// any cargo warning).
pub(crate) fn step(name: &str, cmd: Command) -> Result<(), String> {
    run_step(name, cmd, None)
}

/// Prints a step's summary line and turns its exit status into the step's result.
pub(crate) fn report(
    name: &str,
    started: Instant,
    status: std::process::ExitStatus,
) -> Result<(), String> {
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
pub(crate) struct Tally {
    pub(crate) passed: u64,
    pub(crate) failed: u64,
}

/// Which summary line a step's runner closes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runner {
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
pub(crate) fn is_cargo_warning(line: &str) -> bool {
    line.starts_with("warning:") && !line.contains("tests were not run")
}

/// Runs a step, echoing its output, failing on a cargo warning and, with a runner,
/// counting the tests it reports.
pub(crate) fn run_step(
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
