//! The soak: the trading stream and a worlds channel against the sandbox for minutes or
//! hours, with faults injected at random but reproducibly, while orders fill and users
//! and assets change and a second session sends on the world's channel; at the end,
//! every fill must have been delivered exactly once, the world's users and assets seen
//! (live or recovered) as the service has them, its events in order, and every send the
//! service accepted seen exactly once (one never written, never; one unanswered, at most
//! once).
//!
//! `cargo xtask soak --minutes N [--seed S]`, or
//! `cargo run --release -p e2e --example soak -- --seconds N [--seed S] [--write FILE]`.
//!
//! The sandbox runs in a child process (this program again), so the figures of memory
//! and CPU are the clients' (and this program's drivers). The clients reach the sandbox
//! through a TCP proxy in the sandbox's process that cuts connections, stalls
//! them past the dead-connection limit and ends them in the middle of a frame; the
//! sandbox itself refuses upgrades (503, 429) when told to. A reader sometimes sleeps
//! (a slow reader).

mod proxy;

/// Counts the live heap (allocated and not yet freed), which resident memory blurs with
/// the allocator's own caching.
#[global_allocator]
static ALLOCATOR: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// The live heap now, in KiB.
fn heap() -> u64 {
    (ALLOCATOR.allocated() / 1024) as u64
}

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;
use trading_client::{
    Decimal,
    orders::{Amount, OrderRequest, Side},
};
use worlds_client::worlds::NewWorld;

/// Options.
struct Options {
    seconds: u64,
    seed: u64,
    write: Option<String>,
}

fn options() -> anyhow::Result<Options> {
    let mut args = std::env::args().skip(1);
    let mut o = Options {
        seconds: 20,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1),
        write: None,
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().context("a value is missing");
        match arg.as_str() {
            "--seconds" => o.seconds = value()?.parse()?,
            "--minutes" => o.seconds = value()?.parse::<u64>()? * 60,
            "--seed" => o.seed = value()?.parse()?,
            "--write" => o.write = Some(value()?),
            other => bail!("unknown argument {other:?}"),
        }
    }
    Ok(o)
}

/// The sandbox and the fault proxy in a child process: its base URL, and the proxy.
fn start_sandbox() -> anyhow::Result<(Child, String, proxy::Remote)> {
    let mut child = Command::new(std::env::current_exe()?)
        .arg("--sandbox-child")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut output = BufReader::new(child.stdout.take().context("no stdout")?);
    let mut line = String::new();
    output.read_line(&mut line)?;
    let (url, addr) = line.trim().split_once(' ').unwrap_or((line.trim(), ""));
    if !url.starts_with("http://") {
        bail!("the sandbox did not start: {line:?}");
    }
    let addr = addr.parse().context("the proxy's address")?;
    let input = child.stdin.take().context("no stdin")?;
    Ok((
        child,
        url.to_owned(),
        proxy::Remote::new(addr, input, output),
    ))
}

/// This program as the sandbox and the fault proxy in front of it: serves the proxy's
/// commands until its parent closes stdin.
fn sandbox_child() -> anyhow::Result<()> {
    // Fills around the clock: a market that never closes.
    let sandbox = sandbox::Sandbox::builder().market_hours(false).start()?;
    let target: std::net::SocketAddr = sandbox.url().trim_start_matches("http://").parse()?;
    let proxy = proxy::Proxy::start(target)?;
    println!("{} {}", sandbox.url(), proxy.addr);
    proxy::serve_commands(&proxy);
    drop(sandbox);
    Ok(())
}

/// Resident memory now and at its peak, in KiB (Linux; zeros elsewhere).
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// This process's threads now (Linux; zero elsewhere): the streams' own, the
/// readers' and drivers'.
fn threads() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// CPU time of this process so far (Linux; zero elsewhere).
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|v| v.parse::<u64>().ok()))
        .sum();
    Duration::from_millis(ticks * 10)
}

/// A fill's execution id as a number: the soak keeps one per fill made, so its own
/// records stay small beside what the streams hold (a collision would show as a fill
/// repeated, never hide one).
fn fill_key(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// The users the soak's world draws from, and the most assets it makes: the world
/// stays the same size however long the soak runs, so what the streams hold of it must
/// stay flat too.
const USER_POOL: u64 = 100;
const MAX_ASSETS: usize = 100;

/// What the readers saw.
#[derive(Default)]
struct Seen {
    fills: HashMap<u64, u32>,
    trading_events: u64,
    trading_reconnects: u64,
    recovery_pending: u64,
    max_gap: Duration,
    users: BTreeSet<String>,
    world_events: u64,
    world_reconnects: u64,
    resynced: u64,
    /// Resyncs by how: replayed, compared with a snapshot.
    replayed: u64,
    compared: u64,
    assets_updated: u64,
    /// Events delivered as recovered (replayed or found by comparing).
    recovered: u64,
    /// Each asset's revision as the reader last saw it.
    asset_revisions: HashMap<String, u64>,
    /// The world's last sequence number delivered, and events that came out of order.
    last_seq: u64,
    out_of_order: u64,
    /// How many times each custom event (by name) was seen.
    customs: HashMap<u32, u32>,
    errors: Vec<String>,
}

fn main() -> anyhow::Result<()> {
    if std::env::args().nth(1).as_deref() == Some("--sandbox-child") {
        return sandbox_child();
    }
    let o = options()?;
    println!(
        "soak: {} s, seed {} (again with --seed {})",
        o.seconds, o.seed, o.seed
    );
    let (mut child, url, proxy) = start_sandbox()?;
    let result = run(&o, &url, &proxy);
    proxy.close();
    let _ = child.wait();
    result
}

fn run(o: &Options, sandbox: &str, proxy: &proxy::Remote) -> anyhow::Result<()> {
    let via = format!("http://{}", proxy.addr);
    let key = "sk_test_sandbox";
    let control = |method: &str, path: &str, body: Option<serde_json::Value>| {
        let url = format!("{sandbox}/_sandbox{path}");
        let agent = ureq::Agent::new_with_defaults();
        let r = match (method, body) {
            ("POST", Some(b)) => agent
                .post(&url)
                .header("content-type", "application/json")
                .send(b.to_string()),
            ("POST", None) => agent.post(&url).send_empty(),
            ("DELETE", _) => agent.delete(&url).call(),
            _ => agent.get(&url).call(),
        };
        r.map_err(|e| anyhow::anyhow!("{method} {path}: {e}"))
            .and_then(|mut r| {
                let text = r.body_mut().read_to_string()?;
                Ok(serde_json::from_str::<serde_json::Value>(&text).unwrap_or_default())
            })
    };

    // Direct clients drive the service; the streaming clients go through the proxy.
    let trader = trading_client::Client::new(format!("{sandbox}/trading"), key)?;
    let worlds = worlds_client::Client::new(format!("{sandbox}/worlds"), key)?;
    let world = worlds.worlds().create(&NewWorld::new("Soak", "space"))?;
    let world_id = world.id.as_str().to_owned();

    let fast = |config: core_streams::StreamConfig| {
        let mut policy = core_streams::ReconnectPolicy::default();
        policy.backoff =
            core_http::config::Backoff::new(Duration::from_millis(50), Duration::from_secs(1), 2.0);
        policy.cooldown = Duration::from_secs(2);
        config
            .ping_after(Duration::from_secs(1))
            .dead_after(Duration::from_secs(3))
            .reconnect(policy)
    };
    let trading_stream_client = trading_client::Client::new(format!("{via}/trading"), key)?;
    let mut stream = trading_stream_client.stream_with(fast)?;
    stream.subscribe_orders()?;
    let worlds_stream_client = worlds_client::Client::new(format!("{via}/worlds"), key)?;
    let mut realtime = worlds_stream_client.stream_with(fast)?;
    realtime.join(world_id.as_str())?;
    // A second session sends on the channel, through the same faults.
    let mut sender = worlds_stream_client.stream_with(fast)?;
    sender.join(world_id.as_str())?;
    sender.set_send_timeout(Duration::from_secs(2));

    // The soak's records are made their final size before the start's figures (about
    // five fills and two sends a second; room for more), so that their growth is not
    // counted as the streams'.
    let seconds = usize::try_from(o.seconds).map_or(1 << 16, |s| s.min(1 << 16));
    let seen: Arc<Mutex<Seen>> = Arc::new(Mutex::new(Seen {
        fills: HashMap::with_capacity(seconds.saturating_mul(8)),
        ..Seen::default()
    }));
    let readers_stop = Arc::new(AtomicBool::new(false));
    let slow_until = Arc::new(AtomicU64::new(0));
    let epoch = Instant::now();
    let mut rng = e2e::SeededRng(o.seed);

    // The trading reader.
    let trading_reader = {
        let (seen, stop, slow) = (seen.clone(), readers_stop.clone(), slow_until.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let pause = slow.load(Ordering::Relaxed);
                if pause > epoch.elapsed().as_millis() as u64 {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                let event = stream.next_timeout(Duration::from_millis(200));
                let mut s = seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                match event {
                    Some(Ok(trading_client::stream::Event::Fill(f))) => {
                        s.trading_events += 1;
                        *s.fills.entry(fill_key(&f.execution_id)).or_default() += 1;
                    }
                    Some(Ok(trading_client::stream::Event::Reconnected { gap })) => {
                        s.trading_reconnects += 1;
                        s.max_gap = s.max_gap.max(gap);
                    }
                    Some(Ok(trading_client::stream::Event::RecoveryPending { .. })) => {
                        s.recovery_pending += 1
                    }
                    Some(Ok(_)) => s.trading_events += 1,
                    Some(Err(e)) => s.errors.push(format!("trading: {e}")),
                    None => {}
                }
            }
            stream
        })
    };
    // The worlds reader.
    let world_reader = {
        let (seen, stop, slow) = (seen.clone(), readers_stop.clone(), slow_until.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if slow.load(Ordering::Relaxed) > epoch.elapsed().as_millis() as u64 {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                let event = realtime.next_timeout(Duration::from_millis(200));
                let mut s = seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                use worlds_client::stream::Event as W;
                match event {
                    Some(Ok(e)) => {
                        s.world_events += 1;
                        if e.is_recovered() {
                            s.recovered += 1;
                        }
                        // A world's events come in order, each once (a resync's
                        // summary repeats the number it stands at).
                        if let Some(seq) = e.seq()
                            && !matches!(e, W::Resynced { .. } | W::Joined { .. })
                        {
                            // Differences found by comparing a snapshot all carry its
                            // number; every other event moves it on.
                            if seq < s.last_seq || (seq == s.last_seq && !e.is_recovered()) {
                                s.out_of_order += 1;
                            }
                            s.last_seq = seq;
                        }
                        match e {
                            W::Joined {
                                users, assets, seq, ..
                            } => {
                                s.users = users
                                    .into_iter()
                                    .map(|u| u.id.as_str().to_owned())
                                    .collect();
                                for a in assets {
                                    s.asset_revisions
                                        .insert(a.id.as_str().to_owned(), a.revision.unwrap_or(0));
                                }
                                s.last_seq = seq.unwrap_or(0);
                            }
                            W::AssetUpdated { asset, .. } => {
                                s.assets_updated += 1;
                                s.asset_revisions.insert(
                                    asset.id.as_str().to_owned(),
                                    asset.revision.unwrap_or(0),
                                );
                            }
                            W::Custom { name, .. } => {
                                if let Some(n) = name.strip_prefix('s').and_then(|n| n.parse().ok())
                                {
                                    *s.customs.entry(n).or_default() += 1;
                                }
                            }
                            W::Resynced { recovery, seq, .. } => {
                                s.resynced += 1;
                                match recovery {
                                    worlds_client::stream::Recovery::Replayed { .. } => {
                                        s.replayed += 1
                                    }
                                    _ => s.compared += 1,
                                }
                                if let Some(seq) = seq {
                                    s.last_seq = seq;
                                }
                            }
                            W::UserJoined { user, .. } => {
                                s.users.insert(user.id.as_str().to_owned());
                            }
                            W::UserLeft { user, .. } => {
                                s.users.remove(user.id.as_str());
                            }
                            W::Reconnected { .. } => s.world_reconnects += 1,
                            _ => {}
                        }
                    }
                    Some(Err(e)) => s.errors.push(format!("worlds: {e}")),
                    None => {}
                }
            }
            realtime
        })
    };

    // Warm up, then the starting figures.
    std::thread::sleep(Duration::from_secs(2));
    let (rss_start, _) = memory();
    let heap_start = heap();
    let threads_start = threads();
    let cpu_start = cpu();
    // The live heap and resident memory at each tenth of the run.
    let mut heap_by_tenth: Vec<u64> = Vec::new();
    let mut rss_by_tenth: Vec<u64> = Vec::new();
    let started = Instant::now();

    // The drivers: orders, world changes, faults.
    let mut orders_placed = 0u64;
    let mut joins = 0u64;
    let mut asset_updates = 0u64;
    let mut faults: HashMap<&str, u64> = HashMap::new();
    let mut next_fault = Instant::now() + rng.millis(1_000, 4_000);
    let mut held = false;
    let mut assets: Vec<String> = Vec::new();
    // Sends by outcome: accepted (each must be seen once), never written (never seen),
    // written and unanswered (seen at most once).
    let mut sends: Vec<&str> = Vec::with_capacity(seconds.saturating_mul(4));
    let deadline = Instant::now() + Duration::from_secs(o.seconds);
    while Instant::now() < deadline {
        let tenth = (started.elapsed().as_secs_f64() * 10.0 / o.seconds as f64) as usize;
        if tenth >= heap_by_tenth.len() {
            heap_by_tenth.push(heap());
            rss_by_tenth.push(memory().0);
        }
        // The sender reads nothing of its own: what it receives is let go.
        while let Some(Ok(_)) = sender.next_timeout(Duration::ZERO) {}
        if rng.below(3) == 0 {
            let name = format!("s{}", sends.len());
            let outcome = match sender.send(world_id.as_str(), &name, &json!(null)) {
                Ok(_) => "accepted",
                Err(e) if e.may_have_been_processed() => "unanswered",
                Err(_) => "not sent",
            };
            sends.push(outcome);
        }
        // An order: buy one, then sell it.
        let side = if held { Side::Sell } else { Side::Buy };
        match trader.orders().place(&OrderRequest::market(
            "AAPL",
            side,
            Amount::Qty(Decimal::ONE),
        )) {
            Ok(_) => {
                orders_placed += 1;
                held = !held;
            }
            Err(e) => seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .errors
                .push(format!("order: {e}")),
        }
        // A change to the world.
        match rng.below(4) {
            0 => {
                joins += 1;
                let id = format!("u{}", 1 + rng.below(USER_POOL));
                control(
                    "POST",
                    &format!("/worlds/worlds/{world_id}/users"),
                    Some(json!({"id": id, "announce": rng.below(4) != 0})),
                )?;
            }
            1 => {
                let id = format!("u{}", 1 + rng.below(USER_POOL));
                let announce = if rng.below(4) == 0 {
                    "?announce=false"
                } else {
                    ""
                };
                let _ = control(
                    "DELETE",
                    &format!("/worlds/worlds/{world_id}/users/{id}{announce}"),
                    None,
                );
            }
            2 if assets.len() < MAX_ASSETS => {
                let made = control(
                    "POST",
                    &format!("/worlds/worlds/{world_id}/assets"),
                    Some(json!({"properties": {"n": assets.len()}})),
                )?;
                if let Some(id) = made["id"].as_str() {
                    assets.push(id.to_owned());
                }
            }
            _ if !assets.is_empty() => {
                let id = assets[rng.below(assets.len() as u64) as usize].clone();
                let props = json!({"color": rng.below(1000)});
                let props = props.as_object().cloned().unwrap_or_default();
                if worlds.assets().replace(id.as_str(), &props).is_ok() {
                    asset_updates += 1;
                }
            }
            _ => {}
        }
        // A fault, now and then.
        if Instant::now() >= next_fault {
            next_fault = Instant::now() + rng.millis(1_000, 5_000);
            let kind = match rng.below(6) {
                0 => {
                    proxy.cut();
                    "cut"
                }
                1 => {
                    proxy.stall(Duration::from_millis(3_500));
                    "stall past the dead limit"
                }
                2 => {
                    proxy.half_write();
                    "half-written frame"
                }
                3 | 4 => {
                    let status = if rng.below(2) == 0 { 503 } else { 429 };
                    for path in ["/trading/stream", "/worlds/ws/v1/realtime"] {
                        control(
                            "POST",
                            "/faults",
                            Some(
                                json!({"method": "GET", "path": path, "status": status, "count": 1 + rng.below(2)}),
                            ),
                        )?;
                    }
                    proxy.cut();
                    if status == 503 {
                        "upgrade refused 503"
                    } else {
                        "upgrade refused 429"
                    }
                }
                _ => {
                    let ms = epoch.elapsed().as_millis() as u64 + 200 + rng.below(1_300);
                    slow_until.store(ms, Ordering::Relaxed);
                    "slow reader"
                }
            };
            *faults.entry(kind).or_default() += 1;
        }
        std::thread::sleep(rng.millis(50, 250));
    }

    // The memory at the end of the run, before the checks below read every order and
    // asset of the service (their answers are the soak's, not the clients').
    let (rss_end, rss_peak) = memory();
    let heap_end = heap();
    let threads_end = threads();
    let cpu_used = cpu().saturating_sub(cpu_start);
    // The events read by then, for the CPU time per event over the same span.
    let events_in_run = {
        let s = seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        s.trading_events + s.world_events
    };

    // The end: faults off, one last reconnect so every world is caught up once more
    // after the last fault, then time for the streams to catch up.
    let _ = control("DELETE", "/faults", None);
    std::thread::sleep(Duration::from_secs(4));
    proxy.cut();
    let expected: BTreeSet<String> = {
        let orders = control("GET", "/trading/orders", None)?;
        orders["orders"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|o| o["fills"].as_array().cloned().unwrap_or_default())
            .filter_map(|f| f["execution_id"].as_str().map(str::to_owned))
            .collect()
    };
    let users_now: BTreeSet<String> = worlds
        .worlds()
        .users(world_id.as_str())?
        .into_iter()
        .map(|u| u.id.as_str().to_owned())
        .collect();
    let settle = Instant::now() + Duration::from_secs(30);
    loop {
        let done = {
            let s = seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            s.fills.len() >= expected.len() && s.users == users_now
        };
        if done || Instant::now() > settle {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // Every asset as the service has it.
    let service_assets: HashMap<String, u64> = worlds
        .assets()
        .iter(world_id.as_str())
        .filter_map(Result::ok)
        .map(|a| (a.id.as_str().to_owned(), a.revision.unwrap_or(0)))
        .collect();
    let settle = Instant::now() + Duration::from_secs(30);
    loop {
        let done = seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .asset_revisions
            == service_assets;
        if done || Instant::now() > settle {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    sender.close();
    let heap_checked = heap();
    readers_stop.store(true, Ordering::Relaxed);
    let mut stream = trading_reader
        .join()
        .map_err(|_| anyhow::anyhow!("reader panicked"))?;
    let mut realtime = world_reader
        .join()
        .map_err(|_| anyhow::anyhow!("reader panicked"))?;
    let (ts, ws) = (stream.stats(), realtime.stats());
    stream.close();
    realtime.close();
    // What the streams held at the end (their lanes, the fill ids they de-duplicate
    // against, the world as they know it): the heap they give back when dropped. The
    // rest of the end's live heap is the soak's own records, kept for the checks below.
    drop((stream, realtime, sender));
    let heap_streams = heap_checked.saturating_sub(heap());

    let s = seen
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let expected: BTreeSet<u64> = expected.iter().map(|id| fill_key(id)).collect();
    let received: BTreeSet<u64> = s.fills.keys().copied().collect();
    let repeated = s.fills.values().filter(|n| **n > 1).count();
    let missing = expected.difference(&received).count();
    let unknown = received.difference(&expected).count();
    let events = s.trading_events + s.world_events;
    let count = |outcome: &str| sends.iter().filter(|o| **o == outcome).count();
    let send_errors: Vec<String> = sends
        .iter()
        .enumerate()
        .filter_map(|(n, outcome)| {
            let name = format!("s{n}");
            let seen = s.customs.get(&(n as u32)).copied().unwrap_or(0);
            let fine = match *outcome {
                "accepted" => seen == 1,
                "not sent" => seen == 0,
                _ => seen <= 1,
            };
            (!fine).then(|| format!("{name} {outcome}, seen {seen} times"))
        })
        .collect();
    let assets_behind = service_assets
        .iter()
        .filter(|(id, rev)| s.asset_revisions.get(*id) != Some(rev))
        .count();
    let mut fault_list: Vec<String> = faults.iter().map(|(k, n)| format!("{k} {n}")).collect();
    fault_list.sort();
    let report = format!(
        "## Soak: {} s, seed {}\n\n\
| figure | value |\n|---|---|\n\
| orders placed, fills made | {orders_placed}, {} |\n\
| fills delivered once / missing / repeated / unknown | {} / {missing} / {repeated} / {unknown} |\n\
| users joining (from a pool of {USER_POOL}); users at the end (seen / service) | {joins}; {} / {} |\n\
| asset updates made / seen (live or recovered) | {asset_updates} / {} |\n\
| assets at the service's revision at the end | {} of {} |\n\
| world events recovered; out of order | {}; {} |\n\
| sends accepted / not sent / unanswered; wrongly seen | {} / {} / {}; {} |\n\
| faults | {} |\n\
| reconnects (trading / worlds); connections through the proxy | {} / {}; {} |\n\
| longest trading gap | {:?} |\n\
| reconciliations pending, then retried | {} |\n\
| world resynchronisations (replayed / compared) | {} ({} / {}) |\n\
| lossy drops (trading / worlds) | {} / {} |\n\
| events read | {events} |\n\
| resident memory at start / end / peak (before the final checks) | {} / {} / {} KiB |\n\
| resident memory at each tenth of the run | {} KiB |\n\
| resident memory, end over half-way (level: at most 1.05) | {} |\n\
| live heap at start / end; at each tenth of the run | {heap_start} / {heap_end}; {} KiB |\n\
| threads at start / end | {threads_start} / {threads_end} |\n\
| live heap held by the three streams after the final checks (the rest: the soak's records) | {heap_streams} KiB |\n\
| CPU time per event (clients and drivers) | {:.1} µs |\n\
| errors reported by the streams | {} |\n",
        o.seconds,
        o.seed,
        expected.len(),
        received.len() - unknown,
        s.users.len(),
        users_now.len(),
        s.assets_updated,
        service_assets.len() - assets_behind,
        service_assets.len(),
        s.recovered,
        s.out_of_order,
        count("accepted"),
        count("not sent"),
        count("unanswered"),
        send_errors.len(),
        fault_list.join(", "),
        ts.reconnects,
        ws.reconnects,
        proxy.connections(),
        s.max_gap,
        s.recovery_pending,
        s.resynced,
        s.replayed,
        s.compared,
        ts.dropped,
        ws.dropped,
        rss_start,
        rss_end,
        rss_peak,
        rss_by_tenth
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        match rss_by_tenth.get(5) {
            Some(&half) if half > 0 => {
                let level = rss_end as f64 / half as f64;
                format!(
                    "{level:.3} ({})",
                    if level <= 1.05 { "level" } else { "**rising**" }
                )
            }
            _ => "(a run too short to have a half-way reading)".to_owned(),
        },
        heap_by_tenth
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        cpu_used.as_secs_f64() * 1e6 / events_in_run.max(1) as f64,
        s.errors.len(),
    );
    println!("\n{report}");
    for e in s.errors.iter().take(10) {
        println!("  stream error: {e}");
    }
    if let Some(path) = &o.write {
        std::fs::write(path, &report)?;
    }
    if missing > 0 || repeated > 0 || unknown > 0 {
        bail!(
            "fills: {missing} missing, {repeated} repeated, {unknown} unknown (seed {})",
            o.seed
        );
    }
    if s.users != users_now {
        bail!(
            "the world's users seen {:?} differ from the service's {:?} (seed {})",
            s.users,
            users_now,
            o.seed
        );
    }
    if assets_behind > 0 || s.out_of_order > 0 || !send_errors.is_empty() {
        bail!(
            "world: {assets_behind} assets not at the service's revision, {} events out of \
             order, sends wrong: {send_errors:?} (seed {})",
            s.out_of_order,
            o.seed
        );
    }
    println!(
        "soak: every fill delivered exactly once; the world's users and assets as the \
         service has them, its events in order; every accepted send seen once, none twice"
    );
    Ok(())
}
