//! Answers to bulk actions (cancel every order, close every position): what happened to
//! each item, read from a `207 Multi-Status` or a plain list, and never an empty success
//! for an answer without its list.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, ItemFailure, Result, parse_error_body};
use crate::response::Response;

/// What a bulk action did: the items it carried out, and those it could not, each with
/// the status and message the service gave. An answer that is not whole says so:
/// [`is_complete`](Self::is_complete) is `false` when any item failed, and
/// [`into_complete`](Self::into_complete) turns that into an [`Error::Partial`].
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a bulk action may have failed for some items: read `failed`, or call `into_complete`"]
#[non_exhaustive]
pub struct BulkOutcome<T> {
    /// The items carried out, as the service answered them.
    pub done: Vec<T>,
    /// The items not carried out.
    pub failed: Vec<ItemFailure>,
}

impl<T> BulkOutcome<T> {
    /// Whether every item was carried out.
    ///
    /// ```
    /// let outcome: core_http::BulkOutcome<u32> = core_http::BulkOutcome::new(vec![1, 2], vec![]);
    /// assert!(outcome.is_complete());
    /// ```
    pub fn is_complete(&self) -> bool {
        self.failed.is_empty()
    }

    /// The items carried out when every item was; otherwise [`Error::Partial`], which
    /// names each failure ([`ErrorKind::Incomplete`](crate::ErrorKind::Incomplete)).
    ///
    /// ```
    /// use core_http::{BulkOutcome, ErrorKind, ItemFailure};
    /// let failed = ItemFailure::new(Some("ord_2".into()), 422, None, "already filled".into());
    /// let outcome = BulkOutcome::new(vec![1], vec![failed]);
    /// let err = outcome.into_complete().unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Incomplete);
    /// assert!(err.to_string().contains("ord_2"));
    /// ```
    pub fn into_complete(self) -> Result<Vec<T>> {
        if self.failed.is_empty() {
            Ok(self.done)
        } else {
            Err(Error::Partial {
                done: self.done.len(),
                failed: self.failed,
            })
        }
    }

    /// An outcome from its parts.
    pub fn new(done: Vec<T>, failed: Vec<ItemFailure>) -> Self {
        BulkOutcome { done, failed }
    }
}

impl Response {
    /// Decodes the answer to a bulk action, in any of the shapes brokers use:
    /// `{"<key>": [item, ...]}` or a bare `[item, ...]`, where each element is the item
    /// itself (carried out) or a per-item status, `{"id"|"symbol", "status": 200,
    /// "body": item}` (`207 Multi-Status`: a 2xx status carried out, any other not, its
    /// `body` an error in any of the usual shapes).
    ///
    /// An answer without the list (`{}`, or a list under another key) is an
    /// [`Error::UndecodableSuccess`], never an empty success: it does not say what was
    /// done.
    pub fn bulk<T: DeserializeOwned>(&self, key: &str) -> Result<BulkOutcome<T>> {
        let invalid = |why: String| self.decode_error(serde::de::Error::custom(why));
        let value: Value = self.json()?;
        let list = match value {
            Value::Array(list) => list,
            Value::Object(mut map) => match map.remove(key) {
                Some(Value::Array(list)) => list,
                Some(other) => {
                    return Err(invalid(format!(
                        "the answer's {key:?} is not a list but {}",
                        kind_of(&other)
                    )));
                }
                None => {
                    return Err(invalid(format!(
                        "the answer has no {key:?} list, so it does not say what was done"
                    )));
                }
            },
            other => {
                return Err(invalid(format!(
                    "the answer is {}, not a list of what was done",
                    kind_of(&other)
                )));
            }
        };
        let mut outcome = BulkOutcome::new(Vec::new(), Vec::new());
        for element in list {
            match entry(element) {
                Entry::Failed(mut failure) => {
                    failure.message = self.redact(failure.message);
                    outcome.failed.push(failure);
                }
                Entry::Item(item) => {
                    outcome
                        .done
                        .push(serde_json::from_value(item).map_err(|e| self.decode_error(e))?);
                }
            }
        }
        Ok(outcome)
    }
}

enum Entry {
    Item(Value),
    Failed(ItemFailure),
}

/// One element of a bulk answer: a per-item status (`{"status": <int>, "body": ...}`)
/// or the item itself.
///
/// `#[inline]`: compiled only in the crates that decode bulk answers (the generic
/// [`Response::bulk`] is its only caller), not in every program on core-http.
#[inline]
fn entry(element: Value) -> Entry {
    let Value::Object(mut map) = element else {
        return Entry::Item(element);
    };
    let status = map
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    let (Some(status), true) = (status, map.contains_key("body")) else {
        return Entry::Item(Value::Object(map));
    };
    let body = map.remove("body").unwrap_or(Value::Null);
    if (200..300).contains(&status) {
        return Entry::Item(body);
    }
    let id = ["id", "symbol", "order_id"]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_str).map(str::to_owned))
        .or_else(|| {
            ["id", "symbol"]
                .iter()
                .find_map(|k| body.get(*k).and_then(Value::as_str).map(str::to_owned))
        });
    let text = body.to_string();
    let parsed = parse_error_body(status, Some("application/json"), text.as_bytes());
    Entry::Failed(ItemFailure::new(id, status, parsed.code, parsed.message))
}

#[inline]
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
