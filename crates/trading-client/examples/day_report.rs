//! The end-of-day report: the day's activities (fills and cash movements, every page),
//! the portfolio's equity hour by hour, and what the open positions are worth; with an
//! order checked against its asset before it is sent.
//!
//! `cargo run -p trading-client --example day_report` runs against a local sandbox,
//! where it first trades a little and moves the sandbox clock through the day. With
//! `TRADING_BASE_URL` and `TRADING_API_KEY` set it reports on the real account (and
//! trades nothing).

mod common;

use std::time::Duration;

use trading_client::{
    Decimal,
    activities::{ActivityType, ListActivities, Period, PortfolioQuery, Step},
    orders::{Amount, OrderRequest, Side},
};

fn main() -> anyhow::Result<()> {
    let (client, sandbox) = common::client()?;
    if let Some(sandbox) = &sandbox {
        for (symbol, qty) in [("AAPL", 10), ("MSFT", 5), ("NVDA", 8)] {
            let order = OrderRequest::market(symbol, Side::Buy, Amount::Qty(Decimal::from(qty)));
            client.orders().place_checked(&order)?;
            sandbox.advance(Duration::from_secs(3 * 3600));
        }
        // Half a share of a whole-share asset: refused before it is sent.
        let half = OrderRequest::market("BRK.A", Side::Buy, Amount::Qty(Decimal::new(5, 1)));
        if let Err(e) = client.orders().place_checked(&half) {
            println!("not sent: {e}");
        }
    }

    println!("\nactivities, oldest first:");
    println!(
        "{:<24} {:<8} {:<6} {:<5} {:>8} {:>12}",
        "id", "type", "symbol", "side", "qty", "net"
    );
    let mut net = Decimal::ZERO;
    for activity in client
        .activities()
        .iter_from(&ListActivities::new().direction(trading_client::orders::Direction::Asc))
    {
        let a = activity?;
        net += a.net_amount.unwrap_or_default();
        println!(
            "{:<24} {:<8} {:<6} {:<5} {:>8} {:>12}",
            a.id,
            a.activity_type,
            a.symbol.as_deref().unwrap_or("-"),
            a.side.as_ref().map(|s| s.as_str()).unwrap_or("-"),
            a.qty.map(|q| q.to_string()).unwrap_or_default(),
            a.net_amount
                .map(|n| n.round_dp(2).to_string())
                .unwrap_or_default(),
        );
    }
    println!("cash from activities: {}", net.round_dp(2));
    let fills = client
        .activities()
        .iter_from(&ListActivities::new().types(&[ActivityType::Fill]))
        .count();
    println!("{fills} fills");

    let day = client
        .account()
        .portfolio_history(&PortfolioQuery::new(Period::Day, Step::Hour))?;
    println!("\nequity, hour by hour:");
    for point in &day.points {
        println!(
            "{}  {:>12}  {:>+10}",
            trading_client::timestamp::format(point.timestamp),
            point.equity,
            point.profit_loss.unwrap_or_default()
        );
    }
    for position in client.positions().list()? {
        println!(
            "{} {} shares worth {}",
            position.symbol,
            position.qty.unwrap_or_default(),
            position.market_value.unwrap_or_default()
        );
    }
    Ok(())
}
