//! Property-test strategies for server answers: any JSON at all, and answers that are
//! valid under what a service's document shows (documented fields present or not as the
//! document allows, numbers in every form JSON allows, unknown fields added), which a
//! client must always decode.

use proptest::prelude::*;
use serde_json::{Map, Value};

/// The number of cases each property runs: `PROPTEST_CASES`, or 1,000.
pub fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(1000)
}

/// Any JSON value, a few levels deep.
pub fn json() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,16}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

/// What a documented field holds.
#[derive(Debug, Clone)]
pub enum Kind {
    /// A string.
    Text,
    /// An identifier: a non-empty string.
    Id,
    /// A string from a set the service may extend: one of these, or another word.
    Word(&'static [&'static str]),
    /// An "integer" count: a JSON integer from 0 to `u32::MAX`, an integral float or a
    /// numeric string.
    Integer,
    /// A "number": any finite JSON number.
    Number,
    /// A money amount: a finite JSON number in any form (integer, fraction, exponent)
    /// or the same as a numeric string, as services that keep exact decimals send it.
    Decimal,
    /// An ISO 8601 UTC timestamp.
    Timestamp,
    /// An array of `n` integers, negative ones too (coordinates).
    Integers(usize),
    /// An array of strings.
    Texts,
    /// A `YYYY-MM` month.
    Month,
    /// A nested object.
    Object(Vec<Field>),
    /// An array of nested objects.
    Objects(Vec<Field>),
}

/// A documented field: its name, what it holds, and whether the document promises it.
#[derive(Debug, Clone)]
pub struct Field {
    name: &'static str,
    kind: Kind,
    required: bool,
}

/// A field the document promises.
pub fn required(name: &'static str, kind: Kind) -> Field {
    Field {
        name,
        kind,
        required: true,
    }
}

/// A field that may be absent or `null`.
pub fn optional(name: &'static str, kind: Kind) -> Field {
    Field {
        name,
        kind,
        required: false,
    }
}

/// A count, as the documents' "integer" fields are: any JSON integer from 0 to
/// `u32::MAX` (the smallest integer type a client uses for one), an integral float, or a
/// numeric string. Out-of-range, negative and fractional values are not counts: the
/// clients refuse them (core-http's `de`), and their own tests say so.
fn integer() -> BoxedStrategy<Value> {
    prop_oneof![
        (0u64..=u64::from(u32::MAX)).prop_map(Value::from),
        (0u64..1_000_000).prop_map(Value::from),
        (0i64..1_000).prop_map(|n| Value::from(n as f64)),
        (0u64..1_000_000).prop_map(|n| Value::String(n.to_string())),
    ]
    .boxed()
}

/// An integer that may be negative (a coordinate), as a JSON integer or integral float.
fn signed_integer() -> BoxedStrategy<Value> {
    prop_oneof![
        any::<i32>().prop_map(Value::from),
        (-1_000i64..1_000).prop_map(|n| Value::from(n as f64)),
    ]
    .boxed()
}

fn value(kind: &Kind) -> BoxedStrategy<Value> {
    match kind {
        Kind::Text => "\\PC{0,20}".prop_map(Value::String).boxed(),
        Kind::Id => "[a-z]{2,6}_[a-z0-9]{4,12}".prop_map(Value::String).boxed(),
        Kind::Word(known) => {
            let known: Vec<Value> = known.iter().map(|w| Value::from(*w)).collect();
            prop_oneof![
                prop::sample::select(known),
                "[A-Za-z_.]{0,12}".prop_map(Value::String),
            ]
            .boxed()
        }
        Kind::Integer => integer(),
        Kind::Number => prop_oneof![
            integer(),
            (-1e9f64..1e9).prop_map(Value::from),
            (0.0f64..1.0).prop_map(Value::from),
        ]
        .boxed(),
        Kind::Decimal => prop_oneof![
            value(&Kind::Number),
            (-1_000_000_000i64..1_000_000_000, 0u32..9).prop_map(|(units, scale)| {
                let d = units as f64 / 10f64.powi(scale as i32);
                Value::String(format!("{d:.*}", scale as usize))
            }),
            // Tiny and huge amounts, which serde_json writes in exponent notation.
            (1i64..100_000, -12i32..12).prop_map(|(m, e)| Value::from(m as f64 * 10f64.powi(e))),
        ]
        .boxed(),
        Kind::Timestamp => (
            2000i32..2100,
            1u8..=12,
            1u8..=28,
            0u8..24,
            0u8..60,
            0u8..60,
            prop::option::of(0u16..1000),
        )
            .prop_map(|(y, mo, d, h, mi, s, ms)| {
                let frac = ms.map(|ms| format!(".{ms:03}")).unwrap_or_default();
                Value::String(format!(
                    "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{frac}Z"
                ))
            })
            .boxed(),
        Kind::Integers(n) => prop::collection::vec(signed_integer(), *n..=*n)
            .prop_map(Value::Array)
            .boxed(),
        Kind::Texts => prop::collection::vec("\\PC{0,8}".prop_map(Value::String), 0..4)
            .prop_map(Value::Array)
            .boxed(),
        Kind::Month => (1900u16..2200, 1u8..=12)
            .prop_map(|(y, m)| Value::String(format!("{y:04}-{m:02}")))
            .boxed(),
        Kind::Object(fields) => object(fields.clone()),
        Kind::Objects(fields) => prop::collection::vec(object(fields.clone()), 0..4)
            .prop_map(Value::Array)
            .boxed(),
    }
}

/// An object with these documented fields (optional ones present, `null` or absent)
/// and up to three fields the document does not show.
pub fn object(fields: Vec<Field>) -> BoxedStrategy<Value> {
    let members: Vec<BoxedStrategy<Option<(String, Value)>>> = fields
        .iter()
        .map(|f| {
            let name = f.name.to_owned();
            let v = value(&f.kind);
            if f.required {
                v.prop_map(move |v| Some((name.clone(), v))).boxed()
            } else {
                let present = name.clone();
                prop_oneof![
                    Just(None),
                    Just(Some((name, Value::Null))),
                    v.prop_map(move |v| Some((present.clone(), v))),
                ]
                .boxed()
            }
        })
        .collect();
    let extras = prop::collection::btree_map("x_[a-z]{1,6}", json(), 0..3);
    (members, extras)
        .prop_map(|(members, extras)| {
            let mut map: Map<String, Value> = extras.into_iter().collect();
            for (k, v) in members.into_iter().flatten() {
                map.insert(k, v);
            }
            Value::Object(map)
        })
        .boxed()
}

/// A value's JSON text as a service usually writes it (`value`), four times in five; an
/// odd one (which a one-pass reader may refuse) otherwise.
pub fn usually(
    value: impl Strategy<Value = String>,
    odd: Vec<&'static str>,
) -> impl Strategy<Value = String> {
    prop_oneof![
        8 => value,
        2 => prop::sample::select(odd).prop_map(str::to_owned),
    ]
}

/// An object's member, `"key":value`, six times in seven; absent otherwise.
pub fn member(
    key: &'static str,
    value: impl Strategy<Value = String>,
) -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        1 => Just(None),
        6 => value.prop_map(move |v| Some(format!("\"{key}\":{v}"))),
    ]
}

/// `frame` damaged: up to three of its bytes changed, then cut short somewhere (a byte
/// that leaves the text not UTF-8 is shown as U+FFFD, as a frame's text would be).
pub fn damaged(frame: &'static str) -> impl Strategy<Value = String> {
    let len = frame.len().max(1);
    (1..=len, prop::collection::vec((0..len, any::<u8>()), 0..4)).prop_map(move |(cut, changes)| {
        let mut bytes = frame.as_bytes().to_vec();
        for (at, byte) in changes {
            if let Some(b) = bytes.get_mut(at) {
                *b = byte;
            }
        }
        bytes.truncate(cut);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}
