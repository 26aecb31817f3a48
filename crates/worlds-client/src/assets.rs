//! Assets and their properties: `client.assets()`.

use core_http::pagination::{TokenPages, TokenPaginator};
use core_http::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::client::Client;
use crate::models::WorldId;

core_http::string_id! {
    /// An asset's id.
    pub struct AssetId in assets;
}

/// An asset: its properties (any JSON object), the world it belongs to, and its
/// revision, which moves with every change. Fields this version does not model are kept
/// in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Asset {
    /// Its id.
    pub id: AssetId,
    /// The world it is in, when the service says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_id: Option<WorldId>,
    /// Its properties.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub properties: Map<String, Value>,
    /// Its revision (from the body, or else the `ETag`), for
    /// [`Assets::replace_if`] and [`Assets::merge_if`].
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub revision: Option<u64>,
    /// When it last changed.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_at: Option<OffsetDateTime>,
    /// Every other field, as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The revision an `ETag` (or `If-Match`) value names: `"3"`, `W/"3"` or `3`.
pub(crate) fn revision_of(etag: &str) -> Option<u64> {
    let t = etag.trim();
    let t = t.strip_prefix("W/").unwrap_or(t);
    t.trim_matches('"').parse().ok()
}

/// The asset's current revision, when `error` is a conflict (409 or 412) whose answer
/// names it in its `ETag`: update again from there.
///
/// ```no_run
/// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
/// # let properties = worlds_client::serde_json::Map::new();
/// match client.assets().replace_if("asset_1", &properties, 3) {
///     Ok(asset) => println!("now at revision {:?}", asset.revision),
///     Err(e) => match worlds_client::assets::current_revision(&e) {
///         Some(current) => println!("someone else changed it: it is at {current}"),
///         None => return Err(e),
///     },
/// }
/// # Ok::<(), worlds_client::Error>(())
/// ```
pub fn current_revision(error: &Error) -> Option<u64> {
    let api = error.api()?;
    if api.kind != core_http::ErrorKind::Conflict {
        return None;
    }
    api.headers.get("etag").and_then(revision_of)
}

#[derive(Serialize)]
struct Body<'a> {
    properties: &'a Map<String, Value>,
}

/// The largest page of assets the service gives.
pub const MAX_PAGE_SIZE: u32 = 100;

/// Which of a world's assets to list: a page size and where to start.
///
/// ```
/// let params = worlds_client::assets::ListAssets::new().limit(100);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListAssets {
    /// At most this many a page (1 to 100; the service's default is 20).
    pub(crate) limit: Option<u32>,
    /// The page a `next_page_token` names.
    pub(crate) page_token: Option<String>,
}

core_http::token_params!(ListAssets);

impl ListAssets {
    /// The first page, the service's page size.
    pub fn new() -> Self {
        Self::default()
    }

    /// At most `n` a page (1 to 100).
    pub fn limit(mut self, n: u32) -> Self {
        self.limit = Some(n);
        self
    }

    /// The page `token` names.
    pub fn page_token(mut self, token: impl Into<String>) -> Self {
        self.page_token = Some(token.into());
        self
    }
}

/// A page of a world's assets as the service answers it.
#[derive(Deserialize)]
struct AssetList {
    #[serde(deserialize_with = "core_http::de::or_default")]
    assets: Vec<Asset>,
    #[serde(default, deserialize_with = "core_http::de::opt_text")]
    next_page_token: Option<String>,
}

/// How a change applies: the properties replaced whole, or merged.
#[derive(Clone, Copy)]
enum Change {
    Replace,
    Merge,
}

/// The assets resource: `client.assets()`. Two ways to change properties, named for
/// what they do: [`replace`](Self::replace) (`PUT`: the properties become exactly
/// those given; any not given are gone) and [`merge`](Self::merge) (`PATCH`, a JSON
/// merge patch: only those given change, `null` removes one). Each has a conditional
/// form (`_if`) for read-modify-write without losing another writer's change.
#[derive(Debug, Clone, Copy)]
pub struct Assets<'a> {
    client: &'a Client,
}

impl<'a> Assets<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Assets { client }
    }

    /// One asset, with its revision. `GET /api/v1/assets/{id}`; none is
    /// `404 asset_not_found` (`ErrorKind::NotFound`).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// let asset = client.assets().get("asset_1")?;
    /// println!("{:?} at revision {:?}", asset.properties, asset.revision);
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn get(&self, id: impl Into<AssetId>) -> Result<Asset> {
        let id = id.into();
        let path = format!("/api/v1/assets/{}", id.segment()?);
        let response = self.client.http().get(&path).send()?;
        let asset = with_revision(response)?;
        core_http::service::check_answered("asset", id.as_str(), asset.id.as_str())?;
        Ok(asset)
    }

    /// One page of a world's assets. `GET /api/v1/worlds/{id}/assets?limit&page_token`.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::assets::ListAssets;
    /// let page = client.assets().list("world_1", &ListAssets::new().limit(50))?;
    /// for asset in &page.data {
    ///     println!("{} {:?}", asset.id, asset.properties);
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn list(
        &self,
        world: impl Into<WorldId>,
        params: &ListAssets,
    ) -> Result<core_http::pagination::TokenPage<Asset>> {
        core_http::service::check_page_size(params.limit, MAX_PAGE_SIZE)?;
        let path = format!("/api/v1/worlds/{}/assets", world.into().segment()?);
        let page: AssetList = self
            .client
            .http()
            .get(&path)
            .query_opt("limit", params.limit)
            .query_opt("page_token", params.page_token.as_deref())
            .send_json()?;
        Ok(core_http::pagination::TokenPage::new(
            page.assets,
            page.next_page_token,
        ))
    }

    /// Every asset of a world, page after page as the iteration reaches them.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// for asset in client.assets().iter("world_1") {
    ///     println!("{}", asset?.id);
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn iter(&self, world: impl Into<WorldId>) -> TokenPaginator<Asset> {
        self.iter_from(world, &ListAssets::new())
    }

    /// Every asset of a world from the page `params.page_token` names (the first without
    /// one), `params.limit` (default 100) a page; `resume_token()` tells where to go on.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::assets::ListAssets;
    /// for asset in client.assets().iter_from("world_1", &ListAssets::new().limit(20)) {
    ///     println!("{}", asset?.id);
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn iter_from(
        &self,
        world: impl Into<WorldId>,
        params: &ListAssets,
    ) -> TokenPaginator<Asset> {
        let (client, world) = (self.client.clone(), world.into());
        let params = params.clone().limit(params.limit.unwrap_or(MAX_PAGE_SIZE));
        TokenPaginator::over(self.client.http(), &params, move |p| {
            client.assets().list(world.clone(), p)
        })
    }

    /// A world's assets page by page from `params` (the first page, or the one its token
    /// names).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::assets::ListAssets;
    /// for page in client.assets().pages("world_1", &ListAssets::new().limit(50)) {
    ///     println!("{} assets", page?.data.len());
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn pages(&self, world: impl Into<WorldId>, params: &ListAssets) -> TokenPages<Asset> {
        let (client, world) = (self.client.clone(), world.into());
        TokenPages::over(self.client.http(), params, move |p| {
            client.assets().list(world.clone(), p)
        })
    }

    /// Creates an asset in a world, at revision 1. `POST /api/v1/worlds/{id}/assets`.
    /// Not repeated once the service may have made it (a retry could make two); after a
    /// timeout or a reset the error says so (`may_have_been_processed`): list the
    /// world's assets to see.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::serde_json::{Map, json};
    /// let mut properties = Map::new();
    /// properties.insert("model".into(), json!("tree.glb"));
    /// let asset = client.assets().create("world_1", &properties)?;
    /// println!("made {}", asset.id);
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn create(
        &self,
        world: impl Into<WorldId>,
        properties: &Map<String, Value>,
    ) -> Result<Asset> {
        let path = format!("/api/v1/worlds/{}/assets", world.into().segment()?);
        let response = self
            .client
            .http()
            .post(&path)
            .json(&Body { properties })
            .send()?;
        with_revision(response)
    }

    /// Replaces an asset's properties with exactly `properties`: any property not given
    /// is gone (to change only some, [`merge`](Self::merge)). `PUT /api/v1/assets/{id}`.
    /// Retried like any `PUT`: sending the same properties twice leaves the same asset.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::serde_json::{Map, json};
    /// let mut properties = Map::new();
    /// properties.insert("colour".into(), json!("oak"));
    /// let asset = client.assets().replace("asset_1", &properties)?;
    /// assert_eq!(asset.properties.len(), 1);
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn replace(
        &self,
        id: impl Into<AssetId>,
        properties: &Map<String, Value>,
    ) -> Result<Asset> {
        self.change(id.into(), properties, None, Change::Replace)
    }

    /// As [`replace`](Self::replace), only if the asset is still at `revision`
    /// (`If-Match`); otherwise a [`Conflict`](core_http::ErrorKind::Conflict) error
    /// (412, or 409), whose [`current_revision`] says where it is now. A conditional
    /// change is not repeated once the server may have acted on it (a repeat would fail
    /// its own condition): after a timeout or a reset the error says so, and the asset's
    /// next read or event shows whether it went through.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::{serde_json::json, assets::current_revision};
    /// let asset = client.assets().get("asset_1")?;
    /// let mut properties = asset.properties.clone();
    /// properties.insert("colour".into(), json!("oak"));
    /// match client.assets().replace_if("asset_1", &properties, asset.revision.unwrap_or(0)) {
    ///     Ok(asset) => println!("now at revision {:?}", asset.revision),
    ///     Err(e) => match current_revision(&e) {
    ///         Some(now) => println!("someone else changed it first: revision {now}"),
    ///         None => return Err(e),
    ///     },
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn replace_if(
        &self,
        id: impl Into<AssetId>,
        properties: &Map<String, Value>,
        revision: u64,
    ) -> Result<Asset> {
        self.change(id.into(), properties, Some(revision), Change::Replace)
    }

    /// Changes only the properties given, leaving the others as they are; a property
    /// given as `null` is removed (a JSON merge patch, RFC 7396, of the asset: nested
    /// objects merge too). `PATCH /api/v1/assets/{id}`, retried like a `PUT` (the same
    /// patch applied twice leaves the same properties; the revision moves each time).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::serde_json::{Map, Value, json};
    /// let mut change = Map::new();
    /// change.insert("colour".into(), json!("walnut"));
    /// change.insert("old_name".into(), Value::Null); // removed
    /// let asset = client.assets().merge("asset_1", &change)?;
    /// println!("{:?}", asset.properties);
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn merge(&self, id: impl Into<AssetId>, properties: &Map<String, Value>) -> Result<Asset> {
        self.change(id.into(), properties, None, Change::Merge)
    }

    /// As [`merge`](Self::merge), only if the asset is still at `revision` (`If-Match`);
    /// otherwise a [`Conflict`](core_http::ErrorKind::Conflict) error whose
    /// [`current_revision`] says where it is now. Not repeated once the server may have
    /// acted on it.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::serde_json::{Map, json};
    /// let mut change = Map::new();
    /// change.insert("lit".into(), json!(true));
    /// let asset = client.assets().merge_if("asset_1", &change, 4)?;
    /// assert_eq!(asset.revision, Some(5));
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn merge_if(
        &self,
        id: impl Into<AssetId>,
        properties: &Map<String, Value>,
        revision: u64,
    ) -> Result<Asset> {
        self.change(id.into(), properties, Some(revision), Change::Merge)
    }

    #[deprecated(
        since = "0.1.0",
        note = "a full replace that drops the properties not given: call `replace` (or `merge` to change only some)"
    )]
    /// A full replace, as [`replace`](Self::replace).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// # let properties = worlds_client::serde_json::Map::new();
    /// #[allow(deprecated)]
    /// let asset = client.assets().update("asset_1", &properties)?;
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn update(&self, id: impl Into<AssetId>, properties: &Map<String, Value>) -> Result<Asset> {
        self.replace(id, properties)
    }

    #[deprecated(
        since = "0.1.0",
        note = "a full replace that drops the properties not given: call `replace_if` (or `merge_if`)"
    )]
    /// A conditional full replace, as [`replace_if`](Self::replace_if).
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// # let properties = worlds_client::serde_json::Map::new();
    /// #[allow(deprecated)]
    /// let asset = client.assets().update_if("asset_1", &properties, 3)?;
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn update_if(
        &self,
        id: impl Into<AssetId>,
        properties: &Map<String, Value>,
        revision: u64,
    ) -> Result<Asset> {
        self.replace_if(id, properties, revision)
    }

    fn change(
        &self,
        id: AssetId,
        properties: &Map<String, Value>,
        revision: Option<u64>,
        how: Change,
    ) -> Result<Asset> {
        let path = format!("/api/v1/assets/{}", id.segment()?);
        let http = self.client.http();
        let mut request = match how {
            Change::Replace => http.put(&path).json(&Body { properties }),
            Change::Merge => {
                let bytes = serde_json::to_vec(&Body { properties }).map_err(|e| {
                    Error::InvalidRequest(format!("the properties could not be serialized: {e}"))
                })?;
                // The same patch applied twice leaves the same properties.
                http.patch(&path)
                    .bytes("application/merge-patch+json", bytes)
                    .replay_safe(true)
            }
        };
        if let Some(revision) = revision {
            request = request
                .header("if-match", format!("\"{revision}\""))
                .replay_safe(false);
        }
        with_revision(request.send()?)
    }
}

/// The asset an answer holds, its revision from the `ETag` when the body has none.
fn with_revision(response: core_http::transport::Response) -> Result<Asset> {
    let mut asset: Asset = response.json_data()?;
    if asset.revision.is_none() {
        asset.revision = response.headers().get("etag").and_then(revision_of);
    }
    Ok(asset)
}

/// Reached from the client.
impl Client {
    /// The assets: update their properties.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::serde_json::{Map, json};
    /// let properties = Map::from_iter([("lit".to_owned(), json!(true))]);
    /// client.assets().replace("lamp_1", &properties)?;
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn assets(&self) -> Assets<'_> {
        Assets::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_read_from_every_etag_form() {
        assert_eq!(revision_of("\"3\""), Some(3));
        assert_eq!(revision_of("W/\"12\""), Some(12));
        assert_eq!(revision_of("7"), Some(7));
        assert_eq!(revision_of("\"abc\""), None);
    }
}
