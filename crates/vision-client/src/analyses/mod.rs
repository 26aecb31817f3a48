//! The four analyses (detect, classify, OCR, faces): the resource that runs them
//! (`client.analyses()`), their requests (with the document's defaults) and their
//! results.

use core_http::{Error, Result};

use crate::client::Client;

mod classify;
mod detect;
mod faces;
mod ocr;

#[cfg(test)]
mod tests;

pub use crate::bbox::BBox;
pub use classify::{Classification, ClassifyRequest, DEFAULT_TAXONOMY, DEFAULT_TOP_N, Prediction};
pub use detect::{
    DEFAULT_CONFIDENCE_THRESHOLD, DEFAULT_MAX_OBJECTS, DetectRequest, DetectedObject, Detection,
};
pub use faces::{Emotion, Face, FaceAttributes, FaceMatch, Faces, FacesRequest, Gender};
pub use ocr::{OcrRequest, OcrResult, OutputFormat, TextBlock};

fn check_image_url(url: &str) -> Result<()> {
    core_http::service::check_absolute_http(url)
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

/// The analyses resource: `client.analyses()`. Each analysis only reads the image, so it
/// is safe to send again: it is retried like a GET.
#[derive(Debug, Clone, Copy)]
pub struct Analyses<'a> {
    client: &'a Client,
}

impl<'a> Analyses<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Analyses { client }
    }

    /// Detects objects. `POST /v2/detect`.
    ///
    /// ```no_run
    /// # let client = vision_client::Client::new("https://api.example.com", "sk")?;
    /// use vision_client::analyses::DetectRequest;
    /// let found = client
    ///     .analyses()
    ///     .detect(&DetectRequest::new("https://img.example/street.jpg").confidence_threshold(0.8))?;
    /// for object in &found.objects {
    ///     println!("{} {:.2} {:?}", object.label, object.confidence, object.bbox.xyxy());
    /// }
    /// # Ok::<(), vision_client::Error>(())
    /// ```
    pub fn detect(&self, request: &DetectRequest) -> Result<Detection> {
        request.validate()?;
        self.analyse("/v2/detect", request)
    }

    /// Classifies the image. `POST /v2/classify`.
    ///
    /// ```no_run
    /// # let client = vision_client::Client::new("https://api.example.com", "sk")?;
    /// use vision_client::analyses::ClassifyRequest;
    /// let labels = client
    ///     .analyses()
    ///     .classify(&ClassifyRequest::new("https://img.example/dog.jpg").top_n(3))?;
    /// for p in &labels.predictions {
    ///     println!("{} {:.2}", p.label, p.confidence);
    /// }
    /// # Ok::<(), vision_client::Error>(())
    /// ```
    pub fn classify(&self, request: &ClassifyRequest) -> Result<Classification> {
        request.validate()?;
        self.analyse("/v2/classify", request)
    }

    /// Extracts text. `POST /v2/ocr`.
    ///
    /// ```no_run
    /// # let client = vision_client::Client::new("https://api.example.com", "sk")?;
    /// use vision_client::analyses::OcrRequest;
    /// let text = client.analyses().ocr(&OcrRequest::new("https://img.example/sign.jpg"))?;
    /// println!("{}", text.text);
    /// # Ok::<(), vision_client::Error>(())
    /// ```
    pub fn ocr(&self, request: &OcrRequest) -> Result<OcrResult> {
        request.validate()?;
        self.analyse("/v2/ocr", request)
    }

    /// Finds faces, with their attributes and, given a collection, their matches.
    /// `POST /v2/faces`.
    ///
    /// ```no_run
    /// # let client = vision_client::Client::new("https://api.example.com", "sk")?;
    /// use vision_client::analyses::FacesRequest;
    /// let faces = client.analyses().faces(&FacesRequest::new("https://img.example/team.jpg"))?;
    /// println!("{} faces", faces.faces.len());
    /// # Ok::<(), vision_client::Error>(())
    /// ```
    pub fn faces(&self, request: &FacesRequest) -> Result<Faces> {
        request.validate()?;
        self.analyse("/v2/faces", request)
    }

    fn analyse<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &impl serde::Serialize,
    ) -> Result<T> {
        self.client
            .http()
            .post(path)
            .json(body)
            .replay_safe(true)
            .send()?
            .json_data()
    }
}

/// Reached from the client.
impl Client {
    /// The four analyses: detect, classify, OCR, faces.
    ///
    /// ```no_run
    /// # let client = vision_client::Client::new("https://api.example.com", "sk")?;
    /// use vision_client::analyses::DetectRequest;
    /// let found = client.analyses().detect(&DetectRequest::new("https://img.example/a.jpg"))?;
    /// println!("{} objects", found.objects.len());
    /// # Ok::<(), vision_client::Error>(())
    /// ```
    pub fn analyses(&self) -> Analyses<'_> {
        Analyses::new(self)
    }
}
