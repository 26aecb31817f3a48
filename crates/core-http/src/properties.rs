//! Property tests of the parsers that read what a server sends: error bodies, envelope
//! decoding, lenient numbers, `Location` resolution, path segments and webhook
//! verification. Thousands of cases run in `cargo xtask test`; `cargo xtask fuzz` runs
//! them longer (`PROPTEST_CASES`).

use proptest::prelude::*;
use serde_json::Value;

use crate::error::{ApiError, Error, parse_error_body};
use crate::method::Method;
use crate::redact::Redactor;
use crate::response::{Headers, Response};

/// Reads `text` as an exact `T`: the value `want` when it fits, a decode error when not,
/// and never any other value.
fn check_integer<T>(text: &str, want: Option<T>) -> Result<(), TestCaseError>
where
    T: crate::de::Number + PartialEq + std::fmt::Debug,
{
    let read = serde_json::from_str::<crate::de::Exact<T>>(text);
    match want {
        Some(v) => prop_assert_eq!(read.ok().and_then(|e| e.0), Some(v), "{}", text),
        None => prop_assert!(read.is_err(), "{} read as {:?}", text, read.ok()),
    }
    Ok(())
}

/// Any JSON value, a few levels deep, with the awkward numbers servers send.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,24}".prop_map(Value::String),
        Just(Value::String("about:blank".into())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("error".to_owned()),
                    Just("message".to_owned()),
                    Just("code".to_owned()),
                    Just("detail".to_owned()),
                    Just("title".to_owned()),
                    Just("type".to_owned()),
                    Just("data".to_owned()),
                    Just("error_description".to_owned()),
                    "[a-z_]{1,10}",
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Bytes a server might send: JSON, text, HTML or noise.
fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        json().prop_map(|v| v.to_string().into_bytes()),
        "\\PC{0,200}".prop_map(String::into_bytes),
        "<html><head><title>\\PC{0,30}</title></head></html>".prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 0..300),
    ]
}

/// The byte that opens a JSON object.
const OPEN: u8 = b'{';

/// An envelope decoded in one piece, as a type around the model: the value under a
/// non-null `data` when the body is an object with one, else the whole body.
fn one_piece<T: serde::de::DeserializeOwned>(body: &[u8]) -> Option<T> {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default)]
        data: Option<serde::de::IgnoredAny>,
    }
    #[derive(serde::Deserialize)]
    struct Data<T> {
        data: T,
    }
    let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"null"
    } else {
        body
    };
    let enveloped = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&OPEN)
        && serde_json::from_slice::<Probe>(body).is_ok_and(|p| p.data.is_some());
    if enveloped {
        serde_json::from_slice::<Data<T>>(body).ok().map(|d| d.data)
    } else {
        serde_json::from_slice::<T>(body).ok()
    }
}

/// A list, or one object as a list of one; nothing else.
#[derive(Debug, PartialEq)]
struct OneOrMany(Vec<Value>);

impl<'de> serde::Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Array(items) => Ok(OneOrMany(items)),
            one @ Value::Object(_) => Ok(OneOrMany(vec![one])),
            other => Err(serde::de::Error::custom(format!("not a list: {other}"))),
        }
    }
}

fn response(method: Method, body: Vec<u8>) -> Response {
    Response::new(200, Headers::default(), body, method, Redactor::default())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(2000)
    ))]

    #[test]
    fn error_bodies_always_give_a_bounded_message(status in 400u16..600, body in body(), problem in any::<bool>()) {
        let ct = problem.then_some("application/problem+json");
        let parsed = parse_error_body(status, ct, &body);
        prop_assert!(!parsed.message.is_empty());
        prop_assert!(parsed.message.len() <= 2004);
        prop_assert!(parsed.code.as_ref().is_none_or(|c| c.len() <= 2004));
        let api = ApiError::from_response(status, &Headers::default(), &body);
        prop_assert!(api.body.len() <= 516);
        prop_assert!(!api.to_string().is_empty());
    }

    #[test]
    fn echoed_secrets_never_survive_an_error(prefix in "\\PC{0,20}", suffix in "\\PC{0,20}") {
        let secret = "sk_live_property_secret";
        let body = serde_json::json!({"error": {"code": format!("{prefix}{secret}"), "message": format!("{secret}{suffix}")}});
        let api = ApiError::build(401, &Headers::default(), body.to_string().as_bytes(), &Redactor::new([secret.to_owned()]), None);
        let shown = format!("{api} {api:?}");
        prop_assert!(!shown.contains(secret), "{}", shown);
    }

    #[test]
    fn envelope_decoding_never_panics(body in body(), action in any::<bool>()) {
        let method = if action { Method::Post } else { Method::Get };
        let r = response(method, body);
        for result in [
            r.json::<Value>().map(|_| ()),
            r.json_data::<Value>().map(|_| ()),
            r.json_list::<Value>().map(|_| ()),
            r.json_list::<u32>().map(|_| ()),
        ] {
            if let Err(e) = result {
                prop_assert_eq!(e.action_succeeded(), action);
                prop_assert_eq!(e.delivery(), crate::Delivery::Processed);
                // Carried out only when it was an action the server did.
                prop_assert_eq!(e.may_have_been_processed(), action);
            }
        }
    }

    #[test]
    fn envelopes_read_as_the_body_decoded_in_one_piece(
        value in json(),
        cut in any::<prop::sample::Index>(),
        byte in prop_oneof![Just(None), any::<u8>().prop_map(Some)],
    ) {
        // A body, perhaps with one byte changed (or cut short there).
        let mut body = value.to_string().into_bytes();
        if !body.is_empty() {
            let at = cut.index(body.len());
            match byte {
                Some(b) => body[at] = b,
                None => body.truncate(at),
            }
        }
        // `data` twice: the envelope reader refuses it, where decoding in one piece
        // would take the whole object as the item.
        prop_assume!(body.windows(6).filter(|w| w == b"\"data\"").count() < 2);
        let r = response(Method::Get, body.clone());
        prop_assert_eq!(r.json_data::<Value>().ok(), one_piece::<Value>(&body), "{}", String::from_utf8_lossy(&body));
        let list = r.json_list::<Value>().ok();
        let expected = one_piece::<OneOrMany>(&body).map(|l| l.0);
        prop_assert_eq!(list, expected, "{}", String::from_utf8_lossy(&body));
    }

    #[test]
    fn pages_read_as_a_page_decoded_in_one_piece(
        items in prop::collection::vec(json(), 0..4),
        meta in json(),
        extra in json(),
        order in 0u8..3,
        cut in any::<prop::sample::Index>(),
        byte in prop_oneof![Just(None), Just(Some(b'"')), Just(Some(b'}')), any::<u8>().prop_map(Some)],
        change in any::<bool>(),
    ) {
        let (items, extra) = (Value::Array(items), Value::from(extra.to_string()));
        let body = match order {
            0 => format!(r#"{{"data":{items},"meta":{meta}}}"#),
            1 => format!(r#"{{"meta":{meta},"x":{extra},"data":{items}}}"#),
            _ => format!(r#"{{"data":{items},"x":{extra}}}"#),
        };
        // The page whole, or with one byte changed (or cut short there).
        let mut body = body.into_bytes();
        if change {
            let at = cut.index(body.len());
            match byte {
                Some(b) => body[at] = b,
                None => body.truncate(at),
            }
        }
        let page = response(Method::Get, body.clone()).json_page::<Value>().ok();
        let whole = serde_json::from_slice::<crate::pagination::Page<Value>>(&body).ok();
        prop_assert_eq!(page, whole, "{}", String::from_utf8_lossy(&body));
    }

    #[test]
    fn page_figures_read_as_derived_figures_do(
        total in prop_oneof![json(), Just(Value::from(3)), Just(Value::from("12")), Just(Value::from(1.5))],
        limit in prop_oneof![json(), Just(Value::from(20)), Just(Value::from(5_000_000_000u64))],
        offset in json(),
        other in json(),
        order in 0u8..4,
        cut in any::<prop::sample::Index>(),
        change in any::<bool>(),
    ) {
        // The figures as serde's derive reads them with the exact-number readers.
        #[derive(Debug, serde::Deserialize)]
        struct Derived {
            #[serde(default, deserialize_with = "crate::de::opt_u64")]
            total: Option<u64>,
            #[serde(default, deserialize_with = "crate::de::opt_u32")]
            limit: Option<u32>,
            #[serde(default, deserialize_with = "crate::de::opt_u64")]
            offset: Option<u64>,
        }
        let body = match order {
            0 => format!(r#"{{"total":{total},"limit":{limit},"offset":{offset}}}"#),
            1 => format!(r#"{{"x":{other},"offset":{offset},"total":{total}}}"#),
            2 => format!(r#"{{"limit":{limit},"x":{other}}}"#),
            _ => format!(r#"{{"total":{total},"total":{total}}}"#),
        };
        let mut body = body.into_bytes();
        if change {
            body.truncate(cut.index(body.len()));
        }
        let ours = serde_json::from_slice::<crate::pagination::PageMeta>(&body)
            .map(|m| (m.total, m.limit, m.offset));
        let derived = serde_json::from_slice::<Derived>(&body).map(|m| (m.total, m.limit, m.offset));
        prop_assert_eq!(ours.as_ref().ok(), derived.as_ref().ok(), "{}", String::from_utf8_lossy(&body));
        if let (Err(a), Err(b)) = (ours, derived) {
            prop_assert_eq!(a.to_string(), b.to_string());
        }
    }

    #[test]
    fn any_list_shape_decodes_to_its_items(items in prop::collection::vec(any::<u32>(), 0..20), wrap in 0u8..3) {
        let list = serde_json::to_value(&items).unwrap_or_default();
        let body = match wrap {
            0 => list,
            1 => serde_json::json!({"data": list, "meta": {"total": items.len()}}),
            _ => serde_json::json!({"meta": {}, "data": list, "extra": [1, {"a": null}]}),
        };
        let decoded: Vec<u32> = response(Method::Get, body.to_string().into_bytes()).json_list().unwrap_or_default();
        prop_assert_eq!(decoded, items);
    }

    #[test]
    fn number_readers_never_panic_and_lenient_never_fails(value in json()) {
        let text = value.to_string();
        prop_assert!(serde_json::from_str::<crate::de::Lenient<u64>>(&text).is_ok());
        prop_assert!(serde_json::from_str::<crate::de::Lenient<i64>>(&text).is_ok());
        prop_assert!(serde_json::from_str::<crate::de::Lenient<f64>>(&text).is_ok());
        let _ = serde_json::from_str::<crate::de::Exact<u32>>(&text);
        let _ = serde_json::from_str::<crate::de::Exact<u64>>(&text);
    }

    #[test]
    fn integers_read_back_exactly_in_every_form_or_fail(n in any::<i128>(), form in 0u8..3) {
        let n = match form {
            // An integer field reads an integral float only below 10^15 (de.rs).
            1 => n % 1_000_000_000_000_000,
            _ => n,
        };
        let text = match form {
            0 => n.to_string(),
            1 => format!("{n}.0"),
            _ => format!("\"{n}\""),
        };
        check_integer::<u32>(&text, u32::try_from(n).ok())?;
        check_integer::<u64>(&text, u64::try_from(n).ok())?;
        check_integer::<i64>(&text, i64::try_from(n).ok())?;
    }

    #[test]
    fn integers_at_the_type_boundaries(offset in -3i128..=3, form in 0u8..2) {
        for bound in [
            0i128,
            i128::from(u32::MAX),
            i128::from(u64::MAX),
            i128::from(i64::MAX),
            i128::from(i64::MIN),
        ] {
            let n = bound + offset;
            let text = if form == 0 { n.to_string() } else { format!("\"{n}\"") };
            check_integer::<u32>(&text, u32::try_from(n).ok())?;
            check_integer::<u64>(&text, u64::try_from(n).ok())?;
            check_integer::<i64>(&text, i64::try_from(n).ok())?;
        }
    }

    #[test]
    fn fractions_are_never_truncated_into_integers(whole in -1_000_000i64..1_000_000, frac in 1u32..1000) {
        let text = format!("{whole}.{frac:03}");
        prop_assert!(serde_json::from_str::<crate::de::Exact<i64>>(&text).is_err(), "{}", text);
        prop_assert!(serde_json::from_str::<crate::de::Exact<u64>>(&text).is_err(), "{}", text);
        let f: crate::de::Exact<f64> = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(f.0, text.parse::<f64>().ok());
    }

    #[test]
    fn ids_of_both_forms_keep_their_exact_text(n in any::<u64>(), neg in any::<i64>(), s in "[a-z0-9_]{1,20}") {
        crate::string_id! {
            /// An id for the test.
            struct TestId;
        }
        let from_int: TestId = serde_json::from_str(&n.to_string()).unwrap();
        prop_assert_eq!(from_int.as_str(), n.to_string());
        let from_neg: TestId = serde_json::from_str(&neg.to_string()).unwrap();
        prop_assert_eq!(from_neg.as_str(), neg.to_string());
        let from_text: TestId = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        prop_assert_eq!(&from_text, &TestId::new(s.clone()));
        // A numeric id is a path segment like any other.
        prop_assert_eq!(from_int.segment().unwrap(), n.to_string());
        // Written back, an id is always a JSON string.
        prop_assert_eq!(serde_json::to_string(&from_int).unwrap(), format!("\"{n}\""));
    }

    #[test]
    fn locations_resolve_to_http_urls_or_nothing(location in "\\PC{0,40}", path in "(/[a-z0-9]{1,6}){0,4}", query in "(\\?[a-z=0-9&]{0,10})?") {
        let current = format!("https://api.example.com{path}{query}");
        if let Some(next) = crate::url::resolve(&current, &location) {
            prop_assert!(!next.contains(char::is_whitespace));
            if !next.contains("://") {
                // A reference with a scheme of its own (mailto:...) is refused later by
                // the origin check.
                prop_assert!(next.contains(':'));
            }
            if let Some(after) = next.strip_prefix("https://api.example.com") {
                prop_assert!(after.is_empty() || after.starts_with('/') || after.starts_with('?'));
                prop_assert!(!after.split(['?']).next().unwrap_or_default().split('/').any(|s| s == ".." || s == "."));
            }
        }
    }

    #[test]
    fn ids_are_one_segment_or_refused(id in "\\PC{0,30}") {
        match crate::url::path_segment("an id", &id) {
            Ok(segment) => {
                prop_assert!(!segment.is_empty());
                prop_assert!(!segment.contains(['/', '?', '#', ' ']));
                prop_assert!(segment != "." && segment != "..");
            }
            Err(e) => prop_assert!(matches!(e, Error::InvalidRequest(_))),
        }
    }
}
