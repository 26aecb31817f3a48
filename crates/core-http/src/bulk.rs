//! Answers to bulk actions (cancel every order, close every position): what happened to
//! each item, read from a `207 Multi-Status` or a plain list, and never an empty success
//! for an answer without its list.
//!
//! What an answer must hold to be complete is written on [`BulkOutcome`].

use std::collections::HashSet;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{Error, ItemFailure, Result, parse_error_body};
use crate::response::Response;

/// What a bulk action did: the items it carried out, and those it could not, each with
/// the status and message the service gave. An answer that is not whole says so:
/// [`is_complete`](Self::is_complete) is `false` when any item failed or could not be
/// read, and [`into_complete`](Self::into_complete) turns that into an
/// [`Error::Partial`].
///
/// What an answer must hold to be complete ([`is_complete`](Self::is_complete)):
/// - its list, under the key the action names (or bare): without it the answer is an
///   error, never "nothing was done";
/// - for each item, a status the client reads: in a `207 Multi-Status`, every element
///   is `{"id"|"symbol"|"order_id", "status": <integer>, "body": ...}`, a 2xx status
///   carried out, any other not; an element whose status is text (`"409"`), `null`,
///   missing or out of range is counted as **not** done ([`ItemFailure::status`] `None`),
///   never as done. In another success status, an element is the item itself (carried
///   out) unless it has that per-item shape;
/// - each item once: an id listed as done twice is one item; an id listed as done and as
///   failed is counted as failed;
/// - nothing beside the list that the client does not read: another non-empty list or
///   object in the answer (`{"orders": [..], "errors": [..]}`) may say something of the
///   items, so the outcome is not complete (a failure without an id names it).
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a bulk action may have failed for some items: read `failed`, or call `into_complete`"]
#[non_exhaustive]
pub struct BulkOutcome<T> {
    /// The items carried out, as the service answered them, each once.
    pub done: Vec<T>,
    /// The items not carried out, or whose outcome the answer does not say in a form the
    /// client reads.
    pub failed: Vec<ItemFailure>,
}

impl<T> BulkOutcome<T> {
    /// Whether every item was carried out, and the answer said so of each.
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
    /// `body` an error in any of the usual shapes). See [`BulkOutcome`] for what
    /// the answer must hold to be complete.
    ///
    /// An answer without the list (`{}`, or a list under another key) is an
    /// [`Error::UndecodableSuccess`], never an empty success: it does not say what was
    /// done.
    pub fn bulk<T: DeserializeOwned>(&self, key: &str) -> Result<BulkOutcome<T>> {
        let invalid = |why: String| self.decode_error(serde::de::Error::custom(why));
        let value: Value = self.json()?;
        let mut outcome = BulkOutcome::new(Vec::new(), Vec::new());
        let list = match value {
            Value::Array(list) => list,
            Value::Object(mut map) => match map.remove(key) {
                Some(Value::Array(list)) => {
                    outcome.failed.extend(unread_beside(&map, key));
                    list
                }
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
        let multi_status = self.status() == 207;
        let mut done_ids: Vec<Option<String>> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        for element in list {
            match entry(element, multi_status) {
                Entry::Failed(mut failure) => {
                    failure.message = self.redact(failure.message);
                    outcome.failed.push(failure);
                }
                Entry::Item(id, item) => {
                    // An item listed as done again is the same item.
                    if let Some(id) = &id
                        && !seen.insert(id.clone())
                    {
                        continue;
                    }
                    let item = serde_json::from_value(item).map_err(|e| self.decode_error(e))?;
                    outcome.done.push(item);
                    done_ids.push(id);
                }
            }
        }
        // An item listed as done and as failed is not known to be done.
        let failed_ids: HashSet<&str> = outcome
            .failed
            .iter()
            .filter_map(|f| f.id.as_deref())
            .collect();
        if done_ids
            .iter()
            .any(|id| id.as_deref().is_some_and(|id| failed_ids.contains(id)))
        {
            let mut kept = Vec::with_capacity(outcome.done.len());
            for (item, id) in outcome.done.into_iter().zip(&done_ids) {
                if !id.as_deref().is_some_and(|id| failed_ids.contains(id)) {
                    kept.push(item);
                }
            }
            outcome.done = kept;
        }
        Ok(outcome)
    }
}

enum Entry {
    /// Carried out: its id when the answer named it, and the item.
    Item(Option<String>, Value),
    Failed(ItemFailure),
}

/// What else the answer holds beside its list that could speak of the items (another
/// non-empty list or object): each a failure without an id, so that the outcome is not
/// read as complete.
fn unread_beside(map: &Map<String, Value>, key: &str) -> Vec<ItemFailure> {
    map.iter()
        .filter(|(_, v)| match v {
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => !o.is_empty(),
            _ => false,
        })
        .map(|(name, v)| {
            ItemFailure::unread(
                None,
                format!(
                    "the answer holds {name:?} ({}) beside {key:?}, which this client does \
                     not read: what it says of the items is unknown",
                    kind_of(v)
                ),
            )
        })
        .collect()
}

/// The id an element names: its own `id`, `symbol` or `order_id`, else its body's.
fn id_of(map: &Map<String, Value>, body: Option<&Value>) -> Option<String> {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    ["id", "symbol", "order_id"]
        .iter()
        .find_map(|k| map.get(*k).and_then(text))
        .or_else(|| {
            let body = body?;
            ["id", "symbol"]
                .iter()
                .find_map(|k| body.get(*k).and_then(text))
        })
}

/// One element of a bulk answer: a per-item status (`{"status": <int>, "body": ...}`)
/// or the item itself. In a `207` (`multi_status`) every element must carry a status it
/// reads.
fn entry(element: Value, multi_status: bool) -> Entry {
    let Value::Object(mut map) = element else {
        return if multi_status {
            Entry::Failed(ItemFailure::unread(
                None,
                "an element of the multi-status answer is not an object with a status".into(),
            ))
        } else {
            Entry::Item(None, element)
        };
    };
    let status = map
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (100..600).contains(s));
    let has_body = map.contains_key("body");
    let Some(status) = status else {
        // A per-item shape whose status is not a number it reads (text, null, missing,
        // out of range), or any element of a 207 without one: never counted as done.
        if multi_status || has_body {
            let shown = map
                .get("status")
                .map_or("no status".to_owned(), |s| format!("the status {s}"));
            return Entry::Failed(ItemFailure::unread(
                id_of(&map, map.get("body")),
                format!(
                    "the answer gave this item {shown}, which is not an HTTP status: it is not counted as done"
                ),
            ));
        }
        let id = id_of(&map, None);
        return Entry::Item(id, Value::Object(map));
    };
    if !has_body && !multi_status {
        // An item whose own `status` field is a number: the item itself.
        let id = id_of(&map, None);
        return Entry::Item(id, Value::Object(map));
    }
    let body = map.remove("body");
    let id = id_of(&map, body.as_ref());
    if (200..300).contains(&status) {
        // Carried out: the item is the body, or (without one) the element itself.
        return match body {
            Some(body) => Entry::Item(id, body),
            None => {
                map.remove("status");
                Entry::Item(id, Value::Object(map))
            }
        };
    }
    let text = body.map(|b| b.to_string()).unwrap_or_default();
    let parsed = parse_error_body(status, Some("application/json"), text.as_bytes());
    Entry::Failed(ItemFailure::new(id, status, parsed.code, parsed.message))
}

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
