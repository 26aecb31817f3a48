//! The wire protocol's unit tests: frames decoded, joins replayed from checkpoints.
use super::*;

fn decoded(frame: &str) -> Vec<Inbound<Wire>> {
    let mut out = Vec::new();
    WorldsProtocol::default().decode(frame, &mut out);
    out
}

#[test]
fn frames_decode_into_acks_snapshots_events_and_unknowns() {
    let out = decoded(
        r#"{"type":"snapshot","world_id":"w1","seq":4,"timestamp":"2026-01-02T03:04:05Z","replayed":2,"users":[{"id":"u1","display_name":"Ada","presence":"online","x_mood":"happy","state":{"status":"away"}}],"world":{"id":"w1","name":"Plaza","revision":3,"objects":[{"type":"fountain","position":[0,0,0]}]},"assets":[{"id":"a1","properties":{"k":1},"revision":2}]}"#,
    );
    assert!(matches!(out[1], Inbound::Ack));
    match &out[0] {
        Inbound::Event {
            event: Wire::Snapshot(s),
            ..
        } => {
            assert_eq!((s.world_id.as_str(), s.seq, s.users.len()), ("w1", 4, 1));
            assert_eq!(s.users[0].extra["x_mood"], "happy");
            assert_eq!(s.users[0].state.as_ref().unwrap()["status"], "away");
            assert_eq!(s.world.as_ref().unwrap().revision, Some(3));
            assert_eq!(s.assets[0].revision, Some(2));
            assert_eq!(s.replayed, Some(2));
            assert_eq!(s.timestamp.unwrap().unix_timestamp(), 1_767_323_045);
        }
        other => panic!("{other:?}"),
    }
    let out = decoded(
        r#"[{"type":"user.joined","world_id":"w1","seq":5,"data":{"user":{"id":"u2"}}},{"type":"weather.changed","world_id":"w1","seq":6,"data":{"rain":true}},{"type":"asset.updated","world_id":"w1","seq":"7","data":{"nope":1}},{"type":"custom","world_id":"w1","seq":8,"replayed":true,"timestamp":"not a time","data":{"name":"wave","data":[1],"from":"u2"}},{"type":"object.moved","world_id":"w1","seq":9,"timestamp":"2026-01-02T03:04:05Z","replayed":true,"data":{"index":0,"by":"u2","object":{"type":"x","position":[1,2,3]}}}]"#,
    );
    assert_eq!(out.len(), 5);
    let kinds: Vec<String> = out
        .iter()
        .map(|i| match i {
            Inbound::Event {
                event: Wire::Event(event),
                ..
            } => format!(
                "{:?}:{}:{}:{}",
                event.seq(),
                match event {
                    Event::UserJoined { .. } => "joined".to_owned(),
                    Event::Unknown { kind, .. } => format!("unknown {kind}"),
                    Event::Custom {
                        name, data, from, ..
                    } => format!("custom {name} {data} {from:?}"),
                    Event::ObjectMoved { by, .. } => format!("moved by {by:?}"),
                    _ => "other".to_owned(),
                },
                event.is_recovered(),
                event.timestamp().is_some()
            ),
            _ => "?".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "Some(5):joined:false:false",
            "Some(6):unknown weather.changed:false:false",
            "Some(7):unknown asset.updated:false:false",
            r#"Some(8):custom wave [1] Some(UserId("u2")):true:false"#,
            r#"Some(9):moved by Some(UserId("u2")):true:true"#,
        ]
    );
    assert!(matches!(
        decoded(r#"{"type":"error","code":"world_not_found","message":"no world"}"#)[..],
        [Inbound::Refused(_)]
    ));
    // Answers to requests, by their ref.
    match &decoded(r#"{"type":"ack","ref":"r7","seq":12}"#)[..] {
        [
            Inbound::Reply {
                id,
                outcome: Ok(raw),
            },
        ] => {
            assert_eq!(id, "r7");
            assert!(raw.contains("12"));
        }
        other => panic!("{other:?}"),
    }
    match &decoded(r#"{"type":"error","ref":"r8","code":"not_joined","message":"join first"}"#)[..]
    {
        [
            Inbound::Reply {
                id,
                outcome: Err((code, message)),
            },
        ] => {
            assert_eq!(
                (id.as_str(), code.as_str(), message.as_str()),
                ("r8", "not_joined", "join first")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(decoded(r#"{"type":"left","world_id":"w1"}"#).is_empty());
    assert!(decoded("not json").is_empty());
}

#[test]
fn joins_are_replayed_with_their_users_from_their_checkpoints() {
    let mut p = WorldsProtocol::default();
    let w1 = Checkpoint::at(None);
    p.subscribe(&Join {
        world: "w1".into(),
        user: None,
        checkpoint: w1.clone(),
    });
    let first = p.subscribe(&Join {
        world: "w2".into(),
        user: Some(("u1".into(), "Ada".into())),
        checkpoint: Checkpoint::at(Some(7)),
    });
    assert_eq!(
        first,
        [r#"{"action":"join","since":7,"user":{"display_name":"Ada","id":"u1"},"world_id":"w2"}"#]
    );
    assert_eq!(
        p.replay(),
        [
            r#"{"action":"join","world_id":"w1"}"#,
            r#"{"action":"join","since":7,"user":{"display_name":"Ada","id":"u1"},"world_id":"w2"}"#
        ]
    );
    // The handler moved w1's checkpoint: a reconnect rejoins from it.
    w1.set(0);
    assert_eq!(
        p.replay()[0],
        r#"{"action":"join","since":0,"world_id":"w1"}"#
    );
    p.unsubscribe(&Join {
        world: "w1".into(),
        user: None,
        checkpoint: Checkpoint::default(),
    });
    assert_eq!(p.replay().len(), 1);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

    #[test]
    fn no_frame_panics_the_decoder(frame in "\\PC{0,200}") {
        let _ = decoded(&frame);
    }

    #[test]
    fn no_json_frame_panics_the_decoder(
        kind in proptest::sample::select(vec!["snapshot", "user.joined", "user.left", "asset.updated", "world.updated", "object.moved", "error", "x"]),
        body in testkit::arb::json(),
        seq in proptest::option::of(0u64..10),
    ) {
        let mut message = serde_json::Map::new();
        message.insert("type".into(), kind.into());
        message.insert("world_id".into(), "w1".into());
        message.insert("data".into(), body.clone());
        message.insert("users".into(), body);
        if let Some(seq) = seq {
            message.insert("seq".into(), seq.into());
        }
        let _ = decoded(&Value::Object(message).to_string());
    }
}
