//! The services, one folder each. Each registers itself through
//! [`ServiceDef`](crate::registry::ServiceDef) in [`crate::registry`].

pub(crate) mod esign;
pub(crate) mod projects;
pub(crate) mod social;
pub(crate) mod trading;
pub(crate) mod vision;
pub(crate) mod worlds;
