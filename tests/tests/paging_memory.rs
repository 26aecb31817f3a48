//! A listing of 1,000 pages whose tokens are 60 KB each: the paginator remembers the
//! tokens it used (to stop a server that hands one back) in bounded memory, not the
//! tokens themselves. Its own test binary, so the peak resident memory is this test's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use testkit::bench::{memory_mib, reset_peak};
use testkit::hostile::{Act, Hostile};

const PAGES: usize = 1_000;
const TOKEN: usize = 60 * 1024;

#[test]
fn a_thousand_pages_of_long_tokens_keep_memory_bounded() {
    let server = Hostile::start(|r| {
        let body = if r.index + 1 < PAGES {
            // A fresh token every page: index first, so no two are alike.
            let token = format!("{:08}{}", r.index, "t".repeat(TOKEN - 8));
            format!(r#"{{"bars":[],"next_page_token":"{token}"}}"#)
        } else {
            r#"{"bars":[],"next_page_token":null}"#.to_owned()
        };
        Act::answer(200, &[("content-type", "application/json")], &body)
    });
    let client = trading_client::Client::new(server.url(), "pk_test").unwrap();
    reset_peak();
    let before = memory_mib("VmHWM");
    let mut bars = client
        .history()
        .iter_from(&trading_client::history::ListBars::new(
            "AAPL",
            trading_client::markets::Timeframe::Day,
        ));
    assert!(bars.next().is_none(), "no bars, and no error");
    let grown = memory_mib("VmHWM") - before;
    eprintln!("{PAGES} pages with {TOKEN}-byte tokens: peak grew {grown:.1} MiB");
    assert_eq!(server.count("GET"), PAGES, "every page was read");
    // Keeping every token would take 60 MiB.
    assert!(grown < 16.0, "grew by {grown:.1} MiB over {PAGES} pages");
}
