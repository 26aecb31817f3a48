//! Envelopes: where the value under `data` is in a body, so that the value is decoded
//! where it lies (a client builds no decoder wrapped around each model).

use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

/// Where the value under a top-level `data` member of a JSON object is in `body`; `None`
/// when the body is not an object, has no such member or has it `null`. The whole body
/// is read by serde_json (every other member skipped unread: no `serde_json::Value` is
/// built), so a body that is not JSON, or names `data` twice, is an error here.
pub(crate) fn data_span(body: &[u8]) -> serde_json::Result<Option<Range<usize>>> {
    /// The envelope, whatever else the object holds.
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow, default)]
        data: Option<&'a RawValue>,
    }
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Ok(None);
    }
    let envelope: Envelope<'_> = serde_json::from_slice(body)?;
    Ok(envelope.data.map(|value| {
        // The value is a slice of `body`: its place is its distance from the start.
        let start = value.get().as_ptr() as usize - body.as_ptr() as usize;
        start..start + value.get().len()
    }))
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
            "duplicate field `data` at line 1 column 27"
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
