//! The documentation's examples run against one sandbox, twice.
//!
//! Every doc test runs with `DOC_SANDBOX_URL` naming a sandbox started here (its clock
//! frozen at `testkit::doc::FROZEN_AT`); then the front pages' and READMEs' examples
//! (those in each crate's `src/lib.rs`) run a second time against the same sandbox,
//! which now holds what the first run made. An example that only works once (a
//! hard-coded order id that returns the first, filled order; a name that must be new)
//! fails the second run. Each example's own deadline (`testkit::doc::DEADLINE`) ends
//! one that hangs.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::run::{Runner, Tally, run_step};
use crate::{cargo, root};

/// Where the examples' sandbox starts its clock (as `testkit::doc::FROZEN_AT`).
const FROZEN_AT: &str = "2026-03-02T14:30:00Z";

/// The sandbox process, stopped when dropped (also when a step fails).
pub(crate) struct Running(pub(crate) Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Builds and starts the sandbox program on a free port; its root URL.
fn start_sandbox() -> Result<(Running, String), String> {
    let mut build = cargo();
    build.args(["build", "-q", "-p", "service-clients-sandbox"]);
    let status = build
        .status()
        .map_err(|e| format!("cannot build the sandbox: {e}"))?;
    if !status.success() {
        return Err("the sandbox did not build".into());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let program = target.join("debug").join(format!(
        "service-clients-sandbox{}",
        std::env::consts::EXE_SUFFIX
    ));
    let mut child = Command::new(&program)
        // Signers sign at the first reading after a send: the README's e-signature
        // example waits for them on a clock that does not move.
        .args(["--port", "0", "--frozen-at", FROZEN_AT, "--sign-after", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {program:?}: {e}"))?;
    let stdout = child.stdout.take();
    let running = Running(child);
    let mut first = String::new();
    if let Some(stdout) = stdout {
        let mut lines = BufReader::new(stdout);
        lines
            .read_line(&mut first)
            .map_err(|e| format!("cannot read the sandbox's address: {e}"))?;
        // The rest of its output is not needed; keep reading so it never blocks.
        std::thread::spawn(move || std::io::copy(&mut lines, &mut std::io::sink()));
    }
    let url = sandbox_url(&first)
        .ok_or_else(|| format!("the sandbox printed no address: {first:?}"))?
        .to_owned();
    Ok((running, url))
}

/// The URL in the sandbox program's first line
/// (`service-clients-sandbox listening on http://...`).
fn sandbox_url(line: &str) -> Option<&str> {
    line.trim()
        .strip_prefix("service-clients-sandbox listening on ")
        .filter(|url| url.starts_with("http://"))
}

/// Runs every doc test against one sandbox, then the front pages' and READMEs' again.
pub(crate) fn doc_tests(tally: &Arc<Mutex<Tally>>) -> Result<(), String> {
    let (_sandbox, url) = start_sandbox()?;
    // The READMEs' first examples are whole programs that read the environment, as
    // their readers' do.
    let env = |cmd: &mut std::process::Command| {
        cmd.env("DOC_SANDBOX_URL", &url);
        for service in ["social", "projects", "vision", "esign", "trading", "worlds"] {
            let upper = service.to_ascii_uppercase();
            cmd.env(format!("{upper}_BASE_URL"), format!("{url}/{service}"))
                .env(format!("{upper}_API_KEY"), "sk_test_sandbox");
        }
        cmd.env("ESIGN_CLIENT_ID", "sandbox_client")
            .env("ESIGN_CLIENT_SECRET", "sandbox_client_secret");
    };
    let mut all = cargo();
    all.args(["test", "--workspace", "--all-features", "--doc"]);
    env(&mut all);
    run_step("doc tests", all, Some((Runner::Libtest, tally)))?;
    let mut again = cargo();
    again
        .args(["test", "--workspace", "--all-features", "--doc", "--"])
        .arg("src/lib.rs");
    env(&mut again);
    run_step(
        "front-page and README examples again, on the same sandbox",
        again,
        Some((Runner::Libtest, tally)),
    )
}

#[cfg(test)]
mod tests {
    use super::sandbox_url;

    #[test]
    fn starts_the_clock_where_the_in_process_sandbox_does() {
        let path = crate::root().join("crates/testkit/src/doc.rs");
        let text = std::fs::read_to_string(&path).unwrap();
        let line = format!("pub const FROZEN_AT: &str = \"{}\";", super::FROZEN_AT);
        assert!(text.contains(&line), "{path:?} should hold {line}");
    }

    #[test]
    fn reads_the_address_from_the_first_line() {
        assert_eq!(
            sandbox_url("service-clients-sandbox listening on http://127.0.0.1:4100\n"),
            Some("http://127.0.0.1:4100")
        );
        assert_eq!(sandbox_url("sandbox: cannot start: in use\n"), None);
        assert_eq!(
            sandbox_url("service-clients-sandbox listening on 127.0.0.1:4100"),
            None
        );
    }
}
