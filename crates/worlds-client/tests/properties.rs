//! Property tests of the decoders: every answer valid under what the documents show (an
//! id; everything else optional) decodes, with unknown fields kept in `extra`, numbers in
//! any JSON form and optional fields absent or null; and no answer at all makes a
//! decoder panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::Value;
use testkit::arb::{Kind, cases, json, object, optional, required};
use worlds_client::{
    assets::Asset,
    worlds::{User, World},
};

fn world() -> BoxedStrategy<Value> {
    object(vec![
        required("id", Kind::Id),
        optional("name", Kind::Text),
        optional("theme", Kind::Text),
        optional("description", Kind::Text),
        optional(
            "objects",
            Kind::Objects(vec![
                optional("type", Kind::Text),
                optional("position", Kind::Integers(3)),
                optional("destination", Kind::Text),
            ]),
        ),
        optional("user_count", Kind::Integer),
        optional("created_at", Kind::Timestamp),
        optional("updated_at", Kind::Timestamp),
    ])
}

fn user() -> BoxedStrategy<Value> {
    object(vec![
        required("id", Kind::Id),
        optional("display_name", Kind::Text),
        optional("presence", Kind::Word(&["online", "away", "offline"])),
        optional("joined_at", Kind::Timestamp),
    ])
}

fn asset() -> BoxedStrategy<Value> {
    object(vec![
        required("id", Kind::Id),
        optional("world_id", Kind::Id),
        optional(
            "properties",
            Kind::Object(vec![optional("colour", Kind::Text)]),
        ),
        optional("revision", Kind::Integer),
        optional("updated_at", Kind::Timestamp),
    ])
}

/// `value` as the text a server sends, decoded as `T`.
fn decode<T: serde::de::DeserializeOwned>(value: &Value) -> serde_json::Result<T> {
    serde_json::from_str(&value.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn documented_answers_always_decode(world in world(), user in user(), asset in asset()) {
        let w: World = decode(&world).unwrap();
        prop_assert_eq!(w.id.as_str(), world["id"].as_str().unwrap());
        // Fields the model does not know are kept (as JSON text reads back: serde_json
        // does not promise a float's last bit through text).
        for (k, v) in world.as_object().unwrap() {
            if k.starts_with("x_") {
                let read: Value = decode(v).unwrap();
                prop_assert_eq!(w.extra.get(k), Some(&read));
            }
        }
        let u: User = decode(&user).unwrap();
        prop_assert_eq!(u.id.as_str(), user["id"].as_str().unwrap());
        let a: Asset = decode(&asset).unwrap();
        prop_assert_eq!(a.id.as_str(), asset["id"].as_str().unwrap());
    }

    #[test]
    fn no_answer_panics_a_decoder(value in json()) {
        let _ = decode::<World>(&value);
        let _ = decode::<User>(&value);
        let _ = decode::<Asset>(&value);
    }
}
