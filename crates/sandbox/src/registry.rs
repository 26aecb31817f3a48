//! What a service tells the core about itself: [`ServiceDef`] (its routes, control
//! routes, plans' limits, how it authenticates credentials other than API keys, and what
//! happens as the clock moves). The core iterates [`Service::ALL`] and finds each
//! service's definition through [`crate::services::def`]; it names no service.
//!
//! To add a service: write `services/<name>/mod.rs` with a `Def` implementing
//! [`ServiceDef`], add a variant to [`Service`] (`service.rs`, with its prefix), and list
//! it in [`crate::services::def`].

use std::sync::Arc;

use axum::Router;
use serde_json::Value;
use time::OffsetDateTime;

use crate::plans::Limit;
use crate::state::{Shared, World};

/// What a credential that is not a known API key turns out to be.
pub(crate) enum Credential {
    /// Valid for this tenant.
    Tenant(String),
    /// Once valid, now expired.
    Expired,
    /// Not known.
    Unknown,
}

/// What a service tells the core about itself.
pub(crate) trait ServiceDef: Sync {
    /// One line on how to try it, for `cargo run -p sandbox`.
    fn hint(&self) -> &'static str;

    /// Its routes that need a key (or token), relative to `/<prefix>`.
    fn router(&self) -> Router<Arc<Shared>>;

    /// Its routes that need none (a token endpoint), relative to `/<prefix>`.
    fn public_router(&self) -> Router<Arc<Shared>> {
        Router::new()
    }

    /// Its control routes, relative to `/_sandbox/<prefix>`.
    fn control_router(&self) -> Router<Arc<Shared>> {
        Router::new()
    }

    /// The rate limit of a plan; `None` is unlimited. A plan name the service does not
    /// know (such as `default`) should get its most generous plan.
    fn limit(&self, plan: &str) -> Option<Limit>;

    /// Authenticates a credential that is not a known API key (an access token).
    fn authenticate(&self, _world: &World, _credential: &str) -> Credential {
        Credential::Unknown
    }

    /// Lets time-driven things happen up to `now`; returns the events to emit.
    fn tick(&self, _world: &mut World, _now: OffsetDateTime) -> Vec<(&'static str, Value)> {
        Vec::new()
    }
}
