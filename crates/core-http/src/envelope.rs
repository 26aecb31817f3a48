//! Envelopes and pages: where the value under `data` is in a body, found with serde_json
//! itself in a first pass (so a client builds no decoder wrapped around each model), and
//! a page of an offset/limit list decoded in one pass by a reader written for pages.

use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use serde::de::IgnoredAny;

/// The byte that opens a JSON object (a name, so that no brace stands alone in a function).
pub(crate) const OPEN: u8 = b'{';

/// Where the value under a top-level `data` member of a JSON object is in `body`; `None`
/// when the body is not an object, has no such member or has it `null`. The whole body
/// is read, every member's name and value by serde_json itself (every value skipped
/// unread: no `serde_json::Value` is built), so a body that is not JSON, or names `data`
/// twice, is an error here.
///
/// The one difference from decoding the body in one piece: a value may be nested 128
/// deep inside the envelope, where the envelope's own level would count against that.
pub(crate) fn data_span(body: &[u8]) -> serde_json::Result<Option<Range<usize>>> {
    let at = skip_ws(body, 0);
    if body.get(at) != Some(&OPEN) {
        return Ok(None);
    }
    match data_member(body, at + 1) {
        Ok(span) => Ok(span.filter(|span| &body[span.clone()] != b"null")),
        Err(Malformed::Twice) => Err(serde::de::Error::duplicate_field("data")),
        // serde_json says what is wrong, and where.
        Err(Malformed::Syntax) => match serde_json::from_slice::<IgnoredAny>(body) {
            Err(e) => Err(e),
            Ok(_) => Err(serde::de::Error::custom(
                "an envelope that could not be read",
            )),
        },
    }
}

/// Why an object's members could not be read.
enum Malformed {
    /// Not JSON (serde_json reads the whole body again to say where).
    Syntax,
    /// `data` given twice.
    Twice,
}

/// The members of the object that starts before `at`, to its end and the end of `body`:
/// where the value of `data` is.
fn data_member(body: &[u8], mut at: usize) -> std::result::Result<Option<Range<usize>>, Malformed> {
    let mut data = None;
    at = skip_ws(body, at);
    if body.get(at) == Some(&b'}') {
        at += 1;
    } else {
        loop {
            at = skip_ws(body, at);
            if body.get(at) != Some(&b'"') {
                return Err(Malformed::Syntax);
            }
            let (name, end) = one::<Name>(body, at)?;
            at = skip_ws(body, end);
            if body.get(at) != Some(&b':') {
                return Err(Malformed::Syntax);
            }
            let start = skip_ws(body, at + 1);
            let (IgnoredAny, end) = one::<IgnoredAny>(body, start)?;
            if let Name::Data = name {
                if data.is_some() {
                    return Err(Malformed::Twice);
                }
                data = Some(start..end);
            }
            at = skip_ws(body, end);
            match body.get(at) {
                Some(b',') => at += 1,
                Some(b'}') => {
                    at += 1;
                    break;
                }
                _ => return Err(Malformed::Syntax),
            }
        }
    }
    if skip_ws(body, at) == body.len() {
        Ok(data)
    } else {
        Err(Malformed::Syntax)
    }
}

/// One JSON value at `at`, read by serde_json, and where it ends.
fn one<'de, T: Deserialize<'de>>(
    body: &'de [u8],
    at: usize,
) -> std::result::Result<(T, usize), Malformed> {
    let rest = body.get(at..).ok_or(Malformed::Syntax)?;
    let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<T>();
    match values.next() {
        Some(Ok(value)) => Ok((value, at + values.byte_offset())),
        _ => Err(Malformed::Syntax),
    }
}

/// Past JSON's whitespace from `at`.
fn skip_ws(body: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = body.get(at) {
        at += 1;
    }
    at
}

/// A member's name (a JSON string, escapes and all), as far as envelopes care.
enum Name {
    Data,
    Meta,
    Other,
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Name;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Name, E> {
                Ok(match v {
                    "data" => Name::Data,
                    "meta" => Name::Meta,
                    _ => Name::Other,
                })
            }
        }
        d.deserialize_str(Visitor)
    }
}

/// A page, decoded by [`Response::json_page`](crate::response::Response::json_page).
pub(crate) struct PageOf<T>(pub(crate) crate::pagination::Page<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for PageOf<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = PageOf<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a page: an object with `data`")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<PageOf<T>, A::Error> {
                use serde::de::Error as _;
                let mut data: Option<Vec<T>> = None;
                let mut meta = None;
                while let Some(name) = map.next_key::<Name>()? {
                    match name {
                        Name::Data if data.is_some() => {
                            return Err(A::Error::duplicate_field("data"));
                        }
                        Name::Data => data = Some(map.next_value()?),
                        Name::Meta if meta.is_some() => {
                            return Err(A::Error::duplicate_field("meta"));
                        }
                        Name::Meta => {
                            meta = Some(map.next_value::<Option<crate::pagination::PageMeta>>()?)
                        }
                        Name::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let data = data.ok_or_else(|| A::Error::missing_field("data"))?;
                Ok(PageOf(crate::pagination::Page {
                    data,
                    meta: meta.flatten(),
                }))
            }
        }
        d.deserialize_map(Visitor(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use crate::error::{Error, Result};
    use crate::method::Method;
    use crate::response::tests::response;

    #[test]
    fn envelopes_decode_without_an_intermediate_value() {
        let r = |b: &str| response(Method::Get, b);
        assert_eq!(
            r(r#"{"data":[1,2],"meta":{}}"#).json_list::<u32>().unwrap(),
            [1, 2]
        );
        assert_eq!(r("[3]").json_list::<u32>().unwrap(), [3]);
        #[derive(Debug, PartialEq, Deserialize)]
        struct Item {
            id: String,
        }
        let one = vec![Item { id: "a".into() }];
        assert_eq!(r(r#"{"id":"a"}"#).json_list::<Item>().unwrap(), one);
        assert_eq!(
            r(r#"{"data":{"id":"a"}}"#).json_list::<Item>().unwrap(),
            one
        );
        assert_eq!(
            r(r#"{"data":{"id":"a"},"x":[1]}"#)
                .json_data::<Item>()
                .unwrap(),
            one[0]
        );
        assert_eq!(r(r#"{"id":"a"}"#).json_data::<Item>().unwrap(), one[0]);
        assert!(r(r#"{"data":5}"#).json_data::<Item>().is_err());
    }

    /// The decode error's text (serde's message and place).
    fn why<T: std::fmt::Debug>(result: Result<T>) -> String {
        match result {
            Err(Error::Decode { source, .. }) => source.to_string(),
            other => panic!("expected a decode error, got {other:?}"),
        }
    }

    #[test]
    fn a_page_reads_its_items_and_figures_or_says_why_not() {
        use crate::pagination::Page;
        let r = |b: &str| response(Method::Get, b);
        let page = r(r#"{"meta":{"total":"3","limit":2},"data":[1,2],"x":{"data":0}}"#)
            .json_page::<u32>()
            .unwrap();
        assert_eq!(page.data, [1, 2]);
        assert_eq!(page.total(), Some(3));
        assert_eq!(page.meta.and_then(|m| m.limit), Some(2));
        for body in [r#"{"data":[]}"#, r#"{"data":[],"meta":null}"#] {
            assert_eq!(r(body).json_page::<u32>().unwrap(), Page::new(vec![], None));
        }
        // What a page decoded in one piece says, and where.
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Whole {
            data: Vec<u32>,
            meta: Option<crate::pagination::PageMeta>,
        }
        for body in [
            "{\"meta\": {},\n \"data\": [1, -2]}",
            "{\"data\": [1],\n \"meta\": {\"total\": 1.5}}",
        ] {
            let expected = serde_json::from_str::<Whole>(body).unwrap_err().to_string();
            assert!(expected.contains("line 2"), "{expected}");
            assert_eq!(why(r(body).json_page::<u32>()), expected);
        }
        // A page that says less than it seems is an error, never an empty page: the
        // same error, at the same place, as for the page decoded by serde's derive.
        for body in [
            r#"{"meta":{"total":9}}"#,
            r#"{"data":[1],"meta":{},"meta":{}}"#,
            r#"{"data":[1],"data":[]}"#,
            r#"{"data":[1],"meta":{"limit":2,"limit":2}}"#,
        ] {
            let expected = serde_json::from_str::<Whole>(body).unwrap_err().to_string();
            assert!(expected.contains(" at line 1 column "), "{expected}");
            assert_eq!(why(r(body).json_page::<u32>()), expected);
        }
        for body in [
            "",
            "[]",
            "[[1],null]",
            "null",
            r#"{"data":null}"#,
            r#"{"data":[1]"#,
        ] {
            assert!(r(body).json_page::<u32>().is_err(), "{body:?}");
        }
    }

    #[test]
    fn an_envelope_that_says_less_than_it_seems_is_an_error() {
        #[derive(Debug, PartialEq, Deserialize)]
        struct Item {
            id: String,
        }
        let r = |b: &str| response(Method::Get, b);
        // An error inside the envelope names its place in the whole body: the same
        // message as serde's for the body decoded in one piece.
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Whole {
            data: Vec<Item>,
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct WholeOne {
            data: Item,
        }
        let body = "{\n  \"meta\": {\"total\": 2},\n  \"data\": [\n    {\"id\": \"a\"},\n    {\"id\": 7}\n  ]\n}";
        let expected = serde_json::from_str::<Whole>(body).unwrap_err().to_string();
        assert_eq!(
            expected,
            "invalid type: integer `7`, expected a string at line 5 column 12"
        );
        assert_eq!(why(r(body).json_list::<Item>()), expected);
        let body = r#"{"x":"é","data":{"id":1}}"#;
        let expected = serde_json::from_str::<WholeOne>(body)
            .unwrap_err()
            .to_string();
        assert!(expected.ends_with("at line 1 column 24"), "{expected}");
        assert_eq!(why(r(body).json_data::<Item>()), expected);
        // `data` twice: which one is meant is unknown.
        assert_eq!(
            why(r(r#"{"data":[{"id":"a"}],"data":[]}"#).json_list::<Item>()),
            "duplicate field `data`"
        );
        // A body cut short, or followed by more, is not an answer.
        assert!(
            r(r#"{"data":[{"id":"a"}],"meta":{"#)
                .json_list::<Item>()
                .is_err()
        );
        assert!(
            r(r#"{"data":[{"id":"a"}]} {}"#)
                .json_list::<Item>()
                .is_err()
        );
        assert!(r(r#"{"data":[{"id":"a"}]"#).json_list::<Item>().is_err());
        // A list answer that is no list and no item.
        for body in [
            "",
            "null",
            "5",
            r#""a""#,
            r#"{"data":"a"}"#,
            r#"{"data":true}"#,
        ] {
            assert!(r(body).json_list::<Item>().is_err(), "{body:?}");
        }
        // `data: null` is no envelope: the object itself is read (here, it is no item).
        assert!(r(r#"{"data":null}"#).json_list::<Item>().is_err());
        assert_eq!(
            r(r#"{"data":null,"id":"b"}"#).json_list::<Item>().unwrap(),
            [Item { id: "b".into() }]
        );
    }
}
