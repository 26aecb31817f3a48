//! worlds-client against the sandbox's worlds service: worlds listed, created and read,
//! their users, asset updates (conditional ones too), and a realtime channel that two
//! clients share, that keeps unknown events, and that reports the users who came and
//! went while it was disconnected or lost events.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use sandbox::{Sandbox, Service};
use serde_json::{Map, Value, json};
use worlds_client::{
    Client, ErrorKind,
    assets::current_revision,
    stream::{Event, ReconnectPolicy, StreamConfig, WorldsStream},
    worlds::{ListWorlds, NewWorld, WorldObject},
};

fn client(sandbox: &Sandbox) -> Client {
    Client::new(sandbox.worlds().url(), sandbox.api_key()).unwrap()
}

/// Reconnects at once (a few ms of backoff), so tests of drops run fast.
fn fast(config: StreamConfig) -> StreamConfig {
    let mut policy = ReconnectPolicy::default();
    policy.backoff =
        core_http::config::Backoff::new(Duration::from_millis(2), Duration::from_millis(10), 1.0);
    config.reconnect(policy)
}

fn props(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

/// The next event (ten seconds at most).
fn next(realtime: &mut WorldsStream) -> Event {
    match realtime.next_timeout(Duration::from_secs(10)) {
        Some(Ok(event)) => event,
        other => panic!("expected an event, got {other:?}"),
    }
}

/// Waits until `f` says yes (a few seconds at most).
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let started = Instant::now();
    while !f() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn worlds_are_created_listed_paged_and_read() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let created = client
        .worlds()
        .create(
            &NewWorld::new("Harbour", "seaside")
                .description("Boats and a lighthouse")
                .object(WorldObject::new("lighthouse", [12.0, 0.0, -3.5]))
                .object(WorldObject::new("portal", [0.0, 1.5, 0.0]).destination("world_elsewhere")),
        )
        .unwrap();
    assert_eq!(
        (created.name.as_str(), created.theme.as_str()),
        ("Harbour", "seaside")
    );
    assert_eq!(created.objects.len(), 2);
    assert_eq!(created.objects[0].position, Some([12.0, 0.0, -3.5]));
    assert_eq!(
        created.objects[1].destination,
        Some(json!("world_elsewhere"))
    );
    assert_eq!(client.worlds().get(&created.id).unwrap(), created);
    for i in 0..4 {
        client
            .worlds()
            .create(&NewWorld::new(format!("w{i}"), "plain"))
            .unwrap();
    }
    // The plaza, the harbour and four more, two to a page.
    let page = client.worlds().list(&ListWorlds::new().limit(2)).unwrap();
    assert_eq!(page.data.len(), 2);
    assert_eq!(page.data[0].name, "Sandbox Plaza");
    assert!(page.next_page_token.is_some());
    let names: Vec<String> = client.worlds().iter().map(|w| w.unwrap().name).collect();
    assert_eq!(names, ["Sandbox Plaza", "Harbour", "w0", "w1", "w2", "w3"]);
    let err = client.worlds().get("world_missing").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    // Refused before sending.
    let err = client
        .worlds()
        .create(&NewWorld::new("x", "y").object(WorldObject::new("cube", [f64::NAN, 0.0, 0.0])))
        .unwrap_err();
    assert!(
        matches!(err, worlds_client::Error::InvalidRequest(_)),
        "{err:?}"
    );
}

#[test]
fn users_and_assets() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    let users = client.worlds().users(&plaza).unwrap();
    let ids: Vec<&str> = users.iter().map(|u| u.id.as_str()).collect();
    assert_eq!(ids, ["user_ada", "user_grace"]);
    assert_eq!(users[0].display_name.as_deref(), Some("Ada"));

    let asset = sandbox
        .worlds()
        .add_asset(&plaza, json!({"model": "bench.glb"}))
        .unwrap();
    let updated = client
        .assets()
        .replace(
            asset.as_str(),
            &props(json!({"model": "bench.glb", "colour": "oak"})),
        )
        .unwrap();
    assert_eq!(updated.revision, Some(2));
    assert_eq!(updated.properties["colour"], "oak");
    // A conditional update from the revision we hold succeeds; from a stale one, a
    // conflict that says where the asset is now.
    let again = client
        .assets()
        .replace_if(asset.as_str(), &props(json!({"colour": "ash"})), 2)
        .unwrap();
    assert_eq!(again.revision, Some(3));
    let err = client
        .assets()
        .replace_if(asset.as_str(), &props(json!({"colour": "elm"})), 2)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err:?}");
    assert_eq!(err.status(), Some(412));
    assert_eq!(current_revision(&err), Some(3));
    let err = client
        .assets()
        .replace("asset_missing", &Map::new())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}

#[test]
fn two_clients_in_one_world_see_each_others_changes() {
    let sandbox = e2e::sandbox().unwrap();
    let alice = client(&sandbox);
    let bob = client(&sandbox);
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    let asset = sandbox
        .worlds()
        .add_asset(&plaza, json!({"colour": "red"}))
        .unwrap();

    let mut alice_rt = alice.stream().unwrap();
    alice_rt.join_as(&plaza, "user_alice", "Alice").unwrap();
    let mut bob_rt = bob.stream().unwrap();
    bob_rt.join(&plaza).unwrap();
    match next(&mut bob_rt) {
        Event::Joined { users, .. } => {
            let ids: BTreeSet<&str> = users.iter().map(|u| u.id.as_str()).collect();
            assert!(ids.contains("user_alice"), "{ids:?}");
        }
        other => panic!("{other:?}"),
    }

    alice
        .assets()
        .replace(asset.as_str(), &props(json!({"colour": "blue"})))
        .unwrap();
    match next(&mut bob_rt) {
        Event::AssetUpdated {
            world_id,
            asset: a,
            recovered,
            seq,
            timestamp,
        } => {
            // Every event carries the world's sequence number and the server's time.
            assert!(!recovered);
            assert!(seq.is_some_and(|s| s > 0), "{seq:?}");
            assert!(timestamp.is_some());
            assert_eq!(world_id.as_str(), plaza);
            assert_eq!(a.id.as_str(), asset);
            assert_eq!(a.properties["colour"], "blue");
            assert_eq!(a.revision, Some(2));
        }
        other => panic!("{other:?}"),
    }
    // Alice's own channel saw it too (after her own Joined).
    assert!(matches!(next(&mut alice_rt), Event::Joined { .. }));
    assert!(matches!(next(&mut alice_rt), Event::AssetUpdated { .. }));

    // Alice leaves: Bob sees her go.
    alice_rt.close();
    match next(&mut bob_rt) {
        Event::UserLeft {
            user, recovered, ..
        } => {
            assert_eq!(user.id.as_str(), "user_alice");
            assert!(!recovered);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_reconnect_reports_who_came_and_went_then_resynced() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    let mut rt = client.stream_with(fast).unwrap();
    rt.join(&plaza).unwrap();
    assert!(matches!(next(&mut rt), Event::Joined { .. }));

    // The connection drops; while it is down Ada leaves and Linus joins.
    assert_eq!(sandbox.drop_streams(Some(Service::Worlds)), 1);
    let mut hold = sandbox::Fault::on("GET", "/worlds/ws/v1/realtime");
    hold.delay_ms = Some(500);
    sandbox.inject(hold);
    eventually("the session to close", || {
        sandbox.open_streams(Some(Service::Worlds)) == 0
    });
    assert!(sandbox.worlds().leave_user(&plaza, "user_ada", true));
    assert!(
        sandbox
            .worlds()
            .join_user(&plaza, "user_linus", "Linus", true)
    );

    let mut seen = Vec::new();
    loop {
        let event = next(&mut rt);
        let done = matches!(event, Event::Reconnected { .. });
        seen.push(event);
        if done {
            break;
        }
    }
    let summary: Vec<String> = seen
        .iter()
        .map(|e| match e {
            Event::UserLeft {
                user, recovered, ..
            } => format!("left {} {recovered}", user.id),
            Event::UserJoined {
                user, recovered, ..
            } => format!("joined {} {recovered}", user.id),
            Event::Resynced { .. } => "resynced".into(),
            Event::Reconnected { .. } => "reconnected".into(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "left user_ada true",
            "joined user_linus true",
            "resynced",
            "reconnected"
        ]
    );
    // Back to normal: the next live event comes through once.
    assert!(sandbox.worlds().join_user(&plaza, "user_mae", "Mae", true));
    match next(&mut rt) {
        Event::UserJoined {
            user, recovered, ..
        } => {
            assert_eq!(user.id.as_str(), "user_mae");
            assert!(!recovered);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(rt.stats().reconnects, 1);
}

#[test]
fn a_lost_event_is_noticed_by_its_sequence_number_and_resynced() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    let mut rt = client.stream().unwrap();
    rt.join(&plaza).unwrap();
    assert!(matches!(next(&mut rt), Event::Joined { .. }));

    // Grace leaves without anyone being told (the sequence moves on), then Otto joins.
    assert!(sandbox.worlds().leave_user(&plaza, "user_grace", false));
    assert!(
        sandbox
            .worlds()
            .join_user(&plaza, "user_otto", "Otto", true)
    );
    let mut summary = Vec::new();
    while summary.last().map(String::as_str) != Some("resynced") {
        summary.push(match next(&mut rt) {
            Event::UserLeft {
                user, recovered, ..
            } => format!("left {} {recovered}", user.id),
            Event::UserJoined {
                user, recovered, ..
            } => format!("joined {} {recovered}", user.id),
            Event::Resynced { .. } => "resynced".into(),
            other => format!("{other:?}"),
        });
    }
    // Otto's event came after a gap: it waits for the one lost before it, and both
    // come in order, replayed by the server.
    assert_eq!(
        summary,
        ["left user_grace true", "joined user_otto true", "resynced"]
    );
}

#[test]
fn unknown_events_arrive_whole_and_old_ones_are_dropped() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    let mut rt = client.stream().unwrap();
    rt.join(&plaza).unwrap();
    assert!(matches!(next(&mut rt), Event::Joined { .. }));
    assert!(
        sandbox
            .worlds()
            .emit(&plaza, "weather.changed", json!({"rain": true, "wind": 12}))
    );
    match next(&mut rt) {
        Event::Unknown {
            kind,
            world_id,
            data,
            seq,
        } => {
            assert_eq!(seq, data["seq"].as_u64());
            assert_eq!(kind, "weather.changed");
            assert_eq!(world_id.unwrap().as_str(), plaza);
            assert_eq!(data["data"], json!({"rain": true, "wind": 12}));
            assert!(data["seq"].as_u64().is_some());
        }
        other => panic!("{other:?}"),
    }
    // A world that does not exist is refused.
    let err = rt.join("world_missing").unwrap_err();
    assert!(err.to_string().contains("world_missing"), "{err}");
}

#[test]
fn the_realtime_channel_carries_the_key_only_in_its_header() {
    let sandbox = e2e::sandbox().unwrap();
    let client = Client::builder()
        .base_url(sandbox.worlds().url())
        .auth(worlds_client::config::Auth::header(
            "authorization",
            format!("Bearer {}", sandbox.api_key()),
        ))
        .build()
        .unwrap();
    assert!(!client.stream_url().contains(sandbox.api_key()));
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    let mut rt = client.stream().unwrap();
    rt.join(&plaza).unwrap();
    assert!(matches!(next(&mut rt), Event::Joined { .. }));
    assert!(!format!("{rt:?} {client:?}").contains(sandbox.api_key()));
}

#[test]
fn worlds_page_by_page_and_resume_from_a_token() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    for i in 0..4 {
        client
            .worlds()
            .create(&NewWorld::new(format!("w{i}"), "plain"))
            .unwrap();
    }
    // The plaza and four more, two a page.
    let sizes: Vec<usize> = client
        .worlds()
        .pages(&ListWorlds::new().limit(2))
        .map(|p| p.unwrap().data.len())
        .collect();
    assert_eq!(sizes, [2, 2, 1]);
    let mut worlds = client.worlds().iter_from(&ListWorlds::new().limit(2));
    let first: Vec<String> = worlds.by_ref().take(2).map(|w| w.unwrap().name).collect();
    assert_eq!(first, ["Sandbox Plaza", "w0"]);
    let token = worlds.resume_token().unwrap().to_owned();
    let rest: Vec<String> = client
        .worlds()
        .iter_from(&ListWorlds::new().limit(2).page_token(token))
        .map(|w| w.unwrap().name)
        .collect();
    assert_eq!(rest, ["w1", "w2", "w3"]);
}
