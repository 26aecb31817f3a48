//! The whole script: place an order, wait until it is filled, report what it did.
//!
//! `cargo run -p trading-client --example place_and_wait -- [SYMBOL] [QTY]` runs against
//! a local sandbox (paper). It opens the stream first, so the wait watches the order's
//! own events (no polling) and every event stays readable after it; with
//! `TRADING_BASE_URL` and `TRADING_API_KEY` set it trades on that service (paper unless
//! `TRADING_ENVIRONMENT=live`).

mod common;

use std::time::Duration;

use trading_client::Decimal;
use trading_client::orders::{Amount, OrderRequest, Side};
use trading_client::stream::Event;
use trading_client::wait::WaitError;

fn main() -> anyhow::Result<()> {
    let (client, _sandbox) = common::client()?;
    let symbol = std::env::args().nth(1).unwrap_or_else(|| "AAPL".into());
    let qty: Decimal = std::env::args()
        .nth(2)
        .map(|q| q.parse())
        .transpose()?
        .unwrap_or(Decimal::ONE);

    // Subscribed before placing: from here on no fill is missed.
    let mut stream = client.stream()?;
    stream.subscribe_orders()?;

    let order =
        client
            .orders()
            .place(&OrderRequest::market(&symbol, Side::Buy, Amount::Qty(qty)))?;
    println!(
        "placed {} (buy {qty} {symbol} at market): {}",
        order.id, order.status
    );

    let filled = match stream.wait_until_filled(&order.id, Duration::from_secs(60)) {
        Ok(order) => order,
        Err(WaitError::Ended { state, .. }) => anyhow::bail!("the order ended {state}"),
        Err(WaitError::TimedOut { state, .. }) => {
            // Still open after a minute (a closed market): cancel it rather than leave it.
            client.orders().cancel(&order.id)?;
            anyhow::bail!("not filled within a minute ({state:?}); canceled");
        }
        Err(e) => return Err(e.into()),
    };
    println!(
        "filled {} at {}",
        filled.filled_qty.unwrap_or_default(),
        filled
            .filled_avg_price
            .map(|p| p.to_string())
            .unwrap_or_else(|| "?".into())
    );

    // The wait took nothing from the stream: the fill is still there to log.
    while let Some(event) = stream.next_timeout(Duration::from_millis(500)) {
        if let Event::Fill(fill) = event? {
            println!(
                "  fill {}: {} {} at {}",
                fill.execution_id, fill.qty, fill.symbol, fill.price
            );
            if fill.order_id == filled.id {
                break;
            }
        }
    }

    let position = client.positions().get(&symbol)?;
    let account = client.account().get()?;
    println!(
        "position: {} {symbol} at {} on average; cash now {}",
        position.qty.unwrap_or_default(),
        position
            .avg_entry_price
            .map(|p| p.to_string())
            .unwrap_or_else(|| "?".into()),
        account
            .cash
            .map(|c| c.to_string())
            .unwrap_or_else(|| "?".into())
    );
    Ok(())
}
