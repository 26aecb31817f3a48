//! Shared by the examples: a client for the service named in the environment, or for a
//! local sandbox started in-process when none is set.

use sandbox::Sandbox;
use vision_client::Client;

/// The client, and the sandbox it talks to when one was started (keep it alive).
pub fn client() -> anyhow::Result<(Client, Option<Sandbox>)> {
    if std::env::var_os("VISION_BASE_URL").is_some() {
        println!("using the service at $VISION_BASE_URL");
        return Ok((Client::from_env()?, None));
    }
    let sandbox = Sandbox::start()?;
    println!(
        "no VISION_BASE_URL set: using a local sandbox at {}",
        sandbox.vision().url()
    );
    let client = Client::new(sandbox.vision().url(), sandbox.api_key())?;
    Ok((client, Some(sandbox)))
}
