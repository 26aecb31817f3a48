//! Every client against a hostile server (raw sockets, every byte chosen): resets, stalls,
//! truncated, oversized, malformed and hostile answers, 429 and 503 in every Retry-After
//! form, redirect chains, and an OAuth token endpoint misbehaving in each of those ways.
//!
//! For every case and every client call it asserts: no panic; the call ends within its
//! timeout plus one second; what the server saw (never an action sent again after the
//! server may have acted on it, unless the service de-duplicates it); the error and its
//! `may_have_been_processed`; and that no secret appears in the error's `Display` or
//! `Debug`, or in any log record of the project's own crates.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use core_http::{
    ClientBuilder, Error,
    config::{Auth, OAuth2Config, Sleeper},
    service::ServiceClient,
};
use testkit::hostile::{Act, Hostile, raw, refused_url};

/// The key every client is built with; it must never show.
const KEY: &str = "sk_test_HOSTILE_SECRET_KEY";
/// The OAuth client secret; it must never show, nor reach another origin.
const CLIENT_SECRET: &str = "cs_HOSTILE_CLIENT_SECRET";
/// Every call's whole-call timeout.
const BUDGET: Duration = Duration::from_millis(1500);
/// How long a stalling server stalls: far longer than the budget.
const STALL: Duration = Duration::from_secs(8);

// ---- what is captured ----

/// Our crates' targets (a dependency's wire dump is documented apart).
fn ours(target: &str) -> bool {
    [
        "core_http",
        "social_client",
        "esign_client",
        "vision_client",
        "projects_client",
        "trading_client",
        "worlds_client",
    ]
    .iter()
    .any(|t| target.starts_with(t))
}

fn capture_logs() {
    testkit::logs::install(ours);
}

/// A sleeper that records and returns at once: waits the server asks for cost no time.
#[derive(Debug, Default)]
struct NoSleep;

impl Sleeper for NoSleep {
    fn sleep(&self, _: Duration) {}
}

// ---- the calls ----

/// How repeating a call is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A read: may be repeated freely.
    Read,
    /// An action the service does not de-duplicate: never sent again once the server
    /// may have acted on it.
    Action,
    /// A replay-safe action (replay-safe method, a key the service honours,
    /// or a pure query).
    Repeatable,
}

type Run = fn(&str, Auth) -> core_http::Result<()>;

struct Call {
    name: &'static str,
    method: &'static str,
    kind: Kind,
    /// Whether the call reads the answer's body (a DELETE answered 2xx succeeds whatever
    /// the body holds).
    decodes: bool,
    run: Run,
}

fn builder<C: ServiceClient>(base: &str, auth: Auth) -> ClientBuilder<C> {
    ClientBuilder::<C>::new()
        .base_url(base)
        .auth(auth)
        .timeout(BUDGET)
        .sleeper(Arc::new(NoSleep))
}

fn calls() -> Vec<Call> {
    vec![
        Call {
            name: "social posts list",
            method: "GET",
            kind: Kind::Read,
            decodes: true,
            run: |base, auth| {
                let c: social_client::Client = builder(base, auth).build()?;
                c.posts()
                    .list(&social_client::posts::ListPosts::new())
                    .map(drop)
            },
        },
        Call {
            name: "social posts create",
            method: "POST",
            kind: Kind::Action,
            decodes: true,
            run: |base, auth| {
                let c: social_client::Client = builder(base, auth).build()?;
                let post =
                    social_client::posts::NewPost::new("hi", [social_client::posts::Platform::X]);
                c.posts().create(&post).map(drop)
            },
        },
        Call {
            name: "social accounts disconnect",
            method: "DELETE",
            kind: Kind::Repeatable,
            decodes: false,
            run: |base, auth| {
                let c: social_client::Client = builder(base, auth).build()?;
                c.accounts().disconnect("acct_1")
            },
        },
        Call {
            name: "projects list",
            method: "GET",
            kind: Kind::Read,
            decodes: true,
            run: |base, auth| {
                let c: projects_client::Client = builder(base, auth).build()?;
                c.projects()
                    .list(&projects_client::projects::ListProjects::new())
                    .map(drop)
            },
        },
        Call {
            name: "projects create",
            method: "POST",
            kind: Kind::Action,
            decodes: true,
            run: |base, auth| {
                let c: projects_client::Client = builder(base, auth).build()?;
                c.projects()
                    .create(&projects_client::projects::NewProject::new("p"))
                    .map(drop)
            },
        },
        Call {
            name: "vision detect",
            method: "POST",
            kind: Kind::Repeatable,
            decodes: true,
            run: |base, auth| {
                let c: vision_client::Client = builder(base, auth).build()?;
                c.analyses()
                    .detect(&vision_client::analyses::DetectRequest::new(
                        "https://img.example/a.png",
                    ))
                    .map(drop)
            },
        },
        Call {
            name: "vision status",
            method: "GET",
            kind: Kind::Read,
            decodes: true,
            run: |base, auth| {
                let c: vision_client::Client = builder(base, auth).build()?;
                c.status().get().map(drop)
            },
        },
        Call {
            name: "esign get",
            method: "GET",
            kind: Kind::Read,
            decodes: true,
            run: |base, auth| {
                let c: esign_client::Client = builder(base, auth).build()?;
                c.documents().get("doc_1").map(drop)
            },
        },
        Call {
            name: "esign send",
            method: "POST",
            kind: Kind::Repeatable,
            decodes: true,
            run: |base, auth| {
                let c: esign_client::Client = builder(base, auth).build()?;
                let send = esign_client::documents::SendDocument::new(
                    esign_client::documents::DocumentSource::bytes(
                        "a.pdf",
                        b"%PDF-1.4 x %%EOF".to_vec(),
                    ),
                )
                .signer(esign_client::documents::NewSigner::new(
                    "Ada",
                    "ada@example.com",
                ));
                c.documents().send(&send).map(drop)
            },
        },
        Call {
            name: "esign download",
            method: "GET",
            kind: Kind::Read,
            decodes: true,
            run: |base, auth| {
                let c: esign_client::Client = builder(base, auth).build()?;
                let mut sink = Vec::new();
                c.documents().download_to("doc_1", &mut sink).map(drop)
            },
        },
        Call {
            name: "trading quotes",
            method: "GET",
            kind: Kind::Read,
            decodes: true,
            run: |base, auth| {
                let c: trading_client::Client = builder(base, auth).build()?;
                c.markets().quotes(&["AAPL"]).map(drop)
            },
        },
        Call {
            // Safe to repeat: the client order id is the same on every attempt, and an
            // uncertain outcome is settled by a lookup within the same timeout.
            name: "trading place",
            method: "POST",
            kind: Kind::Repeatable,
            decodes: true,
            run: |base, auth| {
                let c: trading_client::Client = builder(base, auth).build()?;
                let order = trading_client::orders::OrderRequest::market(
                    "AAPL",
                    trading_client::orders::Side::Buy,
                    trading_client::orders::Amount::Qty(trading_client::Decimal::ONE),
                )
                .client_order_id("hostile-1");
                c.orders().place(&order).map(drop)
            },
        },
        Call {
            name: "trading cancel",
            method: "DELETE",
            kind: Kind::Repeatable,
            decodes: true,
            run: |base, auth| {
                let c: trading_client::Client = builder(base, auth).build()?;
                c.orders().cancel("ord_1").map(drop)
            },
        },
        Call {
            name: "trading account",
            method: "GET",
            kind: Kind::Read,
            decodes: true,
            run: |base, auth| {
                let c: trading_client::Client = builder(base, auth).build()?;
                c.account().get().map(drop)
            },
        },
        Call {
            name: "trading history",
            method: "GET",
            kind: Kind::Read,
            decodes: true,
            run: |base, auth| {
                let c: trading_client::Client = builder(base, auth).build()?;
                let mut bars = c
                    .history()
                    .iter_from(&trading_client::history::ListBars::new(
                        "AAPL",
                        trading_client::markets::Timeframe::Minute,
                    ));
                match bars.next() {
                    Some(bar) => bar.map(drop),
                    None => Ok(()),
                }
            },
        },
        Call {
            name: "worlds list",
            method: "GET",
            kind: Kind::Read,
            decodes: true,
            run: |base, auth| {
                let c: worlds_client::Client = builder(base, auth).build()?;
                c.worlds()
                    .list(&worlds_client::worlds::ListWorlds::new())
                    .map(drop)
            },
        },
        Call {
            name: "worlds create",
            method: "POST",
            kind: Kind::Action,
            decodes: true,
            run: |base, auth| {
                let c: worlds_client::Client = builder(base, auth).build()?;
                c.worlds()
                    .create(&worlds_client::worlds::NewWorld::new("w", "plain"))
                    .map(drop)
            },
        },
        Call {
            name: "worlds users",
            method: "GET",
            kind: Kind::Read,
            decodes: true,
            run: |base, auth| {
                let c: worlds_client::Client = builder(base, auth).build()?;
                c.worlds().users("world_1").map(drop)
            },
        },
        Call {
            name: "worlds asset update",
            method: "PUT",
            kind: Kind::Repeatable,
            decodes: true,
            run: |base, auth| {
                let c: worlds_client::Client = builder(base, auth).build()?;
                c.assets()
                    .replace("asset_1", &serde_json::Map::new())
                    .map(drop)
            },
        },
        Call {
            // Conditional: never repeated once the server may have acted.
            name: "worlds asset update_if",
            method: "PUT",
            kind: Kind::Action,
            decodes: true,
            run: |base, auth| {
                let c: worlds_client::Client = builder(base, auth).build()?;
                c.assets()
                    .replace_if("asset_1", &serde_json::Map::new(), 3)
                    .map(drop)
            },
        },
    ]
}

// ---- the checks ----

/// What one case expects of every call's error.
#[derive(Clone, Copy)]
enum Expect {
    /// Any error (or success) is fine; only the general rules apply.
    Anything,
    /// An error that says the request may have been processed.
    Processed,
    /// A timeout.
    Timeout,
    /// An error other than a timeout, that says the request may have been processed.
    ProcessedNotTimeout,
}

/// Runs every call against its own server made by `server`, all at once, and checks the
/// general rules and `expect`. Returns how many calls were checked.
fn check_all(case: &str, expect: Expect, server: impl Fn() -> Hostile + Sync) -> usize {
    capture_logs();
    let calls = calls();
    thread::scope(|scope| {
        let handles: Vec<_> = calls
            .iter()
            .map(|call| {
                let server = &server;
                scope.spawn(move || {
                    let hostile = server();
                    let started = Instant::now();
                    let result = (call.run)(hostile.url(), Auth::bearer(KEY));
                    (call, hostile, started.elapsed(), result)
                })
            })
            .collect();
        for handle in handles {
            let (call, hostile, took, result) = handle.join().expect("no panic");
            let what = format!("{case} / {}", call.name);
            assert!(
                took < BUDGET + Duration::from_secs(1),
                "{what}: took {took:?}"
            );
            check_repeats(&what, call, &hostile);
            if let Err(err) = &result {
                check_secrets(&what, err);
                match expect {
                    Expect::Anything => {}
                    Expect::Processed => {
                        // The server saw it (whether it did anything is the error's
                        // kind: an undecodable read did nothing).
                        assert_ne!(
                            err.delivery(),
                            core_http::Delivery::NotSent,
                            "{what}: {err:?}"
                        )
                    }
                    Expect::Timeout => {
                        // A keyed send names its key to repeat it with; the time-out
                        // is its failure either way.
                        let timeout = match err {
                            Error::Unsettled { source, .. } => &**source,
                            other => other,
                        };
                        assert!(matches!(timeout, Error::Timeout { .. }), "{what}: {err:?}");
                        assert_eq!(err.kind(), core_http::ErrorKind::Timeout, "{what}: {err:?}");
                        assert!(err.may_have_been_processed(), "{what}: {err:?}");
                    }
                    Expect::ProcessedNotTimeout => {
                        assert!(!matches!(err, Error::Timeout { .. }), "{what}: {err:?}");
                        assert_ne!(
                            err.delivery(),
                            core_http::Delivery::NotSent,
                            "{what}: {err:?}"
                        );
                    }
                }
            } else {
                assert!(
                    matches!(expect, Expect::Anything) || !call.decodes,
                    "{what}: succeeded against a hostile server"
                );
            }
        }
    });
    check_logs(case);
    eprintln!("adversarial {case}: {} calls checked", calls.len());
    calls.len()
}

/// Paths the cases redirect to: requests there are hops, not attempts.
const HOPS: [&str; 3] = ["/after-redirect", "/loop", "/elsewhere"];

fn check_repeats(what: &str, call: &Call, hostile: &Hostile) {
    // At most three attempts of each request a call makes (an order's POST, and the
    // lookup that settles an uncertain one).
    for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
        let attempts = hostile
            .seen()
            .iter()
            .filter(|s| s.method == method && !HOPS.iter().any(|h| s.path.starts_with(h)))
            .count();
        assert!(
            attempts <= 3,
            "{what}: {attempts} {method} attempts for one call"
        );
    }
    if call.kind == Kind::Action {
        // Attempts of the action after one the server may have acted on (an answer
        // other than 429/503, a redirect, or none at all). A 307/308 hop re-sending the
        // body is the redirect itself, not a new attempt.
        let originals: Vec<_> = hostile
            .seen()
            .into_iter()
            .filter(|s| s.method == call.method && !HOPS.iter().any(|h| s.path.starts_with(h)))
            .collect();
        let repeated = originals
            .iter()
            .position(|s| s.may_have_acted)
            .map_or(0, |first| originals.len() - first - 1);
        assert_eq!(
            repeated,
            0,
            "{what}: sent again after the server may have acted: {:#?}",
            hostile.seen()
        );
    }
}

fn check_secrets(what: &str, err: &Error) {
    let shown = format!("{err} {err:?}");
    for secret in [KEY, CLIENT_SECRET, "tok_HOSTILE_ACCESS_TOKEN"] {
        assert!(!shown.contains(secret), "{what}: {secret} in {shown}");
    }
}

fn check_logs(case: &str) {
    let logs = testkit::logs::lines().join("\n");
    for secret in [KEY, CLIENT_SECRET, "tok_HOSTILE_ACCESS_TOKEN"] {
        assert!(!logs.contains(secret), "{case}: {secret} in the logs");
    }
}

fn always(act: Act) -> impl Fn() -> Hostile + Sync {
    move || {
        let act = act.clone();
        Hostile::start(move |_| act.clone())
    }
}

fn head(status: u16, extra: &str, length: u64) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} Hostile\r\ncontent-type: application/json\r\n{extra}content-length: {length}\r\n\r\n"
    )
    .into_bytes()
}

// ---- connections ----

#[test]
fn refused_connections() {
    // Nothing listens: nothing was sent, and the error says so.
    for call in calls() {
        let err = (call.run)(&refused_url(), Auth::bearer(KEY)).unwrap_err();
        assert!(
            matches!(err, Error::Connect { .. }),
            "{}: {err:?}",
            call.name
        );
        assert!(!err.may_have_been_processed(), "{}: {err:?}", call.name);
        check_secrets(call.name, &err);
    }
}

#[test]
fn reset_before_the_request_is_read() {
    check_all(
        "reset before read",
        Expect::Processed,
        always(Act::CloseBeforeRead),
    );
}

#[test]
fn reset_after_the_request_is_read() {
    check_all(
        "reset after read",
        Expect::Processed,
        always(Act::CloseAfterRead),
    );
}

// ---- bodies ----

#[test]
fn truncated_bodies() {
    let mut bytes = head(200, "", 100);
    bytes.extend_from_slice(br#"{"data": ["#);
    check_all(
        "truncated",
        Expect::Processed,
        always(Act::SendThenStall(bytes, Duration::ZERO)),
    );
}

#[test]
fn oversized_bodies() {
    check_all(
        "oversized",
        Expect::ProcessedNotTimeout,
        always(Act::Flood {
            head: head(200, "", 40 * 1024 * 1024),
            len: 40 * 1024 * 1024,
            fill: b' ',
        }),
    );
}

#[test]
fn malformed_json() {
    check_all(
        "malformed json",
        Expect::ProcessedNotTimeout,
        always(Act::answer(
            200,
            &[("content-type", "application/json")],
            r#"{"data": [{"id": "p"#,
        )),
    );
}

#[test]
fn hostile_json() {
    // Nesting far beyond any decoder's stack, and numbers beyond any type.
    let deep = format!("{}1{}", "[".repeat(200_000), "]".repeat(200_000));
    check_all(
        "deeply nested json",
        Expect::ProcessedNotTimeout,
        always(Act::answer(200, &[], &deep)),
    );
    check_all(
        "absurd numbers",
        Expect::Anything,
        always(Act::answer(
            200,
            &[],
            r#"{"data":[{"id":"x","total":1e999,"followers":-1e400}],"meta":{"total":99999999999999999999999}}"#,
        )),
    );
}

#[test]
fn html_instead_of_json() {
    check_all(
        "html 200",
        Expect::ProcessedNotTimeout,
        always(Act::answer(
            200,
            &[("content-type", "text/html")],
            "<html><head><title>Captive portal</title></head></html>",
        )),
    );
    check_all(
        "html 502",
        Expect::ProcessedNotTimeout,
        always(Act::answer(
            502,
            &[("content-type", "text/html")],
            "<html><title>502 Bad Gateway</title></html>",
        )),
    );
}

// ---- time ----

#[test]
fn stalls_in_the_headers() {
    check_all(
        "stall in headers",
        Expect::Timeout,
        always(Act::SendThenStall(
            b"HTTP/1.1 200 OK\r\ncontent-".to_vec(),
            STALL,
        )),
    );
}

#[test]
fn stalls_in_the_body() {
    let mut bytes = head(200, "content-type: application/pdf\r\n", 1000);
    bytes.extend_from_slice(b"%PDF-1.4 and then nothing");
    check_all(
        "stall in body",
        Expect::Processed,
        always(Act::SendThenStall(bytes, STALL)),
    );
}

#[test]
fn trickling_error_bodies() {
    check_all(
        "trickling error body",
        Expect::Processed,
        always(Act::Trickle {
            head: head(500, "", 400),
            body: vec![b' '; 400],
            every: Duration::from_millis(50),
        }),
    );
}

// ---- 429 and 503 in every Retry-After form ----

#[test]
fn rate_limits_and_unavailability_in_every_retry_after_form() {
    let date = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(3));
    let forms: Vec<(&str, String)> = vec![
        ("retry-after", "1".into()),
        ("retry-after", "0.5".into()),
        ("retry-after", date),
        ("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".into()),
        ("retry-after", "1e19".into()),
        ("retry-after", "-5".into()),
        ("retry-after", "soon".into()),
        ("retry-after-ms", "250".into()),
        ("x-ratelimit-reset", "2".into()),
        ("x-ratelimit-reset", "99999999999999".into()),
    ];
    for status in [429, 503] {
        for (name, value) in &forms {
            let act = Act::answer(status, &[(name, value.as_str())], r#"{"error":"busy"}"#);
            check_all(
                &format!("{status} with {name}: {value}"),
                Expect::ProcessedNotTimeout,
                always(act),
            );
        }
    }
}

// ---- redirects ----

#[test]
fn redirect_loops() {
    check_all(
        "redirect loop",
        Expect::ProcessedNotTimeout,
        always(Act::redirect(302, "/loop")),
    );
    check_all(
        "redirect to itself",
        Expect::ProcessedNotTimeout,
        always(Act::redirect(308, "")),
    );
}

#[test]
fn redirects_of_actions_never_resend_them() {
    for status in [301, 302, 303, 307, 308] {
        let checked = check_all(
            &format!("{status} then 503"),
            Expect::Processed,
            move || {
                Hostile::start(move |r| {
                    if r.index == 0 {
                        Act::redirect(status, "/after-redirect")
                    } else {
                        Act::answer(503, &[], "{}")
                    }
                })
            },
        );
        assert!(checked > 0);
    }
    // Each call: the original request reached the server once.
    for status in [303, 307] {
        for call in calls() {
            let hostile = Hostile::start(move |r| {
                if r.path.starts_with("/after-redirect") {
                    Act::answer(503, &[], "{}")
                } else {
                    Act::redirect(status, "/after-redirect")
                }
            });
            let _ = (call.run)(hostile.url(), Auth::bearer(KEY));
            let originals = hostile
                .seen()
                .iter()
                .filter(|s| !s.path.starts_with("/after-redirect"))
                .count();
            if call.kind == Kind::Action {
                assert_eq!(originals, 1, "{status} / {}", call.name);
            }
        }
    }
}

#[test]
fn redirects_to_another_origin_carry_no_credentials() {
    let other = Arc::new(Hostile::start(|_| Act::answer(503, &[], "{}")));
    let target = other.url().to_owned();
    check_all("cross-origin redirect", Expect::Processed, move || {
        let target = target.clone();
        Hostile::start(move |_| Act::redirect(307, &format!("{target}/elsewhere")))
    });
    for seen in other.seen() {
        assert!(!seen.head.contains(KEY), "{}", seen.head);
        assert!(
            !seen.head.to_ascii_lowercase().contains("authorization"),
            "{}",
            seen.head
        );
    }
}

#[test]
fn slow_redirect_hops() {
    // On the same origin: an action is never followed to another one (see
    // `an_order_redirected_to_another_origin_is_never_sent_there`).
    check_all("slow redirect hop", Expect::Timeout, move || {
        Hostile::start(move |r| {
            if r.path.starts_with("/elsewhere") {
                Act::SendThenStall(b"HTTP/1.1 200".to_vec(), STALL)
            } else {
                Act::redirect(302, "/elsewhere/slow")
            }
        })
    });
}

// ---- an OAuth token endpoint misbehaving ----

#[test]
fn a_misbehaving_token_endpoint() {
    capture_logs();
    let elsewhere = Arc::new(Hostile::start(|_| {
        Act::answer(200, &[], r#"{"access_token":"tok_HOSTILE_ACCESS_TOKEN"}"#)
    }));
    let token_body = |body: &str| Act::answer(200, &[("content-type", "application/json")], body);
    let cases: Vec<(&str, Act)> = vec![
        ("reset before read", Act::CloseBeforeRead),
        ("reset after read", Act::CloseAfterRead),
        (
            "stall",
            Act::SendThenStall(b"HTTP/1.1 200 OK\r\n".to_vec(), STALL),
        ),
        (
            "trickle",
            Act::Trickle {
                head: head(200, "", 300),
                body: vec![b' '; 300],
                every: Duration::from_millis(50),
            },
        ),
        (
            "malformed",
            token_body(r#"{"access_token": "tok_HOSTILE_ACCESS_TOKEN""#),
        ),
        (
            "token of the wrong type",
            token_body(r#"{"access_token": ["tok_HOSTILE_ACCESS_TOKEN"]}"#),
        ),
        ("no token", token_body(r#"{"token_type": "Bearer"}"#)),
        (
            "html",
            Act::answer(200, &[("content-type", "text/html")], "<html>x</html>"),
        ),
        (
            "error echoing the secret",
            Act::answer(
                401,
                &[],
                &format!(
                    r#"{{"error":"invalid_client","error_description":"{CLIENT_SECRET} is wrong"}}"#
                ),
            ),
        ),
        ("500", Act::answer(500, &[], "{}")),
        (
            "redirect elsewhere",
            Act::redirect(307, &format!("{}/token", elsewhere.url())),
        ),
        ("redirect loop", Act::redirect(302, "/token")),
    ];
    let esign_calls: Vec<Call> = calls()
        .into_iter()
        .filter(|c| c.name.starts_with("esign"))
        .collect();
    let checked = thread::scope(|scope| {
        let mut handles = Vec::new();
        for (name, act) in &cases {
            for call in &esign_calls {
                handles.push(scope.spawn(move || {
                    let token_server = Hostile::start({
                        let act = act.clone();
                        move |_| act.clone()
                    });
                    let api = Hostile::start(|_| Act::answer(200, &[], "{}"));
                    let auth = Auth::oauth2(OAuth2Config::new(
                        format!("{}/token", token_server.url()),
                        "client_1",
                        CLIENT_SECRET,
                    ));
                    let started = Instant::now();
                    let err = (call.run)(api.url(), auth).unwrap_err();
                    let what = format!("token endpoint {name} / {}", call.name);
                    assert!(
                        started.elapsed() < BUDGET + Duration::from_secs(1),
                        "{what}"
                    );
                    assert!(
                        api.seen().is_empty(),
                        "{what}: the API was called without a token"
                    );
                    assert!(token_server.seen().len() <= 3, "{what}");
                    check_secrets(&what, &err);
                }));
            }
        }
        let n = handles.len();
        for h in handles {
            h.join().expect("no panic");
        }
        n
    });
    // The secret never followed the redirect to the other origin.
    assert!(elsewhere.seen().is_empty(), "{:#?}", elsewhere.seen());
    check_logs("token endpoint");
    eprintln!("adversarial token endpoint: {checked} calls checked");
}

// ---- a stream's handshake ----

#[test]
fn hostile_stream_handshakes() {
    // Whatever answers the upgrade instead of a WebSocket server: an error within the
    // timeout, never a panic, the key only ever in the Authorization header.
    capture_logs();
    let cases: Vec<(&str, Act)> = vec![
        ("reset before read", Act::CloseBeforeRead),
        ("reset after read", Act::CloseAfterRead),
        ("json 200", Act::answer(200, &[], r#"{"quotes": []}"#)),
        (
            "html 502",
            Act::answer(502, &[("content-type", "text/html")], "<html>502</html>"),
        ),
        ("429", Act::answer(429, &[("retry-after", "1")], "{}")),
        (
            "101 without an accept key",
            Act::Send(
                b"HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n"
                    .to_vec(),
            ),
        ),
        ("redirect", Act::redirect(307, "/elsewhere")),
        (
            "stall in headers",
            Act::SendThenStall(b"HTTP/1.1 101 Switching".to_vec(), STALL),
        ),
        (
            "flood of headers",
            Act::Flood {
                head: b"HTTP/1.1 101 Switching Protocols\r\nx-a: ".to_vec(),
                len: 40 * 1024 * 1024,
                fill: b'a',
            },
        ),
    ];
    thread::scope(|scope| {
        for (name, act) in &cases {
            scope.spawn(move || {
                let hostile = Hostile::start({
                    let act = act.clone();
                    move |_| act.clone()
                });
                let url = format!("{}/stream", hostile.url().replacen("http://", "ws://", 1));
                let client: trading_client::Client =
                    builder(hostile.url(), Auth::bearer(KEY)).build().unwrap();
                let client = client.with_stream_url(url.clone());
                let worlds: worlds_client::Client =
                    builder(hostile.url(), Auth::bearer(KEY)).build().unwrap();
                let worlds = worlds.with_stream_url(url);
                // The trading stream, then the worlds channel, each within the timeout.
                let opens: [&dyn Fn() -> core_http::Result<()>; 2] =
                    [&|| client.stream().map(drop), &|| worlds.stream().map(drop)];
                for open in opens {
                    let started = Instant::now();
                    let err = open().unwrap_err();
                    let took = started.elapsed();
                    assert!(
                        took < BUDGET + Duration::from_secs(1),
                        "{name}: took {took:?}"
                    );
                    check_secrets(name, &err);
                }
                for seen in hostile.seen() {
                    assert!(!seen.path.contains(KEY), "{name}: the key in the URL");
                    assert!(
                        seen.head.is_empty() || seen.head.starts_with("GET /stream "),
                        "{name}: {}",
                        seen.head
                    );
                }
                assert!(hostile.seen().len() <= 2, "{name}: {:#?}", hostile.seen());
            });
        }
    });
    check_logs("stream handshakes");
    eprintln!(
        "adversarial stream handshakes: {} cases checked",
        cases.len()
    );
}

#[test]
fn raw_answers_build() {
    // The server helper itself: a length is added unless given.
    let bytes = raw(201, &[("x-a", "1")], b"{}");
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.starts_with("HTTP/1.1 201 Hostile\r\nx-a: 1\r\ncontent-length: 2\r\n\r\n{}"));
}

fn order_json(client_order_id: &str) -> String {
    format!(
        r#"{{"id":"ord_elsewhere","client_order_id":"{client_order_id}","symbol":"AAPL","side":"buy","qty":"1","type":"market","status":"new"}}"#
    )
}

fn place_hostile_1(base: &str) -> Result<trading_client::orders::Order, Error> {
    let c = trading_client::Client::new(base, KEY).unwrap();
    let order = trading_client::orders::OrderRequest::market(
        "AAPL",
        trading_client::orders::Side::Buy,
        trading_client::orders::Amount::Qty(trading_client::Decimal::ONE),
    )
    .client_order_id("hostile-1");
    c.orders().place(&order)
}

#[test]
fn an_order_redirected_to_another_origin_is_never_sent_there() {
    for status in [301, 302, 303, 307, 308] {
        // The other origin would happily answer with an order.
        let other = Arc::new(Hostile::start(|_| {
            Act::answer(
                200,
                &[("content-type", "application/json")],
                &order_json("hostile-1"),
            )
        }));
        let target = format!("{}/v1/orders", other.url());
        let origin = Hostile::start(move |r| {
            if r.method == "POST" {
                Act::redirect(status, &target)
            } else {
                // The lookup on the original service: no such order.
                Act::answer(
                    200,
                    &[("content-type", "application/json")],
                    r#"{"orders":[]}"#,
                )
            }
        });
        let result = place_hostile_1(origin.url());
        assert!(
            other.seen().is_empty(),
            "{status}: nothing reaches the other origin: {:?}",
            other.seen()
        );
        match result {
            Err(Error::NotProcessed { source, .. }) => {
                let shown = source.to_string();
                assert!(
                    shown.contains("never followed to another origin"),
                    "{shown}"
                );
            }
            other => panic!("{status}: expected the lookup to settle it, got {other:?}"),
        }
        assert_eq!(origin.count("POST"), 1, "{status}: the order was sent once");
    }
}

#[test]
fn a_lookup_that_ignores_its_filter_is_unknown_never_not_processed() {
    let hostile = Hostile::start(|r| {
        if r.method == "POST" {
            Act::answer(
                503,
                &[("content-type", "application/json")],
                r#"{"message":"busy"}"#,
            )
        } else {
            // Ignores client_order_id: answers someone else's orders.
            let body = format!(
                r#"{{"orders":[{},{}]}}"#,
                order_json("other-1"),
                order_json("other-2")
            );
            Act::answer(200, &[("content-type", "application/json")], &body)
        }
    });
    let client = trading_client::Client::new(hostile.url(), KEY).unwrap();
    match client.orders().get_by_client_order_id("hostile-1") {
        Err(Error::UnexpectedBody { message, .. }) => {
            assert!(message.contains("ignored the filter"), "{message}")
        }
        other => panic!("expected an unknown answer, got {other:?}"),
    }
    match place_hostile_1(hostile.url()) {
        Err(Error::NotProcessed { .. }) => panic!("an ignored filter is not a 'not processed'"),
        Err(e) => assert!(e.may_have_been_processed(), "{e:?}"),
        Ok(order) => panic!("{order:?}"),
    }
}

#[test]
fn the_users_of_a_world_are_read_from_every_page() {
    let hostile = Hostile::start(|r| {
        let body = if r.path.contains("page_token=p2") {
            r#"{"data":[{"id":"u3"}]}"#
        } else {
            r#"{"data":[{"id":"u1"},{"id":"u2"}],"next_page_token":"p2"}"#
        };
        Act::answer(200, &[("content-type", "application/json")], body)
    });
    let client = worlds_client::Client::new(hostile.url(), KEY).unwrap();
    let users = client.worlds().users("w1").unwrap();
    let ids: Vec<&str> = users.iter().map(|u| u.id.as_str()).collect();
    assert_eq!(ids, ["u1", "u2", "u3"]);
    assert_eq!(hostile.count("GET"), 2);
}
