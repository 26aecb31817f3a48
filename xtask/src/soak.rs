//! `cargo xtask soak --minutes N [--seed S]`, and its short form inside `test`.

use crate::cargo;
use crate::run::step;

/// The soak program (an example of the e2e crate), release build, for `minutes`; its
/// figures go to `docs/soak.md` (`--write` elsewhere), which `cargo xtask bench` puts in
/// `docs/benchmarks.md`.
pub(crate) fn soak(args: &[String]) -> Result<(), String> {
    let mut minutes = "30".to_owned();
    let mut rest = Vec::new();
    let mut write: Option<std::path::PathBuf> = Some(crate::root().join("docs/soak.md"));
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--minutes" => minutes = args.next().cloned().ok_or("--minutes needs a number")?,
            "--write" => write = Some(args.next().ok_or("--write needs a file")?.into()),
            "--seed" => {
                rest.push(arg.clone());
                rest.push(args.next().cloned().ok_or(format!("{arg} needs a value"))?);
            }
            other => return Err(format!("unknown soak argument {other:?}")),
        }
    }
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--release",
        "--quiet",
        "-p",
        "e2e",
        "--example",
        "soak",
        "--",
    ])
    .args(["--minutes", &minutes])
    .args(rest);
    if let Some(path) = &write {
        cmd.arg("--write").arg(path);
    }
    step(&format!("soak for {minutes} minutes"), cmd)
}

/// Twenty seconds of soak on the debug build, with a fixed seed: the streams' promises
/// (every fill once, the world's users as the service has them) under every fault, on
/// every run.
pub(crate) fn quick_soak() -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "-p", "e2e", "--example", "soak", "--"])
        .args(["--seconds", "20", "--seed", "20261124"]);
    step("soak, 20 seconds", cmd)
}
