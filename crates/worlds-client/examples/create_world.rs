//! Create a world from a JSON file.
//!
//! `cargo run -p worlds-client --example create_world -- world.json` reads a file like
//!
//! ```json
//! {"name": "Harbour", "theme": "seaside", "description": "Boats and a lighthouse",
//!  "objects": [{"type": "lighthouse", "position": [12, 0, -3.5]},
//!              {"type": "portal", "position": [0, 1.5, 0], "destination": "world_elsewhere"}]}
//! ```
//!
//! checks it (a name, a theme, three finite numbers per position) and creates the world;
//! without a file it uses that one. It runs against the local sandbox unless
//! `WORLDS_BASE_URL` and `WORLDS_API_KEY` are set.

mod common;

use serde::Deserialize;
use worlds_client::worlds::{NewWorld, WorldObject};

#[derive(Deserialize)]
struct FileWorld {
    name: String,
    theme: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    objects: Vec<FileObject>,
}

#[derive(Deserialize)]
struct FileObject {
    #[serde(rename = "type")]
    kind: String,
    position: [f64; 3],
    #[serde(default)]
    destination: Option<serde_json::Value>,
}

const EXAMPLE: &str = r#"{"name": "Harbour", "theme": "seaside", "description": "Boats and a lighthouse",
 "objects": [{"type": "lighthouse", "position": [12, 0, -3.5]},
             {"type": "portal", "position": [0, 1.5, 0], "destination": "world_elsewhere"}]}"#;

fn main() -> anyhow::Result<()> {
    let text = match std::env::args().nth(1) {
        Some(path) => std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("cannot read {path}: {e}"))?,
        None => EXAMPLE.to_owned(),
    };
    let file: FileWorld =
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("not a world file: {e}"))?;
    let mut world = NewWorld::new(file.name, file.theme);
    if let Some(d) = file.description {
        world = world.description(d);
    }
    for o in file.objects {
        let mut object = WorldObject::new(o.kind, o.position);
        if let Some(d) = o.destination {
            object = object.destination(d);
        }
        world = world.object(object);
    }
    let (client, _sandbox) = common::client()?;
    let created = client.worlds().create(&world)?;
    println!(
        "created {} \"{}\" ({}) with {} object(s)",
        created.id,
        created.name,
        created.theme,
        created.objects.len()
    );
    for o in &created.objects {
        println!(
            "  {:<12} at {:?}{}",
            o.kind,
            o.position.unwrap_or_default(),
            o.destination
                .as_ref()
                .map(|d| format!(" -> {d}"))
                .unwrap_or_default()
        );
    }
    Ok(())
}
