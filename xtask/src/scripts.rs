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
/// fails, and its standard output returned when it succeeds.
pub(crate) fn run(label: &str, mut cmd: std::process::Command) -> Result<String, String> {
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
            Ok(out)
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
    // Every example's temporary directory is a folder of this run's: what an example
    // writes there (history_csv's CSV, by default) is checked and removed, and nothing is
    // left in the machine's.
    let scratch = target.join("examples-tmp");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("cannot make {scratch:?}: {e}"))?;
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
        cmd.env("TMPDIR", &scratch);
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
    if failures.is_empty()
        && let Err(e) = left_behind(&scratch)
    {
        failures.push(e);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n\n"))
    }
}

/// What the examples left in their temporary directory: history_csv's CSV (its job, and
/// its README's promise: a header, then one row per bar, each minute once and in order),
/// and nothing else (the esign examples remove the PDFs they download).
fn left_behind(scratch: &std::path::Path) -> Result<(), String> {
    let csv = scratch.join("AAPL-1min.csv");
    let text = std::fs::read_to_string(&csv)
        .map_err(|e| format!("history_csv wrote no CSV at {csv:?}: {e}"))?;
    let mut lines = text.lines();
    if lines.next() != Some("time,open,high,low,close,volume") {
        return Err(format!("history_csv's CSV has no header line: {csv:?}"));
    }
    let mut last: Option<BarTime> = None;
    let mut rows = 0;
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let time = (fields.len() == 6 && fields[..5].iter().all(|f| !f.is_empty()))
            .then(|| BarTime::parse(fields[0]))
            .flatten()
            .ok_or_else(|| format!("history_csv wrote a malformed row: {line:?}"))?;
        if let Some(last) = &last {
            if last.offset != time.offset {
                return Err(format!("history_csv mixed offsets at {}", fields[0]));
            }
            if last.at >= time.at {
                return Err(format!(
                    "history_csv repeated or reordered a bar at {}",
                    fields[0]
                ));
            }
        }
        last = Some(time);
        rows += 1;
    }
    if rows == 0 {
        return Err("history_csv wrote no bars".into());
    }
    std::fs::remove_file(&csv).map_err(|e| format!("cannot remove {csv:?}: {e}"))?;
    let others: Vec<String> = std::fs::read_dir(scratch)
        .map_err(|e| format!("cannot read {scratch:?}: {e}"))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if others.is_empty() {
        println!("  ok  history_csv wrote {rows} bars, in order; nothing else left behind");
        Ok(())
    } else {
        Err(format!(
            "the examples left files behind: {}",
            others.join(", ")
        ))
    }
}

/// A bar's time as history_csv writes it (`time`'s `Display`: `2026-11-24 9:30:00.0
/// +00:00:00`, the hour not padded, so the text does not sort), as a key that does.
struct BarTime<'a> {
    /// The date (`YYYY-MM-DD`, which sorts as text), hour, minute and whole second.
    at: (&'a str, u32, u32, u32),
    /// The offset, the same on every row for the key to compare.
    offset: &'a str,
}

impl<'a> BarTime<'a> {
    fn parse(text: &'a str) -> Option<Self> {
        let mut parts = text.split(' ');
        let (date, clock, offset) = (parts.next()?, parts.next()?, parts.next()?);
        let mut clock = clock.split(':');
        let hour = clock.next()?.parse().ok()?;
        let minute = clock.next()?.parse().ok()?;
        let second = clock.next()?.split('.').next()?.parse().ok()?;
        let date_ok = date.len() == 10 && date.bytes().filter(|b| *b == b'-').count() == 2;
        (date_ok && parts.next().is_none() && clock.next().is_none()).then_some(BarTime {
            at: (date, hour, minute, second),
            offset,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::left_behind;

    /// A folder of this test's own, holding `files` (name, contents).
    fn folder(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-left-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
        dir
    }

    const HEAD: &str = "time,open,high,low,close,volume\n";
    // As history_csv writes them (`time`'s `Display`, the hour not padded).
    const ROW1: &str = "2026-11-23 9:30:00.0 +00:00:00,1,2,0.5,1.5,100\n";
    const ROW2: &str = "2026-11-23 14:31:00.0 +00:00:00,1.5,2,1,1.75,\n";

    #[test]
    fn a_csv_in_order_is_taken_and_removed() {
        // 9:30 before 14:31: in order, though not as text.
        let dir = folder("ok", &[("AAPL-1min.csv", &format!("{HEAD}{ROW1}{ROW2}"))]);
        assert_eq!(left_behind(&dir), Ok(()));
        assert!(!dir.join("AAPL-1min.csv").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_repeated_bar_a_missing_header_an_empty_file_or_a_stray_file_is_refused() {
        let cases = [
            ("repeat", format!("{HEAD}{ROW1}{ROW1}"), "repeated"),
            (
                "order",
                format!("{HEAD}{ROW2}{ROW1}"),
                "repeated or reordered",
            ),
            ("header", format!("{ROW1}{ROW2}"), "no header"),
            ("empty", HEAD.to_owned(), "no bars"),
            (
                "short",
                format!("{HEAD}2026-11-23 14:30:00.0 +00:00:00,1,2\n"),
                "malformed",
            ),
            (
                "time",
                format!("{HEAD}2026-11-23T14:30:00Z,1,2,0.5,1.5,100\n"),
                "malformed",
            ),
            (
                "offsets",
                format!("{HEAD}{ROW1}2026-11-23 14:31:00.0 +01:00:00,1,2,0.5,1.5,100\n"),
                "mixed offsets",
            ),
        ];
        for (name, csv, said) in cases {
            let dir = folder(name, &[("AAPL-1min.csv", &csv)]);
            let err = left_behind(&dir).unwrap_err();
            assert!(err.contains(said), "{name}: {err}");
            std::fs::remove_dir_all(&dir).unwrap();
        }
        let dir = folder(
            "stray",
            &[
                ("AAPL-1min.csv", &format!("{HEAD}{ROW1}")),
                ("doc.pdf", "%PDF-"),
            ],
        );
        let err = left_behind(&dir).unwrap_err();
        assert!(err.contains("doc.pdf"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
        let dir = folder("none", &[]);
        assert!(left_behind(&dir).unwrap_err().contains("no CSV"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
