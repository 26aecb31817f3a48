//! worlds-client's assets and worlds' own changes against the sandbox: assets read with
//! their revision, listed page by page, created, replaced whole or merged in part, both
//! conditionally, each change an event of its world; a world changed (conditionally too)
//! and deleted with its assets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use sandbox::Sandbox;
use serde_json::{Map, Value, json};
use worlds_client::{
    Client, ErrorKind,
    assets::{ListAssets, current_revision},
    stream::Event,
    worlds::{NewWorld, UpdateWorld, WorldObject},
};

fn client(sandbox: &Sandbox) -> Client {
    Client::new(sandbox.worlds().url(), sandbox.api_key()).unwrap()
}

fn props(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

#[test]
fn assets_are_created_read_and_listed_page_by_page() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let world = client
        .worlds()
        .create(&NewWorld::new("Garden", "forest"))
        .unwrap();
    let mut made = Vec::new();
    for i in 0..5 {
        let asset = client
            .assets()
            .create(
                world.id.as_str(),
                &props(json!({"n": i, "model": "tree.glb"})),
            )
            .unwrap();
        assert_eq!(asset.revision, Some(1));
        assert_eq!(asset.world_id.as_ref(), Some(&world.id));
        made.push(asset);
    }
    let read = client.assets().get(made[2].id.as_str()).unwrap();
    assert_eq!(read, made[2]);

    // Two a page: three pages, every asset once, in id order.
    let mut ids: Vec<_> = made.iter().map(|a| a.id.clone()).collect();
    ids.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    let first = client
        .assets()
        .list(world.id.as_str(), &ListAssets::new().limit(2))
        .unwrap();
    assert_eq!(first.data.len(), 2);
    let token = first.next_page_token.clone().unwrap();
    let second = client
        .assets()
        .list(
            world.id.as_str(),
            &ListAssets::new().limit(2).page_token(token),
        )
        .unwrap();
    assert_eq!(second.data[0].id, ids[2]);
    let all: Vec<_> = client
        .assets()
        .iter(world.id.as_str())
        .map(|a| a.unwrap().id)
        .collect();
    assert_eq!(all, ids);

    let missing = client.assets().get("asset_nope").unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    let no_world = client
        .assets()
        .list("world_nope", &ListAssets::new())
        .unwrap_err();
    assert_eq!(no_world.kind(), ErrorKind::NotFound);
}

#[test]
fn merge_changes_only_what_it_is_given_and_replace_everything() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let world = client
        .worlds()
        .create(&NewWorld::new("Workshop", "industrial"))
        .unwrap();
    let asset = client
        .assets()
        .create(
            world.id.as_str(),
            &props(json!({"colour": "oak", "size": 2, "light": {"on": true, "lux": 300}})),
        )
        .unwrap();
    let id = asset.id.as_str();

    // A merge: one property changed, one removed, a nested one merged, one added.
    let merged = client
        .assets()
        .merge(
            id,
            &props(json!({"colour": "walnut", "size": null, "light": {"lux": 500}, "tag": "new"})),
        )
        .unwrap();
    assert_eq!(
        Value::Object(merged.properties.clone()),
        json!({"colour": "walnut", "light": {"on": true, "lux": 500}, "tag": "new"})
    );
    assert_eq!(merged.revision, Some(2));

    // A conditional merge from a stale revision is refused and names the current one;
    // nothing changed.
    let stale = client
        .assets()
        .merge_if(id, &props(json!({"colour": "ash"})), 1)
        .unwrap_err();
    assert_eq!(stale.kind(), ErrorKind::Conflict);
    assert_eq!(current_revision(&stale), Some(2));
    assert_eq!(
        client.assets().get(id).unwrap().properties,
        merged.properties
    );

    // Read-modify-write from the current revision.
    let now = client.assets().get(id).unwrap();
    let lit = client
        .assets()
        .merge_if(id, &props(json!({"lit": true})), now.revision.unwrap())
        .unwrap();
    assert_eq!(lit.revision, Some(3));
    assert_eq!(lit.properties["colour"], json!("walnut"));

    // A replace keeps exactly what it is given.
    let replaced = client
        .assets()
        .replace_if(id, &props(json!({"colour": "elm"})), 3)
        .unwrap();
    assert_eq!(Value::Object(replaced.properties), json!({"colour": "elm"}));
    assert_eq!(replaced.revision, Some(4));
    let stale = client
        .assets()
        .replace_if(id, &props(json!({"colour": "pine"})), 3)
        .unwrap_err();
    assert_eq!(current_revision(&stale), Some(4));
}

#[test]
fn every_asset_change_is_an_event_of_its_world() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let world = client
        .worlds()
        .create(&NewWorld::new("Gallery", "museum"))
        .unwrap();
    let mut realtime = client.stream().unwrap();
    realtime.join(world.id.as_str()).unwrap();
    let asset = client
        .assets()
        .create(world.id.as_str(), &props(json!({"frame": "gilt"})))
        .unwrap();
    client
        .assets()
        .merge(asset.id.as_str(), &props(json!({"lit": true})))
        .unwrap();
    let mut revisions = Vec::new();
    while revisions.len() < 2 {
        match realtime.next_timeout(Duration::from_secs(10)) {
            Some(Ok(Event::AssetUpdated { asset: a, .. })) => {
                assert_eq!(a.id, asset.id);
                revisions.push(a.revision.unwrap());
            }
            Some(Ok(Event::Joined { .. })) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(revisions, [1, 2]);
}

#[test]
fn a_world_changes_conditionally_and_is_deleted_with_its_assets() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let world = client
        .worlds()
        .create(&NewWorld::new("Harbour", "seaside").description("gulls"))
        .unwrap();
    assert_eq!(world.revision, Some(1));
    let asset = client
        .assets()
        .create(world.id.as_str(), &props(json!({"boat": "red"})))
        .unwrap();
    let mut realtime = client.stream().unwrap();
    realtime.join(world.id.as_str()).unwrap();

    // Only the fields given change; the objects, when given, as a whole.
    let changed = client
        .worlds()
        .update(
            world.id.as_str(),
            &UpdateWorld::new()
                .theme("winter")
                .objects(vec![WorldObject::new("lighthouse", [12.0, 0.0, -3.5])]),
        )
        .unwrap();
    assert_eq!(
        (changed.name.as_str(), changed.theme.as_str()),
        ("Harbour", "winter")
    );
    assert_eq!(changed.description.as_deref(), Some("gulls"));
    assert_eq!(changed.objects.len(), 1);
    assert_eq!(changed.revision, Some(2));
    assert_eq!(
        client.worlds().get(world.id.as_str()).unwrap().revision,
        Some(2)
    );

    // From a stale revision: refused, the current one named, nothing changed.
    let stale = client
        .worlds()
        .update_if(world.id.as_str(), &UpdateWorld::new().name("Port"), 1)
        .unwrap_err();
    assert_eq!(stale.kind(), ErrorKind::Conflict);
    assert_eq!(current_revision(&stale), Some(2));
    let named = client
        .worlds()
        .update_if(
            world.id.as_str(),
            &UpdateWorld::new().name("Port").description(None::<String>),
            2,
        )
        .unwrap();
    assert_eq!((named.name.as_str(), named.description), ("Port", None));

    // A change that changes nothing, or a blank name, is refused before sending.
    assert!(matches!(
        client
            .worlds()
            .update(world.id.as_str(), &UpdateWorld::new()),
        Err(worlds_client::Error::InvalidRequest(_))
    ));
    assert!(matches!(
        client
            .worlds()
            .update(world.id.as_str(), &UpdateWorld::new().name("  ")),
        Err(worlds_client::Error::InvalidRequest(_))
    ));

    client.worlds().delete(world.id.as_str()).unwrap();
    assert_eq!(
        client.worlds().get(world.id.as_str()).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        client.assets().get(asset.id.as_str()).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        client
            .worlds()
            .delete(world.id.as_str())
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
    // The session saw both changes, then the deletion.
    let mut seen = Vec::new();
    while !seen.contains(&"deleted") {
        match realtime.next_timeout(Duration::from_secs(10)) {
            Some(Ok(Event::WorldUpdated { world: w, .. })) => seen.push(if w.name == "Port" {
                "renamed"
            } else {
                "winter"
            }),
            Some(Ok(Event::WorldDeleted { world_id, .. })) => {
                assert_eq!(world_id, world.id);
                seen.push("deleted");
            }
            Some(Ok(Event::Joined { .. })) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(seen, ["winter", "renamed", "deleted"]);
}
