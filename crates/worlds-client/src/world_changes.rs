//! Changing a world: its name, theme, description or objects (`PATCH`, conditionally
//! with `If-Match`), and deleting it.

use core_http::{Error, Result};
use serde::Serialize;

use crate::worlds::{World, WorldId, WorldObject, Worlds, check_objects};

/// What to change in a world: only the fields set are sent, the others stay as they
/// are. Objects, when set, replace the world's list as a whole.
///
/// ```
/// use worlds_client::worlds::{UpdateWorld, WorldObject};
/// let change = UpdateWorld::new()
///     .name("Harbour at night")
///     .objects(vec![WorldObject::new("lighthouse", [12.0, 0.0, -3.5])]);
/// assert_eq!(change.name.as_deref(), Some("Harbour at night"));
/// assert!(change.theme.is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct UpdateWorld {
    /// A new name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A new theme.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// A new description (`Some(None)` removes it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<Option<String>>,
    /// The world's objects, all of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objects: Option<Vec<WorldObject>>,
}

impl UpdateWorld {
    /// No change yet.
    ///
    /// ```
    /// assert!(worlds_client::worlds::UpdateWorld::new().name.is_none());
    /// ```
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// A new name (not blank, at most 100 characters).
    ///
    /// ```
    /// let change = worlds_client::worlds::UpdateWorld::new().name("Harbour");
    /// assert_eq!(change.name.as_deref(), Some("Harbour"));
    /// ```
    #[inline]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// A new theme (not blank).
    ///
    /// ```
    /// let change = worlds_client::worlds::UpdateWorld::new().theme("winter");
    /// assert_eq!(change.theme.as_deref(), Some("winter"));
    /// ```
    #[inline]
    pub fn theme(mut self, theme: impl Into<String>) -> Self {
        self.theme = Some(theme.into());
        self
    }

    /// A new description, or none (`None` removes it).
    ///
    /// ```
    /// let change = worlds_client::worlds::UpdateWorld::new().description(None::<String>);
    /// assert_eq!(change.description, Some(None));
    /// ```
    #[inline]
    pub fn description(mut self, description: Option<impl Into<String>>) -> Self {
        self.description = Some(description.map(Into::into));
        self
    }

    /// The world's objects, replacing its list.
    ///
    /// ```
    /// use worlds_client::worlds::{UpdateWorld, WorldObject};
    /// let change = UpdateWorld::new().objects(vec![WorldObject::new("bench", [1.0, 0.0, 2.0])]);
    /// assert_eq!(change.objects.map(|o| o.len()), Some(1));
    /// ```
    #[inline]
    pub fn objects(mut self, objects: Vec<WorldObject>) -> Self {
        self.objects = Some(objects);
        self
    }

    #[inline]
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
    #[inline]
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
    #[inline]
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
    #[inline]
    pub fn delete(&self, id: impl Into<WorldId>) -> Result<()> {
        let path = format!("/api/v1/worlds/{}", id.into().segment()?);
        self.client.http().delete(&path).send_delete()
    }

    #[inline]
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
