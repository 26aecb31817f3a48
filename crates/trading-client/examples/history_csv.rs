//! Export minute bars to CSV with a progress bar (the `indicatif` crate).
//!
//! `cargo run -p trading-client --example history_csv -- [SYMBOL] [DAYS] [OUT.csv]`
//! (defaults: AAPL, 30 days, a file in the temporary directory). Against the local
//! sandbox any range up to twenty years works; try `AAPL 7300` for about two million
//! bars. Memory stays flat however long the range: bars are fetched a page (10,000) at
//! a time as the loop reaches them and written straight out. Interrupted, it prints a
//! resume token; pass it as a fourth argument to go on from there.

mod common;

use std::io::{BufWriter, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use trading_client::{history::ListBars, markets::Timeframe, time::OffsetDateTime};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let symbol = args
        .next()
        .unwrap_or_else(|| "AAPL".into())
        .to_ascii_uppercase();
    let days: i64 = args.next().as_deref().unwrap_or("30").parse()?;
    let out = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join(format!("{symbol}-1min.csv")));
    let resume = args.next();
    let (client, sandbox) = common::client()?;

    let end = match &sandbox {
        Some(sandbox) => sandbox.now(),
        None => OffsetDateTime::now_utc(),
    }
    .replace_second(0)?
    .replace_nanosecond(0)?;
    let start = end - time::Duration::days(days);
    let mut query = ListBars::new(&symbol, Timeframe::Minute)
        .start(start)
        .end(end)
        .limit(10_000);
    if let Some(token) = resume {
        query = query.page_token(token);
    }
    let mut bars = client.history().iter_from(&query);

    // Progress by time covered: the bars' count is not known before the last page.
    let minutes = |t: OffsetDateTime| (t - start).whole_minutes().max(0) as u64;
    let bar = ProgressBar::new(minutes(end)).with_style(ProgressStyle::with_template(
        "{bar:40} {percent:>3}% {msg} eta {eta}",
    )?);
    bar.enable_steady_tick(Duration::from_millis(200));

    let mut file = BufWriter::new(std::fs::File::create(&out)?);
    writeln!(file, "time,open,high,low,close,volume")?;
    let mut written: u64 = 0;
    for item in bars.by_ref() {
        let b = match item {
            Ok(b) => b,
            Err(e) => {
                bar.abandon();
                if let Some(token) = bars.resume_token() {
                    eprintln!("stopped: {e}; resume with the token {token}");
                }
                return Err(e.into());
            }
        };
        // An empty cell when the bar carries no volume, never a 0 it did not give.
        let volume = b.v.map(|v| v.to_string()).unwrap_or_default();
        writeln!(file, "{},{},{},{},{},{volume}", b.t, b.o, b.h, b.l, b.c)?;
        written += 1;
        if written.is_multiple_of(1000) {
            bar.set_position(minutes(b.t));
            bar.set_message(format!("{written} bars"));
        }
    }
    file.flush()?;
    bar.finish_with_message(format!("{written} bars"));
    println!("{written} bars of {symbol} written to {}", out.display());
    Ok(())
}
