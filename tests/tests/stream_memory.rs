//! A caller that stops reading while the server floods messages of a type the client does
//! not know: the client's memory stays bounded (they travel on the lossy lane, which
//! drops its oldest and counts the drops). Its own test binary, so that the process's
//! peak resident memory is this test's alone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use testkit::bench::{memory_mib, reset_peak};
use testkit::hostile::{Act, Hostile};
use testkit::hostile_ws::WsServer;

const FLOOD: usize = 300_000;

#[test]
fn a_flood_of_unknown_messages_to_a_reader_that_stopped_keeps_memory_bounded() {
    let sent = Arc::new(AtomicBool::new(false));
    let done = sent.clone();
    let ws = WsServer::start(move |_, peer| {
        if !peer.accept() || peer.read_text().is_none() {
            return;
        }
        peer.text(r#"{"type":"subscribed"}"#);
        // About 1 KiB each: 300 MiB in all, were they kept.
        let padding = "x".repeat(1000);
        for i in 0..FLOOD {
            let message = format!(r#"{{"type":"halt.v2","n":{i},"pad":"{padding}"}}"#);
            if !peer.text(&message) {
                break;
            }
        }
        // The last message the client reads is a known one.
        peer.text(r#"{"type":"quote","symbol":"END","price":"1"}"#);
        done.store(true, Ordering::SeqCst);
        while peer.read_text().is_some() {}
    });
    let rest = Hostile::start(|_| {
        Act::answer(
            200,
            &[("content-type", "application/json")],
            r#"{"orders":[]}"#,
        )
    });
    let client = trading_client::Client::new(rest.url(), "pk_test")
        .unwrap()
        .with_stream_url(ws.url());
    let mut stream = client.stream().unwrap();
    stream.subscribe_quotes(&["END"]).unwrap();
    reset_peak();
    let before = memory_mib("VmHWM");
    let started = Instant::now();
    while !sent.load(Ordering::SeqCst) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the flood did not end"
        );
        thread::sleep(Duration::from_millis(50));
    }
    // Until the client's thread has taken in the whole flood.
    while stream.stats().received < FLOOD as u64 + 1 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{:?}",
            stream.stats()
        );
        thread::sleep(Duration::from_millis(50));
    }
    let grown = memory_mib("VmHWM") - before;
    let stats = stream.stats();
    eprintln!("{FLOOD} unknown messages to a stopped reader: peak grew {grown:.1} MiB; {stats:?}");
    // What waits is the lossy lane's 10,000 newest (about 1 KiB each when decoded).
    assert!(
        grown < 64.0,
        "the client grew by {grown:.1} MiB for {FLOOD} unknown messages"
    );
    assert!(
        stats.dropped >= (FLOOD - 10_000) as u64,
        "the drops are counted: {stats:?}"
    );
    assert_eq!(stats.fell_behind, 0, "nothing lossless was lost");
    // The newest are still there, in order, the known quote last.
    let mut last = None;
    while let Some(item) = stream.next_timeout(Duration::from_millis(200)) {
        last = Some(item.unwrap());
    }
    match last {
        Some(trading_client::stream::Event::Quote(q)) => assert_eq!(q.symbol, "END"),
        other => panic!("expected the final quote, got {other:?}"),
    }
}
