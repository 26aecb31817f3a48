//! The services the sandbox emulates: the one list that names them. Each service lives
//! in `services/<name>/` and describes itself through [`ServiceDef`]: its routes (behind
//! the key check, or public), its control routes (under `/_sandbox/<name>/`), its plans'
//! limits, how it authenticates credentials other than API keys, and what happens as the
//! clock moves. The core iterates this list and names no service.
//!
//! To add a service: write `services/<name>/mod.rs` with a `Def` implementing
//! [`ServiceDef`], add a variant to [`Service`], and list it in [`Service::ALL`] and
//! [`Service::def`].

use std::sync::Arc;

use axum::Router;
use serde_json::Value;
use time::OffsetDateTime;

use crate::plans::Limit;
use crate::services;
use crate::state::{Shared, World};

/// The services the sandbox emulates, each under its own path prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Service {
    /// The social publishing service, under `/social`.
    Social,
    /// The developer project service, under `/projects`.
    Projects,
    /// The vision service, under `/vision`.
    Vision,
    /// The e-signature service, under `/esign`.
    Esign,
    /// The trading service, under `/trading`.
    Trading,
    /// The virtual worlds service, under `/worlds`.
    Worlds,
}

impl Service {
    /// Every service.
    pub const ALL: &'static [Service] = &[
        Service::Social,
        Service::Projects,
        Service::Vision,
        Service::Esign,
        Service::Trading,
        Service::Worlds,
    ];

    pub(crate) fn def(self) -> &'static dyn ServiceDef {
        match self {
            Service::Social => &services::social::Def,
            Service::Projects => &services::projects::Def,
            Service::Vision => &services::vision::Def,
            Service::Esign => &services::esign::Def,
            Service::Trading => &services::trading::Def,
            Service::Worlds => &services::worlds::Def,
        }
    }

    /// The path segment the service lives under.
    pub fn prefix(self) -> &'static str {
        self.def().prefix()
    }

    /// The service whose prefix starts this path, if any.
    pub(crate) fn from_path(path: &str) -> Option<Service> {
        let first = path.trim_start_matches('/').split('/').next()?;
        Service::ALL.iter().copied().find(|s| s.prefix() == first)
    }

    /// The service with this prefix, if any.
    pub fn from_prefix(prefix: &str) -> Option<Service> {
        Service::ALL.iter().copied().find(|s| s.prefix() == prefix)
    }
}

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
    /// The path segment it lives under.
    fn prefix(&self) -> &'static str;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_service_is_found_by_its_prefix_and_states_its_plans() {
        for service in Service::ALL {
            assert_eq!(Service::from_prefix(service.prefix()), Some(*service));
            assert_eq!(
                Service::from_path(&format!("/{}/v1/x", service.prefix())),
                Some(*service)
            );
        }
        assert_eq!(Service::from_path("/nope/v1"), None);
        let count = |s: Service, plan: &str| s.def().limit(plan).map(|l| (l.count, l.burst));
        assert_eq!(count(Service::Social, "starter"), Some((100, 100)));
        // A plan a service does not know gets its most generous plan.
        assert_eq!(count(Service::Social, "default"), Some((10_000, 10_000)));
        assert_eq!(count(Service::Projects, "free"), Some((100, 150)));
        assert_eq!(count(Service::Projects, "default"), None);
        assert_eq!(count(Service::Vision, "free"), None);
        assert_eq!(count(Service::Esign, "business"), Some((10_000, 10_000)));
    }
}
