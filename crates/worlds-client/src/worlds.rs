//! Worlds and the users in them: `client.worlds()`.

use core_http::{Error, Result};
use std::marker::PhantomData;

use core_http::pagination::{TokenPage, TokenPages, TokenPaginator};

use serde::{Deserialize, Deserializer, Serialize};

use crate::client::Client;
use crate::models::check_objects;
pub use crate::models::{Presence, User, UserId, World, WorldId, WorldObject};

/// The largest page of worlds the service gives.
pub const MAX_PAGE_SIZE: u32 = 100;

/// A world to create: a name, a theme, an optional description and objects.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct NewWorld {
    /// Its name (1 to 100 characters in the sandbox).
    pub(crate) name: String,
    /// Its theme.
    pub(crate) theme: String,
    /// Its description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    /// The objects to place in it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) objects: Vec<WorldObject>,
}

impl NewWorld {
    /// A world with a name and a theme.
    pub fn new(name: impl Into<String>, theme: impl Into<String>) -> Self {
        NewWorld {
            name: name.into(),
            theme: theme.into(),
            description: None,
            objects: Vec::new(),
        }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds an object.
    pub fn object(mut self, object: WorldObject) -> Self {
        self.objects.push(object);
        self
    }

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

/// Which page of worlds: [`Worlds::list`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListWorlds {
    /// Worlds per page (1 to 100). Defaults to the service's (20 in the sandbox).
    pub(crate) limit: Option<u32>,
    /// The page a previous answer named.
    pub(crate) page_token: Option<String>,
}

core_http::token_params!(ListWorlds);

impl ListWorlds {
    /// The first page, the service's page size.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let first = client.worlds().list(&worlds_client::worlds::ListWorlds::new())?;
    /// println!("{} worlds on the first page", first.data.len());
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the page size (1 to 100).
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
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = PageAnswer<T>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(r#"a list, or {"data": [...], "next_page_token"}"#)
            }

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
    pub fn iter_from(&self, params: &ListWorlds) -> TokenPaginator<World> {
        let client = self.client.clone();
        let params = params.clone().limit(params.limit.unwrap_or(MAX_PAGE_SIZE));
        TokenPaginator::over(self.client.http(), &params, move |p| {
            client.worlds().list(p)
        })
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
    pub fn pages(&self, params: &ListWorlds) -> TokenPages<World> {
        let client = self.client.clone();
        TokenPages::over(self.client.http(), params, move |p| client.worlds().list(p))
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

/// What to change in a world: only the fields set are sent, the others stay as they
/// are. Objects, when set, replace the world's list as a whole.
///
/// ```
/// use worlds_client::worlds::{UpdateWorld, WorldObject};
/// let change = UpdateWorld::new()
///     .name("Harbour at night")
///     .objects(vec![WorldObject::new("lighthouse", [12.0, 0.0, -3.5])]);
/// // What is sent: the name and the objects, nothing of the theme or description.
/// let sent = worlds_client::serde_json::to_value(&change)?;
/// let keys: Vec<&String> = sent.as_object().map(|o| o.keys().collect()).unwrap_or_default();
/// assert_eq!(keys, ["name", "objects"]);
/// # Ok::<(), worlds_client::serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct UpdateWorld {
    /// A new name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<String>,
    /// A new theme.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) theme: Option<String>,
    /// A new description (`Some(None)` removes it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<Option<String>>,
    /// The world's objects, all of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) objects: Option<Vec<WorldObject>>,
}

impl UpdateWorld {
    /// No change yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new name (not blank, at most 100 characters).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// A new theme (not blank).
    pub fn theme(mut self, theme: impl Into<String>) -> Self {
        self.theme = Some(theme.into());
        self
    }

    /// A new description, or none (`None` removes it).
    pub fn description(mut self, description: Option<impl Into<String>>) -> Self {
        self.description = Some(description.map(Into::into));
        self
    }

    /// The world's objects, replacing its list.
    pub fn objects(mut self, objects: Vec<WorldObject>) -> Self {
        self.objects = Some(objects);
        self
    }

    fn validate(&self) -> Result<()> {
        if self.name.is_none()
            && self.theme.is_none()
            && self.description.is_none()
            && self.objects.is_none()
        {
            return Err(Error::InvalidRequest("the change changes nothing".into()));
        }
        if self.name.as_ref().is_some_and(|n| n.trim().is_empty()) {
            return Err(Error::InvalidRequest("a world's name is not blank".into()));
        }
        if self.theme.as_ref().is_some_and(|t| t.trim().is_empty()) {
            return Err(Error::InvalidRequest("a world's theme is not blank".into()));
        }
        check_objects(self.objects.as_deref().unwrap_or_default())
    }
}

impl Worlds<'_> {
    /// Changes the fields `change` sets, leaving the others. `PATCH /api/v1/worlds/{id}`;
    /// retried like a `PUT` (the same change twice leaves the same world). The world's
    /// sessions get a `WorldUpdated` event.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::worlds::UpdateWorld;
    /// let world = client.worlds().update("world_1", &UpdateWorld::new().theme("winter"))?;
    /// println!("{} is now {} (revision {:?})", world.name, world.theme, world.revision);
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn update(&self, id: impl Into<WorldId>, change: &UpdateWorld) -> Result<World> {
        self.patch(id.into(), change, None)
    }

    /// As [`update`](Self::update), only if the world is still at `revision`
    /// (`If-Match`); otherwise a [`Conflict`](core_http::ErrorKind::Conflict) error
    /// whose [`current_revision`](crate::assets::current_revision) says where it is now. Not
    /// repeated once the server may have acted on it.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::worlds::{UpdateWorld, WorldObject};
    /// let world = client.worlds().get("world_1")?;
    /// let mut objects = world.objects.clone();
    /// objects.push(WorldObject::new("lamp", [0.0, 0.0, 1.0]));
    /// let change = UpdateWorld::new().objects(objects);
    /// client.worlds().update_if("world_1", &change, world.revision.unwrap_or(0))?;
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn update_if(
        &self,
        id: impl Into<WorldId>,
        change: &UpdateWorld,
        revision: u64,
    ) -> Result<World> {
        self.patch(id.into(), change, Some(revision))
    }

    /// Deletes a world and its assets; its sessions get a `WorldDeleted` event first.
    /// `DELETE /api/v1/worlds/{id}`. Retried like any `DELETE`; a retry answered 404
    /// after an earlier attempt may have gone through is success (the world is gone),
    /// while a 404 to the first attempt is `NotFound`
    /// ([`RequestBuilder::send_delete`](core_http::transport::RequestBuilder::send_delete)).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// client.worlds().delete("world_1")?;
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn delete(&self, id: impl Into<WorldId>) -> Result<()> {
        let path = format!("/api/v1/worlds/{}", id.into().segment()?);
        self.client.http().delete(&path).send_delete()
    }

    fn patch(&self, id: WorldId, change: &UpdateWorld, revision: Option<u64>) -> Result<World> {
        change.validate()?;
        let path = format!("/api/v1/worlds/{}", id.segment()?);
        let bytes = serde_json::to_vec(change).map_err(|e| {
            Error::InvalidRequest(format!("the change could not be serialized: {e}"))
        })?;
        let mut request = self
            .client
            .http()
            .patch(&path)
            .bytes("application/merge-patch+json", bytes)
            .replay_safe(true);
        if let Some(revision) = revision {
            request = request
                .header("if-match", format!("\"{revision}\""))
                .replay_safe(false);
        }
        let response = request.send()?;
        let mut world: World = response.json_data()?;
        if world.revision.is_none() {
            world.revision = response
                .headers()
                .get("etag")
                .and_then(crate::assets::revision_of);
        }
        Ok(world)
    }
}

/// Reached from the client.
impl Client {
    /// The worlds: list, iterate, create, get, and their users.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// for world in client.worlds().iter().take(10) {
    ///     println!("{}", world?.name);
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn worlds(&self) -> Worlds<'_> {
        Worlds::new(self)
    }
}
