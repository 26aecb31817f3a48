//! The services the sandbox emulates, named: a leaf module (it imports nothing of the
//! sandbox), so that everything may name a service without depending on the services
//! themselves. What each service does is found through [`crate::services::def`].

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

    /// The path segment the service lives under.
    pub fn prefix(self) -> &'static str {
        match self {
            Service::Social => "social",
            Service::Projects => "projects",
            Service::Vision => "vision",
            Service::Esign => "esign",
            Service::Trading => "trading",
            Service::Worlds => "worlds",
        }
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
