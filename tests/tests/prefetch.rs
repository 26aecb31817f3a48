//! The next page while you read, over a socket: a list asks for page n+1 as soon as the
//! caller has page n, at most one page ahead, never after the iterator is dropped, with
//! its errors, cuts and resume tokens exactly where they are without it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use core_http::HttpClient;
use core_http::pagination::{OffsetPaginator, Page, PageParams, TokenPage, TokenPaginator};
use serde_json::{Value, json};
use testkit::hostile::{Act, Hostile, Request};

/// Each answer takes this long: the round trip of a real link.
const LATENCY: Duration = Duration::from_millis(60);

fn query(path: &str, name: &str) -> Option<String> {
    let (_, q) = path.split_once('?')?;
    q.split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
        .map(str::to_owned)
}

/// An offset list of `total` items, `limit` a page, each answer after [`LATENCY`].
fn offset_server(total: u64) -> Hostile {
    Hostile::start(move |r: &Request| {
        let offset: u64 = query(&r.path, "offset")
            .and_then(|o| o.parse().ok())
            .unwrap_or(0);
        let limit: u64 = query(&r.path, "limit")
            .and_then(|o| o.parse().ok())
            .unwrap_or(10);
        let items: Vec<Value> = (offset..(offset + limit).min(total))
            .map(|i| json!(i))
            .collect();
        let body = json!({"data": items, "meta": {"total": total}}).to_string();
        Act::SendAfter(
            LATENCY,
            testkit::hostile::raw(
                200,
                &[("content-type", "application/json")],
                body.as_bytes(),
            ),
        )
    })
}

fn client(url: &str, prefetch: bool) -> HttpClient {
    HttpClient::builder()
        .base_url(url)
        .api_key("sk_test_prefetch")
        .prefetch(prefetch)
        .build()
        .unwrap()
}

fn offset_list(http: &HttpClient, limit: u32) -> OffsetPaginator<Value> {
    let fetcher = http.clone();
    OffsetPaginator::over(http, &PageParams::new().limit(limit), 100, move |p| {
        fetcher
            .get("/v1/items")
            .page(p, 100)
            .send_json::<Page<Value>>()
    })
}

/// Reads the whole list, "working" `work` on each page's items.
fn read_all(list: OffsetPaginator<Value>, limit: usize, work: Duration) -> (Vec<u64>, Duration) {
    let started = Instant::now();
    let mut items = Vec::new();
    for item in list {
        let n = item.unwrap().as_u64().unwrap();
        if (n as usize).is_multiple_of(limit) {
            std::thread::sleep(work);
        }
        items.push(n);
    }
    (items, started.elapsed())
}

#[test]
fn the_next_page_is_fetched_while_the_caller_works_and_the_items_come_in_order() {
    let server = offset_server(50);
    let (ahead, with) = read_all(offset_list(&client(server.url(), true), 10), 10, LATENCY);
    let server_off = offset_server(50);
    let (alone, without) = read_all(
        offset_list(&client(server_off.url(), false), 10),
        10,
        LATENCY,
    );
    eprintln!(
        "5 pages, {LATENCY:?} a page and {LATENCY:?} of work on each: {with:?} ahead, {without:?} one at a time"
    );
    assert_eq!(ahead, (0..50).collect::<Vec<_>>());
    assert_eq!(ahead, alone);
    // One at a time: 5 x (latency + work); ahead: about 5 x work + one latency.
    assert!(without >= LATENCY * 10, "{without:?}");
    assert!(with < without.mul_f64(0.8), "{with:?} against {without:?}");
    // The same requests, in the same order, and nothing past the end.
    assert_eq!(server.lines(), server_off.lines());
    assert_eq!(server.count("GET"), 5);
}

#[test]
fn at_most_one_page_is_ahead_and_nothing_is_asked_once_the_list_is_dropped() {
    let server = offset_server(1_000);
    let mut list = offset_list(&client(server.url(), true), 10);
    assert_eq!(list.next().unwrap().unwrap(), json!(0));
    std::thread::sleep(LATENCY * 5);
    assert_eq!(server.count("GET"), 2, "page 1, and page 2 ahead: no more");
    assert_eq!(list.buffered(), 9, "what the caller holds is page 1");
    assert_eq!(
        list.next_offset(),
        10,
        "where to start again is after page 1"
    );
    drop(list);
    std::thread::sleep(LATENCY * 5);
    assert_eq!(server.count("GET"), 2, "nothing asked after the drop");

    // Turned off for one list, a page is asked only when the caller comes to it.
    let mut one = offset_list(&client(server.url(), true), 10).prefetch(false);
    let _ = one.next();
    std::thread::sleep(LATENCY * 3);
    assert_eq!(server.count("GET"), 3);
}

/// A token list whose page `n` of 3 names page `n+1`; the second page answers as
/// `second` says.
fn token_server(second: Act) -> Hostile {
    Hostile::start(move |r: &Request| {
        let page = |items: Value, next: Value| {
            Act::json(
                200,
                &json!({"data": items, "next_page_token": next}).to_string(),
            )
        };
        match query(&r.path, "page_token").as_deref() {
            None => page(json!([1, 2, 3]), json!("p2")),
            Some("p2") => second.clone(),
            Some("p3") => page(json!([7, 8]), Value::Null),
            Some(other) => panic!("asked for {other}"),
        }
    })
}

fn token_list(http: &HttpClient, prefetch: bool) -> TokenPaginator<Value> {
    #[derive(Clone, Default)]
    struct Params {
        token: Option<String>,
    }
    impl core_http::pagination::TokenParams for Params {
        fn token(&self) -> Option<&str> {
            self.token.as_deref()
        }
        fn set_token(&mut self, token: Option<&str>) {
            self.token = token.map(str::to_owned);
        }
    }
    let fetcher = http.clone();
    TokenPaginator::over(http, &Params::default(), move |p: &Params| {
        let query: Vec<(&str, &str)> = p
            .token
            .as_deref()
            .map(|t| ("page_token", t))
            .into_iter()
            .collect();
        let page: Value = fetcher.raw().get("/v1/things", &query)?;
        let data = serde_json::from_value(page["data"].clone()).unwrap_or_default();
        Ok(TokenPage::new(
            data,
            page["next_page_token"].as_str().map(str::to_owned),
        ))
    })
    .prefetch(prefetch)
}

/// Every result of the list, with the resume token after each, as text.
fn transcript(list: TokenPaginator<Value>) -> Vec<String> {
    let mut list = list;
    let mut out = Vec::new();
    while let Some(item) = list.next() {
        let item = match item {
            Ok(v) => v.to_string(),
            Err(e) => format!("error: {} ({:?})", e, e.kind()),
        };
        out.push(format!(
            "{item} resume={:?} buffered={}",
            list.resume_token(),
            list.buffered()
        ));
    }
    out
}

#[test]
fn errors_cuts_and_resume_tokens_arrive_where_they_would_without_it() {
    let second = [
        // An error page: the items before it, then the error, then the end.
        Act::json(
            404,
            r#"{"error": {"code": "not_found", "message": "gone"}}"#,
        ),
        // A page that hands back the first page's token: cut short after it.
        Act::json(200, r#"{"data": [4, 5], "next_page_token": "p2"}"#),
        // A whole list.
        Act::json(200, r#"{"data": [4, 5, 6], "next_page_token": "p3"}"#),
    ];
    for act in second {
        let (on, off) = (token_server(act.clone()), token_server(act));
        let with = transcript(token_list(&client(on.url(), true), true));
        let without = transcript(token_list(&client(off.url(), false), false));
        eprintln!("{with:#?}");
        assert_eq!(with, without);
        assert_eq!(on.lines(), off.lines(), "the same requests, none more");
    }
}

#[test]
fn a_page_fetched_ahead_waits_out_retry_after_as_any_call() {
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = hits.clone();
    let server = Hostile::start(move |r: &Request| {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        match (query(&r.path, "offset").as_deref(), r.index) {
            // Page 2 is refused once with Retry-After: 1.
            (Some("2"), 1) => Act::json_with(
                429,
                &[("retry-after", "1")],
                r#"{"error": {"code": "rate_limited", "message": "slow down"}}"#,
            ),
            (Some("2"), _) => Act::json(200, r#"{"data": [2, 3], "meta": {"total": 4}}"#),
            _ => Act::json(200, r#"{"data": [0, 1], "meta": {"total": 4}}"#),
        }
    });
    let http = client(server.url(), true);
    let started = Instant::now();
    let items: Vec<Value> = offset_list(&http, 2).collect::<Result<_, _>>().unwrap();
    assert_eq!(items, [json!(0), json!(1), json!(2), json!(3)]);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was waited out"
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    assert!(seen[2].at.duration_since(seen[1].at) >= Duration::from_millis(990));
}

#[test]
fn a_page_waiting_for_the_rate_limit_or_a_retry_after_is_never_asked_after_a_drop() {
    // One request a second: page 2, asked ahead, waits a second for its turn.
    let server = offset_server(1_000);
    let paced = HttpClient::builder()
        .base_url(server.url())
        .api_key("sk_test_prefetch")
        .rate_limit(core_http::config::RateLimit::per_minute(60).with_burst(1))
        .build()
        .unwrap();
    let mut list = offset_list(&paced, 10);
    assert_eq!(list.next().unwrap().unwrap(), json!(0));
    drop(list);
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(server.count("GET"), 1, "{:?}", server.lines());

    // Page 2 answers 429 with Retry-After: 1; the list is dropped during the wait.
    let server = Hostile::start(|r: &Request| match query(&r.path, "offset").as_deref() {
        Some("2") => Act::json_with(
            429,
            &[("retry-after", "1")],
            r#"{"error": {"code": "rate_limited", "message": "slow down"}}"#,
        ),
        _ => Act::json(200, r#"{"data": [0, 1], "meta": {"total": 4}}"#),
    });
    let mut list = offset_list(&client(server.url(), true), 2);
    assert_eq!(list.next().unwrap().unwrap(), json!(0));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(server.count("GET"), 2, "page 2 asked ahead, refused");
    drop(list);
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(server.count("GET"), 2, "{:?}", server.lines());
}

#[test]
fn a_page_ahead_that_fails_in_an_outage_is_asked_again_when_the_caller_comes_to_it() {
    // Page 2 is refused with 503 for the first two seconds; the caller takes three
    // seconds over page 1, by which time the service is back.
    let outage = Instant::now() + Duration::from_secs(2);
    let serve = move |r: &Request| {
        let offset: u64 = query(&r.path, "offset")
            .and_then(|o| o.parse().ok())
            .unwrap_or(0);
        if offset > 0 && Instant::now() < outage {
            return Act::json(
                503,
                r#"{"error": {"code": "unavailable", "message": "down"}}"#,
            );
        }
        let items: Vec<u64> = (offset..(offset + 100).min(300)).collect();
        Act::json(
            200,
            &json!({"data": items, "meta": {"total": 300}}).to_string(),
        )
    };
    let (on, off) = (Hostile::start(serve), Hostile::start(serve));
    for (server, prefetch) in [(&on, true), (&off, false)] {
        let list = offset_list(&client(server.url(), prefetch), 100);
        let (items, _) = read_all(list, 100, Duration::from_millis(3_000) / 3);
        assert_eq!(items, (0..300).collect::<Vec<u64>>(), "prefetch {prefetch}");
    }
    assert!(
        on.seen()
            .iter()
            .filter(|s| s.path.contains("offset=100"))
            .count()
            > 1,
        "page 2 was asked ahead, in the outage, then again: {:?}",
        on.lines()
    );
}
