//! The services, one folder each, and the one list that finds each one's definition
//! ([`ServiceDef`]) from its name ([`Service`]).

pub(crate) mod esign;
pub(crate) mod projects;
pub(crate) mod social;
pub(crate) mod trading;
pub(crate) mod vision;
pub(crate) mod worlds;

use crate::registry::ServiceDef;
use crate::service::Service;
use crate::state::World;

/// What `service` is: its routes, limits, authentication and clock.
pub(crate) fn def(service: impl std::borrow::Borrow<Service>) -> &'static dyn ServiceDef {
    match service.borrow() {
        Service::Social => &social::Def,
        Service::Projects => &projects::Def,
        Service::Vision => &vision::Def,
        Service::Esign => &esign::Def,
        Service::Trading => &trading::Def,
        Service::Worlds => &worlds::Def,
    }
}

/// Lets time-driven things happen in every service, emitting their webhook events.
pub(crate) fn tick(world: &mut World) {
    let now = world.now();
    for service in Service::ALL {
        for (event_type, data) in def(service).tick(world, now) {
            world.emit(event_type, data);
        }
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
        let count = |s: Service, plan: &str| def(s).limit(plan).map(|l| (l.count, l.burst));
        assert_eq!(count(Service::Social, "starter"), Some((100, 100)));
        // A plan a service does not know gets its most generous plan.
        assert_eq!(count(Service::Social, "default"), Some((10_000, 10_000)));
        assert_eq!(count(Service::Projects, "free"), Some((100, 150)));
        assert_eq!(count(Service::Projects, "default"), None);
        assert_eq!(count(Service::Vision, "free"), None);
        assert_eq!(count(Service::Esign, "business"), Some((10_000, 10_000)));
    }
}
