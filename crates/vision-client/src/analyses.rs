//! The four analyses: their requests (with the document's defaults) and their results.

use core_http::{Error, Result};
use serde::{Deserialize, Serialize};

use crate::bbox::BBox;

/// The documented default of `confidence_threshold`.
pub const DEFAULT_CONFIDENCE_THRESHOLD: f64 = 0.5;
/// The documented default of `max_objects`.
pub const DEFAULT_MAX_OBJECTS: u32 = 100;
/// The documented default of `top_n`.
pub const DEFAULT_TOP_N: u32 = 5;
/// The documented default of `taxonomy`.
pub const DEFAULT_TAXONOMY: &str = "imagenet";

fn check_image_url(url: &str) -> Result<()> {
    core_http::check_absolute_http(url)
        .map_err(|why| Error::InvalidRequest(format!("image_url: {why}")))
}

fn check_at_least_one(name: &str, value: u32) -> Result<()> {
    if value == 0 {
        return Err(Error::InvalidRequest(format!(
            "{name} must be at least 1, got 0"
        )));
    }
    Ok(())
}

fn check_strings(name: &str, values: Option<&[String]>) -> Result<()> {
    if values.is_some_and(|v| v.iter().any(|s| s.trim().is_empty())) {
        return Err(Error::InvalidRequest(format!("{name} has an empty entry")));
    }
    Ok(())
}

/// Object detection: `POST /v2/detect`.
///
/// ```
/// use vision_client::DetectRequest;
/// let request = DetectRequest::new("https://example.com/street.jpg").max_objects(10);
/// assert_eq!(request.confidence_threshold, 0.5);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DetectRequest {
    /// The image's absolute http(s) URL.
    pub image_url: String,
    /// The detection model. Defaults to none (not sent: the service's default model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Objects less likely than this are left out, 0 to 1. Defaults to 0.5.
    pub confidence_threshold: f64,
    /// At most this many objects, at least 1. Defaults to 100.
    pub max_objects: u32,
}

impl DetectRequest {
    /// Detection on the image at `image_url`, with the documented defaults.
    ///
    /// ```
    /// use vision_client::DetectRequest;
    /// let request = DetectRequest::new("https://example.com/street.jpg");
    /// assert_eq!((request.confidence_threshold, request.max_objects), (0.5, 100));
    /// ```
    pub fn new(image_url: impl Into<String>) -> Self {
        DetectRequest {
            image_url: image_url.into(),
            model: None,
            confidence_threshold: DEFAULT_CONFIDENCE_THRESHOLD,
            max_objects: DEFAULT_MAX_OBJECTS,
        }
    }

    /// Uses this model.
    ///
    /// ```
    /// use vision_client::DetectRequest;
    /// let request = DetectRequest::new("https://example.com/street.jpg").model("yolo-v8");
    /// assert_eq!(request.model.as_deref(), Some("yolo-v8"));
    /// ```
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the confidence threshold (0 to 1; checked before sending).
    ///
    /// ```
    /// use vision_client::DetectRequest;
    /// let request = DetectRequest::new("https://example.com/street.jpg").confidence_threshold(0.8);
    /// assert_eq!(request.confidence_threshold, 0.8);
    /// ```
    pub fn confidence_threshold(mut self, threshold: f64) -> Self {
        self.confidence_threshold = threshold;
        self
    }

    /// Sets the largest number of objects (at least 1; checked before sending).
    ///
    /// ```
    /// use vision_client::DetectRequest;
    /// let request = DetectRequest::new("https://example.com/street.jpg").max_objects(10);
    /// assert_eq!(request.max_objects, 10);
    /// ```
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
        deserialize_with = "core_http::de::opt_u64",
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

/// Image classification: `POST /v2/classify`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ClassifyRequest {
    /// The image's absolute http(s) URL.
    pub image_url: String,
    /// How many predictions, at least 1. Defaults to 5.
    pub top_n: u32,
    /// The label set. Defaults to `imagenet`.
    pub taxonomy: String,
}

impl ClassifyRequest {
    /// Classification of the image at `image_url`, with the documented defaults.
    ///
    /// ```
    /// use vision_client::ClassifyRequest;
    /// let request = ClassifyRequest::new("https://example.com/cat.jpg");
    /// assert_eq!((request.top_n, request.taxonomy.as_str()), (5, "imagenet"));
    /// ```
    pub fn new(image_url: impl Into<String>) -> Self {
        ClassifyRequest {
            image_url: image_url.into(),
            top_n: DEFAULT_TOP_N,
            taxonomy: DEFAULT_TAXONOMY.to_owned(),
        }
    }

    /// Sets how many predictions to return (at least 1; checked before sending).
    ///
    /// ```
    /// use vision_client::ClassifyRequest;
    /// let request = ClassifyRequest::new("https://example.com/cat.jpg").top_n(3);
    /// assert_eq!(request.top_n, 3);
    /// ```
    pub fn top_n(mut self, n: u32) -> Self {
        self.top_n = n;
        self
    }

    /// Uses another label set.
    ///
    /// ```
    /// use vision_client::ClassifyRequest;
    /// let request = ClassifyRequest::new("https://example.com/cat.jpg").taxonomy("openimages");
    /// assert_eq!(request.taxonomy, "openimages");
    /// ```
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
        deserialize_with = "core_http::de::opt_u64",
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

core_http::string_enum! {
    /// What the OCR answer holds: the text only, or the text and its blocks.
    pub enum OutputFormat {
        /// The text (`blocks` empty). What [`OcrRequest`] sends unless told otherwise.
        Text = "text",
        /// The text and one block per line with its position.
        Structured = "structured",
    }
}

/// Text extraction: `POST /v2/ocr`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct OcrRequest {
    /// The image's absolute http(s) URL.
    pub image_url: String,
    /// Language hints (such as `en`, `de`). Defaults to none (not sent: detected).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub languages: Option<Vec<String>>,
    /// Text only, or text and blocks. Defaults to [`OutputFormat::Text`], always sent.
    pub output_format: OutputFormat,
}

impl OcrRequest {
    /// Text extraction from the image at `image_url`, as plain text.
    ///
    /// ```
    /// use vision_client::{OcrRequest, OutputFormat};
    /// let request = OcrRequest::new("https://example.com/receipt.jpg");
    /// assert_eq!(request.output_format, OutputFormat::Text);
    /// ```
    pub fn new(image_url: impl Into<String>) -> Self {
        OcrRequest {
            image_url: image_url.into(),
            languages: None,
            output_format: OutputFormat::Text,
        }
    }

    /// Hints the languages to expect.
    ///
    /// ```
    /// use vision_client::OcrRequest;
    /// let request = OcrRequest::new("https://example.com/receipt.jpg").languages(["en", "de"]);
    /// assert_eq!(request.languages.map(|l| l.len()), Some(2));
    /// ```
    pub fn languages<S: Into<String>>(mut self, languages: impl IntoIterator<Item = S>) -> Self {
        self.languages = Some(languages.into_iter().map(Into::into).collect());
        self
    }

    /// Asks for the text blocks too ([`OutputFormat::Structured`]).
    ///
    /// ```
    /// use vision_client::{OcrRequest, OutputFormat};
    /// let request = OcrRequest::new("https://example.com/receipt.jpg").structured();
    /// assert_eq!(request.output_format, OutputFormat::Structured);
    /// ```
    pub fn structured(mut self) -> Self {
        self.output_format = OutputFormat::Structured;
        self
    }

    /// Sets the output format.
    ///
    /// ```
    /// use vision_client::{OcrRequest, OutputFormat};
    /// let request = OcrRequest::new("https://example.com/receipt.jpg").output_format(OutputFormat::Structured);
    /// assert_eq!(request.output_format, OutputFormat::Structured);
    /// ```
    pub fn output_format(mut self, format: OutputFormat) -> Self {
        self.output_format = format;
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        check_image_url(&self.image_url)?;
        check_strings("languages", self.languages.as_deref())
    }
}

/// The text found in an image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OcrResult {
    /// All the text, lines separated by newlines.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub text: String,
    /// The blocks (empty unless [`OutputFormat::Structured`] was asked for).
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub blocks: Vec<TextBlock>,
    /// How long the analysis took on the server, in milliseconds.
    #[serde(
        default,
        deserialize_with = "core_http::de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub processing_time_ms: Option<u64>,
}

/// A block of text and where it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TextBlock {
    /// The text.
    pub text: String,
    /// How sure the service is, 0 to 1.
    #[serde(deserialize_with = "core_http::de::f64")]
    pub confidence: f64,
    /// Where it is.
    pub bbox: BBox,
}

/// Face analysis: `POST /v2/faces`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct FacesRequest {
    /// The image's absolute http(s) URL.
    pub image_url: String,
    /// The attributes to estimate (such as `age`, `emotion`, `gender`). Defaults to none
    /// (not sent: the service's default set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Vec<String>>,
    /// A collection of enrolled faces to match against. Defaults to none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collection_id: Option<String>,
}

impl FacesRequest {
    /// Face analysis of the image at `image_url`.
    ///
    /// ```
    /// use vision_client::FacesRequest;
    /// let request = FacesRequest::new("https://example.com/team.jpg");
    /// assert!(request.attributes.is_none() && request.collection_id.is_none());
    /// ```
    pub fn new(image_url: impl Into<String>) -> Self {
        FacesRequest {
            image_url: image_url.into(),
            attributes: None,
            collection_id: None,
        }
    }

    /// Asks for these attributes.
    ///
    /// ```
    /// use vision_client::FacesRequest;
    /// let request = FacesRequest::new("https://example.com/team.jpg").attributes(["age", "emotion"]);
    /// assert_eq!(request.attributes.map(|a| a.len()), Some(2));
    /// ```
    pub fn attributes<S: Into<String>>(mut self, attributes: impl IntoIterator<Item = S>) -> Self {
        self.attributes = Some(attributes.into_iter().map(Into::into).collect());
        self
    }

    /// Matches the faces against an enrolled collection.
    ///
    /// ```
    /// use vision_client::FacesRequest;
    /// let request = FacesRequest::new("https://example.com/team.jpg").collection("staff");
    /// assert_eq!(request.collection_id.as_deref(), Some("staff"));
    /// ```
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
        deserialize_with = "core_http::de::opt_u64",
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
    pub enum Emotion {
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
    pub enum Gender {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn inputs_are_checked_with_a_reason() {
        let bad = [
            DetectRequest::new("example.com/a.jpg").validate(),
            DetectRequest::new("ftp://example.com/a.jpg").validate(),
            DetectRequest::new("https://example.com/a b.jpg").validate(),
            DetectRequest::new("https://x.test/a.jpg")
                .confidence_threshold(1.5)
                .validate(),
            DetectRequest::new("https://x.test/a.jpg")
                .confidence_threshold(f64::NAN)
                .validate(),
            DetectRequest::new("https://x.test/a.jpg")
                .max_objects(0)
                .validate(),
            ClassifyRequest::new("https://x.test/a.jpg")
                .top_n(0)
                .validate(),
            OcrRequest::new("https://x.test/a.jpg")
                .languages([""])
                .validate(),
            FacesRequest::new("https://x.test/a.jpg")
                .collection(" ")
                .validate(),
        ];
        for result in bad {
            let err = result.unwrap_err();
            assert!(matches!(err, Error::InvalidRequest(_)), "{err:?}");
        }
        DetectRequest::new("http://127.0.0.1:8080/a.jpg")
            .confidence_threshold(0.0)
            .validate()
            .unwrap();
        DetectRequest::new("https://x.test/a.jpg")
            .confidence_threshold(1.0)
            .validate()
            .unwrap();
    }

    #[test]
    fn defaults_are_sent() {
        let body = serde_json::to_value(DetectRequest::new("https://x.test/a.jpg")).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"image_url": "https://x.test/a.jpg", "confidence_threshold": 0.5, "max_objects": 100})
        );
        let body = serde_json::to_value(OcrRequest::new("https://x.test/a.jpg")).unwrap();
        assert_eq!(body["output_format"], "text");
    }
}
