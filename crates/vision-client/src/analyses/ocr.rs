//! Text recognition: what to ask, and the text found.

use core_http::Result;
use serde::{Deserialize, Serialize};

use super::{check_image_url, check_strings};
use crate::bbox::BBox;

core_http::string_enum! {
    /// What the OCR answer holds: the text only, or the text and its blocks.
    pub enum OutputFormat in analyses {
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
    pub(crate) image_url: String,
    /// Language hints (such as `en`, `de`). Defaults to none (not sent: detected).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) languages: Option<Vec<String>>,
    /// Text only, or text and blocks. Defaults to [`OutputFormat::Text`], always sent.
    pub(crate) output_format: OutputFormat,
}

impl OcrRequest {
    /// Text extraction from the image at `image_url`, as plain text.
    pub fn new(image_url: impl Into<String>) -> Self {
        OcrRequest {
            image_url: image_url.into(),
            languages: None,
            output_format: OutputFormat::Text,
        }
    }

    /// Hints the languages to expect.
    pub fn languages<S: Into<String>>(mut self, languages: impl IntoIterator<Item = S>) -> Self {
        self.languages = Some(languages.into_iter().map(Into::into).collect());
        self
    }

    /// Asks for the text blocks too ([`OutputFormat::Structured`]).
    pub fn structured(mut self) -> Self {
        self.output_format = OutputFormat::Structured;
        self
    }

    /// Sets the output format.
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
        deserialize_with = "core_http::de::lenient_u64",
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
