//! One shape for all six clients, held so that a seventh cannot drift: every collection
//! has the same pagination contract (`list(&params)` gives one page, `iter()` every item,
//! `iter_from(&params)` every item from a point, `pages(&params)` page by page, with the
//! same page and paginator types); one verb opens a stream; each crate's root holds its
//! client, its plan and the error types, and the rest lives in modules named for the
//! resource. The contract is checked by the compiler (the functions below take the
//! methods as they are), the roots by reading each crate's `lib.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use core_http::Result;
use core_http::pagination::{
    OffsetPages, OffsetPaginator, Page, TokenPage, TokenPages, TokenPaginator,
};

/// The contract of an offset/limit collection.
fn offset_contract<P, T>(
    _list: impl Fn(&P) -> Result<Page<T>>,
    _iter: impl Fn() -> OffsetPaginator<T>,
    _iter_from: impl Fn(&P) -> OffsetPaginator<T>,
    _pages: impl Fn(&P) -> OffsetPages<T>,
) {
}

/// The contract of a page-token collection.
fn token_contract<P, T>(
    _list: impl Fn(&P) -> Result<TokenPage<T>>,
    _iter: impl Fn() -> TokenPaginator<T>,
    _iter_from: impl Fn(&P) -> TokenPaginator<T>,
    _pages: impl Fn(&P) -> TokenPages<T>,
) {
}

/// The contract of a collection that cannot be listed without parameters (bars are a
/// symbol's, news is about symbols): no `iter()`.
fn token_contract_with_params<P, T>(
    _list: impl Fn(&P) -> Result<TokenPage<T>>,
    _iter_from: impl Fn(&P) -> TokenPaginator<T>,
    _pages: impl Fn(&P) -> TokenPages<T>,
) {
}

#[test]
fn every_collection_has_the_same_pagination_contract() {
    let social = social_client::Client::new("https://a.example", "k").unwrap();
    offset_contract(
        |p| social.posts().list(p),
        || social.posts().iter(),
        |p| social.posts().iter_from(p),
        |p| social.posts().pages(p),
    );
    let projects = projects_client::Client::new("https://a.example", "k").unwrap();
    offset_contract(
        |p| projects.projects().list(p),
        || projects.projects().iter(),
        |p| projects.projects().iter_from(p),
        |p| projects.projects().pages(p),
    );
    let trading = trading_client::Client::new("https://a.example", "k").unwrap();
    token_contract(
        |p| trading.orders().list(p),
        || trading.orders().iter(),
        |p| trading.orders().iter_from(p),
        |p| trading.orders().pages(p),
    );
    token_contract(
        |p| trading.activities().list(p),
        || trading.activities().iter(),
        |p| trading.activities().iter_from(p),
        |p| trading.activities().pages(p),
    );
    token_contract_with_params(
        |p| trading.news().list(p),
        |p| trading.news().iter_from(p),
        |p| trading.news().pages(p),
    );
    token_contract_with_params(
        |p| trading.history().list(p),
        |p| trading.history().iter_from(p),
        |p| trading.history().pages(p),
    );
    let worlds = worlds_client::Client::new("https://a.example", "k").unwrap();
    token_contract(
        |p| worlds.worlds().list(p),
        || worlds.worlds().iter(),
        |p| worlds.worlds().iter_from(p),
        |p| worlds.worlds().pages(p),
    );
    // A world's assets: the world first, then the same contract.
    token_contract(
        |p| worlds.assets().list("w1", p),
        || worlds.assets().iter("w1"),
        |p| worlds.assets().iter_from("w1", p),
        |p| worlds.assets().pages("w1", p),
    );
}

#[test]
fn one_verb_opens_a_stream() {
    // `stream()` and `stream_with(..)` in both crates with streams, and their settings
    // and error type reachable from each crate's `stream` module.
    let trading = trading_client::Client::new("https://a.example", "k").unwrap();
    let worlds = worlds_client::Client::new("https://a.example", "k").unwrap();
    let _: fn(&trading_client::Client) -> Result<trading_client::stream::TradingStream> =
        trading_client::Client::stream;
    let _: fn(&worlds_client::Client) -> Result<worlds_client::stream::WorldsStream> =
        worlds_client::Client::stream;
    let _ = (trading.stream_url(), worlds.stream_url());
    let _: Option<trading_client::stream::WsError> = None;
    let _: Option<worlds_client::stream::WsError> = None;
    let _: Option<trading_client::stream::StreamConfig> = None;
    let _: Option<worlds_client::stream::ReconnectPolicy> = None;
}

#[test]
fn what_a_builder_takes_is_nameable_from_every_client() {
    // The observer and what it sees, through each crate's own `config`.
    fn takes<O: social_client::config::Observer>() {}
    let _: Option<social_client::config::Attempt> = None;
    let _: Option<esign_client::config::StreamEvent> = None;
    let _: Option<vision_client::config::ClientBuilder<vision_client::Client>> = None;
    let _: Option<projects_client::pagination::Page<projects_client::projects::Project>> = None;
    let _: Option<trading_client::transport::Headers> = None;
    let _: Option<worlds_client::BulkOutcome<worlds_client::worlds::World>> = None;
}

/// The names a client crate's root may hold besides what `core_http::reexports!()`
/// gives every crate: its client, its plans, and what its crate documents (the decimal
/// type of money, a trading environment, the `http` crate behind a feature).
const ROOT_ALLOWED: [&str; 5] = ["Client", "Plan", "Environment", "Decimal", "http"];

#[test]
fn each_crate_root_holds_its_client_and_errors_and_modules_named_for_resources() {
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut crates = 0;
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with("-client") {
            continue;
        }
        crates += 1;
        let lib = std::fs::read_to_string(entry.path().join("src/lib.rs")).unwrap();
        assert!(
            lib.contains("core_http::reexports!();"),
            "{name}: the shared re-exports"
        );
        for line in lib.lines().map(str::trim) {
            let Some(rest) = line.strip_prefix("pub use ") else {
                continue;
            };
            let names: Vec<&str> = rest
                .trim_end_matches(';')
                .rsplit("::")
                .next()
                .unwrap()
                .trim_matches(|c| c == '{' || c == '}')
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .collect();
            for n in names {
                assert!(
                    ROOT_ALLOWED.contains(&n),
                    "{name}: `{n}` at the crate root; put it in the module of its resource"
                );
            }
        }
        // Every public module is a resource (or the webhook events, or the stream).
        for line in lib.lines().map(str::trim) {
            if let Some(module) = line.strip_prefix("pub mod ") {
                let module = module.trim_end_matches(';');
                assert!(
                    module.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                    "{name}: module {module}"
                );
            }
        }
        // No second word for an idea.
        let src = read_all(&entry.path().join("src"));
        for (word, one) in [
            ("pub fn realtime", "stream"),
            ("pub fn page(", "list"),
            ("pub fn page_size(", "limit"),
            ("pub fn query(", "a List* parameter type"),
        ] {
            assert!(
                !src.contains(word),
                "{name}: `{word}` where every crate says {one}"
            );
        }
    }
    assert_eq!(crates, 6, "six client crates");
}

fn read_all(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&read_all(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
    out
}
