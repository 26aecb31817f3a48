//! The vision client: configuration and the analyses.

use core_http::Result;

use crate::analyses::{
    Classification, ClassifyRequest, DetectRequest, Detection, Faces, FacesRequest, OcrRequest,
    OcrResult,
};
use crate::status::Status;

/// A client of the vision service. Cheap to clone; clones share the connection pool.
///
/// Build it with [`Client::new`], [`Client::builder`] or [`Client::from_env`]
/// (`VISION_API_KEY`, `VISION_BASE_URL`), then call [`detect`](Client::detect),
/// [`classify`](Client::classify), [`ocr`](Client::ocr), [`faces`](Client::faces)
/// or [`status`](Client::status). The service documents no request-rate plans, so there
/// is no `VISION_PLAN`; the usage quota is reported by [`Client::status`].
#[derive(Clone, Debug)]
pub struct Client {
    http: core_http::HttpClient,
}

core_http::service_client!(Client, env_prefix = "VISION");

impl Client {
    /// Detects objects. `POST /v2/detect`.
    ///
    /// ```no_run
    /// # let client = vision_client::Client::new("https://api.example.com", "sk")?;
    /// use vision_client::DetectRequest;
    /// let found = client.detect(&DetectRequest::new("https://img.example/street.jpg").confidence_threshold(0.8))?;
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
    /// use vision_client::ClassifyRequest;
    /// let labels = client.classify(&ClassifyRequest::new("https://img.example/dog.jpg").top_n(3))?;
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
    /// use vision_client::OcrRequest;
    /// let text = client.ocr(&OcrRequest::new("https://img.example/sign.jpg"))?;
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
    /// use vision_client::FacesRequest;
    /// let faces = client.faces(&FacesRequest::new("https://img.example/team.jpg"))?;
    /// println!("{} faces", faces.faces.len());
    /// # Ok::<(), vision_client::Error>(())
    /// ```
    pub fn faces(&self, request: &FacesRequest) -> Result<Faces> {
        request.validate()?;
        self.analyse("/v2/faces", request)
    }

    /// The service's health and the account's usage. `GET /v2/status`.
    ///
    /// ```no_run
    /// # let client = vision_client::Client::new("https://api.example.com", "sk")?;
    /// let usage = client.status()?.usage;
    /// println!("{} of {} calls used, {} left", usage.calls_used, usage.calls_limit, usage.remaining());
    /// # Ok::<(), vision_client::Error>(())
    /// ```
    pub fn status(&self) -> Result<Status> {
        self.http().get("/v2/status").send()?.json_data()
    }

    /// An analysis only reads the image, so it is safe to send again: it is retried like
    /// a GET.
    fn analyse<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &impl serde::Serialize,
    ) -> Result<T> {
        self.http()
            .post(path)
            .json(body)
            .replay_safe(true)
            .send()?
            .json_data()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn from_env_needs_key_and_url_and_hides_the_key() {
        let env = |name: &str| match name {
            "VISION_API_KEY" => Some("sk_live_secret".to_owned()),
            "VISION_BASE_URL" => Some("https://api.example.com".to_owned()),
            _ => None,
        };
        let client = Client::from_env_with(env).unwrap();
        assert!(!format!("{client:?}").contains("sk_live_secret"));
        let missing = Client::from_env_with(|_| None).unwrap_err();
        assert!(missing.to_string().contains("VISION_"), "{missing}");
    }
}
