//! Shared by the examples: a client for the service named in the environment, or for a
//! local sandbox started in-process when none is set.

#![allow(dead_code)] // each example uses part of it

use sandbox::Sandbox;
use worlds_client::Client;

/// The client, and the sandbox it talks to when one was started (keep it alive).
pub fn client() -> anyhow::Result<(Client, Option<Sandbox>)> {
    if std::env::var_os("WORLDS_BASE_URL").is_some() {
        println!("using the service at $WORLDS_BASE_URL");
        return Ok((Client::from_env()?, None));
    }
    let sandbox = Sandbox::start()?;
    println!(
        "no WORLDS_BASE_URL set: using a local sandbox at {}",
        sandbox.worlds().url()
    );
    let client = Client::new(sandbox.worlds().url(), sandbox.api_key())?;
    Ok((client, Some(sandbox)))
}
