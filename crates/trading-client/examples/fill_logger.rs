//! A fill logger that survives reconnects: every fill of the account, once, as a CSV line,
//! whatever happens to the connection.
//!
//! `cargo run -p trading-client --example fill_logger -- [N]` runs against a local
//! sandbox, where a helper thread places N orders (default 6) and cuts every stream
//! connection between them, so fills happen while the logger is disconnected; the logger
//! still prints each fill exactly once (those found by the reconciliation after a
//! reconnect are marked `recovered`). With `TRADING_BASE_URL` and `TRADING_API_KEY` set it
//! logs the real account's fills until stopped.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use trading_client::{
    Decimal,
    orders::{Amount, OrderRequest, Side},
    stream::Event,
};

fn main() -> anyhow::Result<()> {
    let orders: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(6);
    let (client, sandbox) = common::client()?;
    let mut stream = client.stream()?;
    stream.subscribe_orders()?;
    println!("execution_id,order_id,symbol,side,qty,price,timestamp,recovered");

    let mut seen = HashSet::new();
    let mut reconnects = 0;
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let helper = sandbox.as_ref().map(|sandbox| {
            let client = client.clone();
            scope.spawn(move || -> anyhow::Result<()> {
                for i in 0..orders {
                    if i % 2 == 1 {
                        // Cut every stream connection first: this fill happens while the
                        // logger is disconnected.
                        sandbox.drop_streams(Some(sandbox::Service::Trading));
                    }
                    let symbol = ["AAPL", "MSFT", "NVDA"][i % 3];
                    client.orders().place(&OrderRequest::market(
                        symbol,
                        Side::Buy,
                        Amount::Qty(Decimal::from(i as u64 + 1)),
                    ))?;
                    std::thread::sleep(Duration::from_secs(1));
                }
                Ok(())
            })
        });
        let wait = if sandbox.is_some() { 10 } else { 3600 };
        while sandbox.is_none() || seen.len() < orders {
            match stream.next_timeout(Duration::from_secs(wait)) {
                Some(Ok(Event::Fill(f))) => {
                    anyhow::ensure!(seen.insert(f.execution_id.clone()), "a fill came twice");
                    println!(
                        "{},{},{},{},{},{},{},{}",
                        f.execution_id,
                        f.order_id,
                        f.symbol,
                        f.side,
                        f.qty,
                        f.price,
                        f.timestamp.map(|t| t.to_string()).unwrap_or_default(),
                        f.recovered
                    );
                }
                Some(Ok(Event::Reconnected { gap })) => {
                    reconnects += 1;
                    eprintln!("-- reconnected after {gap:?}; missed fills reconciled");
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => break,
            }
        }
        if let Some(helper) = helper {
            helper
                .join()
                .map_err(|_| anyhow::anyhow!("the helper panicked"))??;
        }
        Ok(())
    })?;
    eprintln!("{} fills, {reconnects} reconnects", seen.len());
    stream.close();
    Ok(())
}
