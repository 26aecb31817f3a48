//! Worlds and the users in them: `client.worlds()`.

use core_http::{Error, Result};
use std::marker::PhantomData;

use core_http::pagination::{TokenPage, TokenPages, TokenPaginator};

pub use crate::world_changes::UpdateWorld;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::client::Client;

/// The largest page of worlds the service gives.
pub const MAX_PAGE_SIZE: u32 = 100;

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
    /// [`Worlds::update_if`]); from the body, or else the `ETag`.
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
    #[inline]
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
    #[inline]
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

/// A world to create: a name, a theme, an optional description and objects.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct NewWorld {
    /// Its name (1 to 100 characters in the sandbox).
    pub name: String,
    /// Its theme.
    pub theme: String,
    /// Its description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The objects to place in it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<WorldObject>,
}

impl NewWorld {
    /// A world with a name and a theme.
    ///
    /// ```
    /// let world = worlds_client::worlds::NewWorld::new("Harbour", "seaside");
    /// assert!(world.objects.is_empty());
    /// ```
    #[inline]
    pub fn new(name: impl Into<String>, theme: impl Into<String>) -> Self {
        NewWorld {
            name: name.into(),
            theme: theme.into(),
            description: None,
            objects: Vec::new(),
        }
    }

    /// Sets the description.
    ///
    /// ```
    /// let world = worlds_client::worlds::NewWorld::new("Harbour", "seaside").description("Boats and a lighthouse");
    /// assert_eq!(world.description.as_deref(), Some("Boats and a lighthouse"));
    /// ```
    #[inline]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds an object.
    ///
    /// ```
    /// use worlds_client::worlds::{NewWorld, WorldObject};
    /// let world = NewWorld::new("Harbour", "seaside")
    ///     .object(WorldObject::new("lighthouse", [12.0, 0.0, -3.5]))
    ///     .object(WorldObject::new("boat", [2.0, 0.0, 1.0]));
    /// assert_eq!(world.objects.len(), 2);
    /// ```
    #[inline]
    pub fn object(mut self, object: WorldObject) -> Self {
        self.objects.push(object);
        self
    }

    #[inline]
    pub(crate) fn validate(&self) -> Result<()> {
        if self.name.trim().is_empty() {
            return Err(Error::InvalidRequest("a world needs a name".into()));
        }
        if self.theme.trim().is_empty() {
            return Err(Error::InvalidRequest("a world needs a theme".into()));
        }
        check_objects(&self.objects)
    }
}

/// Each object with a type and a position of three finite numbers.
#[inline]
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

/// Which page of worlds: [`Worlds::list`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListWorlds {
    /// Worlds per page (1 to 100). Defaults to the service's (20 in the sandbox).
    pub limit: Option<u32>,
    /// The page a previous answer named.
    pub page_token: Option<String>,
}

impl ListWorlds {
    /// The first page, the service's page size.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let first = client.worlds().list(&worlds_client::worlds::ListWorlds::new())?;
    /// println!("{} worlds on the first page", first.data.len());
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the page size (1 to 100).
    ///
    /// ```
    /// let params = worlds_client::worlds::ListWorlds::new().limit(100);
    /// assert_eq!(params.limit, Some(100));
    /// ```
    #[inline]
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Asks for the page `token` names.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::worlds::ListWorlds;
    /// let first = client.worlds().list(&ListWorlds::new().limit(20))?;
    /// if let Some(token) = first.next_page_token {
    ///     let second = client.worlds().list(&ListWorlds::new().limit(20).page_token(token))?;
    ///     println!("{} more", second.data.len());
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    #[inline]
    pub fn page_token(mut self, token: impl Into<String>) -> Self {
        self.page_token = Some(token.into());
        self
    }
}

/// A page as the service may send it: `{"data": [...], "next_page_token"}` or a bare
/// array (everything at once).
/// (Read by hand, not as an untagged enum, which would buffer the answer first and lose
/// the leniency of the items' own readers.) An object without `data` is a decode error.
struct PageAnswer<T> {
    data: Vec<T>,
    next_page_token: Option<String>,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for PageAnswer<T> {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = PageAnswer<T>;

            #[inline]
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(r#"a list, or {"data": [...], "next_page_token"}"#)
            }

            #[inline]
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let mut data = Vec::new();
                while let Some(item) = seq.next_element()? {
                    data.push(item);
                }
                Ok(PageAnswer {
                    data,
                    next_page_token: None,
                })
            }

            #[inline]
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let (mut data, mut next_page_token) = (None, None);
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "data" => data = Some(map.next_value::<Vec<T>>()?),
                        "next_page_token" => {
                            next_page_token = map.next_value::<Option<String>>()?;
                        }
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                let data = data.ok_or_else(|| serde::de::Error::missing_field("data"))?;
                Ok(PageAnswer {
                    data,
                    next_page_token,
                })
            }
        }
        d.deserialize_any(Visitor(PhantomData))
    }
}

impl<T> PageAnswer<T> {
    #[inline]
    fn into_parts(self) -> (Vec<T>, Option<String>) {
        (self.data, self.next_page_token.filter(|t| !t.is_empty()))
    }
}

/// The worlds resource: `client.worlds()`.
#[derive(Debug, Clone, Copy)]
pub struct Worlds<'a> {
    pub(crate) client: &'a Client,
}

impl<'a> Worlds<'a> {
    #[inline]
    pub(crate) fn new(client: &'a Client) -> Self {
        Worlds { client }
    }

    /// One page of worlds, oldest first. `GET /api/v1/worlds?limit&page_token`.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::worlds::ListWorlds;
    /// let page = client.worlds().list(&ListWorlds::new().limit(20))?;
    /// println!("{} worlds, next page {:?}", page.data.len(), page.next_page_token);
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    #[inline]
    pub fn list(&self, params: &ListWorlds) -> Result<TokenPage<World>> {
        core_http::service::check_page_size(params.limit, MAX_PAGE_SIZE)?;
        let answer: PageAnswer<World> = self
            .client
            .http()
            .get("/api/v1/worlds")
            .query_opt("limit", params.limit)
            .query_opt("page_token", params.page_token.as_deref())
            .send_json()?;
        let (data, next_page_token) = answer.into_parts();
        Ok(TokenPage::new(data, next_page_token))
    }

    /// Every world, fetched 100 at a time as the iteration reaches them.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// for world in client.worlds().iter() {
    ///     let world = world?;
    ///     println!("{} {} ({})", world.id, world.name, world.theme);
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    #[inline]
    pub fn iter(&self) -> TokenPaginator<World> {
        self.iter_from(&ListWorlds::new())
    }

    /// Every world from the page `params.page_token` names (the first without one),
    /// `params.limit` (default 100) a page; `resume_token()` tells where to start again.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let mut worlds = client.worlds().iter_from(&worlds_client::worlds::ListWorlds::new().limit(20));
    /// for world in worlds.by_ref().take(20) {
    ///     println!("{}", world?.name);
    /// }
    /// if let Some(token) = worlds.resume_token() {
    ///     println!("go on later from {token}");
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    #[inline]
    pub fn iter_from(&self, params: &ListWorlds) -> TokenPaginator<World> {
        let client = self.client.clone();
        let limit = params.limit.unwrap_or(MAX_PAGE_SIZE);
        let fetch = move |token: Option<&str>| {
            let mut params = ListWorlds::new().limit(limit);
            params.page_token = token.map(str::to_owned);
            client.worlds().list(&params)
        };
        TokenPaginator::boxed(params.page_token.clone(), fetch)
    }

    /// Page by page from `params` (the first page, or the one its token names).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// for page in client.worlds().pages(&worlds_client::worlds::ListWorlds::new().limit(50)) {
    ///     println!("{} worlds", page?.data.len());
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    #[inline]
    pub fn pages(&self, params: &ListWorlds) -> TokenPages<World> {
        let client = self.client.clone();
        let limit = params.limit;
        TokenPages::boxed(params.page_token.clone(), move |token: Option<&str>| {
            let mut params = ListWorlds::new();
            params.limit = limit;
            params.page_token = token.map(str::to_owned);
            client.worlds().list(&params)
        })
    }

    /// Creates a world. `POST /api/v1/worlds`. Not retried once the server may have
    /// acted on it, so it never creates two worlds.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::worlds::{NewWorld, WorldObject};
    /// let world = client.worlds().create(
    ///     &NewWorld::new("Harbour", "seaside").object(WorldObject::new("lighthouse", [12.0, 0.0, -3.5])),
    /// )?;
    /// println!("{}", world.id);
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    #[inline]
    pub fn create(&self, world: &NewWorld) -> Result<World> {
        world.validate()?;
        self.client
            .http()
            .post("/api/v1/worlds")
            .json(world)
            .send()?
            .json_data()
    }

    /// A world by id. `GET /api/v1/worlds/{id}`.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let world = client.worlds().get("world_1")?;
    /// println!("{} ({}), {} objects", world.name, world.theme, world.objects.len());
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    #[inline]
    pub fn get(&self, id: impl Into<WorldId>) -> Result<World> {
        let id = id.into();
        let path = format!("/api/v1/worlds/{}", id.segment()?);
        let world: World = self.client.http().get(&path).send_json()?;
        core_http::service::check_answered("world", id.as_str(), world.id.as_str())?;
        Ok(world)
    }

    /// The users in a world, every page of them. `GET /api/v1/worlds/{id}/users`,
    /// following `next_page_token` (sent back as `page_token`) until the last page. A
    /// list that cannot be read whole (a page token the service hands back twice, or more
    /// than [`core_http::pagination::DEFAULT_MAX_PAGES`] pages) is an error
    /// ([`Error::ListCutShort`]), never a short list.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// for user in client.worlds().users("world_1")? {
    ///     println!("{} {:?}", user.id, user.display_name);
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    #[inline]
    pub fn users(&self, id: impl Into<WorldId>) -> Result<Vec<User>> {
        let path = format!("/api/v1/worlds/{}/users", id.into().segment()?);
        let http = self.client.http();
        let mut users = Vec::new();
        let pages = TokenPages::starting_at(None, |token: Option<&str>| {
            let answer: PageAnswer<User> =
                http.get(&path).query_opt("page_token", token).send_json()?;
            let (data, next) = answer.into_parts();
            Ok(TokenPage::new(data, next))
        });
        for page in pages {
            users.extend(page?.data);
        }
        Ok(users)
    }
}
