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

/// Signs for every signer: through the sandbox's control endpoint when there is one,
/// otherwise by waiting for the real signers (polling every 30 s).
#[allow(dead_code)]
pub fn sign_all(
    client: &Client,
    sandbox: Option<&Sandbox>,
    document: &esign_client::documents::Document,
) -> anyhow::Result<()> {
    match sandbox {
        Some(sandbox) => {
            for signer in &document.signers {
                sandbox
                    .esign()
                    .sign(document.id.as_str(), Some(&signer.email))
                    .map_err(|e| anyhow::anyhow!("sandbox refused to sign: {e}"))?;
                println!("  {} signed (sandbox control endpoint)", signer.email);
            }
        }
        None => loop {
            let now = client.documents().get(&document.id)?;
            if now.status.is_final() {
                break;
            }
            println!("  waiting for the signers ({:?})", now.status);
            std::thread::sleep(std::time::Duration::from_secs(30));
        },
    }
    Ok(())
}
