//! worlds-client's realtime channel against the sandbox: nothing missed after an outage
//! (replayed when the world still holds the events, compared with a snapshot when it
//! does not), a rejoin from a saved checkpoint, a reader that sleeps, and sending on the
//! channel (acknowledged, refused, waiting for a reconnect, never twice).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use core_streams::WsError;
use sandbox::{Sandbox, Service};
use serde_json::{Map, Value, json};
use worlds_client::{
    Client,
    stream::{Event, ReconnectPolicy, Recovery, StreamConfig, WorldsStream},
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

/// Events until one that `last` matches (included).
fn until(realtime: &mut WorldsStream, last: impl Fn(&Event) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let event = next(realtime);
        let done = last(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

/// One line per event, for comparing sequences.
fn line(event: &Event) -> String {
    let r = if event.is_recovered() {
        " (recovered)"
    } else {
        ""
    };
    match event {
        Event::Joined { users, assets, .. } => {
            format!("joined: {} users, {} assets", users.len(), assets.len())
        }
        Event::UserJoined { user, .. } => format!("+{}{r}", user.id),
        Event::UserLeft { user, .. } => format!("-{}{r}", user.id),
        Event::UserUpdated { user, .. } => format!(
            "~{} {}{r}",
            user.id,
            Value::Object(user.state.clone().unwrap_or_default())
        ),
        Event::AssetUpdated { asset, .. } => format!(
            "asset {} rev {}{r}",
            Value::Object(asset.properties.clone()),
            asset.revision.unwrap_or_default()
        ),
        Event::ObjectMoved {
            index, object, by, ..
        } => format!(
            "moved #{} to {:?} by {}{r}",
            index.unwrap_or(99),
            object.position.unwrap_or_default(),
            by.as_ref().map_or("-", |b| b.as_str())
        ),
        Event::Custom {
            name, data, from, ..
        } => format!(
            "custom {name} {data} from {}{r}",
            from.as_ref().map_or("-", |f| f.as_str())
        ),
        Event::Resynced { recovery, .. } => format!("resynced: {recovery:?}"),
        Event::Reconnected { .. } => "reconnected".into(),
        other => format!("{other:?}"),
    }
}

/// Joins the plaza with a fresh asset in it; the realtime channel, the plaza and the
/// asset.
fn joined(sandbox: &Sandbox) -> (WorldsStream, String, String) {
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    let asset = sandbox
        .worlds()
        .add_asset(&plaza, json!({"colour": "red", "size": 1}))
        .unwrap();
    let mut rt = client(sandbox).stream_with(fast).unwrap();
    rt.join(&plaza).unwrap();
    assert!(matches!(next(&mut rt), Event::Joined { .. }));
    (rt, plaza, asset)
}

/// Cuts every realtime connection and holds reconnects for a moment; runs `meanwhile`
/// once the sandbox has no session left.
fn outage(sandbox: &Sandbox, meanwhile: impl FnOnce()) {
    let mut hold = sandbox::Fault::on("GET", "/worlds/ws/v1/realtime");
    hold.delay_ms = Some(300);
    sandbox.inject(hold);
    assert!(sandbox.drop_streams(Some(Service::Worlds)) >= 1);
    let started = Instant::now();
    while sandbox.open_streams(Some(Service::Worlds)) > 0 {
        assert!(started.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(2));
    }
    meanwhile();
}

/// While the channel is down: the asset changes twice, the fountain moves, Ada leaves.
fn changes_during_outage(sandbox: &Sandbox, plaza: &str, asset: &str) {
    let client = client(sandbox);
    client
        .assets()
        .merge(asset, &props(json!({"colour": "blue"})))
        .unwrap();
    client
        .assets()
        .merge(asset, &props(json!({"size": 2})))
        .unwrap();
    assert!(sandbox.worlds().move_object(plaza, 0, [3.0, 0.0, 1.0]));
    assert!(sandbox.worlds().leave_user(plaza, "user_ada", true));
}

#[test]
fn an_outage_is_replayed_in_order_when_the_world_still_holds_its_events() {
    let sandbox = e2e::sandbox().unwrap();
    let (mut rt, plaza, asset) = joined(&sandbox);
    outage(&sandbox, || changes_during_outage(&sandbox, &plaza, &asset));
    let seen = until(&mut rt, |e| matches!(e, Event::Reconnected { .. }));
    let lines: Vec<String> = seen.iter().map(line).collect();
    assert_eq!(
        lines,
        [
            r#"asset {"colour":"blue","size":1} rev 2 (recovered)"#,
            r#"asset {"colour":"blue","size":2} rev 3 (recovered)"#,
            "moved #0 to [3.0, 0.0, 1.0] by - (recovered)",
            "-user_ada (recovered)",
            "resynced: Replayed { events: 4 }",
            "reconnected"
        ]
    );
    // Every one carries its sequence number, one after another, and the server's time.
    let seqs: Vec<u64> = seen[..4].iter().map(|e| e.seq().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    assert!(seen[..5].iter().all(|e| e.timestamp().is_some()));
    assert_eq!(seen[4].seq(), Some(seqs[3]));
    // Live again: the next event is not a recovered one, and follows on.
    assert!(sandbox.worlds().join_user(&plaza, "user_mae", "Mae", true));
    let live = next(&mut rt);
    assert_eq!(line(&live), "+user_mae");
    assert_eq!(live.seq(), Some(seqs[3] + 1));
}

#[test]
fn an_outage_the_world_no_longer_holds_is_compared_with_a_snapshot() {
    let sandbox = e2e::sandbox().unwrap();
    let (mut rt, plaza, asset) = joined(&sandbox);
    outage(&sandbox, || {
        changes_during_outage(&sandbox, &plaza, &asset);
        assert!(sandbox.worlds().forget_events(&plaza));
    });
    let lines: Vec<String> = until(&mut rt, |e| matches!(e, Event::Reconnected { .. }))
        .iter()
        .map(line)
        .collect();
    // The asset changed twice and shows once, as it is now.
    assert_eq!(
        lines,
        [
            "moved #0 to [3.0, 0.0, 1.0] by - (recovered)",
            "-user_ada (recovered)",
            r#"asset {"colour":"blue","size":2} rev 3 (recovered)"#,
            "resynced: Compared { changes: 3 }",
            "reconnected"
        ]
    );
}

#[test]
fn a_lost_event_is_caught_up_from_the_snapshot_when_it_cannot_be_replayed() {
    let sandbox = e2e::sandbox().unwrap();
    let (mut rt, plaza, _) = joined(&sandbox);
    // Grace leaves unannounced and is forgotten by the world's log; then Otto joins.
    assert!(sandbox.worlds().leave_user(&plaza, "user_grace", false));
    assert!(sandbox.worlds().forget_events(&plaza));
    assert!(
        sandbox
            .worlds()
            .join_user(&plaza, "user_otto", "Otto", true)
    );
    let lines: Vec<String> = until(&mut rt, |e| matches!(e, Event::Resynced { .. }))
        .iter()
        .map(line)
        .collect();
    assert_eq!(
        lines,
        [
            "-user_grace (recovered)",
            "+user_otto (recovered)",
            "resynced: Compared { changes: 2 }"
        ]
    );
}

#[test]
fn a_checkpoint_saved_before_a_restart_rejoins_with_what_came_after() {
    let sandbox = e2e::sandbox().unwrap();
    let (mut rt, plaza, asset) = joined(&sandbox);
    let client = client(&sandbox);
    client
        .assets()
        .merge(asset.as_str(), &props(json!({"colour": "green"})))
        .unwrap();
    let saved = next(&mut rt).seq().unwrap();
    rt.close();

    // The process is gone; meanwhile the world goes on.
    changes_during_outage(&sandbox, &plaza, &asset);
    let mut again = client.stream().unwrap();
    again.join_from(plaza.as_str(), saved).unwrap();
    let seen = until(&mut again, |e| matches!(e, Event::Resynced { .. }));
    let lines: Vec<String> = seen.iter().map(line).collect();
    assert_eq!(
        lines,
        [
            r#"asset {"colour":"blue","size":1} rev 3 (recovered)"#,
            r#"asset {"colour":"blue","size":2} rev 4 (recovered)"#,
            "moved #0 to [3.0, 0.0, 1.0] by - (recovered)",
            "-user_ada (recovered)",
            "joined: 1 users, 3 assets",
            "resynced: Replayed { events: 4 }"
        ]
    );
    assert_eq!(seen[0].seq(), Some(saved + 1));

    // A checkpoint the world no longer holds: the world as it is now, and the caller is
    // told what came after it is not known.
    assert!(sandbox.worlds().forget_events(&plaza));
    let mut late = client.stream().unwrap();
    late.join_from(plaza.as_str(), saved).unwrap();
    let lines: Vec<String> = until(&mut late, |e| matches!(e, Event::Resynced { .. }))
        .iter()
        .map(line)
        .collect();
    assert_eq!(lines, ["joined: 1 users, 3 assets", "resynced: Lost"]);
}

#[test]
fn a_reader_that_sleeps_is_told_it_fell_behind_then_gets_every_change_once() {
    let sandbox = e2e::sandbox().unwrap();
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    let asset = sandbox.worlds().add_asset(&plaza, json!({"n": 0})).unwrap();
    let client = client(&sandbox);
    let mut rt = client
        .stream_with(|c| fast(c).lossless_capacity(20))
        .unwrap();
    rt.join(&plaza).unwrap();
    assert!(matches!(next(&mut rt), Event::Joined { .. }));
    // The reader sleeps while 200 changes are made: the lane holds 20.
    for n in 1..=200 {
        client
            .assets()
            .merge(asset.as_str(), &props(json!({"n": n})))
            .unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let mut values = Vec::new();
    let mut fell_behind = 0u64;
    let mut recovery = None;
    while values.last() != Some(&200) || recovery.is_none() {
        match rt.next_timeout(Duration::from_secs(10)) {
            Some(Ok(Event::AssetUpdated { asset, .. })) => {
                values.push(asset.properties["n"].as_u64().unwrap());
            }
            Some(Ok(Event::Resynced { recovery: r, .. })) => recovery = Some(r),
            Some(Ok(_)) => {}
            Some(Err(e))
                if matches!(
                    e.downcast_ref::<WsError>(),
                    Some(WsError::FellBehind { capacity: 20 })
                ) =>
            {
                fell_behind += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    // Told at least once (a replay larger than the lane can fill it again while the
    // reader catches up: told again, and recovered again).
    assert!(fell_behind >= 1);
    assert!(
        matches!(recovery, Some(Recovery::Replayed { .. })),
        "{recovery:?}"
    );
    // Every change, once, in order: none lost behind the full lane, none repeated.
    assert_eq!(values, (1..=200).collect::<Vec<u64>>());
    assert_eq!(rt.stats().fell_behind, fell_behind);
}

#[test]
fn sends_are_acknowledged_and_every_session_sees_them() {
    let sandbox = e2e::sandbox().unwrap();
    let (mut watcher, plaza, _) = joined(&sandbox);
    let client = client(&sandbox);
    let mut ada = client.stream().unwrap();
    ada.join_as(plaza.as_str(), "user_ada", "Ada").unwrap();
    assert!(matches!(next(&mut ada), Event::Joined { .. }));

    let waved = ada
        .send(plaza.as_str(), "wave", &json!({"to": "everyone"}))
        .unwrap();
    let moved = ada.move_object(plaza.as_str(), 1, [2.0, 0.0, 2.0]).unwrap();
    let present = ada
        .set_presence(plaza.as_str(), &json!({"status": "away"}))
        .unwrap();
    let seqs = [waved.seq.unwrap(), moved.seq.unwrap(), present.seq.unwrap()];
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    let expected = [
        r#"custom wave {"to":"everyone"} from user_ada"#,
        "moved #1 to [2.0, 0.0, 2.0] by user_ada",
        r#"~user_ada {"status":"away"}"#,
    ];
    for rt in [&mut watcher, &mut ada] {
        let events: Vec<Event> = (0..3).map(|_| next(rt)).collect();
        assert_eq!(events.iter().map(line).collect::<Vec<_>>(), expected);
        assert_eq!(
            events.iter().map(|e| e.seq().unwrap()).collect::<Vec<_>>(),
            seqs
        );
    }
    // The presence is the user's, for everyone who reads the world's users.
    let users = client.worlds().users(plaza.as_str()).unwrap();
    let ada_user = users.iter().find(|u| u.id.as_str() == "user_ada").unwrap();
    assert_eq!(ada_user.state.as_ref().unwrap()["status"], "away");
}

#[test]
fn a_refused_send_fails_the_call_that_sent_it_with_the_reason() {
    let sandbox = e2e::sandbox().unwrap();
    let (rt, plaza, _) = joined(&sandbox);
    let rejected = |e: core_http::Error| match e.downcast_ref::<WsError>() {
        Some(WsError::Rejected { code, .. }) => code.clone(),
        _ => panic!("{e:?}"),
    };
    // No object 9; an observer has no presence; a world not joined.
    let err = rt.move_object(plaza.as_str(), 9, [0.0; 3]).unwrap_err();
    assert_eq!(
        err.delivery(),
        core_http::Delivery::Processed,
        "the server saw it: {err}"
    );
    assert!(!err.may_have_been_processed(), "and refused it: {err}");
    assert_eq!(rejected(err), "object_not_found");
    let err = rt
        .set_presence(plaza.as_str(), &json!({"x": 1}))
        .unwrap_err();
    assert_eq!(rejected(err), "not_a_user");
    let err = rt
        .send("world_elsewhere", "wave", &json!(null))
        .unwrap_err();
    assert_eq!(rejected(err), "not_joined");
    // Refused before sending: nothing reaches the server.
    let before = sandbox.worlds().events(&plaza).len();
    assert!(
        rt.move_object(plaza.as_str(), 0, [f64::NAN, 0.0, 0.0])
            .is_err()
    );
    assert!(rt.send(plaza.as_str(), "", &json!(1)).is_err());
    assert!(rt.set_presence(plaza.as_str(), &json!([1, 2])).is_err());
    assert_eq!(sandbox.worlds().events(&plaza).len(), before);
    // The channel goes on.
    assert!(rt.send(plaza.as_str(), "still", &json!(true)).is_ok());
}

#[test]
fn a_send_while_reconnecting_waits_for_the_connection_or_fails_unsent_never_twice() {
    let sandbox = e2e::sandbox().unwrap();
    let (mut rt, plaza, _) = joined(&sandbox);
    let customs = |sandbox: &Sandbox| {
        sandbox
            .worlds()
            .events(&plaza)
            .iter()
            .filter(|e| e["type"] == "custom")
            .map(|e| e["data"]["name"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };

    // Down for 300 ms: a send waits for the connection and goes once.
    outage(&sandbox, || {});
    let started = Instant::now();
    rt.send(plaza.as_str(), "after", &json!(1)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(customs(&sandbox), ["after"]);

    // Down for longer than the send may wait: it fails, never written, and is not
    // written when the connection comes back either.
    let mut hold = sandbox::Fault::on("GET", "/worlds/ws/v1/realtime");
    hold.delay_ms = Some(1_500);
    sandbox.inject(hold);
    sandbox.drop_streams(Some(Service::Worlds));
    while sandbox.open_streams(Some(Service::Worlds)) > 0 {
        std::thread::sleep(Duration::from_millis(2));
    }
    rt.set_send_timeout(Duration::from_millis(200));
    let started = Instant::now();
    let err = rt.send(plaza.as_str(), "too late", &json!(2)).unwrap_err();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(!err.may_have_been_processed(), "{err}");
    assert!(
        matches!(err.downcast_ref::<WsError>(), Some(WsError::NotSent(_))),
        "{err:?}"
    );
    until(&mut rt, |e| matches!(e, Event::Reconnected { .. }));
    rt.set_send_timeout(Duration::from_secs(5));
    rt.send(plaza.as_str(), "last", &json!(3)).unwrap();
    assert_eq!(customs(&sandbox), ["after", "last"]);
}
