//! A bracket order on paper: buy at market with a take-profit 2 % above and a stop-loss
//! 2 % below, then watch the exits.
//!
//! `cargo run -p trading-client --example bracket_order -- [SYMBOL] [QTY]` runs against a
//! local sandbox, where it then lifts the price past the take-profit to show the exit
//! fill and the stop-loss leg cancelled with it. With `TRADING_BASE_URL` and
//! `TRADING_API_KEY` set it places the order on that service (paper unless
//! `TRADING_ENVIRONMENT=live`) and shows the legs as they stand.

mod common;

use std::time::Duration;

use trading_client::{
    Decimal, Environment,
    orders::{Entry, Order, OrderRequest, Side, StopLoss},
};

fn show(order: &Order) {
    let price = order
        .limit_price
        .or(order.stop_price)
        .map(|p| format!(" at {p}"))
        .unwrap_or_default();
    println!(
        "  {} {} {} {} {}{price}: {} ({} filled)",
        order.id,
        order.side,
        order.qty.map(|q| q.to_string()).unwrap_or_default(),
        order.symbol,
        order.order_type,
        order.status,
        order.filled_qty.unwrap_or_default()
    );
}

/// A figure the answer may not carry: `?` rather than a zero it did not give.
fn money(value: Option<trading_client::Decimal>) -> String {
    value.map_or_else(|| "?".to_owned(), |v| v.to_string())
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let symbol = args
        .next()
        .unwrap_or_else(|| "AAPL".into())
        .to_ascii_uppercase();
    let qty: Decimal = args.next().as_deref().unwrap_or("10").parse()?;
    let (client, sandbox) = common::client()?;
    if client.environment() == Environment::Live {
        anyhow::bail!("this example places a real order only on paper; unset TRADING_ENVIRONMENT");
    }

    let quote = client.markets().quotes(&[&symbol])?.remove(0);
    let take_profit = common::offset(quote.price, 2);
    let stop = common::offset(quote.price, -2);
    println!(
        "{symbol} at {}: buying {qty}, take-profit {take_profit}, stop-loss {stop}",
        quote.price
    );
    let order = client.orders().place(&OrderRequest::bracket(
        &symbol,
        Side::Buy,
        qty,
        Entry::Market,
        take_profit,
        StopLoss::at(stop),
    ))?;
    println!("placed {} ({}):", order.id, order.client_order_id);
    show(&order);
    for leg in &order.legs {
        show(leg);
    }

    if let Some(sandbox) = &sandbox {
        // Only the sandbox lets us move the market: past the take-profit, then a minute on.
        let lifted = common::offset(take_profit, 1);
        println!("the sandbox moves {symbol} to {lifted}");
        sandbox.trading().set_price(&symbol, lifted);
        sandbox.advance(Duration::from_secs(60));
    }
    let order = client.orders().get(order.id.as_str())?;
    println!("now:");
    show(&order);
    for leg in &order.legs {
        show(leg);
    }
    let account = client.account().get()?;
    println!(
        "cash {} {}, equity {}, {} open position(s)",
        money(account.cash),
        account.currency.as_deref().unwrap_or(""),
        money(account.equity),
        account.positions.len()
    );
    Ok(())
}
