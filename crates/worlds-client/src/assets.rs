//! Assets and their properties: `client.assets()`.

use core_http::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::client::Client;
use crate::worlds::WorldId;

core_http::string_id! {
    /// An asset's id.
    pub struct AssetId;
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
    /// [`Assets::update_if`].
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
fn revision_of(etag: &str) -> Option<u64> {
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
/// match client.assets().update_if("asset_1", &properties, 3) {
///     Ok(asset) => println!("now at revision {:?}", asset.revision),
///     Err(e) => match worlds_client::current_revision(&e) {
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

/// The assets resource: `client.assets()`.
#[derive(Debug, Clone, Copy)]
pub struct Assets<'a> {
    client: &'a Client,
}

impl<'a> Assets<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Assets { client }
    }

    /// Replaces an asset's properties with `properties` (a full replace, as `PUT` is).
    /// `PUT /api/v1/assets/{id}`. Retried like any `PUT`: sending the same properties
    /// twice leaves the same asset.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::serde_json::{Map, json};
    /// let mut properties = Map::new();
    /// properties.insert("colour".into(), json!("oak"));
    /// let asset = client.assets().update("asset_1", &properties)?;
    /// println!("revision {:?}", asset.revision);
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn update(&self, id: impl Into<AssetId>, properties: &Map<String, Value>) -> Result<Asset> {
        self.put(id.into(), properties, None)
    }

    /// As [`update`](Self::update), only if the asset is still at `revision`
    /// (`If-Match`); otherwise a [`Conflict`](core_http::ErrorKind::Conflict) error
    /// (412, or 409), whose [`current_revision`] says where it is now. A conditional
    /// update is not repeated once the server may have acted on it (a repeat would fail
    /// its own condition): after a timeout or a reset the error says so, and the asset's
    /// next event or update shows whether it went through.
    ///
    /// ```no_run
    /// # let client = worlds_client::Client::new("https://worlds.example.com", "key")?;
    /// use worlds_client::{current_revision, serde_json::{Map, json}};
    /// let mut properties = Map::new();
    /// properties.insert("colour".into(), json!("oak"));
    /// match client.assets().update_if("asset_1", &properties, 7) {
    ///     Ok(asset) => println!("now at revision {:?}", asset.revision),
    ///     Err(e) => match current_revision(&e) {
    ///         Some(now) => println!("someone else changed it first: revision {now}"),
    ///         None => return Err(e),
    ///     },
    /// }
    /// # Ok::<(), worlds_client::Error>(())
    /// ```
    pub fn update_if(
        &self,
        id: impl Into<AssetId>,
        properties: &Map<String, Value>,
        revision: u64,
    ) -> Result<Asset> {
        self.put(id.into(), properties, Some(revision))
    }

    fn put(
        &self,
        id: AssetId,
        properties: &Map<String, Value>,
        revision: Option<u64>,
    ) -> Result<Asset> {
        let path = format!("/api/v1/assets/{}", id.segment()?);
        let mut request = self.client.http().put(&path).json(&Body { properties });
        if let Some(revision) = revision {
            request = request
                .header("if-match", format!("\"{revision}\""))
                .replay_safe(false);
        }
        let response = request.send()?;
        let mut asset: Asset = response.json_data()?;
        if asset.revision.is_none() {
            asset.revision = response.headers().get("etag").and_then(revision_of);
        }
        Ok(asset)
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
