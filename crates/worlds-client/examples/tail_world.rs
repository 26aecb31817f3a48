//! Tail a world's live events, like `tail -f`.
//!
//! `cargo run -p worlds-client --example tail_world -- [WORLD_ID] [--count N]` follows the
//! world you name and prints each event as a line. Against the local sandbox, without a
//! world id it creates one and follows it, and a helper thread makes things happen: users
//! come and go, an asset changes in part, an unknown event arrives, and the connection is
//! cut once, so you can watch the channel resynchronise. With `WORLDS_BASE_URL` and
//! `WORLDS_API_KEY` set it follows the named world of the real service until N events
//! (default 12) have been shown.

mod common;

use std::time::Duration;

use serde_json::json;
use worlds_client::stream::Event;

fn line(event: &Event) -> String {
    match event {
        Event::Joined { users, .. } => format!(
            "joined; here: {}",
            users
                .iter()
                .map(|u| u.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Event::UserJoined {
            user, recovered, ..
        } => format!(
            "+ {} ({}){}",
            user.id,
            user.display_name.as_deref().unwrap_or("?"),
            if *recovered {
                " [found after a gap]"
            } else {
                ""
            }
        ),
        Event::UserLeft {
            user, recovered, ..
        } => format!(
            "- {}{}",
            user.id,
            if *recovered {
                " [found after a gap]"
            } else {
                ""
            }
        ),
        Event::AssetUpdated { asset, .. } => format!(
            "asset {} now {} (revision {:?})",
            asset.id,
            serde_json::Value::Object(asset.properties.clone()),
            asset.revision
        ),
        Event::ObjectMoved { object, .. } => {
            format!("{} moved to {:?}", object.kind, object.position)
        }
        Event::WorldUpdated { world, .. } => format!("world is now {:?}", world.name),
        Event::Resynced { .. } => "resynchronised".into(),
        Event::Reconnected { gap } => format!("reconnected after {gap:.1?}"),
        Event::Unknown { kind, data, .. } => format!("{kind}: {}", data["data"]),
        other => format!("{other:?}"),
    }
}

fn main() -> anyhow::Result<()> {
    let mut world = None;
    let mut count = 12usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--count" => count = args.next().unwrap_or_default().parse()?,
            _ => world = Some(arg),
        }
    }
    let (client, sandbox) = common::client()?;
    let world = match (world, &sandbox) {
        (Some(w), _) => w,
        (None, Some(_)) => {
            let made = client
                .worlds()
                .create(&worlds_client::worlds::NewWorld::new("Tail", "harbour"))?;
            println!("created {} to follow", made.id);
            made.id.to_string()
        }
        (None, None) => {
            anyhow::bail!("name the world to follow: tail_world WORLD_ID [--count N]")
        }
    };
    let mut realtime = client.stream()?;
    realtime.join(world.as_str())?;
    println!("following {world}");

    std::thread::scope(|scope| -> anyhow::Result<()> {
        if let Some(sandbox) = &sandbox {
            let world = world.clone();
            scope.spawn(move || {
                let w = sandbox.worlds();
                let pause = || std::thread::sleep(Duration::from_millis(300));
                pause();
                w.join_user(&world, "user_ada", "Ada", true);
                w.join_user(&world, "user_linus", "Linus", true);
                pause();
                if let Some(asset) = w.add_asset(&world, json!({"colour": "red", "size": 2})) {
                    // Only the colour changes; the size stays.
                    let _ = client.assets().merge(
                        asset.as_str(),
                        &serde_json::Map::from_iter([("colour".to_owned(), json!("blue"))]),
                    );
                }
                pause();
                w.emit(&world, "weather.changed", json!({"rain": true}));
                pause();
                // The connection is cut; while it is down Ada leaves and Mae arrives.
                sandbox.drop_streams(Some(sandbox::Service::Worlds));
                while sandbox.open_streams(Some(sandbox::Service::Worlds)) > 0 {
                    std::thread::sleep(Duration::from_millis(2));
                }
                w.leave_user(&world, "user_ada", true);
                w.join_user(&world, "user_mae", "Mae", true);
            });
        }
        let mut shown = 0;
        while shown < count {
            match realtime.next_timeout(Duration::from_secs(if sandbox.is_some() {
                10
            } else {
                3600
            })) {
                Some(Ok(event)) => {
                    println!("{}", line(&event));
                    shown += 1;
                    // The sandbox's show ends with the reconnect.
                    if sandbox.is_some() && matches!(event, Event::Reconnected { .. }) {
                        break;
                    }
                }
                Some(Err(e)) => return Err(e.into()),
                None => break,
            }
        }
        Ok(())
    })?;
    realtime.close();
    Ok(())
}
