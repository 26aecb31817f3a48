//! The service's data: worlds, their objects and users, and their ids. Read by every
//! resource and the stream; re-exported where each is documented
//! ([`worlds`](crate::worlds)).

use core_http::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;

core_http::string_id! {
    /// A world's id.
    pub struct WorldId in worlds;
}

core_http::string_id! {
    /// A user's id.
    pub struct UserId in worlds;
}

core_http::string_enum! {
    /// Whether a user is there right now.
    pub enum Presence in worlds {
        /// Connected.
        Online = "online",
        /// Connected but idle.
        Away = "away",
        /// Not connected.
        Offline = "offline",
    }
}

/// A world. The document shows only the fields a world is created with (`name`,
/// `theme`); the id is needed for anything, everything else is optional, and fields this
/// version does not model are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct World {
    /// Its id.
    pub id: WorldId,
    /// Its name.
    #[serde(default, deserialize_with = "core_http::de::text_or_empty")]
    pub name: String,
    /// Its theme.
    #[serde(default, deserialize_with = "core_http::de::text_or_empty")]
    pub theme: String,
    /// Its description, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The objects placed in it.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub objects: Vec<WorldObject>,
    /// How many users are in it, when the service says.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub user_count: Option<u64>,
    /// When it was created.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_at: Option<OffsetDateTime>,
    /// When it last changed.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_at: Option<OffsetDateTime>,
    /// Its revision, which moves with every change of its own fields (for
    /// [`Worlds::update_if`](crate::worlds::Worlds::update_if)); from the body, or else the `ETag`.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub revision: Option<u64>,
    /// Every other field, as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An object in a world: its `type`, its `position` (x, y, z) and an optional
/// `destination` (where a portal leads: a world id, a URL or a position, kept as the
/// JSON the service uses).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WorldObject {
    /// What it is (`portal`, `fountain`, ...).
    #[serde(
        rename = "type",
        default,
        deserialize_with = "core_http::de::or_default"
    )]
    pub kind: String,
    /// Where it is: x, y, z. `None` when the service sent no readable position.
    #[serde(
        default,
        deserialize_with = "crate::position::read",
        skip_serializing_if = "Option::is_none"
    )]
    pub position: Option<[f64; 3]>,
    /// Where it leads, if anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<Value>,
    /// Every other field, as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl WorldObject {
    /// An object of `kind` at `position` (x, y, z).
    ///
    /// ```
    /// let fountain = worlds_client::worlds::WorldObject::new("fountain", [0.0, 0.0, 4.5]);
    /// assert_eq!(fountain.position, Some([0.0, 0.0, 4.5]));
    /// ```
    pub fn new(kind: impl Into<String>, position: [f64; 3]) -> Self {
        WorldObject {
            kind: kind.into(),
            position: Some(position),
            destination: None,
            extra: Map::new(),
        }
    }

    /// Where it leads: a world id, a URL, or any JSON the service understands.
    ///
    /// ```
    /// use worlds_client::worlds::WorldObject;
    /// let portal = WorldObject::new("portal", [1.0, 0.0, 2.0]).destination("world_harbour");
    /// assert_eq!(portal.destination, Some("world_harbour".into()));
    /// ```
    pub fn destination(mut self, destination: impl Into<Value>) -> Self {
        self.destination = Some(destination.into());
        self
    }
}

/// A user in a world. Only the id is needed; the rest is kept as sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct User {
    /// Their id.
    pub id: UserId,
    /// The name shown for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Whether they are there right now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence: Option<Presence>,
    /// When they joined the world.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub joined_at: Option<OffsetDateTime>,
    /// What their session set with
    /// [`WorldsStream::set_presence`](crate::stream::WorldsStream::set_presence) (a position, a
    /// status...), when it did.
    #[serde(
        default,
        deserialize_with = "core_http::de::or_default",
        skip_serializing_if = "Option::is_none"
    )]
    pub state: Option<Map<String, Value>>,
    /// Every other field, as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Each object with a type and a position of three finite numbers.
pub(crate) fn check_objects(objects: &[WorldObject]) -> Result<()> {
    for (i, o) in objects.iter().enumerate() {
        if o.kind.trim().is_empty() {
            return Err(Error::InvalidRequest(format!("object {i} has no type")));
        }
        match o.position {
            Some(p) if p.iter().all(|n| n.is_finite()) => {}
            _ => {
                return Err(Error::InvalidRequest(format!(
                    "object {i} needs a position of three finite numbers"
                )));
            }
        }
    }
    Ok(())
}
