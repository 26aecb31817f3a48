//! The client against recorded and hand-written server answers (tests/fixtures/*.json),
//! served by mockito over a real socket, and a recorded realtime transcript replayed by a
//! local WebSocket server. Each case snapshots what the client sent and what it made of
//! the answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Debug;
use std::time::Duration;

use serde_json::{Map, Value, json};
use worlds_client::{
    Client,
    assets::current_revision,
    stream::Event,
    worlds::{ListWorlds, NewWorld, WorldObject},
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn check<T: Debug>(name: &str, call: impl FnOnce(&Client) -> worlds_client::Result<T>) {
    let (sent, decoded) = testkit::exchange(DIR, name, testkit::client::<Client>, call);
    insta::assert_json_snapshot!(format!("{name}__sent"), sent);
    insta::assert_debug_snapshot!(format!("{name}__decoded"), decoded);
}

/// The id in a recorded request's path: `/api/v1/<kind>/<id>[/...]`.
fn recorded_id(name: &str) -> String {
    let fixture = testkit::load(DIR, name);
    let path = fixture.request["path"].as_str().unwrap().to_owned();
    path.split('/').nth(4).unwrap().to_owned()
}

fn props(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

// ---- recorded from the sandbox ----

#[test]
fn worlds_create() {
    check("worlds_create", |c| {
        c.worlds().create(
            &NewWorld::new("Harbour", "seaside")
                .description("Boats and a lighthouse")
                .object(WorldObject::new("lighthouse", [12.0, 0.0, -3.5]))
                .object(WorldObject::new("portal", [0.0, 1.5, 0.0]).destination("world_elsewhere")),
        )
    });
}

#[test]
fn worlds_create_minimal() {
    check("worlds_create_minimal", |c| {
        c.worlds().create(&NewWorld::new("Scratch", "plain"))
    });
}

#[test]
fn worlds_list() {
    check("worlds_list", |c| c.worlds().list(&ListWorlds::new()));
}

#[test]
fn worlds_list_page() {
    check("worlds_list_page", |c| {
        c.worlds()
            .list(&ListWorlds::new().limit(1).page_token("p1"))
    });
}

#[test]
fn worlds_get() {
    let id = recorded_id("worlds_get");
    check("worlds_get", |c| c.worlds().get(id.as_str()));
}

#[test]
fn worlds_users() {
    let id = recorded_id("worlds_users");
    check("worlds_users", |c| c.worlds().users(id.as_str()));
}

#[test]
fn assets_update() {
    let id = recorded_id("assets_update");
    check("assets_update", |c| {
        c.assets().replace(
            id.as_str(),
            &props(json!({"model": "bench.glb", "scale": 2.0, "colour": "oak"})),
        )
    });
}

#[test]
fn assets_update_if() {
    let id = recorded_id("assets_update_if");
    check("assets_update_if", |c| {
        c.assets()
            .replace_if(id.as_str(), &props(json!({"colour": "ash"})), 2)
    });
}

#[test]
fn error_revision_mismatch() {
    let id = recorded_id("error_revision_mismatch");
    let (sent, decoded) = testkit::exchange(
        DIR,
        "error_revision_mismatch",
        testkit::client::<Client>,
        |c: &Client| {
            let err = c
                .assets()
                .replace_if(id.as_str(), &props(json!({"colour": "elm"})), 2)
                .unwrap_err();
            // The current revision, from the answer's ETag.
            assert_eq!(current_revision(&err), Some(3));
            Err::<(), _>(err)
        },
    );
    insta::assert_json_snapshot!("error_revision_mismatch__sent", sent);
    insta::assert_debug_snapshot!("error_revision_mismatch__decoded", decoded);
}

#[test]
fn error_asset_not_found() {
    check("error_asset_not_found", |c| {
        c.assets().replace("asset_missing", &Map::new())
    });
}

#[test]
fn error_world_not_found() {
    check("error_world_not_found", |c| c.worlds().get("world_missing"));
}

// The client refuses a two-number position before sending; the raw escape hatch still
// reaches the server's own check.
#[test]
fn error_invalid_object() {
    check("error_invalid_object", |c| {
        c.raw().post::<Value, _>(
            "/api/v1/worlds",
            &json!({"name": "Bad", "theme": "x", "objects": [{"type": "cube", "position": [1, 2]}]}),
        )
    });
}

#[test]
fn error_unauthorized() {
    check("error_unauthorized", |c| {
        c.worlds().list(&ListWorlds::new())
    });
}

// ---- hand-written: odd but legal answers ----

#[test]
fn worlds_list_bare() {
    check("worlds_list_bare", |c| c.worlds().list(&ListWorlds::new()));
}

#[test]
fn world_odd_objects() {
    check("world_odd_objects", |c| c.worlds().get("world_odd"));
}

#[test]
fn world_only_id() {
    check("world_only_id", |c| c.worlds().get("world_bare"));
}

#[test]
fn worlds_users_odd() {
    check("worlds_users_odd", |c| c.worlds().users("world_1"));
}

#[test]
fn assets_update_etag_only() {
    check("assets_update_etag_only", |c| {
        c.assets()
            .replace("asset_1", &props(json!({"colour": "oak"})))
    });
}

#[test]
fn error_conflict_409() {
    let (sent, decoded) = testkit::exchange(
        DIR,
        "error_conflict_409",
        testkit::client::<Client>,
        |c: &Client| {
            let err = c
                .assets()
                .replace_if("asset_1", &props(json!({"colour": "oak"})), 7)
                .unwrap_err();
            assert_eq!(current_revision(&err), Some(9));
            Err::<(), _>(err)
        },
    );
    insta::assert_json_snapshot!("error_conflict_409__sent", sent);
    insta::assert_debug_snapshot!("error_conflict_409__decoded", decoded);
}

#[test]
fn error_html_502() {
    check("error_html_502", |c| c.worlds().list(&ListWorlds::new()));
}

// ---- refused before sending ----

#[test]
fn bad_input_is_refused_without_a_request() {
    let client = Client::builder()
        .base_url("http://127.0.0.1:9")
        .api_key("k")
        .max_retries(0)
        .build()
        .unwrap();
    let invalid = |e: worlds_client::Error| match e {
        worlds_client::Error::InvalidRequest(m) => m,
        other => panic!("expected InvalidRequest, got {other:?}"),
    };
    let m = invalid(
        client
            .worlds()
            .create(&NewWorld::new(" ", "x"))
            .unwrap_err(),
    );
    assert!(m.contains("name"), "{m}");
    let m = invalid(client.worlds().create(&NewWorld::new("a", "")).unwrap_err());
    assert!(m.contains("theme"), "{m}");
    let m = invalid(
        client
            .worlds()
            .create(&NewWorld::new("a", "b").object(WorldObject::new("", [0.0; 3])))
            .unwrap_err(),
    );
    assert!(m.contains("type"), "{m}");
    let m = invalid(
        client
            .worlds()
            .create(
                &NewWorld::new("a", "b").object(WorldObject::new("x", [f64::INFINITY, 0.0, 0.0])),
            )
            .unwrap_err(),
    );
    assert!(m.contains("position"), "{m}");
    invalid(
        client
            .worlds()
            .list(&ListWorlds::new().limit(101))
            .unwrap_err(),
    );
    invalid(client.worlds().get("").unwrap_err());
    invalid(client.worlds().users("..").unwrap_err());
    invalid(client.assets().replace("", &Map::new()).unwrap_err());
}

// ---- the realtime channel, replayed ----

/// A join's acknowledgement is the world's snapshot.
fn is_ack(frame: &Value) -> bool {
    frame.get("type").and_then(Value::as_str) == Some("snapshot")
}

fn transcript() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/transcripts/realtime.json"
        ))
        .unwrap(),
    )
    .unwrap()
}

fn events(realtime: &mut worlds_client::stream::WorldsStream, n: usize) -> Vec<Event> {
    let mut out = Vec::new();
    while out.len() < n {
        match realtime.next_timeout(Duration::from_secs(10)) {
            Some(event) => out.push(event.unwrap()),
            None => break,
        }
    }
    out
}

#[test]
fn realtime_transcript_replays_into_typed_events() {
    let transcript = transcript();
    let received = transcript["received"].as_array().unwrap().clone();
    let world = received[0]["world_id"].as_str().unwrap().to_owned();
    let (url, seen) = testkit::ws::replay(received, is_ack);
    let client = testkit::client::<Client>("http://127.0.0.1:9").with_stream_url(url);
    let mut realtime = client.stream().unwrap();
    realtime.join(world.as_str()).unwrap();
    let got = events(&mut realtime, 7);
    realtime.close();

    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen[0],
        format!("/stream auth=Bearer {}", testkit::FIXTURE_KEY),
        "the key goes in the handshake's header, never the URL"
    );
    let sent: Vec<Value> = seen[1..]
        .iter()
        .map(|m| serde_json::from_str(m).unwrap())
        .collect();
    assert_eq!(sent, transcript["sent"].as_array().unwrap()[..]);
    let kinds: Vec<&str> = got
        .iter()
        .map(|e| match e {
            Event::Joined { .. } => "joined",
            Event::UserJoined { .. } => "user joined",
            Event::AssetUpdated { .. } => "asset updated",
            Event::ObjectMoved { .. } => "object moved",
            Event::WorldUpdated { .. } => "world updated",
            Event::Unknown { .. } => "unknown",
            Event::UserLeft { .. } => "user left",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "joined",
            "user joined",
            "asset updated",
            "object moved",
            "world updated",
            "unknown",
            "user left"
        ]
    );
    insta::assert_debug_snapshot!("realtime_transcript__events", got);
}

#[test]
fn realtime_drops_old_and_repeated_events_and_resyncs_after_a_gap() {
    let w = "world_1";
    let user = |id: &str| json!({"user": {"id": id}});
    let frames = vec![
        json!({"type": "snapshot", "world_id": w, "seq": 5, "users": [{"id": "u1"}, {"id": "u2"}]}),
        // Older than the join: dropped.
        json!({"type": "user.joined", "world_id": w, "seq": 4, "data": user("u0")}),
        json!({"type": "user.joined", "world_id": w, "seq": 6, "data": user("u3")}),
        // A repeat: dropped.
        json!({"type": "user.joined", "world_id": w, "seq": 6, "data": user("u3")}),
        // 7 and 8 were lost: u1 left and u4 joined. 9 comes after a gap: it is dropped,
        // and the client asks to be caught up; this server cannot replay, so it answers
        // a snapshot, which has 9's change too.
        json!({"type": "asset.updated", "world_id": w, "seq": 9, "data": {"asset": {"id": "a1", "properties": {"x": 1}}}}),
        json!({"type": "snapshot", "world_id": w, "seq": 9, "users": [{"id": "u2"}, {"id": "u3"}, {"id": "u4"}], "assets": [{"id": "a1", "properties": {"x": 1}, "revision": 1}]}),
        json!({"type": "user.left", "world_id": w, "seq": 10, "data": user("u2")}),
    ];
    let (url, seen) = testkit::ws::replay(frames, is_ack);
    let client = testkit::client::<Client>("http://127.0.0.1:9").with_stream_url(url);
    let mut realtime = client.stream().unwrap();
    realtime.join(w).unwrap();
    let got = events(&mut realtime, 7);
    realtime.close();
    let summary: Vec<String> = got
        .iter()
        .map(|e| match e {
            Event::Joined { users, .. } => format!("joined with {}", users.len()),
            Event::UserJoined {
                user, recovered, ..
            } => format!("+{} {recovered}", user.id),
            Event::UserLeft {
                user, recovered, ..
            } => format!("-{} {recovered}", user.id),
            Event::AssetUpdated {
                asset, recovered, ..
            } => format!("asset {} {recovered}", asset.id),
            Event::Resynced { recovery, .. } => format!("resynced {recovery:?}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "joined with 2",
            "+u3 false",
            "-u1 true",
            "+u4 true",
            "asset a1 true",
            "resynced Compared { changes: 3 }",
            "-u2 false"
        ]
    );
    let sent = seen.lock().unwrap().clone();
    assert_eq!(
        sent[2], r#"{"action":"resync","since":6,"world_id":"world_1"}"#,
        "the gap made the client ask for what came after the last event it delivered"
    );
}
