//! A quote ticker: streams quotes of the symbols given and prints one line each.
//!
//! `cargo run -p trading-client --example trading_quote_ticker -- AAPL MSFT [--count N]`
//! runs against a local sandbox (quotes four times a second); set `TRADING_BASE_URL` and
//! `TRADING_API_KEY` to use a real service (streaming needs the Pro plan). It stops after
//! N quotes (default 20); the stream reconnects on its own if the connection drops.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use trading_client::{Decimal, stream::Event};

fn main() -> anyhow::Result<()> {
    let mut symbols = Vec::new();
    let mut count = 20usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--count" => count = args.next().unwrap_or_default().parse()?,
            _ => symbols.push(arg.to_ascii_uppercase()),
        }
    }
    if symbols.is_empty() {
        symbols = vec!["AAPL".into(), "MSFT".into()];
    }
    let (client, _sandbox) = common::client()?;

    // Each symbol's price when the ticker started, from REST: the change is from there.
    let opening: HashMap<String, Decimal> = client
        .markets()
        .quotes(&symbols)?
        .into_iter()
        .map(|q| (q.symbol, q.price))
        .collect();

    let mut stream = client.stream()?;
    stream.subscribe_quotes(&symbols)?;
    println!(
        "{:<8} {:>12} {:>12} {:>12} {:>12}",
        "symbol", "bid", "ask", "last", "since start"
    );
    let mut shown = 0;
    while shown < count {
        match stream.next_timeout(Duration::from_secs(30)) {
            Some(Ok(Event::Quote(q))) => {
                let before = opening.get(&q.symbol).copied().unwrap_or(q.price);
                let show = |d: Option<Decimal>| d.map(|d| d.to_string()).unwrap_or("-".into());
                println!(
                    "{:<8} {:>12} {:>12} {:>12} {:>+12}",
                    q.symbol,
                    show(q.bid),
                    show(q.ask),
                    q.price,
                    q.price - before
                );
                shown += 1;
            }
            Some(Ok(Event::Reconnected { gap })) => println!("-- reconnected after {gap:?}"),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None if stream.is_closed() => anyhow::bail!("the stream ended"),
            None => println!("-- no quote for 30 s (is the market open?)"),
        }
    }
    let stats = stream.stats();
    println!(
        "{shown} quotes; {} dropped because the reader fell behind, {} reconnects",
        stats.dropped, stats.reconnects
    );
    stream.close();
    Ok(())
}
