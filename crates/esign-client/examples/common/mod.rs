//! Shared by the examples: a client for the service named in the environment, or for a
//! local sandbox started in-process when none is set.

use esign_client::Client;
use sandbox::Sandbox;

/// The client, and the sandbox it talks to when one was started (keep it alive).
#[allow(dead_code)]
pub fn client() -> anyhow::Result<(Client, Option<Sandbox>)> {
    if std::env::var_os("ESIGN_BASE_URL").is_some() {
        println!("using the service at $ESIGN_BASE_URL");
        return Ok((Client::from_env()?, None));
    }
    let sandbox = Sandbox::start()?;
    println!(
        "no ESIGN_BASE_URL set: using a local sandbox at {} (OAuth client credentials)",
        sandbox.esign().url()
    );
    let client = Client::with_oauth(
        sandbox.esign().url(),
        sandbox.esign().token_url(),
        sandbox::ESIGN_CLIENT_ID,
        sandbox::ESIGN_CLIENT_SECRET,
    )?;
    Ok((client, Some(sandbox)))
}

/// With a sandbox, signs for every signer through its control endpoint (real signers
/// sign in their own time: the caller waits for them with `wait_until_completed`).
#[allow(dead_code)]
pub fn sign_all(
    sandbox: Option<&Sandbox>,
    document: &esign_client::documents::Document,
) -> anyhow::Result<()> {
    if let Some(sandbox) = sandbox {
        for signer in &document.signers {
            sandbox
                .esign()
                .sign(document.id.as_str(), Some(&signer.email))
                .map_err(|e| anyhow::anyhow!("sandbox refused to sign: {e}"))?;
            println!("  {} signed (sandbox control endpoint)", signer.email);
        }
    }
    Ok(())
}

/// A progress bar on one line of the terminal: `[#####.....]  52% 1.3 MiB of 2.5 MiB`.
#[allow(dead_code)]
pub fn progress_bar(done: u64, total: Option<u64>) {
    use std::io::Write;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let line = match total {
        Some(total) if total > 0 => {
            let share = (done as f64 / total as f64).clamp(0.0, 1.0);
            let filled = (share * 30.0).round() as usize;
            format!(
                "\r[{}{}] {:>3.0}% {:.1} MiB of {:.1} MiB",
                "#".repeat(filled),
                ".".repeat(30 - filled),
                share * 100.0,
                mib(done),
                mib(total)
            )
        }
        _ => format!("\r{:.1} MiB", mib(done)),
    };
    let mut err = std::io::stderr();
    let _ = err.write_all(line.as_bytes());
    if total.is_some_and(|t| done >= t) {
        let _ = err.write_all(b"\n");
    }
    let _ = err.flush();
}
