//! Object detection: what to ask, and the objects found.

use core_http::{Error, Result};
use serde::{Deserialize, Serialize};

use super::{check_at_least_one, check_image_url};
use crate::bbox::BBox;

/// The documented default of `confidence_threshold`.
pub const DEFAULT_CONFIDENCE_THRESHOLD: f64 = 0.5;
/// The documented default of `max_objects`.
pub const DEFAULT_MAX_OBJECTS: u32 = 100;

/// Object detection: `POST /v2/detect`.
///
/// ```
/// use vision_client::analyses::DetectRequest;
/// let request = DetectRequest::new("https://example.com/street.jpg").max_objects(10);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DetectRequest {
    /// The image's absolute http(s) URL.
    pub(crate) image_url: String,
    /// The detection model. Defaults to none (not sent: the service's default model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    /// Objects less likely than this are left out, 0 to 1. Defaults to 0.5.
    pub(crate) confidence_threshold: f64,
    /// At most this many objects, at least 1. Defaults to 100.
    pub(crate) max_objects: u32,
}

impl DetectRequest {
    /// Detection on the image at `image_url`, with the documented defaults.
    pub fn new(image_url: impl Into<String>) -> Self {
        DetectRequest {
            image_url: image_url.into(),
            model: None,
            confidence_threshold: DEFAULT_CONFIDENCE_THRESHOLD,
            max_objects: DEFAULT_MAX_OBJECTS,
        }
    }

    /// Uses this model.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the confidence threshold (0 to 1; checked before sending).
    pub fn confidence_threshold(mut self, threshold: f64) -> Self {
        self.confidence_threshold = threshold;
        self
    }

    /// Sets the largest number of objects (at least 1; checked before sending).
    pub fn max_objects(mut self, max: u32) -> Self {
        self.max_objects = max;
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        check_image_url(&self.image_url)?;
        if !(0.0..=1.0).contains(&self.confidence_threshold) {
            return Err(Error::InvalidRequest(format!(
                "confidence_threshold must be from 0 to 1, got {}",
                self.confidence_threshold
            )));
        }
        if self.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
            return Err(Error::InvalidRequest("model is empty".into()));
        }
        check_at_least_one("max_objects", self.max_objects)
    }
}

/// The objects found in an image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Detection {
    /// The objects, most confident first (as the service orders them).
    #[serde(deserialize_with = "core_http::de::or_default")]
    pub objects: Vec<DetectedObject>,
    /// How long the analysis took on the server, in milliseconds.
    #[serde(
        default,
        deserialize_with = "core_http::de::lenient_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub processing_time_ms: Option<u64>,
}

/// One detected object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DetectedObject {
    /// What it is.
    pub label: String,
    /// How sure the service is, 0 to 1.
    #[serde(deserialize_with = "core_http::de::f64")]
    pub confidence: f64,
    /// Where it is.
    pub bbox: BBox,
}
