//! What the client has seen of a world, and how a snapshot brings it up to date: the
//! first one is the join, a later one is compared with what was seen and each
//! difference delivered as a recovered event.

use std::collections::{BTreeMap, VecDeque};

use core_http::Result;

use super::protocol::Snapshot;
use super::{Event, Recovery};
use crate::assets::{Asset, AssetId};
use crate::models::{User, UserId, World};

/// Where a joined world stands.
#[derive(Debug)]
pub(super) enum Phase {
    /// Joined as it is now: events wait for the join's snapshot.
    Joining,
    /// Joined from a checkpoint: the events after it come first, then the snapshot.
    FromCheckpoint,
    /// Up to date.
    Joined,
}

/// What the client has seen of a joined world: its users, the world itself (objects
/// too) and its assets, as of the last event delivered.
#[derive(Debug, Default)]
pub(super) struct Known {
    users: BTreeMap<UserId, User>,
    world: Option<World>,
    assets: BTreeMap<AssetId, Asset>,
}

impl Known {
    /// Records what a delivered event changed.
    pub(super) fn apply(&mut self, event: &Event) {
        match event {
            Event::UserJoined { user, .. } | Event::UserUpdated { user, .. } => {
                self.users.insert(user.id.clone(), user.clone());
            }
            Event::UserLeft { user, .. } => {
                self.users.remove(&user.id);
            }
            Event::AssetUpdated { asset, .. } => {
                self.assets.insert(asset.id.clone(), asset.clone());
            }
            Event::WorldUpdated { world, .. } => self.world = Some(World::clone(world)),
            Event::ObjectMoved {
                index: Some(index),
                object,
                ..
            } => {
                if let Some(slot) = self.world.as_mut().and_then(|w| {
                    usize::try_from(*index)
                        .ok()
                        .and_then(|i| w.objects.get_mut(i))
                }) {
                    *slot = object.clone();
                }
            }
            _ => {}
        }
    }

    /// Takes in a snapshot: the join's (`Joined`), a rejoin's from a checkpoint
    /// (`Joined`, then `Resynced`), or one after a reconnect or a gap, compared with
    /// what was seen (each difference, then `Resynced`).
    pub(super) fn recover(
        &mut self,
        phase: Phase,
        snapshot: Snapshot,
        out: &mut VecDeque<Result<Event>>,
    ) {
        let Snapshot {
            world_id,
            users,
            world,
            assets,
            seq,
            timestamp,
            replayed,
        } = snapshot;
        let stamp = (Some(seq), timestamp);
        let recovery = match phase {
            Phase::Joining | Phase::FromCheckpoint => {
                out.push_back(Ok(Event::Joined {
                    world_id: world_id.clone(),
                    users: users.clone(),
                    world: world.clone().map(Box::new),
                    assets: assets.clone(),
                    seq: stamp.0,
                    timestamp: stamp.1,
                }));
                match (phase, replayed) {
                    (Phase::Joining, _) => None,
                    (_, Some(events)) => Some(Recovery::Replayed { events }),
                    (_, None) => Some(Recovery::Lost),
                }
            }
            Phase::Joined => {
                let before = out.len();
                self.compare(&world_id, &users, world.as_ref(), &assets, stamp, out);
                Some(match replayed {
                    Some(events) => Recovery::Replayed { events },
                    None => Recovery::Compared {
                        changes: out.len() - before,
                    },
                })
            }
        };
        self.users = users.into_iter().map(|u| (u.id.clone(), u)).collect();
        self.world = world;
        self.assets = assets.into_iter().map(|a| (a.id.clone(), a)).collect();
        if let Some(recovery) = recovery {
            out.push_back(Ok(Event::Resynced {
                world_id,
                recovery,
                seq: stamp.0,
                timestamp: stamp.1,
            }));
        }
    }

    /// Each difference between what was seen and the snapshot, as a recovered event:
    /// the world's own fields, its objects, who left, who came or changed, the assets.
    fn compare(
        &self,
        world_id: &crate::worlds::WorldId,
        users: &[User],
        world: Option<&World>,
        assets: &[Asset],
        (seq, timestamp): (Option<u64>, Option<time::OffsetDateTime>),
        out: &mut VecDeque<Result<Event>>,
    ) {
        if let (Some(old), Some(new)) = (&self.world, world) {
            let changed = match (old.revision, new.revision) {
                (Some(a), Some(b)) => a != b,
                _ => {
                    (&old.name, &old.theme, &old.description)
                        != (&new.name, &new.theme, &new.description)
                        || old.objects.len() != new.objects.len()
                }
            };
            if changed {
                out.push_back(Ok(Event::WorldUpdated {
                    world_id: world_id.clone(),
                    world: Box::new(new.clone()),
                    recovered: true,
                    seq,
                    timestamp,
                }));
            } else {
                for (i, (a, b)) in old.objects.iter().zip(&new.objects).enumerate() {
                    if a != b {
                        out.push_back(Ok(Event::ObjectMoved {
                            world_id: world_id.clone(),
                            index: u64::try_from(i).ok(),
                            object: b.clone(),
                            by: None,
                            recovered: true,
                            seq,
                            timestamp,
                        }));
                    }
                }
            }
        }
        let now: BTreeMap<&UserId, &User> = users.iter().map(|u| (&u.id, u)).collect();
        for (id, user) in &self.users {
            if !now.contains_key(id) {
                out.push_back(Ok(Event::UserLeft {
                    world_id: world_id.clone(),
                    user: user.clone(),
                    recovered: true,
                    seq,
                    timestamp,
                }));
            }
        }
        for user in users {
            let event = match self.users.get(&user.id) {
                None => Event::UserJoined {
                    world_id: world_id.clone(),
                    user: user.clone(),
                    recovered: true,
                    seq,
                    timestamp,
                },
                Some(old) if old != user => Event::UserUpdated {
                    world_id: world_id.clone(),
                    user: user.clone(),
                    recovered: true,
                    seq,
                    timestamp,
                },
                Some(_) => continue,
            };
            out.push_back(Ok(event));
        }
        for asset in assets {
            let changed = match self.assets.get(&asset.id) {
                None => true,
                Some(old) => match (old.revision, asset.revision) {
                    (Some(a), Some(b)) => a != b,
                    _ => old.properties != asset.properties,
                },
            };
            if changed {
                out.push_back(Ok(Event::AssetUpdated {
                    world_id: world_id.clone(),
                    asset: asset.clone(),
                    recovered: true,
                    seq,
                    timestamp,
                }));
            }
        }
    }
}
