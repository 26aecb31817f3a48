//! Small helpers shared by the service modules: JSON answers, error bodies, query and
//! body parsing, and the caller a request was authenticated as.

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value};

/// The authenticated caller of a service request.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    /// The API key (each key is its own tenant).
    pub key: String,
}

/// A JSON answer.
pub(crate) fn json(status: StatusCode, value: &impl Serialize) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The error body every service of the sandbox uses: `{"error": {"code", "message"}}`.
/// The body is kept on the answer too ([`error_body`]), for a handler that reports one
/// item's refusal inside a larger answer.
pub(crate) fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = serde_json::json!({"error": {"code": code, "message": message.into()}});
    let mut response = json(status, &body);
    response.extensions_mut().insert(ErrorBody(body));
    response
}

/// An error answer's body, kept beside it by [`error`].
#[derive(Clone)]
struct ErrorBody(Value);

/// The body of an answer made by [`error`]; `null` for any other.
pub(crate) fn error_body(response: &Response) -> Value {
    response
        .extensions()
        .get::<ErrorBody>()
        .map_or(Value::Null, |b| b.0.clone())
}

/// A 400 with this code and message.
pub(crate) fn bad_request(code: &str, message: impl Into<String>) -> Response {
    error(StatusCode::BAD_REQUEST, code, message)
}

/// Parses a JSON object body, or explains what is wrong with it.
pub(crate) fn object_body(body: &Bytes) -> Result<Map<String, Value>, Response> {
    if body.is_empty() {
        return Err(bad_request(
            "invalid_body",
            "the request body must be a JSON object",
        ));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(bad_request(
            "invalid_body",
            "the request body must be a JSON object",
        )),
        Err(e) => Err(bad_request(
            "invalid_json",
            format!("the request body is not valid JSON: {e}"),
        )),
    }
}

/// A request's query, read by the extractor: its name/value pairs, in order. Never
/// rejects (an absent query has no pairs); a handler checks the values it reads in its
/// service's own error shape.
pub(crate) struct Params(pub(crate) Vec<(String, String)>);

impl Params {
    /// The first value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Params {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Params(query_pairs(parts.uri.query())))
    }
}

/// A request's body that must be a JSON object, read by the extractor: a body that is
/// not one is refused with the services' `400 invalid_body` or `invalid_json`, before
/// the handler runs.
pub(crate) struct Object(pub(crate) Map<String, Value>);

impl<S: Send + Sync> axum::extract::FromRequest<S> for Object {
    type Rejection = Response;

    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, Response> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(IntoResponse::into_response)?;
        object_body(&bytes).map(Object)
    }
}

/// The query string as name/value pairs.
pub(crate) fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .into_owned()
        .collect()
}

/// The page a `{data, meta}` list request asks for: `limit` (1 to 100, default 20) and
/// `offset` (default 0), the convention the social and projects services share.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageQuery {
    limit: u64,
    offset: u64,
}

impl PageQuery {
    /// Reads `limit` and `offset`, or answers 400 `invalid_parameter`.
    pub(crate) fn parse(query: Option<&str>) -> Result<PageQuery, Response> {
        let pairs = query_pairs(query);
        Ok(PageQuery {
            limit: bounded_param(&pairs, "limit", 1, 100)?.unwrap_or(20),
            offset: bounded_param(&pairs, "offset", 0, u64::from(u32::MAX))?.unwrap_or(0),
        })
    }

    /// The 200 answer: this page of `items` (oldest first) and the totals.
    pub(crate) fn answer<T>(&self, items: &[T], to_json: impl Fn(&T) -> Value) -> Response {
        let data: Vec<Value> = items
            .iter()
            .skip(usize::try_from(self.offset).unwrap_or(usize::MAX))
            .take(usize::try_from(self.limit).unwrap_or(usize::MAX))
            .map(to_json)
            .collect();
        json(
            StatusCode::OK,
            &serde_json::json!({
                "data": data,
                "meta": {"total": items.len(), "limit": self.limit, "offset": self.offset},
            }),
        )
    }
}

/// An optional unsigned query parameter within `min..=max`.
pub(crate) fn bounded_param(
    pairs: &[(String, String)],
    name: &str,
    min: u64,
    max: u64,
) -> Result<Option<u64>, Response> {
    let Some((_, raw)) = pairs.iter().find(|(k, _)| k == name) else {
        return Ok(None);
    };
    match raw.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
        _ => Err(bad_request(
            "invalid_parameter",
            format!("{name} must be an integer from {min} to {max}, got {raw:?}"),
        )),
    }
}

/// The position a `page_token` names: `<prefix><n>`, as the service gave it; 0 without a
/// token, 400 `invalid_page_token` for a token it did not give.
pub(crate) fn page_token(pairs: &[(String, String)], prefix: &str) -> Result<usize, Response> {
    let Some((_, token)) = pairs.iter().find(|(k, _)| k == "page_token") else {
        return Ok(0);
    };
    token
        .strip_prefix(prefix)
        .and_then(position)
        .ok_or_else(invalid_page_token)
}

/// The farthest position a page token of the sandbox names (no list is that long).
pub(crate) const MAX_POSITION: usize = 1_000_000_000;

/// A position written as the sandbox writes it: decimal digits, no sign, no leading
/// zero, at most [`MAX_POSITION`]; anything else was never given out.
pub(crate) fn position(digits: &str) -> Option<usize> {
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    canonical
        .then(|| digits.parse::<usize>().ok())
        .flatten()
        .filter(|n| *n <= MAX_POSITION)
}

/// The refusal of a page token the sandbox did not give.
pub(crate) fn invalid_page_token() -> Response {
    bad_request(
        "invalid_page_token",
        "the page token is not one this service gave",
    )
}
