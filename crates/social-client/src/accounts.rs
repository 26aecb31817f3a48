//! Connected social media accounts: list and disconnect.

use crate::client::Client;
use core_http::Result;

pub use crate::models::{Account, AccountId, AccountStatus};

/// The accounts resource: `client.accounts()`.
#[derive(Debug, Clone, Copy)]
pub struct Accounts<'a> {
    client: &'a Client,
}

impl<'a> Accounts<'a> {
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
    pub fn disconnect(&self, id: impl Into<AccountId>) -> Result<()> {
        let path = format!("/v1/accounts/{}", id.into().segment()?);
        self.client.http().delete(&path).send_delete()
    }
}

/// Reached from the client.
impl Client {
    /// Connected social media accounts.
    ///
    /// ```no_run
    /// # let client = social_client::Client::new("https://api.example.com", "sk")?;
    /// let connected = client.accounts().list()?.len();
    /// println!("{connected} accounts connected");
    /// # Ok::<(), social_client::Error>(())
    /// ```
    pub fn accounts(&self) -> Accounts<'_> {
        Accounts::new(self)
    }
}
