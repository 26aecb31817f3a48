//! Reading an error body whatever its shape: RFC 9457 problem details, the common JSON
//! conventions, an HTML page's title, plain text; bounded in what it keeps.

/// The code and message found in an error body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedErrorBody {
    /// The error's code, when the body gave one.
    pub code: Option<String>,
    /// Its message (the status's text when the body says nothing).
    pub message: String,
}

/// The longest message kept from an error body.
const MAX_MESSAGE_BYTES: usize = 2000;

/// How many bytes of a body an error keeps (for `ApiError::body` and `Error::Decode` excerpts).
pub(crate) const BODY_EXCERPT_BYTES: usize = 512;

/// Reads an error body, trying in order: RFC 9457 problem+json; `{"error": {"code",
/// "message"}}`; `{"error": "...", "error_description"}`; `{"code"|"errorCode",
/// "message"}`; `{"message"}`; an HTML page's `<title>`; a text excerpt; the status text.
///
/// The JSON is decoded straight into the few fields read (never into a whole
/// `serde_json::Value`), so a huge error body costs no more memory than its bytes.
pub fn parse_error_body(status: u16, content_type: Option<&str>, body: &[u8]) -> ParsedErrorBody {
    let fallback = || status_text(status).to_owned();
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'{')
        && let Ok(fields) = serde_json::from_slice::<ErrorFields>(body)
    {
        let t = |v: Option<Value>| {
            v.and_then(Value::text)
                .filter(|s| !s.is_empty())
                .map(|s| excerpt(s.as_bytes(), MAX_MESSAGE_BYTES))
        };
        let is_problem = content_type.is_some_and(|c| c.contains("problem+json"))
            || ((fields.title.is_some() || fields.detail.is_some()) && fields.error.is_none());
        if is_problem {
            let code = t(fields.code).or_else(|| t(fields.kind).filter(|k| k != "about:blank"));
            let message = t(fields.detail)
                .or_else(|| t(fields.title))
                .unwrap_or_else(fallback);
            return ParsedErrorBody { code, message };
        }
        match fields.error {
            Some(Value::Object(inner)) => {
                let inner = *inner;
                let code = t(inner.code).or_else(|| t(inner.kind));
                let message = t(inner.message)
                    .or_else(|| t(inner.detail))
                    .or_else(|| code.clone())
                    .unwrap_or_else(fallback);
                return ParsedErrorBody { code, message };
            }
            Some(Value::Str(err)) if !err.is_empty() => {
                let err = excerpt(err.as_bytes(), MAX_MESSAGE_BYTES);
                let message = t(fields.error_description)
                    .or_else(|| t(fields.message))
                    .unwrap_or_else(|| err.clone());
                return ParsedErrorBody {
                    code: Some(err),
                    message,
                };
            }
            _ => {}
        }
        let code = t(fields.code).or_else(|| t(fields.error_code));
        if let Some(message) = t(fields.message) {
            return ParsedErrorBody { code, message };
        }
        if code.is_some() {
            return ParsedErrorBody {
                code,
                message: fallback(),
            };
        }
    }
    let head = &body[..body.len().min(64 * 1024)];
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return ParsedErrorBody {
            code: None,
            message: fallback(),
        };
    }
    if trimmed.starts_with('<') {
        let message = html_title(trimmed)
            .map(|t| excerpt(t.as_bytes(), 200))
            .unwrap_or_else(fallback);
        return ParsedErrorBody {
            code: None,
            message,
        };
    }
    ParsedErrorBody {
        code: None,
        message: excerpt(trimmed.as_bytes(), 200),
    }
}

/// The fields of an error body that are read, at its top level or in a nested `error`
/// object; everything else is skipped unread. A field given twice makes the body
/// unreadable as JSON (it is then shown as text).
#[derive(Default, serde::Deserialize)]
struct ErrorFields {
    #[serde(rename = "type")]
    kind: Option<Value>,
    title: Option<Value>,
    detail: Option<Value>,
    code: Option<Value>,
    #[serde(rename = "errorCode")]
    error_code: Option<Value>,
    message: Option<Value>,
    error: Option<Value>,
    error_description: Option<Value>,
}

/// A field's value, as far as an error body's reader cares (`null` reads as absent).
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Value {
    /// A string.
    Str(String),
    /// A number.
    Num(serde_json::Number),
    /// An object, its fields read as an error body's.
    Object(Box<ErrorFields>),
    /// Anything else (a boolean, a list).
    Other(serde::de::IgnoredAny),
}

impl Value {
    /// The text of a string or a number.
    fn text(self) -> Option<String> {
        match self {
            Value::Str(s) => Some(s),
            Value::Num(n) => Some(n.to_string()),
            Value::Object(_) | Value::Other(_) => None,
        }
    }
}

fn html_title(html: &str) -> Option<&str> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title>")? + "<title>".len();
    let end = start + lower[start..].find("</title>")?;
    let title = html.get(start..end)?.trim();
    (!title.is_empty()).then_some(title)
}

/// The first `max` bytes of a body as text, cut on a character boundary.
/// At most `max` bytes of text (plus the ellipsis): invalid UTF-8 shows as U+FFFD, and
/// the text is cut on a character boundary.
pub(crate) fn excerpt(body: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(max)]);
    let mut s = text.into_owned();
    let mut cut = body.len() > max;
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        cut = true;
    }
    if cut {
        // Drop a replacement char produced by a multi-byte sequence cut in half.
        if s.ends_with('\u{FFFD}') {
            s.pop();
        }
        s.push('…');
    }
    s
}

/// The standard reason phrase for a status.
pub(crate) fn status_text(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unexpected status",
    }
}
