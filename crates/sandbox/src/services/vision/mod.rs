//! The vision service (`/vision/v2/...`): detection, classification, OCR, faces and a
//! status with the account's usage. Results are derived from the image URL alone, so
//! the same URL always gives the same objects, labels, text and faces. Each successful
//! analysis counts against the key's monthly quota (by the sandbox clock); at the limit
//! the answer is 429 `quota_exceeded` without `Retry-After`, until the next month.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde_json::{Map, Value, json};

use crate::Sandbox;
use crate::http::{Caller, bad_request, error, json, object_body};
use crate::ids::{splitmix, stable_hash};
use crate::plans::Limit;
use crate::registry::ServiceDef;
use crate::service::Service;
use crate::state::{Shared, World};

/// The detection models the sandbox knows; the first is used when none is given.
pub const MODELS: &[&str] = &["general-v2", "fast", "accurate"];
/// The classification taxonomies the sandbox knows; the first is the default.
pub const TAXONOMIES: &[&str] = &["imagenet", "coco"];
/// The face attributes that can be asked for; without a list, age and emotion come back.
pub const FACE_ATTRIBUTES: &[&str] = &["age", "emotion", "gender"];

/// Monthly calls of a plan (`free` is small, so the limit is easy to reach in tests).
pub(crate) fn calls_limit(plan: &str) -> u64 {
    match plan {
        "free" => 25,
        "starter" => 1_000,
        "pro" => 10_000,
        _ => 100_000,
    }
}

const LABELS: &[&str] = &[
    "person",
    "car",
    "bicycle",
    "dog",
    "cat",
    "tree",
    "traffic light",
    "bench",
    "bird",
    "backpack",
    "umbrella",
    "bottle",
    "cup",
    "chair",
    "laptop",
    "book",
];
const IMAGENET: &[&str] = &[
    "golden retriever",
    "tabby cat",
    "sports car",
    "mountain bike",
    "espresso",
    "laptop",
    "park bench",
    "streetcar",
    "umbrella",
    "backpack",
    "lakeside",
    "valley",
    "seashore",
    "library",
    "bakery",
    "bookshop",
    "cliff",
    "volcano",
    "daisy",
    "pizza",
];
const COCO: &[&str] = &[
    "person", "bicycle", "car", "dog", "cat", "bird", "boat", "bench", "cup", "pizza",
];
const LINES: &[&str] = &[
    "OPEN 24 HOURS",
    "Main Street Station",
    "Fresh coffee & pastries",
    "Platform 2 -> City Centre",
    "Invoice #20260105",
    "Total due: 128.40 EUR",
    "Thank you for your visit",
    "No parking 8am-6pm",
];
const EMOTIONS: &[&str] = &["happy", "neutral", "surprised", "sad", "angry", "calm"];
const GENDERS: &[&str] = &["female", "male"];

/// The usage of every key: the month it counts for and the calls made in it.
/// The service, as the registry sees it.
pub(crate) struct Def;

impl ServiceDef for Def {
    fn hint(&self) -> &'static str {
        "cargo run -p vision-client --example vision_quickstart"
    }

    fn router(&self) -> Router<Arc<Shared>> {
        router()
    }

    /// The service documents a monthly call quota, not a request rate.
    fn limit(&self, _plan: &str) -> Option<Limit> {
        None
    }
}

/// The vision service of a running sandbox: `sandbox.vision()`.
#[derive(Debug, Clone, Copy)]
pub struct Vision<'a> {
    sandbox: &'a Sandbox,
}

impl Sandbox {
    /// The vision service.
    pub fn vision(&self) -> Vision<'_> {
        Vision { sandbox: self }
    }
}

impl Vision<'_> {
    /// The base URL a client uses (paths such as `/v2/detect` go after it).
    pub fn url(&self) -> String {
        self.sandbox.service_url(Service::Vision)
    }

    /// The monthly call quota of a plan (`free`, `pro`, ...).
    pub fn quota(&self, plan: &str) -> u64 {
        calls_limit(plan)
    }
}

#[derive(Debug, Default)]
pub(crate) struct VisionState {
    usage: BTreeMap<String, (String, u64)>,
}

/// The routes, relative to `/vision`.
fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/v2/detect", post(detect))
        .route("/v2/classify", post(classify))
        .route("/v2/ocr", post(ocr))
        .route("/v2/faces", post(faces))
        .route("/v2/status", get(status))
}

/// A stream of deterministic numbers for one image.
struct Rng(u64);

impl Rng {
    fn for_image(url: &str, salt: &str) -> Rng {
        Rng(stable_hash(url) ^ stable_hash(salt))
    }

    fn next(&mut self) -> u64 {
        self.0 = splitmix(self.0);
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// A confidence in [lo, hi), rounded to 4 decimals.
    fn confidence(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((lo + unit * (hi - lo)) * 10_000.0).round() / 10_000.0
    }

    /// A box `[x, y, width, height]` inside a 1920x1080 image.
    fn bbox(&mut self) -> [u64; 4] {
        let w = 40 + self.below(400);
        let h = 40 + self.below(300);
        [self.below(1920 - w), self.below(1080 - h), w, h]
    }
}

/// The month a usage counter is for: `YYYY-MM` of the sandbox clock.
fn period(world: &World) -> String {
    let now = world.now();
    format!("{:04}-{:02}", now.year(), u8::from(now.month()))
}

/// The key's usage this month: (calls used, calls limit, period).
fn usage(world: &mut World, key: &str) -> (u64, u64, String) {
    let period = period(world);
    let limit = calls_limit(world.plan_of(key).unwrap_or_default());
    let entry = world
        .services
        .get_mut::<VisionState>()
        .usage
        .entry(key.to_owned())
        .or_insert_with(|| (period.clone(), 0));
    if entry.0 != period {
        *entry = (period.clone(), 0);
    }
    (entry.1, limit, period)
}

/// Validates, counts one call against the quota, and answers `result` with
/// `processing_time_ms` added.
fn analyse(
    shared: &Shared,
    caller: &Caller,
    body: &Bytes,
    salt: &str,
    run: impl FnOnce(&Map<String, Value>, &str) -> Result<Map<String, Value>, Response>,
) -> Response {
    let outcome = (|| {
        let body = object_body(body)?;
        let url = image_url(&body)?;
        let mut result = run(&body, &url)?;
        shared.with_world(|w| {
            let (used, limit, period) = usage(w, &caller.key);
            if used >= limit {
                return Err(error(
                    StatusCode::TOO_MANY_REQUESTS,
                    "quota_exceeded",
                    format!(
                        "the monthly quota of {limit} calls is used up for {period}; it resets at the start of next month"
                    ),
                ));
            }
            if let Some(entry) = w.services.get_mut::<VisionState>().usage.get_mut(&caller.key) {
                entry.1 += 1;
            }
            Ok(())
        })?;
        let mut rng = Rng::for_image(&url, salt);
        result.insert("processing_time_ms".into(), json!(18 + rng.below(120)));
        Ok(json(StatusCode::OK, &Value::Object(result)))
    })();
    outcome.unwrap_or_else(|e| e)
}

fn image_url(body: &Map<String, Value>) -> Result<String, Response> {
    let Some(Value::String(url)) = body.get("image_url") else {
        return Err(bad_request(
            "invalid_image_url",
            "image_url is required and must be a string",
        ));
    };
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') && !url.contains(' ') => {
            Ok(url.clone())
        }
        _ => Err(bad_request(
            "invalid_image_url",
            format!("image_url must be an absolute http(s) URL, got {url:?}"),
        )),
    }
}

/// An optional string field that must be one of `known`.
fn one_of(
    body: &Map<String, Value>,
    name: &str,
    known: &[&'static str],
    code: &str,
) -> Result<Option<&'static str>, Response> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => known
            .iter()
            .find(|k| k.eq_ignore_ascii_case(s))
            .map(|k| Some(*k))
            .ok_or_else(|| {
                bad_request(
                    code,
                    format!("unknown {name} {s:?}; known: {}", known.join(", ")),
                )
            }),
        Some(_) => Err(bad_request(code, format!("{name} must be a string"))),
    }
}

/// An optional positive integer field.
fn positive(body: &Map<String, Value>, name: &str, default: u64) -> Result<u64, Response> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Ok(n),
            _ => Err(bad_request(
                "invalid_parameter",
                format!("{name} must be an integer of at least 1, got {v}"),
            )),
        },
    }
}

/// An optional array of strings.
fn strings(body: &Map<String, Value>, name: &str) -> Result<Option<Vec<String>>, Response> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_ascii_lowercase))
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or_else(|| {
                bad_request(
                    "invalid_parameter",
                    format!("{name} must be an array of strings"),
                )
            }),
        Some(_) => Err(bad_request(
            "invalid_parameter",
            format!("{name} must be an array of strings"),
        )),
    }
}

async fn detect(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Response {
    analyse(&shared, &caller, &body, "detect", |body, url| {
        let model = one_of(body, "model", MODELS, "unknown_model")?.unwrap_or(MODELS[0]);
        let threshold = match body.get("confidence_threshold") {
            None | Some(Value::Null) => 0.5,
            Some(v) => match v.as_f64() {
                Some(t) if (0.0..=1.0).contains(&t) => t,
                _ => {
                    return Err(bad_request(
                        "invalid_parameter",
                        format!("confidence_threshold must be a number from 0 to 1, got {v}"),
                    ));
                }
            },
        };
        let max_objects = positive(body, "max_objects", 100)?;
        let mut rng = Rng::for_image(url, model);
        let count = 3 + rng.below(8);
        let mut objects: Vec<(f64, Value)> = (0..count)
            .map(|_| {
                let label = LABELS[rng.below(LABELS.len() as u64) as usize];
                let confidence = rng.confidence(0.05, 0.99);
                let bbox = rng.bbox();
                (
                    confidence,
                    json!({"label": label, "confidence": confidence, "bbox": bbox}),
                )
            })
            .filter(|(c, _)| *c >= threshold)
            .collect();
        objects.sort_by(|a, b| b.0.total_cmp(&a.0));
        let objects: Vec<Value> = objects
            .into_iter()
            .take(max_objects as usize)
            .map(|(_, o)| o)
            .collect();
        let mut result = Map::new();
        result.insert("objects".into(), Value::Array(objects));
        Ok(result)
    })
}

async fn classify(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Response {
    analyse(&shared, &caller, &body, "classify", |body, url| {
        let taxonomy =
            one_of(body, "taxonomy", TAXONOMIES, "unknown_taxonomy")?.unwrap_or(TAXONOMIES[0]);
        let top_n = positive(body, "top_n", 5)?;
        let labels = if taxonomy == "coco" { COCO } else { IMAGENET };
        let mut rng = Rng::for_image(url, taxonomy);
        // A deterministic ranking of the labels, with confidences that fall off and sum
        // to less than 1.
        let mut order: Vec<usize> = (0..labels.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut left = rng.confidence(0.55, 0.97);
        let predictions: Vec<Value> = order
            .iter()
            .take(top_n as usize)
            .map(|&i| {
                let share = rng.confidence(0.55, 0.85);
                let confidence = (left * share * 10_000.0).round() / 10_000.0;
                left -= confidence;
                json!({"label": labels[i], "confidence": confidence})
            })
            .collect();
        let mut result = Map::new();
        result.insert("predictions".into(), Value::Array(predictions));
        Ok(result)
    })
}

async fn ocr(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Response {
    analyse(&shared, &caller, &body, "ocr", |body, url| {
        let format = one_of(
            body,
            "output_format",
            &["text", "structured"],
            "invalid_output_format",
        )?
        .unwrap_or("text");
        let languages = strings(body, "languages")?.unwrap_or_default();
        if let Some(bad) = languages
            .iter()
            .find(|l| !(2..=3).contains(&l.len()) || !l.chars().all(|c| c.is_ascii_alphabetic()))
        {
            return Err(bad_request(
                "invalid_language",
                format!("languages are ISO 639 codes such as \"en\"; got {bad:?}"),
            ));
        }
        let mut rng = Rng::for_image(url, "ocr");
        let count = 1 + rng.below(4);
        let mut y = 40;
        let blocks: Vec<(String, Value)> = (0..count)
            .map(|_| {
                let text = LINES[rng.below(LINES.len() as u64) as usize];
                let confidence = rng.confidence(0.8, 0.995);
                let width = 16 * text.len() as u64;
                let bbox = [60 + rng.below(200), y, width, 32];
                y += 48 + rng.below(40);
                (
                    text.to_owned(),
                    json!({"text": text, "confidence": confidence, "bbox": bbox}),
                )
            })
            .collect();
        let text: Vec<&str> = blocks.iter().map(|(t, _)| t.as_str()).collect();
        let mut result = Map::new();
        result.insert("text".into(), json!(text.join("\n")));
        let blocks = if format == "structured" {
            blocks.into_iter().map(|(_, b)| b).collect()
        } else {
            Vec::new()
        };
        result.insert("blocks".into(), Value::Array(blocks));
        Ok(result)
    })
}

async fn faces(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Response {
    analyse(&shared, &caller, &body, "faces", |body, url| {
        let attributes = match strings(body, "attributes")? {
            None => vec!["age".to_owned(), "emotion".to_owned()],
            Some(list) => {
                if let Some(bad) = list.iter().find(|a| !FACE_ATTRIBUTES.contains(&a.as_str())) {
                    return Err(bad_request(
                        "unknown_attribute",
                        format!(
                            "unknown face attribute {bad:?}; known: {}",
                            FACE_ATTRIBUTES.join(", ")
                        ),
                    ));
                }
                list
            }
        };
        let collection = match body.get("collection_id") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) if !c.trim().is_empty() => Some(c.clone()),
            Some(_) => {
                return Err(bad_request(
                    "invalid_collection",
                    "collection_id must be a non-empty string",
                ));
            }
        };
        // Each face draws from its own stream, so the options asked for never change
        // which faces are found or their attributes.
        let count = Rng::for_image(url, "faces").below(4);
        let faces: Vec<Value> = (0..count)
            .map(|i| {
                let mut rng = Rng::for_image(url, &format!("face-{i}"));
                let bbox = rng.bbox();
                let confidence = rng.confidence(0.7, 0.999);
                let age = 18 + rng.below(50);
                let emotion = EMOTIONS[rng.below(EMOTIONS.len() as u64) as usize];
                let gender = GENDERS[rng.below(2) as usize];
                let similarity = rng.confidence(0.6, 0.99);
                let mut attrs = Map::new();
                if attributes.iter().any(|a| a == "age") {
                    attrs.insert("age_range".into(), json!([age, age + 9]));
                }
                if attributes.iter().any(|a| a == "emotion") {
                    attrs.insert("emotion".into(), json!(emotion));
                }
                if attributes.iter().any(|a| a == "gender") {
                    attrs.insert("gender".into(), json!(gender));
                }
                let mut face = json!({"bbox": bbox, "confidence": confidence, "attributes": attrs});
                if let Some(collection) = &collection {
                    let person = stable_hash(&format!("{collection}/{url}/{i}")) % 1000;
                    face["matches"] = json!([{
                        "face_id": format!("face_{:06}", person * 7 + i),
                        "person_id": format!("person_{person:03}"),
                        "similarity": similarity,
                    }]);
                }
                face
            })
            .collect();
        let mut result = Map::new();
        result.insert("faces".into(), Value::Array(faces));
        Ok(result)
    })
}

async fn status(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    shared.with_world(|w| {
        let (used, limit, period) = usage(w, &caller.key);
        let latency = 8 + stable_hash(&period) % 30;
        json(
            StatusCode::OK,
            &json!({
                "status": "operational",
                "latency_ms": latency,
                "usage": {"calls_used": used, "calls_limit": limit, "period": period},
            }),
        )
    })
}
