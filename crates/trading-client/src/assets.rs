//! Assets: what can be traded and how (tradable, fractionable, shortable, tick size,
//! smallest quantity, status). `GET /v1/assets`, `GET /v1/assets/{symbol}`; and the
//! check of an order against its asset before it is sent
//! ([`Orders::place_checked`](crate::orders::Orders::place_checked)).

use core_http::{Error, Result};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::client::Client;
use crate::orders::{Amount, OrderRequest, OrderType, Trail};

core_http::string_enum! {
    /// Whether an asset is listed.
    pub enum AssetStatus in assets {
        /// Listed.
        Active = "active",
        /// No longer listed.
        Inactive = "inactive",
    }
}

/// An asset and how it trades. Only `symbol` is required; a flag the answer does not
/// carry reads as `false` (not tradable, not fractionable: the safe side), an increment
/// it does not carry as `None` (no check made on it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Asset {
    /// The symbol.
    #[serde(deserialize_with = "core_http::de::text")]
    pub symbol: String,
    /// The name.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub name: String,
    /// The asset class (`us_equity`).
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub class: String,
    /// The exchange it lists on.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub exchange: String,
    /// Listed or not.
    #[serde(default)]
    pub status: AssetStatus,
    /// Orders are taken now (a halted or delisted asset is not tradable).
    #[serde(default)]
    pub tradable: bool,
    /// Fractions of a share (and orders by notional amount) are taken.
    #[serde(default)]
    pub fractionable: bool,
    /// It may be sold short.
    #[serde(default)]
    pub shortable: bool,
    /// The price increment at or above 1 USD (below 1 USD prices go to 0.0001).
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub tick_size: Option<Decimal>,
    /// The smallest quantity an order may have.
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_qty: Option<Decimal>,
    /// The step between quantities (1 for whole shares only).
    #[serde(
        default,
        deserialize_with = "crate::money::opt_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub qty_increment: Option<Decimal>,
}

/// The smallest price increment below 1 USD, whatever the asset.
const SUB_DOLLAR_TICK: Decimal = Decimal::from_parts(1, 0, 0, false, 4);

impl Asset {
    /// Whether `price` is on this asset's tick: a multiple of `tick_size` at or above
    /// 1 USD, of 0.0001 below.
    ///
    /// ```
    /// # let asset: trading_client::assets::Asset = serde_json::from_str(r#"{"symbol":"AAPL","tick_size":0.01}"#).unwrap();
    /// use trading_client::Decimal;
    /// assert!(asset.on_tick("187.10".parse().unwrap()));
    /// assert!(!asset.on_tick("187.105".parse().unwrap()));
    /// assert!(asset.on_tick("0.1234".parse().unwrap()));
    /// ```
    pub fn on_tick(&self, price: Decimal) -> bool {
        let tick = if price < Decimal::ONE {
            SUB_DOLLAR_TICK
        } else {
            match self.tick_size {
                Some(t) if t > Decimal::ZERO => t,
                _ => return true,
            }
        };
        (price % tick).is_zero()
    }

    /// Checks `order` against this asset, as the service would: tradable, a whole
    /// quantity (and no order by amount) when the asset is not fractionable, at least
    /// the smallest quantity in steps of its increment, every price on the tick.
    /// `Error::InvalidRequest` says what is wrong.
    ///
    /// ```
    /// # let asset: trading_client::assets::Asset = serde_json::from_str(
    /// #     r#"{"symbol":"BRK.A","tradable":true,"fractionable":false,"tick_size":0.01,"min_qty":1,"qty_increment":1}"#).unwrap();
    /// use trading_client::{Decimal, orders::{Amount, OrderRequest, Side}};
    /// let half = OrderRequest::market("BRK.A", Side::Buy, Amount::Qty("0.5".parse().unwrap()));
    /// assert!(asset.check(&half).is_err());
    /// let one = OrderRequest::limit("BRK.A", Side::Buy, Decimal::ONE, "712000.00".parse().unwrap());
    /// assert!(asset.check(&one).is_ok());
    /// ```
    pub fn check(&self, order: &OrderRequest) -> Result<()> {
        let refuse = |m: String| Err(Error::InvalidRequest(m));
        if !order.symbol.eq_ignore_ascii_case(&self.symbol) {
            return refuse(format!(
                "the order is for {}, the asset is {}",
                order.symbol, self.symbol
            ));
        }
        if !self.tradable || self.status == AssetStatus::Inactive {
            return refuse(format!("{} is not tradable now", self.symbol));
        }
        match order.amount {
            Amount::Notional(_) if !self.fractionable => {
                return refuse(format!(
                    "{} trades in whole shares only: order it by quantity",
                    self.symbol
                ));
            }
            Amount::Notional(_) => {}
            Amount::Qty(q) => {
                if !self.fractionable && !q.fract().is_zero() {
                    return refuse(format!(
                        "{} trades in whole shares only, not {q}",
                        self.symbol
                    ));
                }
                if let Some(min) = self.min_qty.filter(|m| q < *m) {
                    return refuse(format!(
                        "{q} {} is below the smallest quantity, {min}",
                        self.symbol
                    ));
                }
                if let Some(step) = self.qty_increment.filter(|s| *s > Decimal::ZERO)
                    && !(q % step).is_zero()
                {
                    return refuse(format!(
                        "{q} {} is not a multiple of its quantity step, {step}",
                        self.symbol
                    ));
                }
            }
        }
        let mut prices = Vec::new();
        match order.order_type {
            OrderType::Limit { limit } => prices.push(("limit price", limit)),
            OrderType::Stop { stop } => prices.push(("stop price", stop)),
            OrderType::StopLimit { stop, limit } => {
                prices.extend([("stop price", stop), ("limit price", limit)]);
            }
            OrderType::TrailingStop(Trail::Price(p)) => prices.push(("trail price", p)),
            _ => {}
        }
        prices.extend(order.exit_prices());
        for (name, price) in prices {
            if !self.on_tick(price) {
                return refuse(format!(
                    "the {name} {price} is off {}'s tick ({} at or above 1 USD, 0.0001 below)",
                    self.symbol,
                    self.tick_size.unwrap_or_default()
                ));
            }
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct AssetList {
    #[serde(deserialize_with = "core_http::de::or_default")]
    assets: Vec<Asset>,
}

/// The assets resource: `client.assets()`.
#[derive(Debug, Clone, Copy)]
pub struct Assets<'a> {
    client: &'a Client,
}

impl<'a> Assets<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Assets { client }
    }

    /// The asset of `symbol`. `GET /v1/assets/{symbol}`; an unknown one is
    /// `404 asset_not_found` (`ErrorKind::NotFound`).
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let asset = client.assets().get("AAPL")?;
    /// println!("fractionable: {}, tick {:?}", asset.fractionable, asset.tick_size);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn get(&self, symbol: &str) -> Result<Asset> {
        crate::markets::check_symbols(&[symbol])?;
        let symbol = symbol.to_ascii_uppercase();
        let segment = core_http::service::path_segment("a symbol", &symbol)?;
        let asset: Asset = self
            .client
            .http()
            .get(&format!("/v1/assets/{segment}"))
            .send_json()?;
        core_http::service::check_answered("asset", &symbol, &asset.symbol.to_ascii_uppercase())?;
        Ok(asset)
    }

    /// The listed assets of `status` (`None`: the active ones).
    /// `GET /v1/assets?status=active|inactive`.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// for asset in client.assets().list(None)? {
    ///     println!("{} tradable={}", asset.symbol, asset.tradable);
    /// }
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn list(&self, status: Option<AssetStatus>) -> Result<Vec<Asset>> {
        let list: AssetList = self
            .client
            .http()
            .get("/v1/assets")
            .query_opt("status", status.as_ref().map(AssetStatus::as_str))
            .send_json()?;
        Ok(list.assets)
    }
}

/// Reached from the client.
impl Client {
    /// Assets: tradable, fractionable, shortable, tick size, smallest quantity.
    ///
    /// ```no_run
    /// # let client = trading_client::Client::new("https://paper.example.com", "pk")?;
    /// let asset = client.assets().get("BRK.A")?;
    /// println!("whole shares only: {}", !asset.fractionable);
    /// # Ok::<(), trading_client::Error>(())
    /// ```
    pub fn assets(&self) -> Assets<'_> {
        Assets::new(self)
    }
}
