//! `cargo xtask demo` and `cargo xtask fixtures`.

use crate::cargo;
use crate::run::step;

pub(crate) fn demo() -> Result<(), String> {
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
pub(crate) fn fixtures(check: bool) -> Result<(), String> {
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
