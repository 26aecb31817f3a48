//! Classification: what to ask, and the labels found.

use core_http::{Error, Result};
use serde::{Deserialize, Serialize};

use super::{check_at_least_one, check_image_url};

/// The documented default of `top_n`.
pub const DEFAULT_TOP_N: u32 = 5;
/// The documented default of `taxonomy`.
pub const DEFAULT_TAXONOMY: &str = "imagenet";

/// Image classification: `POST /v2/classify`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ClassifyRequest {
    /// The image's absolute http(s) URL.
    pub(crate) image_url: String,
    /// How many predictions, at least 1. Defaults to 5.
    pub(crate) top_n: u32,
    /// The label set. Defaults to `imagenet`.
    pub(crate) taxonomy: String,
}

impl ClassifyRequest {
    /// Classification of the image at `image_url`, with the documented defaults.
    pub fn new(image_url: impl Into<String>) -> Self {
        ClassifyRequest {
            image_url: image_url.into(),
            top_n: DEFAULT_TOP_N,
            taxonomy: DEFAULT_TAXONOMY.to_owned(),
        }
    }

    /// Sets how many predictions to return (at least 1; checked before sending).
    pub fn top_n(mut self, n: u32) -> Self {
        self.top_n = n;
        self
    }

    /// Uses another label set.
    pub fn taxonomy(mut self, taxonomy: impl Into<String>) -> Self {
        self.taxonomy = taxonomy.into();
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        check_image_url(&self.image_url)?;
        check_at_least_one("top_n", self.top_n)?;
        if self.taxonomy.trim().is_empty() {
            return Err(Error::InvalidRequest("taxonomy is empty".into()));
        }
        Ok(())
    }
}

/// The top predictions for an image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Classification {
    /// The predictions, most likely first.
    #[serde(deserialize_with = "core_http::de::or_default")]
    pub predictions: Vec<Prediction>,
    /// How long the analysis took on the server, in milliseconds.
    #[serde(
        default,
        deserialize_with = "core_http::de::lenient_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub processing_time_ms: Option<u64>,
}

/// One classification prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Prediction {
    /// The label.
    pub label: String,
    /// How likely, 0 to 1.
    #[serde(deserialize_with = "core_http::de::f64")]
    pub confidence: f64,
}
