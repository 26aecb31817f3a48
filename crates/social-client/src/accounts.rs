//! Connected social media accounts: list and disconnect.

use core_http::Result;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::client::Client;
use crate::posts::Platform;

core_http::string_id! {
    /// The id of a connected account.
    pub struct AccountId in accounts;
}

core_http::string_enum! {
    /// Whether an account is linked.
    pub enum AccountStatus in accounts {
        /// Linked and usable.
        Connected = "connected",
        /// Unlinked.
        Disconnected = "disconnected",
    }
}

/// A connected social media account. The document shows only its id; the other fields
/// are what the service is expected to send, and anything else is kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Account {
    /// Its id.
    pub id: AccountId,
    /// The platform it is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// The handle on the platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The name shown on the platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Whether it is linked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<AccountStatus>,
    /// When it was linked.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub connected_at: Option<OffsetDateTime>,
    /// Every other field, as received.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The accounts resource: `client.accounts()`.
#[derive(Debug, Clone, Copy)]
pub struct Accounts<'a> {
    client: &'a Client,
}

impl<'a> Accounts<'a> {
    #[inline]
    pub(crate) fn new(client: &'a Client) -> Self {
        Accounts { client }
    }

    /// The connected accounts. `GET /v1/accounts`.
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// for account in client.accounts().list()? {
    ///     println!("{} {:?}", account.id, account.username);
    /// }
    /// # Ok::<(), social_client::Error>(())
    /// ```
    #[inline]
    pub fn list(&self) -> Result<Vec<Account>> {
        self.client.http().get("/v1/accounts").send()?.json_list()
    }

    /// Disconnects an account. `DELETE /v1/accounts/:id`. A 404 is
    /// [`ErrorKind::NotFound`](core_http::ErrorKind::NotFound): the account is not (or no
    /// longer) connected; a 404 to a *retry*, after an earlier attempt may have
    /// disconnected it (its answer lost), is success
    /// ([`RequestBuilder::send_delete`](core_http::transport::RequestBuilder::send_delete)).
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// use social_client::ErrorKind;
    /// match client.accounts().disconnect("acct_123") {
    ///     Ok(()) => println!("disconnected"),
    ///     Err(e) if e.kind() == ErrorKind::NotFound => println!("already gone"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok::<(), social_client::Error>(())
    /// ```
    #[inline]
    pub fn disconnect(&self, id: impl Into<AccountId>) -> Result<()> {
        let path = format!("/v1/accounts/{}", id.into().segment()?);
        self.client.http().delete(&path).send_delete()
    }
}
