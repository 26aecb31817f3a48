//! The paper market's assets: the listed symbols below, and no others (a quote, a bar,
//! an order or a subscription for a symbol the market does not list is refused, as the
//! service refuses it). Most are fractionable, shortable, active US equities with a
//! one-cent tick; the exceptions a script may try: a share that trades only whole, one
//! halted and one delisted.

use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::market::number;

/// An asset's attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asset {
    pub symbol: String,
    pub name: String,
    pub active: bool,
    pub tradable: bool,
    pub fractionable: bool,
    pub shortable: bool,
}

/// The listed assets: symbol, name, active, tradable, fractionable, shortable.
const LISTED: &[(&str, &str, bool, bool, bool, bool)] = &[
    ("AAPL", "Apple Inc.", true, true, true, true),
    ("AMZN", "Amazon.com Inc.", true, true, true, true),
    (
        "BRK.A",
        "Berkshire Hathaway Inc. Class A",
        true,
        true,
        false,
        false,
    ),
    ("F", "Ford Motor Company", true, true, true, true),
    ("GOOGL", "Alphabet Inc. Class A", true, true, true, true),
    (
        "HALT",
        "Halted Holdings (trading halted)",
        true,
        false,
        false,
        false,
    ),
    (
        "IBM",
        "International Business Machines Corporation",
        true,
        true,
        true,
        true,
    ),
    ("JPM", "JPMorgan Chase & Co.", true, true, true, true),
    (
        "META",
        "Meta Platforms Inc. Class A",
        true,
        true,
        true,
        true,
    ),
    ("MSFT", "Microsoft Corporation", true, true, true, true),
    ("NFLX", "Netflix Inc.", true, true, true, true),
    ("NVDA", "NVIDIA Corporation", true, true, true, true),
    (
        "OLDCO",
        "Old Company (delisted)",
        false,
        false,
        false,
        false,
    ),
    ("QQQ", "Invesco QQQ Trust", true, true, true, true),
    ("SPY", "SPDR S&P 500 ETF Trust", true, true, true, true),
    ("TSLA", "Tesla Inc.", true, true, true, true),
];

/// The symbols a request may name: 1 to 10 letters, digits, `.` or `-` (anything else
/// is malformed, before the question of whether the market lists it).
pub(crate) fn valid_symbol(s: &str) -> bool {
    (1..=10).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '.' || c == '-')
}

/// Whether the market lists `symbol` (exactly as written: `AAPL`, not `aapl`).
pub(crate) fn known_symbol(symbol: &str) -> bool {
    LISTED.iter().any(|a| a.0 == symbol)
}

/// What a refusal of an unknown symbol says: the symbol, and what the market lists.
pub(crate) fn unknown_symbol(symbol: &str) -> String {
    let listed: Vec<&str> = LISTED.iter().map(|a| a.0).collect();
    format!(
        "unknown symbol {symbol:?}: the sandbox's market lists {}",
        listed.join(", ")
    )
}

impl Asset {
    /// The asset of `symbol` (a well-formed one).
    pub(crate) fn of(symbol: &str) -> Asset {
        match LISTED.iter().find(|a| a.0 == symbol) {
            Some(&(symbol, name, active, tradable, fractionable, shortable)) => Asset {
                symbol: symbol.into(),
                name: name.into(),
                active,
                tradable,
                fractionable,
                shortable,
            },
            None => Asset {
                symbol: symbol.into(),
                name: format!("{symbol} (paper)"),
                active: true,
                tradable: true,
                fractionable: true,
                shortable: true,
            },
        }
    }

    /// The listed assets, by symbol.
    pub(crate) fn listed() -> impl Iterator<Item = Asset> {
        LISTED.iter().map(|a| Asset::of(a.0))
    }

    /// The price increment at or above 1 USD (below it, 0.0001).
    pub(crate) fn tick_size(&self) -> Decimal {
        Decimal::new(1, 2)
    }

    /// The smallest quantity, and the step of quantities.
    pub(crate) fn min_qty(&self) -> Decimal {
        if self.fractionable {
            Decimal::new(1, 9)
        } else {
            Decimal::ONE
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        json!({
            "symbol": self.symbol,
            "name": self.name,
            "class": "us_equity",
            "exchange": "PAPER",
            "status": if self.active { "active" } else { "inactive" },
            "tradable": self.tradable,
            "fractionable": self.fractionable,
            "shortable": self.shortable,
            "tick_size": number(self.tick_size()),
            "min_qty": number(self.min_qty()),
            "qty_increment": number(self.min_qty()),
        })
    }
}
