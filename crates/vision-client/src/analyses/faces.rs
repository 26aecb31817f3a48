//! Faces: what to ask, and the faces found with their attributes and matches.

use core_http::{Error, Result};
use serde::{Deserialize, Serialize};

use super::{check_image_url, check_strings};
use crate::bbox::BBox;

/// Face analysis: `POST /v2/faces`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct FacesRequest {
    /// The image's absolute http(s) URL.
    pub(crate) image_url: String,
    /// The attributes to estimate (such as `age`, `emotion`, `gender`). Defaults to none
    /// (not sent: the service's default set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) attributes: Option<Vec<String>>,
    /// A collection of enrolled faces to match against. Defaults to none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) collection_id: Option<String>,
}

impl FacesRequest {
    /// Face analysis of the image at `image_url`.
    pub fn new(image_url: impl Into<String>) -> Self {
        FacesRequest {
            image_url: image_url.into(),
            attributes: None,
            collection_id: None,
        }
    }

    /// Asks for these attributes.
    pub fn attributes<S: Into<String>>(mut self, attributes: impl IntoIterator<Item = S>) -> Self {
        self.attributes = Some(attributes.into_iter().map(Into::into).collect());
        self
    }

    /// Matches the faces against an enrolled collection.
    pub fn collection(mut self, collection_id: impl Into<String>) -> Self {
        self.collection_id = Some(collection_id.into());
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        check_image_url(&self.image_url)?;
        check_strings("attributes", self.attributes.as_deref())?;
        if self
            .collection_id
            .as_deref()
            .is_some_and(|c| c.trim().is_empty())
        {
            return Err(Error::InvalidRequest("collection_id is empty".into()));
        }
        Ok(())
    }
}

/// The faces found in an image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Faces {
    /// The faces.
    #[serde(deserialize_with = "core_http::de::or_default")]
    pub faces: Vec<Face>,
    /// How long the analysis took on the server, in milliseconds.
    #[serde(
        default,
        deserialize_with = "core_http::de::lenient_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub processing_time_ms: Option<u64>,
}

/// One face.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Face {
    /// Where it is.
    pub bbox: BBox,
    /// How sure the service is that this is a face, 0 to 1.
    #[serde(deserialize_with = "core_http::de::f64")]
    pub confidence: f64,
    /// The estimated attributes, when any were returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<FaceAttributes>,
    /// Matches in the collection asked for (empty without one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<FaceMatch>,
}

/// `[low, high]` read tolerantly: two whole numbers within `u32`, else `None` (never a
/// clamped or truncated age).
fn age_range<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<[u32; 2]>, D::Error> {
    let values: Option<Vec<core_http::de::Lenient<u32>>> =
        Option::deserialize(d).unwrap_or_default();
    Ok(match values.as_deref() {
        Some(
            [
                core_http::de::Lenient(Some(low)),
                core_http::de::Lenient(Some(high)),
            ],
        ) => Some([*low, *high]),
        _ => None,
    })
}

/// Estimated attributes of a face; each is optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FaceAttributes {
    /// The estimated age range, `[low, high]` in years.
    #[serde(
        default,
        deserialize_with = "age_range",
        skip_serializing_if = "Option::is_none"
    )]
    pub age_range: Option<[u32; 2]>,
    /// The dominant emotion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emotion: Option<Emotion>,
    /// The estimated gender (not in the document; kept when sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gender: Option<Gender>,
    /// Attributes this version does not model.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

core_http::string_enum! {
    /// An estimated emotion. The document gives no list; values outside this one are
    /// kept in `Unknown`.
    pub enum Emotion in analyses {
        /// Happy.
        Happy = "happy",
        /// Neutral.
        Neutral = "neutral",
        /// Sad.
        Sad = "sad",
        /// Angry.
        Angry = "angry",
        /// Surprised.
        Surprised = "surprised",
        /// Calm.
        Calm = "calm",
        /// Fearful.
        Fearful = "fearful" | "fear",
        /// Disgusted.
        Disgusted = "disgusted" | "disgust",
        /// Confused.
        Confused = "confused",
    }
}

core_http::string_enum! {
    /// An estimated gender, as the service labels it.
    pub enum Gender in analyses {
        /// Female.
        Female = "female",
        /// Male.
        Male = "male",
    }
}

/// A match of a face against an enrolled collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FaceMatch {
    /// The enrolled face that matched.
    pub face_id: String,
    /// The person it belongs to, when the collection says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person_id: Option<String>,
    /// How similar, 0 to 1, when given (the documents do not show match results, so
    /// an absent score is `None`, never a similarity of zero).
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_f64",
        skip_serializing_if = "Option::is_none"
    )]
    pub similarity: Option<f64>,
}
