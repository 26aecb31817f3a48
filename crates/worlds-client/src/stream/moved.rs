//! An object's move, the busiest event of a world, read in one pass over the frame for
//! the shape the service sends: `{"type": "object.moved", "world_id", "seq",
//! "timestamp"?, "data": {"index"?, "object": {"type", "position"?, "destination"?},
//! "by"?}, "replayed"?}`. Small on the read path (where `serde`'s reading of a
//! [`WorldObject`], with its flattened extra fields, is most of a busy channel's code),
//! and with no copy of the object between its fields and the event.
//!
//! It reads only what it is sure of ([`core_http::scan`]): another key, a duplicate, a
//! value of another type, an escape in a string, a number it cannot read exactly as
//! `serde` does, returns `None`, and the frame is read by `serde` as before. A property
//! test checks that whatever this reads, `serde` reads the same.

use core_http::scan::Scanner;
use serde_json::{Map, Value};

use super::Event;
use crate::models::{UserId, WorldId, WorldObject};

/// The move, or `None` to leave the frame to `serde`.
pub(super) fn read(frame: &str) -> Option<Event> {
    let mut p = Scanner::new(frame);
    let (mut kind, mut world_id, mut seq, mut timestamp, mut data, mut replayed) =
        (false, None, None, None, None, None);
    let mut more = p.object()?;
    while more {
        match p.key()? {
            b"type" if !kind => {
                (p.string()? == b"object.moved").then_some(())?;
                kind = true;
            }
            b"world_id" if world_id.is_none() => world_id = Some(WorldId::from(p.str()?)),
            b"seq" if seq.is_none() => seq = Some(p.optional(Scanner::u64)?),
            b"timestamp" if timestamp.is_none() => {
                timestamp = Some(p.optional(Scanner::str)?);
            }
            b"data" if data.is_none() => data = Some(read_data(&mut p)?),
            b"replayed" if replayed.is_none() => replayed = Some(p.bool()?),
            _ => return None,
        }
        more = p.next_member()?;
    }
    p.at_end().then_some(())?;
    let (index, object, by) = data?;
    Some(Event::ObjectMoved {
        world_id: world_id?,
        index,
        object,
        by,
        recovered: replayed.unwrap_or(false),
        seq: seq?,
        timestamp: timestamp
            .flatten()
            .and_then(|t| core_http::timestamp::parse(t).ok()),
    })
}

/// The move's `data`: the object's index, the object, who moved it.
fn read_data(p: &mut Scanner<'_>) -> Option<(Option<u64>, WorldObject, Option<UserId>)> {
    let (mut index, mut object, mut by) = (None, None, None);
    let mut more = p.object()?;
    while more {
        match p.key()? {
            b"index" if index.is_none() => index = Some(p.optional(Scanner::u64)?),
            b"object" if object.is_none() => object = Some(read_object(p)?),
            b"by" if by.is_none() => by = Some(p.optional(Scanner::str)?.map(UserId::from)),
            _ => return None,
        }
        more = p.next_member()?;
    }
    Some((index.flatten(), object?, by.flatten()))
}

/// The object: its type, position and destination (a string), nothing else.
fn read_object(p: &mut Scanner<'_>) -> Option<WorldObject> {
    let (mut kind, mut position, mut destination) = (None, None, None);
    let mut more = p.object()?;
    while more {
        match p.key()? {
            b"type" if kind.is_none() => kind = Some(p.optional(Scanner::str)?.unwrap_or("")),
            b"position" if position.is_none() => position = Some(p.optional(read_position)?),
            b"destination" if destination.is_none() => {
                destination = Some(p.optional(Scanner::str)?);
            }
            _ => return None,
        }
        more = p.next_member()?;
    }
    Some(WorldObject {
        kind: kind.unwrap_or("").to_owned(),
        position: position.flatten(),
        destination: destination.flatten().map(|d| Value::String(d.to_owned())),
        extra: Map::new(),
    })
}

/// Three numbers (each read exactly as `serde` reads it, so always finite).
fn read_position(p: &mut Scanner<'_>) -> Option<[f64; 3]> {
    p.array()?.then_some(())?;
    let x = p.f64()?;
    p.next_element()?.then_some(())?;
    let y = p.f64()?;
    p.next_element()?.then_some(())?;
    let z = p.f64()?;
    (!p.next_element()?).then_some([x, y, z])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::protocol::moved_by_serde;
    use proptest::prelude::*;
    use testkit::arb::{damaged, member, usually};

    const USUAL: &str = r#"{"type":"object.moved","world_id":"w1","seq":7,"timestamp":"2026-03-02T14:30:00Z","data":{"index":3,"object":{"type":"portal","position":[1.5,-0,20],"destination":"w2"},"by":"u1"}}"#;

    #[test]
    fn the_services_move_is_read_in_one_pass_as_serde_reads_it() {
        let fast = read(USUAL).expect("the usual shape is read");
        assert_eq!(Some(&fast), moved_by_serde(USUAL).as_ref());
        let Event::ObjectMoved { object, seq, .. } = fast else {
            panic!("{fast:?}")
        };
        assert_eq!(seq, Some(7));
        // `-0` as `serde_json` reads it.
        assert_eq!(
            object.position.map(|p| p[1].to_bits()),
            Some((-0.0f64).to_bits())
        );
    }

    #[test]
    fn anything_else_is_left_to_serde() {
        for frame in [
            r#"{"type":"object.moved","world_id":"w1","seq":7,"data":{"object":{"type":"portal","colour":"red"}}}"#,
            r#"{"type":"object.moved","world_id":"w1","seq":7,"data":{"object":{}},"x":1}"#,
            r#"{"type":"object.moved","world_id":"w1","seq":7,"seq":8,"data":{"object":{}}}"#,
            r#"{"type":"object.moved","world_id":"w\u0031","seq":7,"data":{"object":{}}}"#,
            r#"{"type":"object.moved","world_id":"w1","seq":7.0,"data":{"object":{}}}"#,
            r#"{"type":"object.moved","world_id":"w1","seq":7,"data":{"object":{"position":[1,2]}}}"#,
            r#"{"type":"object.moved","world_id":"w1","seq":7,"data":{"object":{"position":[1e2,2,3]}}}"#,
            r#"{"type":"object.moved","world_id":"w1","seq":7,"data":{"object":{"destination":[1,2,3]}}}"#,
            r#"{"type":"object.moved","world_id":"w1","seq":7,"data":{}}"#,
            r#"{"type":"object.moved","world_id":"w1","data":{"object":{}}}"#,
            r#"{"type":"object.moved","world_id":"w1","seq":7,"data":{"object":{}}} x"#,
            r#"{"type":"object.moved","world_id":"w1","seq":7,"data":{"object":{}},"replayed":null}"#,
        ] {
            assert!(read(frame).is_none(), "{frame}");
        }
    }

    /// Mostly values as the service writes them, sometimes odd ones (which either path
    /// may refuse: then the reader must leave the frame to `serde`).
    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => (-100_000i64..100_000, 0u32..4).prop_map(|(m, s)| {
                // m / 10^s written as the service writes it (`-0.05`, `12.5`, `7`).
                let p = 10i64.pow(s);
                let sign = if m < 0 { "-" } else { "" };
                let (w, f) = (m.abs() / p, m.abs() % p);
                if s == 0 { format!("{sign}{w}") } else { format!("{sign}{w}.{f:0width$}", width = s as usize) }
            }),
            1 => prop::sample::select(vec!["-0", "0.1", "1e3", "12345678901234567", "1.", "\"2\"", "null", "true"])
                .prop_map(str::to_owned),
        ]
    }

    fn object() -> impl Strategy<Value = String> {
        (
            member("type", usually(Just("\"portal\"".to_owned()), vec!["null", "\"\"", "3"])),
            member(
                "position",
                prop_oneof![
                    6 => [number(), number(), number()].prop_map(|[x, y, z]| format!("[{x},{y},{z}]")),
                    1 => Just("null".to_owned()),
                    1 => Just("[1,2]".to_owned()),
                ],
            ),
            member("destination", usually(Just("\"w2\"".to_owned()), vec!["null", "{}", "\"\\u0077\""])),
            usually(Just("".to_owned()), vec![",\"colour\":\"red\""]),
        )
            .prop_map(|(t, p, d, extra)| {
                let members: Vec<String> = [t, p, d].into_iter().flatten().collect();
                format!("{{{}{extra}}}", members.join(","))
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Whatever the one-pass reader reads, `serde` reads the same.
        #[test]
        fn what_is_read_in_one_pass_is_what_serde_reads(
            seq in usually(Just("7".to_owned()), vec!["null", "-1", "18446744073709551615", "18446744073709551616", "7.0"]),
            timestamp in member("timestamp", usually(Just("\"2026-03-02T14:30:00Z\"".to_owned()), vec!["null", "\"soon\"", "5"])),
            index in member("index", usually(Just("3".to_owned()), vec!["null", "-3", "3.5"])),
            by in member("by", usually(Just("\"u1\"".to_owned()), vec!["null", "7"])),
            object in object(),
            replayed in member("replayed", usually(Just("true".to_owned()), vec!["false", "null"])),
            ws in prop::sample::select(vec!["", " ", "\n "]),
        ) {
            let data: Vec<String> = [index, Some(format!("\"object\":{object}")), by].into_iter().flatten().collect();
            let mut members = vec![
                "\"type\":\"object.moved\"".to_owned(),
                "\"world_id\":\"w1\"".to_owned(),
                format!("\"seq\":{ws}{seq}"),
                format!("\"data\":{{{}}}", data.join(&format!(",{ws}"))),
            ];
            members.extend(timestamp);
            members.extend(replayed);
            let frame = format!("{{{}}}", members.join(&format!(",{ws}")));
            if let Some(fast) = read(&frame) {
                // Compared as shown, so that `-0.0` and `0.0` differ.
                prop_assert_eq!(Some(format!("{fast:?}")), moved_by_serde(&frame).map(|e| format!("{e:?}")), "{}", frame);
            }
        }

        /// Whatever the bytes (the usual frame cut short or with bytes changed), the
        /// reader answers without panicking, and what it reads `serde` reads the same.
        #[test]
        fn a_damaged_frame_is_never_misread(frame in damaged(USUAL)) {
            if let Some(fast) = read(&frame) {
                prop_assert_eq!(Some(format!("{fast:?}")), moved_by_serde(&frame).map(|e| format!("{e:?}")), "{}", frame);
            }
        }
    }
}
