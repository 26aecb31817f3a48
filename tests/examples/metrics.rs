//! A script's metrics without parsing logs: an observer on the builder counts every
//! attempt by status and retry, keeps a latency histogram, and the stream's reconnects;
//! printed at the end. Runs against the local sandbox (no key, no network):
//! `cargo run -p e2e --example metrics`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use core_http::config::{Attempt, Observer, StreamEvent};

/// Latency buckets, in milliseconds (upper bounds).
const BUCKETS: [u64; 6] = [1, 5, 10, 50, 100, 1_000];

#[derive(Default)]
struct Metrics {
    by_outcome: BTreeMap<String, u64>,
    retries: u64,
    histogram: [u64; BUCKETS.len() + 1],
    bytes: u64,
    stream: BTreeMap<&'static str, u64>,
}

#[derive(Default, Clone)]
struct Recorder(Arc<Mutex<Metrics>>);

impl Observer for Recorder {
    fn attempt(&self, a: &Attempt) {
        let mut m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let outcome = match (a.status, a.failure) {
            (Some(status), _) => format!("{} {status}", a.method),
            (None, Some(failure)) => format!("{} {failure}", a.method),
            (None, None) => format!("{} ?", a.method),
        };
        *m.by_outcome.entry(outcome).or_default() += 1;
        m.retries += u64::from(a.retry_in.is_some());
        let ms = a.duration.as_millis() as u64;
        let slot = BUCKETS
            .iter()
            .position(|b| ms < *b)
            .unwrap_or(BUCKETS.len());
        m.histogram[slot] += 1;
        m.bytes += a.bytes.unwrap_or(0);
    }

    fn stream(&self, event: &StreamEvent) {
        let mut m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let name = match event {
            StreamEvent::Connected { .. } => "connected",
            StreamEvent::Lost { .. } => "lost",
            StreamEvent::Reconnected { .. } => "reconnected",
            StreamEvent::FellBehind { .. } => "fell behind",
            StreamEvent::Ended => "ended",
            _ => "other",
        };
        *m.stream.entry(name).or_default() += 1;
    }
}

fn main() -> anyhow::Result<()> {
    let sandbox = e2e::sandbox()?;
    let recorder = Recorder::default();
    let client = worlds_client::Client::builder()
        .base_url(sandbox.worlds().url())
        .api_key(sandbox.api_key())
        .observer(recorder.clone())
        .build()?;

    // The script's work: read worlds and users, change assets, through one 503.
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    sandbox.inject(sandbox::Fault::on("GET", "/worlds/api/v1/worlds").status(503));
    for world in client.worlds().iter() {
        let world = world?;
        client.worlds().users(&world.id)?;
    }
    let mut realtime = client.stream()?;
    realtime.join(plaza.as_str())?;
    for asset in client.assets().iter(plaza.as_str()).take(2) {
        let asset = asset?;
        let mut change = serde_json::Map::new();
        change.insert("seen".into(), serde_json::json!(true));
        client.assets().merge(asset.id.as_str(), &change)?;
    }
    sandbox.drop_streams(Some(sandbox::Service::Worlds));
    while let Some(event) = realtime.next_timeout(Duration::from_secs(5)) {
        if matches!(event?, worlds_client::stream::Event::Reconnected { .. }) {
            break;
        }
    }
    realtime.close();

    let m = recorder
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    println!("attempts by outcome:");
    for (outcome, n) in &m.by_outcome {
        println!("  {outcome:<12} {n}");
    }
    println!("retries: {}; bytes read: {}", m.retries, m.bytes);
    println!("latency:");
    for (i, n) in m.histogram.iter().enumerate() {
        let label = match BUCKETS.get(i) {
            Some(b) => format!("< {b} ms"),
            None => format!(">= {} ms", BUCKETS[BUCKETS.len() - 1]),
        };
        println!("  {label:<10} {}", "#".repeat(*n as usize));
    }
    println!("stream: {:?}", m.stream);
    Ok(())
}
