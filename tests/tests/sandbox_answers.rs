//! The sandbox answers everything in the services' shape and never drops a connection
//! (the promises of `crates/sandbox/README.md`, "What your tests can rely on").
//!
//! A raw HTTP/1.1 client on one keep-alive connection sends every route a few hundred
//! seeded requests (methods, path segments, query strings, headers and bodies chosen to
//! be odd: overflowing numbers, tokens never issued, years outside 0001-9999, malformed
//! and oversized bodies, no key), and checks each answer: complete, never 5xx, every
//! error JSON `{"error": {"code", "message"}}`, the connection usable for the next request
//! unless the answer said `Connection: close`; and that no handler panicked. Then each
//! item the fuzzing found has its own test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use e2e::SeededRng;
use sandbox::Sandbox;
use serde_json::Value;

const KEY: &str = "sk_test_sandbox";

// ---- a raw HTTP/1.1 client on one connection ----

/// One answer, read whole.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "answer {} is not JSON ({e}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The error's code, after checking the answer is JSON in the services' error shape.
    fn error_code(&self) -> String {
        let kind = self.header("content-type").unwrap_or_default();
        assert!(
            kind.starts_with("application/json"),
            "error {} is {kind:?}, not JSON: {}",
            self.status,
            String::from_utf8_lossy(&self.body)
        );
        let body = self.json();
        let code = body["error"]["code"].as_str();
        let message = body["error"]["message"].as_str();
        assert!(
            code.is_some_and(|c| !c.is_empty()) && message.is_some(),
            "error {} is not in the services' shape: {body}",
            self.status
        );
        code.unwrap_or_default().to_owned()
    }

    fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// A keep-alive connection to the sandbox that reconnects only after an answer that said
/// `Connection: close`.
struct Conn {
    addr: SocketAddr,
    reader: Option<BufReader<TcpStream>>,
    /// What was asked last, for the message when the connection turns out broken.
    last: String,
}

impl Conn {
    fn new(sandbox: &Sandbox) -> Self {
        Conn {
            addr: sandbox.addr(),
            reader: None,
            last: String::from("(nothing yet)"),
        }
    }

    fn get(&mut self, target: &str) -> Answer {
        self.send(
            "GET",
            target,
            &[("authorization", &format!("Bearer {KEY}"))],
            &[],
        )
    }

    fn send_json(&mut self, method: &str, target: &str, body: &str) -> Answer {
        self.send(
            method,
            target,
            &[
                ("authorization", &format!("Bearer {KEY}")),
                ("content-type", "application/json"),
            ],
            body.as_bytes(),
        )
    }

    /// Sends one request and reads its answer whole; panics (failing the test) when the
    /// connection breaks without having said it would close.
    fn send(
        &mut self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Answer {
        let asked = format!("{method} {}", shorten(target));
        let reader = match &mut self.reader {
            Some(reader) => reader,
            None => {
                let stream = TcpStream::connect(self.addr).expect("the sandbox accepts");
                stream
                    .set_read_timeout(Some(Duration::from_secs(30)))
                    .unwrap();
                stream.set_nodelay(true).unwrap();
                self.reader.insert(BufReader::new(stream))
            }
        };
        let mut request = format!("{method} {target} HTTP/1.1\r\nhost: sandbox\r\n");
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        let previous = std::mem::replace(&mut self.last, asked.clone());
        if let Err(e) = reader.get_mut().write_all(&bytes) {
            panic!(
                "the connection broke ({e}) sending {asked}, after {previous} was answered without Connection: close"
            );
        }
        let answer = read_answer(reader, method == "HEAD").unwrap_or_else(|e| {
            panic!("no whole answer to {asked} ({e}); the request before was {previous}")
        });
        if answer.closes() {
            self.reader = None;
        }
        answer
    }
}

fn shorten(text: &str) -> String {
    if text.len() > 160 {
        let head: String = text.chars().take(160).collect();
        format!("{head}... ({} bytes)", text.len())
    } else {
        text.to_owned()
    }
}

fn read_answer(reader: &mut BufReader<TcpStream>, head_only: bool) -> std::io::Result<Answer> {
    let broken =
        |what: &str| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, what.to_owned());
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(broken("the connection closed before an answer"));
    }
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| broken(&format!("not a status line: {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(broken("the connection closed in the head"));
        }
        let text = line.trim_end();
        if text.is_empty() {
            break;
        }
        let (name, value) = text
            .split_once(':')
            .ok_or_else(|| broken("a header without ':'"))?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut answer = Answer {
        status,
        headers,
        body: Vec::new(),
    };
    if head_only || status == 204 || status == 304 || status / 100 == 1 {
        return Ok(answer);
    }
    if answer
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| broken("a bad chunk size"))?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            answer.body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(length) = answer.header("content-length") {
        let length: usize = length.parse().map_err(|_| broken("a bad content-length"))?;
        answer.body = vec![0; length];
        reader.read_exact(&mut answer.body)?;
    } else {
        return Err(broken("an answer with neither length nor chunks"));
    }
    Ok(answer)
}

// ---- the seeded generator ----

/// Every route of the sandbox: its methods and its path, `{…}` standing for a segment.
/// (`every_route_of_the_sandbox_is_fuzzed` checks this list against the sandbox's
/// sources.) `POST /_sandbox/faults` is left out: it makes the sandbox fail on purpose.
const ROUTES: &[(&[&str], &str)] = &[
    (&["GET", "POST"], "/social/v1/posts"),
    (&["GET"], "/social/v1/schedule"),
    (&["GET"], "/social/v1/analytics/overview"),
    (&["GET"], "/social/v1/accounts"),
    (&["DELETE"], "/social/v1/accounts/{account}"),
    (&["GET", "POST"], "/projects/v1/projects"),
    (&["DELETE"], "/projects/v1/projects/{project}"),
    (&["POST"], "/vision/v2/detect"),
    (&["POST"], "/vision/v2/classify"),
    (&["POST"], "/vision/v2/ocr"),
    (&["POST"], "/vision/v2/faces"),
    (&["GET"], "/vision/v2/status"),
    (&["POST"], "/esign/documents"),
    (&["GET"], "/esign/documents/{document}"),
    (&["GET"], "/esign/documents/{document}/download"),
    (&["POST"], "/esign/oauth/token"),
    (&["GET"], "/trading/v1/markets"),
    (&["GET", "POST", "DELETE"], "/trading/v1/orders"),
    (&["GET", "DELETE", "PATCH"], "/trading/v1/orders/{order}"),
    (&["GET", "DELETE"], "/trading/v1/positions"),
    (&["GET", "DELETE"], "/trading/v1/positions/{symbol}"),
    (&["GET"], "/trading/v1/account"),
    (&["GET"], "/trading/v1/account/history"),
    (&["GET"], "/trading/v1/activities"),
    (&["GET"], "/trading/v1/assets"),
    (&["GET"], "/trading/v1/assets/{symbol}"),
    (&["GET"], "/trading/v1/clock"),
    (&["GET"], "/trading/v1/calendar"),
    (&["GET"], "/trading/v1/history"),
    (&["GET"], "/trading/v1/news"),
    (&["GET"], "/trading/stream"),
    (&["GET", "POST"], "/worlds/api/v1/worlds"),
    (&["GET", "PATCH", "DELETE"], "/worlds/api/v1/worlds/{world}"),
    (&["GET"], "/worlds/api/v1/worlds/{world}/users"),
    (&["GET", "POST"], "/worlds/api/v1/worlds/{world}/assets"),
    (&["GET", "PUT", "PATCH"], "/worlds/api/v1/assets/{asset}"),
    (&["GET"], "/worlds/ws/v1/realtime"),
    (&["GET"], "/_sandbox/"),
    (&["GET"], "/_sandbox/clock"),
    (&["POST"], "/_sandbox/clock/advance"),
    (&["GET", "POST"], "/_sandbox/webhooks"),
    (&["GET"], "/_sandbox/webhooks/deliveries"),
    (&["DELETE"], "/_sandbox/webhooks/{webhook}"),
    (&["GET"], "/_sandbox/events"),
    (&["DELETE"], "/_sandbox/faults"),
    (&["POST"], "/_sandbox/reset"),
    (&["GET"], "/_sandbox/streams"),
    (&["POST"], "/_sandbox/streams/drop"),
    (&["POST"], "/_sandbox/esign/documents/{document}/sign"),
    (&["POST"], "/_sandbox/esign/documents/{document}/decline"),
    (&["POST"], "/_sandbox/esign/documents/{document}/pdf_size"),
    (&["POST"], "/_sandbox/trading/quotes"),
    (&["POST"], "/_sandbox/trading/prices/{symbol}"),
    (&["GET"], "/_sandbox/trading/orders"),
    (&["PATCH"], "/_sandbox/worlds/worlds/{world}"),
    (&["POST"], "/_sandbox/worlds/worlds/{world}/users"),
    (&["DELETE"], "/_sandbox/worlds/worlds/{world}/users/{user}"),
    (&["POST"], "/_sandbox/worlds/worlds/{world}/assets"),
    (
        &["POST"],
        "/_sandbox/worlds/worlds/{world}/objects/{index}/move",
    ),
    (&["POST"], "/_sandbox/worlds/worlds/{world}/events"),
];

/// Query parameter names the routes read (and a few they do not).
const PARAMS: &[&str] = &[
    "limit",
    "page_token",
    "symbol",
    "symbols",
    "timeframe",
    "start",
    "end",
    "after",
    "until",
    "status",
    "direction",
    "period",
    "client_order_id",
    "qty",
    "percentage",
    "cancel_orders",
    "nested",
    "date",
    "feed",
    "types",
    "extended_hours",
    "page_size",
    "offset",
    "cursor",
    "since",
    "world_id",
    "platform",
    "account",
    "from",
    "to",
    "adjustment",
    "sort",
    "q",
    "unknown",
];

/// Odd values: overflowing, negative, tokens never issued, years outside 0001-9999,
/// percent-encoded garbage, and a few good ones.
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "7",
    "100",
    "1000000000",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "1e999",
    "NaN",
    "-0",
    "0.5",
    "",
    "%FF",
    "%00",
    "%C3%28",
    "a18446744073709551615",
    "p18446744073709551615",
    "n18446744073709551615",
    "t253402300799",
    "t-1",
    "t99999999999999999999",
    "u18446744073709551615",
    "a0",
    "p1",
    "n2",
    "-0001-06-01",
    "0000-01-01",
    "0000-01-01T00:00:00Z",
    "9999-12-31",
    "9999-12-31T23:59:59Z",
    "10000-01-01",
    "2026-02-30",
    "2026-03-02",
    "2026-03-02T14:30:00Z",
    "2020-01-01T00:00:00Z",
    "2026-03-02T14:30:00+25:00",
    "AAPL",
    "aapl",
    "MSFT",
    "NOPE",
    "1Min",
    "1Day",
    "1Hour",
    "5Min",
    "open",
    "closed",
    "all",
    "asc",
    "desc",
    "1D",
    "1A",
    "all",
    "true",
    "false",
    "x%20y",
    "%F0%9F%92%A5",
    "..%2F..%2Fetc",
    "%25",
];

/// JSON member names the routes read (`path` left out: it would make a fault).
const FIELDS: &[&str] = &[
    "symbol",
    "side",
    "qty",
    "notional",
    "type",
    "time_in_force",
    "limit_price",
    "stop_price",
    "trail_price",
    "trail_percent",
    "client_order_id",
    "order_class",
    "extended_hours",
    "take_profit",
    "stop_loss",
    "name",
    "description",
    "environment",
    "properties",
    "text",
    "platforms",
    "scheduled_at",
    "media",
    "title",
    "signers",
    "email",
    "order",
    "document",
    "file",
    "content",
    "filename",
    "image",
    "url",
    "theme",
    "objects",
    "event",
    "data",
    "position",
    "seconds",
    "secret",
    "events",
    "price",
    "bid",
    "ask",
    "quotes",
    "user",
    "grant_type",
    "client_id",
    "client_secret",
    "scope",
    "size",
    "bytes",
    "x",
    "y",
    "z",
    "posts",
    "account_ids",
    "reason",
    "id",
    "revision",
    "unknown",
];

fn json_value(rng: &mut SeededRng, depth: u32) -> String {
    match rng.index(if depth > 2 { 6 } else { 8 }) {
        0 => "null".into(),
        1 => rng.pick(&["true", "false"]).into(),
        2 => rng
            .pick(&[
                "0",
                "1",
                "-1",
                "1.5",
                "1e308",
                "-1e308",
                "18446744073709551616",
                "1e400",
                "0.0000001",
                "100",
            ])
            .into(),
        3 | 4 => serde_json::to_string(rng.pick(&[
            "AAPL",
            "buy",
            "sell",
            "market",
            "limit",
            "day",
            "gtc",
            "x",
            "",
            "development",
            "production",
            "2026-03-02T14:30:00Z",
            "0000-01-01T00:00:00Z",
            "-0001-06-01",
            "10000-01-01T00:00:00Z",
            "a18446744073709551615",
            "twitter",
            "ada@example.com",
            "JVBERi0xLjQK",
            "not base64!",
            "\u{0}",
            "\u{1F4A5}",
            "1",
            "-5",
            "1e999",
        ]))
        .unwrap(),
        5 => serde_json::to_string(&"z".repeat(rng.index(3000))).unwrap(),
        6 => {
            let n = rng.index(4);
            let items: Vec<String> = (0..n).map(|_| json_value(rng, depth + 1)).collect();
            format!("[{}]", items.join(","))
        }
        _ => json_object(rng, depth + 1),
    }
}

fn json_object(rng: &mut SeededRng, depth: u32) -> String {
    let n = rng.index(6);
    let members: Vec<String> = (0..n)
        .map(|_| format!("{:?}:{}", rng.pick(FIELDS), json_value(rng, depth)))
        .collect();
    format!("{{{}}}", members.join(","))
}

fn body(rng: &mut SeededRng) -> Vec<u8> {
    match rng.index(12) {
        0 => Vec::new(),
        1 => b"{".to_vec(),
        2 => rng
            .pick(&["{\"a\":", "[1,2", "nul", "\"x\"", "[]", "42", "{}", "null"])
            .as_bytes()
            .to_vec(),
        3 => (0..rng.index(512)).map(|_| rng.next_u64() as u8).collect(),
        4 if rng.chance(10) => vec![b'x'; 100 * 1024],
        _ => json_object(rng, 0).into_bytes(),
    }
}

/// The ids a path segment can take: real ones (so handlers go deep) and odd ones.
struct Ids {
    real: Vec<(&'static str, String)>,
}

impl Ids {
    fn segment(&self, rng: &mut SeededRng, name: &str) -> String {
        let real: Vec<&String> = self
            .real
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .collect();
        if !real.is_empty() && rng.chance(60) {
            return real[rng.index(real.len())].clone();
        }
        match rng.index(9) {
            0 => "%FF".into(),
            1 => "%00".into(),
            2 => "x".repeat(300),
            3 => "%2F".into(),
            4 => "0".into(),
            5 => "18446744073709551616".into(),
            6 => "%F0%9F%92%A5".into(),
            7 => "does_not_exist".into(),
            _ => "AAPL".into(),
        }
    }
}

fn request_target(rng: &mut SeededRng, ids: &Ids, path: &str) -> String {
    let mut target = String::new();
    for part in path.split('/').skip(1) {
        target.push('/');
        match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            Some(name) => target.push_str(&ids.segment(rng, name)),
            None => target.push_str(part),
        }
    }
    let n = rng.index(5);
    for i in 0..n {
        target.push(if i == 0 { '?' } else { '&' });
        target.push_str(rng.pick(PARAMS));
        target.push('=');
        target.push_str(rng.pick(VALUES));
    }
    target
}

/// Checks one fuzzed answer; `Err` says what is wrong. The OAuth token endpoint's own
/// refusals are in RFC 6749's shape (`{"error": "invalid_client", "error_description"}`),
/// which OAuth clients read; everything else in the services' shape.
fn check(answer: &Answer, oauth: bool) -> Result<(), String> {
    if answer.status >= 500 {
        return Err(format!(
            "a {} answer: {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        ));
    }
    let json = answer
        .header("content-type")
        .is_some_and(|v| v.starts_with("application/json"));
    if answer.status >= 400 {
        if !json {
            return Err(format!("error {} is not JSON", answer.status));
        }
        let body: Value = serde_json::from_slice(&answer.body)
            .map_err(|e| format!("error {} is not JSON: {e}", answer.status))?;
        if oauth && body["error"].as_str().is_some_and(|c| !c.is_empty()) {
            return Ok(());
        }
        let code = body["error"]["code"].as_str().unwrap_or_default();
        if code.is_empty() || !body["error"]["message"].is_string() {
            return Err(format!(
                "error {} is not in the services' shape: {body}",
                answer.status
            ));
        }
    } else if json && !answer.body.is_empty() {
        serde_json::from_slice::<Value>(&answer.body)
            .map_err(|e| format!("answer {} is not JSON: {e}", answer.status))?;
    }
    Ok(())
}

fn seeded_ids(sandbox: &Sandbox, conn: &mut Conn) -> Ids {
    let mut real = vec![
        ("symbol", "AAPL".to_owned()),
        ("symbol", "msft".to_owned()),
        ("index", "0".to_owned()),
        ("index", "1".to_owned()),
    ];
    let worlds = conn.get("/worlds/api/v1/worlds").json();
    for world in worlds["data"].as_array().into_iter().flatten() {
        let id = world["id"].as_str().unwrap().to_owned();
        let assets = conn
            .get(&format!("/worlds/api/v1/worlds/{id}/assets"))
            .json();
        for asset in assets["assets"].as_array().into_iter().flatten() {
            real.push(("asset", asset["id"].as_str().unwrap().to_owned()));
        }
        real.push(("world", id));
    }
    let order = conn
        .send_json("POST", "/trading/v1/orders", r#"{"symbol":"AAPL","side":"buy","qty":"1","type":"limit","limit_price":"10","time_in_force":"day","client_order_id":"fuzz-1"}"#)
        .json();
    real.push(("order", order["id"].as_str().unwrap().to_owned()));
    let accounts = conn.get("/social/v1/accounts").json();
    for account in accounts["data"].as_array().into_iter().flatten() {
        if let Some(id) = account["id"].as_str() {
            real.push(("account", id.to_owned()));
        }
    }
    let project = conn
        .send_json("POST", "/projects/v1/projects", r#"{"name":"fuzz"}"#)
        .json();
    if let Some(id) = project["id"].as_str().or(project["data"]["id"].as_str()) {
        real.push(("project", id.to_owned()));
    }
    let esign =
        esign_client::Client::new(sandbox.service_url(sandbox::Service::Esign), KEY).unwrap();
    let document = esign
        .documents()
        .send(
            &esign_client::documents::SendDocument::new(
                esign_client::documents::DocumentSource::bytes(
                    "fuzz.pdf",
                    b"%PDF-1.4\n%%EOF\n".to_vec(),
                ),
            )
            .signer(esign_client::documents::NewSigner::new(
                "Ada Lovelace",
                "ada@example.com",
            )),
        )
        .unwrap();
    real.push(("document", document.id.to_string()));
    let hook = sandbox.add_webhook("http://127.0.0.1:9/hook");
    real.push(("webhook", hook.id.clone()));
    real.push(("user", "user_1".to_owned()));
    Ids { real }
}

const PER_ROUTE: usize = 300;

#[test]
fn every_route_answers_every_request_whole_in_the_services_shape_on_a_connection_that_stays_usable()
{
    let sandbox = Sandbox::builder()
        .seed(38)
        .frozen_at(time::macros::datetime!(2026-03-02 14:30 UTC))
        .start()
        .unwrap();
    let mut conn = Conn::new(&sandbox);
    let ids = seeded_ids(&sandbox, &mut conn);
    let mut rng = SeededRng(0x5EED_0038);
    let mut problems = Vec::new();
    let mut sent = 0usize;
    for (methods, path) in ROUTES {
        for _ in 0..PER_ROUTE {
            let method = if rng.chance(85) {
                rng.pick(methods)
            } else {
                rng.pick(&[
                    "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "FROB",
                ])
            };
            let target = request_target(&mut rng, &ids, path);
            let auth = match rng.index(10) {
                0 => None,
                1 => Some("Bearer sk_test_wrong".to_owned()),
                _ => Some(format!("Bearer {KEY}")),
            };
            let content_type = rng.pick(&[
                "application/json",
                "application/merge-patch+json",
                "text/plain",
                "",
                "multipart/form-data; boundary=x",
            ]);
            let if_match = rng.pick(&[
                "",
                "",
                "",
                "\"1\"",
                "W/\"1\"",
                "\"01\"",
                "\"+1\"",
                "*",
                "1",
                "\"2\", \"1\"",
                "\"",
            ]);
            let mut headers: Vec<(&str, &str)> = Vec::new();
            if let Some(auth) = &auth {
                headers.push(("authorization", auth));
            }
            if !content_type.is_empty() {
                headers.push(("content-type", content_type));
            }
            if !if_match.is_empty() {
                headers.push(("if-match", if_match));
            }
            let body = if method == "GET" && rng.chance(70) {
                Vec::new()
            } else {
                body(&mut rng)
            };
            let answer = conn.send(method, &target, &headers, &body);
            sent += 1;
            if method != "HEAD"
                && let Err(problem) = check(&answer, path.ends_with("/oauth/token"))
            {
                problems.push(format!("{method} {}: {problem}", shorten(&target)));
            }
        }
    }
    assert_eq!(
        sandbox.panics(),
        0,
        "a handler panicked (each was answered 500)"
    );
    assert!(
        problems.is_empty(),
        "{} of {sent} answers broke a promise, e.g.:\n{}",
        problems.len(),
        problems
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The connection is still good after all of it.
    assert_eq!(conn.get("/trading/v1/clock").status, 200);
}

#[test]
fn every_route_of_the_sandbox_is_fuzzed() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/sandbox/src");
    let mut sources = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources.push(std::fs::read_to_string(path).unwrap());
            }
        }
    }
    let mut routes = Vec::new();
    for source in &sources {
        let mut rest = source.as_str();
        while let Some(at) = rest.find(".route(") {
            rest = &rest[at + ".route(".len()..];
            let quoted = rest.trim_start().strip_prefix('"').unwrap();
            routes.push(quoted[..quoted.find('"').unwrap()].to_owned());
        }
    }
    assert!(routes.len() > 40, "the route scan found only {routes:?}");
    let normal = |path: &str| -> String {
        path.split('/')
            .map(|s| if s.starts_with('{') { "{}" } else { s })
            .collect::<Vec<_>>()
            .join("/")
    };
    for route in routes {
        let route = normal(&route);
        let known = ROUTES
            .iter()
            .any(|(_, path)| normal(path).ends_with(&route))
            || route == "/faults";
        assert!(
            known,
            "the sandbox route {route} is not in ROUTES: add it to the fuzzing"
        );
    }
}

// ---- one test per item ----

fn frozen() -> Sandbox {
    Sandbox::builder()
        .frozen_at(time::macros::datetime!(2026-03-02 14:30 UTC))
        .start()
        .unwrap()
}

#[test]
fn a_page_token_never_issued_is_a_400_never_a_dropped_connection() {
    let sandbox = frozen();
    let mut conn = Conn::new(&sandbox);
    let world = conn.get("/worlds/api/v1/worlds").json()["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for target in [
        "/trading/v1/history?symbol=AAPL&timeframe=1Day&page_token=t253402300799".to_owned(),
        "/trading/v1/history?symbol=AAPL&timeframe=1Day&page_token=t-1".to_owned(),
        format!("/worlds/api/v1/worlds/{world}/assets?page_token=a18446744073709551615"),
        "/worlds/api/v1/worlds?page_token=p18446744073709551615".to_owned(),
        "/trading/v1/news?symbols=AAPL&page_token=n18446744073709551615".to_owned(),
        "/trading/v1/news?symbols=AAPL&page_token=n0x10".to_owned(),
        "/trading/v1/orders?page_token=p99999999999999999999".to_owned(),
        "/trading/v1/activities?page_token=zzz".to_owned(),
    ] {
        let answer = conn.get(&target);
        assert_eq!(
            answer.status,
            400,
            "{target}: {}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(answer.error_code(), "invalid_page_token", "{target}");
    }
    assert_eq!(
        conn.get("/trading/v1/clock").status,
        200,
        "the same connection still answers"
    );
    assert_eq!(sandbox.panics(), 0);
}

#[test]
fn a_body_the_route_does_not_read_leaves_the_connection_usable() {
    let sandbox = frozen();
    let mut conn = Conn::new(&sandbox);
    let big = vec![b'x'; 100 * 1024];
    let auth = format!("Bearer {KEY}");
    for (method, target, status) in [
        ("DELETE", "/trading/v1/orders", 200),
        ("GET", "/_sandbox/clock", 200),
        ("GET", "/trading/v1/no_such_route", 404),
        ("PUT", "/trading/v1/clock", 405),
    ] {
        let answer = conn.send(method, target, &[("authorization", &auth)], &big);
        assert_eq!(answer.status, status, "{method} {target}");
        assert!(
            !answer.closes(),
            "{method} {target}: the body was drained, the connection stays"
        );
        let next = conn.get("/trading/v1/clock");
        assert_eq!(
            next.status, 200,
            "the request after {method} {target} on the same connection"
        );
    }
}

#[test]
fn errors_made_before_any_handler_are_in_the_services_shape() {
    let sandbox = frozen();
    let mut conn = Conn::new(&sandbox);
    let auth = format!("Bearer {KEY}");
    let headers = [("authorization", auth.as_str())];
    let cases: Vec<(&str, String, Vec<u8>, u16, &str)> = vec![
        (
            "GET",
            "/trading/v1/orders/%FF".into(),
            vec![],
            400,
            "invalid_path",
        ),
        (
            "GET",
            "/trading/v1/positions/%FF".into(),
            vec![],
            400,
            "invalid_path",
        ),
        (
            "FROB",
            "/trading/v1/orders".into(),
            vec![],
            405,
            "method_not_allowed",
        ),
        (
            "PUT",
            "/trading/v1/clock".into(),
            vec![],
            405,
            "method_not_allowed",
        ),
        (
            "POST",
            "/trading/v1/orders".into(),
            vec![b'{'; 3 * 1024 * 1024],
            413,
            "payload_too_large",
        ),
        (
            "GET",
            format!("/trading/v1/clock?q={}", "x".repeat(20 * 1024)),
            vec![],
            414,
            "uri_too_long",
        ),
        (
            "GET",
            format!("/trading/v1/clock?q={}", "x".repeat(70 * 1024)),
            vec![],
            414,
            "uri_too_long",
        ),
        (
            "GET",
            "/trading/stream".into(),
            vec![],
            400,
            "upgrade_required",
        ),
        (
            "GET",
            "/worlds/ws/v1/realtime".into(),
            vec![],
            400,
            "upgrade_required",
        ),
    ];
    for (method, target, body, status, code) in cases {
        let answer = conn.send(method, &target, &headers, &body);
        assert_eq!(answer.status, status, "{method} {}", shorten(&target));
        assert_eq!(answer.error_code(), code, "{method} {}", shorten(&target));
        if status == 405 {
            assert!(
                answer.header("allow").is_some(),
                "a 405 names the methods allowed"
            );
        }
    }
    // What the HTTP parser refuses itself (a request line it cannot read) is in the
    // shape too, and says the connection closes.
    let mut stream = TcpStream::connect(sandbox.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(b"NOT HTTP AT ALL\r\n\r\n").unwrap();
    let answer = read_answer(&mut BufReader::new(stream), false).unwrap();
    assert_eq!(answer.status, 400);
    assert_eq!(answer.error_code(), "malformed_request");
    assert!(answer.closes());
}

#[test]
fn a_client_order_id_in_use_on_another_target_is_a_conflict_never_the_other_order() {
    let sandbox = frozen();
    let mut conn = Conn::new(&sandbox);
    let first = conn
        .send_json("POST", "/trading/v1/orders", r#"{"symbol":"AAPL","side":"buy","qty":"1","type":"limit","limit_price":"10","time_in_force":"day","client_order_id":"in-use-1"}"#);
    assert_eq!(first.status, 201);
    let replace = conn.send_json(
        "PATCH",
        "/trading/v1/orders/ord_does_not_exist",
        r#"{"qty":"2","client_order_id":"in-use-1"}"#,
    );
    assert_eq!(
        replace.status,
        409,
        "{}",
        String::from_utf8_lossy(&replace.body)
    );
    assert_eq!(replace.error_code(), "client_order_id_in_use");
    let close = conn.send(
        "DELETE",
        "/trading/v1/positions/NOPE?client_order_id=in-use-1",
        &[("authorization", &format!("Bearer {KEY}"))],
        &[],
    );
    assert_eq!(
        close.status,
        409,
        "{}",
        String::from_utf8_lossy(&close.body)
    );
    assert_eq!(close.error_code(), "client_order_id_in_use");
}

#[test]
fn dates_outside_years_0001_to_9999_are_refused() {
    let sandbox = frozen();
    let mut conn = Conn::new(&sandbox);
    for target in [
        "/trading/v1/calendar?start=-0001-06-01",
        "/trading/v1/calendar?end=10000-01-01",
        "/trading/v1/calendar?start=0000-12-01",
        "/trading/v1/account/history?end=0000-01-01T00:00:00Z",
        "/trading/v1/account/history?end=0001-01-01T00:00:00Z&period=1A",
        "/trading/v1/history?symbol=AAPL&timeframe=1Day&start=-0001-01-01T00:00:00Z",
        "/trading/v1/news?symbols=AAPL&start=0000-01-01T00:00:00Z",
        "/trading/v1/activities?after=0000-01-01T00:00:00Z",
    ] {
        let answer = conn.get(target);
        assert_eq!(
            answer.status,
            400,
            "{target}: {}",
            String::from_utf8_lossy(&answer.body)
        );
        answer.error_code();
    }
    let moved = conn.send_json(
        "POST",
        "/_sandbox/clock/advance",
        r#"{"seconds": 9999999999}"#,
    );
    assert_eq!(moved.status, 200);
    for _ in 0..30 {
        let answer = conn.send_json(
            "POST",
            "/_sandbox/clock/advance",
            r#"{"seconds": 9999999999}"#,
        );
        if answer.status == 400 {
            assert_eq!(answer.error_code(), "out_of_range");
        }
    }
    let calendar = conn.get("/trading/v1/calendar");
    assert!(
        calendar.status == 200 || calendar.status == 400,
        "{}",
        calendar.status
    );
    for day in calendar.json()["days"].as_array().into_iter().flatten() {
        let date = day["date"].as_str().unwrap();
        assert!(date.len() == 10 && !date.starts_with('-'), "{date}");
    }
    assert_eq!(sandbox.panics(), 0);
}

#[test]
fn after_later_than_until_is_refused_on_every_list() {
    let sandbox = frozen();
    let mut conn = Conn::new(&sandbox);
    for target in [
        "/trading/v1/orders?after=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z",
        "/trading/v1/activities?after=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z",
        "/trading/v1/news?symbols=AAPL&start=2026-03-02T00:00:00Z&end=2026-03-01T00:00:00Z",
        "/trading/v1/history?symbol=AAPL&timeframe=1Day&start=2026-03-02T00:00:00Z&end=2026-03-01T00:00:00Z",
        "/trading/v1/calendar?start=2026-03-02&end=2026-03-01",
    ] {
        let answer = conn.get(target);
        assert_eq!(
            answer.status,
            400,
            "{target}: {}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(answer.error_code(), "invalid_range", "{target}");
    }
}

#[test]
fn if_match_is_compared_strongly_and_star_matches_any_revision() {
    let sandbox = frozen();
    let mut conn = Conn::new(&sandbox);
    let world = conn.get("/worlds/api/v1/worlds").json()["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let asset = conn
        .get(&format!("/worlds/api/v1/worlds/{world}/assets"))
        .json()["assets"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let target = format!("/worlds/api/v1/assets/{asset}");
    let auth = format!("Bearer {KEY}");
    let patch = |conn: &mut Conn, if_match: &str, value: u32| {
        conn.send(
            "PATCH",
            &target,
            &[
                ("authorization", &auth),
                ("content-type", "application/merge-patch+json"),
                ("if-match", if_match),
            ],
            format!(r#"{{"properties":{{"n":{value}}}}}"#).as_bytes(),
        )
    };
    let revision = conn.get(&target).json()["revision"].as_u64().unwrap();
    for (i, odd) in [
        format!("W/\"{revision}\""),
        format!("\"0{revision}\""),
        format!("\"+{revision}\""),
    ]
    .iter()
    .enumerate()
    {
        let answer = patch(&mut conn, odd, i as u32);
        assert_eq!(answer.status, 412, "If-Match: {odd}");
        assert_eq!(answer.error_code(), "revision_mismatch");
        assert_eq!(
            answer.header("etag"),
            Some(format!("\"{revision}\"").as_str())
        );
    }
    let bare = patch(&mut conn, &revision.to_string(), 9);
    assert_eq!(
        bare.status, 400,
        "an unquoted revision is not an entity tag"
    );
    assert_eq!(bare.error_code(), "invalid_if_match");
    let star = patch(&mut conn, "*", 10);
    assert_eq!(star.status, 200, "* matches any revision");
    assert_eq!(star.json()["revision"].as_u64(), Some(revision + 1));
    let listed = patch(&mut conn, &format!("\"0\", \"{}\"", revision + 1), 11);
    assert_eq!(listed.status, 200, "one tag of a list matching is enough");
    assert_eq!(listed.json()["properties"]["n"], 11);
    let world_target = format!("/worlds/api/v1/worlds/{world}");
    let world_weak = conn.send(
        "DELETE",
        &world_target,
        &[("authorization", &auth), ("if-match", "W/\"1\"")],
        &[],
    );
    assert_eq!(
        world_weak.status, 412,
        "a weak tag never matches for a delete either"
    );
}

#[test]
fn an_empty_merge_patch_is_a_no_op_that_keeps_the_revision() {
    let sandbox = frozen();
    let mut conn = Conn::new(&sandbox);
    let world = conn.get("/worlds/api/v1/worlds").json()["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let asset = conn
        .get(&format!("/worlds/api/v1/worlds/{world}/assets"))
        .json()["assets"][0]
        .clone();
    let target = format!("/worlds/api/v1/assets/{}", asset["id"].as_str().unwrap());
    let emit = format!("/_sandbox/worlds/worlds/{world}/events");
    let seq = |conn: &mut Conn| {
        conn.send_json("POST", &emit, r#"{"type":"probe"}"#).json()["seq"]
            .as_u64()
            .unwrap()
    };
    let seq_before = seq(&mut conn);
    for body in ["{}", r#"{"properties":{}}"#] {
        let answer = conn.send_json("PATCH", &target, body);
        assert_eq!(
            answer.status,
            200,
            "{body}: {}",
            String::from_utf8_lossy(&answer.body)
        );
        let after = answer.json();
        assert_eq!(after["revision"], asset["revision"], "{body} moves nothing");
        assert_eq!(after["properties"], asset["properties"]);
    }
    // A patch that sets what is already there changes nothing either.
    let same = serde_json::json!({"properties": asset["properties"]}).to_string();
    assert_eq!(
        conn.send_json("PATCH", &target, &same).json()["revision"],
        asset["revision"]
    );
    let world_before = conn.get(&format!("/worlds/api/v1/worlds/{world}")).json();
    let world_after = conn.send_json("PATCH", &format!("/worlds/api/v1/worlds/{world}"), "{}");
    assert_eq!(world_after.status, 200);
    assert_eq!(world_after.json()["revision"], world_before["revision"]);
    assert_eq!(
        seq(&mut conn),
        seq_before + 1,
        "no event for a change that is none"
    );
    // A real change still moves it.
    let changed = conn
        .send_json("PATCH", &target, r#"{"properties":{"fresh":true}}"#)
        .json();
    assert_eq!(
        changed["revision"].as_u64(),
        asset["revision"].as_u64().map(|r| r + 1)
    );
}

#[test]
fn a_null_environment_is_refused_like_any_other_non_environment() {
    let sandbox = frozen();
    let mut conn = Conn::new(&sandbox);
    let answer = conn.send_json(
        "POST",
        "/projects/v1/projects",
        r#"{"name":"p","environment":null}"#,
    );
    assert_eq!(answer.status, 400);
    assert_eq!(answer.error_code(), "invalid_environment");
    let left_out = conn.send_json("POST", "/projects/v1/projects", r#"{"name":"p"}"#);
    assert_eq!(
        left_out.status,
        201,
        "{}",
        String::from_utf8_lossy(&left_out.body)
    );
}
