//! The records the service answers with: documents and their signers.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;

core_http::string_id! {
    /// The id of a document.
    pub struct DocumentId in documents;
}

core_http::string_enum! {
    /// Where a document stands. Values the service adds later are kept as sent.
    pub enum DocumentStatus in documents {
        /// Not sent yet.
        Draft = "draft",
        /// Sent to the signers.
        Sent = "sent",
        /// Delivered to the signers.
        Delivered = "delivered",
        /// Signed by some signers.
        Signed = "signed",
        /// Signed by everyone: the signed PDF can be downloaded.
        Completed = "completed",
        /// A signer declined.
        Declined = "declined",
        /// Withdrawn by the sender.
        Voided = "voided",
        /// Not completed in time.
        Expired = "expired",
    }
}

impl DocumentStatus {
    /// Whether the document will not change any more.
    ///
    /// ```
    /// use esign_client::documents::DocumentStatus;
    /// assert!(DocumentStatus::Completed.is_final());
    /// assert!(!DocumentStatus::Sent.is_final());
    /// ```
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            DocumentStatus::Completed
                | DocumentStatus::Declined
                | DocumentStatus::Voided
                | DocumentStatus::Expired
        )
    }
}

core_http::string_enum! {
    /// Where one signer stands.
    pub enum SignerStatus in documents {
        /// Not signed yet.
        Pending = "pending",
        /// Has opened the document.
        Viewed = "viewed",
        /// Has signed.
        Signed = "signed",
        /// Refused to sign.
        Declined = "declined",
    }
}

/// A document and its signers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Document {
    /// Its id.
    pub id: DocumentId,
    /// Its name.
    #[serde(default, deserialize_with = "core_http::de::text_or_empty")]
    pub name: String,
    /// Where it stands (an empty `Unknown` when the server gave none).
    #[serde(default)]
    pub status: DocumentStatus,
    /// The signers, with their progress.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub signers: Vec<Signer>,
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
    /// When the last signer signed.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub completed_at: Option<OffsetDateTime>,
    /// Fields this version does not model (the document's record is not shown in the
    /// service's document), kept as sent: `file`, `subject`, `metadata`, ...
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A signer of a document, as the service reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Signer {
    /// Their name.
    #[serde(default, deserialize_with = "core_http::de::text_or_empty")]
    pub name: String,
    /// Their email address.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub email: String,
    /// Where they stand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SignerStatus>,
    /// Their place in the signing order, when there is one.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_u32",
        skip_serializing_if = "Option::is_none"
    )]
    pub order: Option<u32>,
    /// When they signed.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub signed_at: Option<OffsetDateTime>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
