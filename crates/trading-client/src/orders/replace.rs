//! What to change in an open order: [`ReplaceOrder`], checked before sending, and its
//! wire body.

use core_http::{Error, Result};
use rust_decimal::Decimal;

use super::MAX_CLIENT_ORDER_ID;
use super::model::TimeInForce;
use super::request::Trail;
use crate::money::JsonObject;

/// What to change in an open order ([`Orders::replace`](crate::orders::Orders::replace)): its
/// quantity, limit, stop, trail or time in force; what is not set stays as it was. At
/// least one change is needed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplaceOrder {
    /// The new quantity.
    pub(crate) qty: Option<Decimal>,
    /// The new limit price.
    pub(crate) limit_price: Option<Decimal>,
    /// The new stop price.
    pub(crate) stop_price: Option<Decimal>,
    /// The new trail (a trailing stop).
    pub(crate) trail: Option<Trail>,
    /// The new time in force.
    pub(crate) time_in_force: Option<TimeInForce>,
    /// The replacement's `client_order_id` (defaults to one the client makes, the same
    /// on every attempt).
    pub(crate) client_order_id: Option<String>,
}

impl ReplaceOrder {
    /// No change yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new quantity.
    pub fn qty(mut self, qty: Decimal) -> Self {
        self.qty = Some(qty);
        self
    }

    /// A new limit price.
    pub fn limit_price(mut self, price: Decimal) -> Self {
        self.limit_price = Some(price);
        self
    }

    /// A new stop price.
    pub fn stop_price(mut self, price: Decimal) -> Self {
        self.stop_price = Some(price);
        self
    }

    /// A new trail.
    pub fn trail(mut self, trail: Trail) -> Self {
        self.trail = Some(trail);
        self
    }

    /// A new time in force.
    pub fn time_in_force(mut self, tif: TimeInForce) -> Self {
        self.time_in_force = Some(tif);
        self
    }

    /// The replacement's own `client_order_id` (1 to 48 characters).
    pub fn client_order_id(mut self, id: impl Into<String>) -> Self {
        self.client_order_id = Some(id.into());
        self
    }

    /// Checks the change before sending: at least one field, positive amounts, a valid
    /// client order id.
    pub(crate) fn validate(&self) -> Result<()> {
        let positive = |name: &str, v: Option<Decimal>| match v {
            Some(v) if v <= Decimal::ZERO => {
                Err(Error::InvalidRequest(format!("{name} must be positive")))
            }
            _ => Ok(()),
        };
        positive("qty", self.qty)?;
        positive("limit_price", self.limit_price)?;
        positive("stop_price", self.stop_price)?;
        if let Some(Trail::Price(v) | Trail::Percent(v)) = self.trail {
            positive("the trail", Some(v))?;
        }
        if let Some(id) = &self.client_order_id
            && (id.is_empty() || id.len() > MAX_CLIENT_ORDER_ID)
        {
            return Err(Error::InvalidRequest(format!(
                "a client order id is 1 to {MAX_CLIENT_ORDER_ID} characters"
            )));
        }
        if self.qty.is_none()
            && self.limit_price.is_none()
            && self.stop_price.is_none()
            && self.trail.is_none()
            && self.time_in_force.is_none()
        {
            return Err(Error::InvalidRequest(
                "a replacement changes at least one of qty, limit, stop, trail or time in force"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The wire body, with the replacement's client order id.
    pub(crate) fn body(&self, client_order_id: &str) -> String {
        let mut o = JsonObject::new();
        for (name, value) in [
            ("qty", self.qty),
            ("limit_price", self.limit_price),
            ("stop_price", self.stop_price),
        ] {
            if let Some(v) = value {
                o = o.decimal(name, v);
            }
        }
        match self.trail {
            Some(Trail::Price(v)) => o = o.decimal("trail_price", v),
            Some(Trail::Percent(v)) => o = o.decimal("trail_percent", v),
            None => {}
        }
        if let Some(tif) = &self.time_in_force {
            o = o.string("time_in_force", tif.as_str());
        }
        o.string("client_order_id", client_order_id).finish()
    }
}
