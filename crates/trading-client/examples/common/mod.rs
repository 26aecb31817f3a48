//! Shared by the examples: a client for the service named in the environment, or for a
//! local sandbox started in-process when none is set.

#![allow(dead_code)] // each example uses part of it

use std::time::Duration;

use sandbox::Sandbox;
use trading_client::{Client, Decimal};

/// The client, and the sandbox it talks to when one was started (keep it alive).
pub fn client() -> anyhow::Result<(Client, Option<Sandbox>)> {
    if std::env::var_os("TRADING_BASE_URL").is_some() {
        let client = Client::from_env()?;
        println!(
            "using the {} service at $TRADING_BASE_URL",
            client.environment()
        );
        return Ok((client, None));
    }
    // The example's own sandbox: a market that never closes, so that it shows fills
    // whatever the hour (against a real service, orders fill in market hours).
    let sandbox = Sandbox::builder().market_hours(false).start()?;
    // Quotes four times a second, so there is something to watch.
    sandbox
        .trading()
        .set_quote_interval(Duration::from_millis(250));
    println!(
        "no TRADING_BASE_URL set: paper trading on a local sandbox at {}",
        sandbox.trading().url()
    );
    let client = Client::new(sandbox.trading().url(), sandbox.api_key())?;
    Ok((client, Some(sandbox)))
}

/// `price` moved by `percent` (e.g. `2` or `-2`), rounded to the cent.
pub fn offset(price: Decimal, percent: i64) -> Decimal {
    (price * (Decimal::from(100 + percent)) / Decimal::from(100)).round_dp(2)
}
