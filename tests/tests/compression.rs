//! Compressed answers, over a socket: what a call asks for, what it makes of gzip and
//! brotli bodies (decoded as they are read, every cap counting decoded bytes), and what
//! it does with a server that lies about the encoding, truncates the stream or sends a
//! bomb: a typed error in bounded memory and time, never garbage handed to serde, never
//! a retry as if the network had failed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::time::{Duration, Instant};

use core_http::{ErrorKind, HttpClient};
use serde_json::Value;
use testkit::bench::{memory_mib, reset_peak};
use testkit::hostile::{Act, Hostile, raw};

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    out.write_all(bytes).unwrap();
    out.finish().unwrap()
}

fn brotli(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer = brotli::CompressorWriter::new(&mut out, 4096, 9, 22);
    writer.write_all(bytes).unwrap();
    drop(writer);
    out
}

fn client(url: &str) -> HttpClient {
    HttpClient::builder()
        .base_url(url)
        .api_key("sk_test_compression")
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

fn encoded(encoding: &str, body: &[u8]) -> Act {
    Act::Send(raw(
        200,
        &[
            ("content-type", "application/json"),
            ("content-encoding", encoding),
        ],
        body,
    ))
}

/// A list as a service would answer it: large, and repetitive as JSON is.
fn big_list() -> String {
    let items: Vec<Value> = (0..2_000)
        .map(|i| serde_json::json!({"id": format!("bar_{i}"), "open": "101.25", "close": "101.50", "volume": 1200 + i}))
        .collect();
    serde_json::json!({ "data": items }).to_string()
}

#[test]
fn a_call_asks_for_gzip_and_br_and_reads_either_as_the_json_sent() {
    let json = big_list();
    let (gz, br) = (gzip(json.as_bytes()), brotli(json.as_bytes()));
    assert!(gz.len() * 5 < json.len() && br.len() * 5 < json.len());
    let server = Hostile::scripted(vec![
        encoded("gzip", &gz),
        encoded("br", &br),
        encoded("br", &br),
        encoded("gzip", &gz),
    ]);
    let client = client(server.url());
    let want: Value = serde_json::from_str(&json).unwrap();
    for _ in 0..4 {
        let got: Value = client.raw().get("/v1/bars", &[]).unwrap();
        assert_eq!(got, want);
    }
    for head in server.requests() {
        assert!(
            head.to_ascii_lowercase()
                .contains("accept-encoding: gzip, br\r\n"),
            "{head}"
        );
    }
    assert_eq!(
        server.connections(),
        1,
        "a decoded answer leaves its connection reusable"
    );
}

#[test]
fn with_compression_off_no_call_asks_for_it() {
    let server = Hostile::scripted(vec![Act::json(200, r#"{"ok":true}"#)]);
    let client = HttpClient::builder()
        .base_url(server.url())
        .api_key("sk_test_compression")
        .compression(false)
        .build()
        .unwrap();
    let got: Value = client.raw().get("/v1/x", &[]).unwrap();
    assert_eq!(got["ok"], true);
    let head = server.requests().remove(0).to_ascii_lowercase();
    assert!(!head.contains("accept-encoding"), "{head}");
}

#[test]
fn coding_names_are_case_insensitive_and_x_gzip_is_gzip() {
    let json = big_list();
    let (gz, br) = (gzip(json.as_bytes()), brotli(json.as_bytes()));
    let server = Hostile::scripted(vec![
        encoded("GZIP", &gz),
        encoded("x-gzip", &gz),
        encoded("X-GZip", &gz),
        encoded("Br", &br),
        encoded("identity, gzip", &gz),
    ]);
    let client = client(server.url());
    let want: Value = serde_json::from_str(&json).unwrap();
    for _ in 0..5 {
        let got: Value = client.raw().get("/v1/bars", &[]).unwrap();
        assert_eq!(got, want);
    }
    assert_eq!(server.connections(), 1, "each read to its end");
}

#[test]
fn an_answer_with_no_body_has_nothing_to_decode_whatever_its_label() {
    let labelled = |status: u16, extra: &[(&str, &str)]| {
        let mut headers = vec![("content-encoding", "gzip")];
        headers.extend_from_slice(extra);
        let mut bytes = format!("HTTP/1.1 {status} Hostile\r\n").into_bytes();
        for (name, value) in headers {
            bytes.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        bytes.extend_from_slice(b"\r\n");
        Act::Send(bytes)
    };
    let server = Hostile::scripted(vec![
        // A delete that succeeded, its 204 labelled gzip.
        labelled(204, &[]),
        // The same with an empty body said in so many words.
        labelled(200, &[("content-length", "0")]),
        // HEAD: a length, and no body.
        labelled(200, &[("content-length", "1234")]),
        labelled(200, &[("content-length", "0")]),
    ]);
    let client = client(server.url());
    let deleted: Option<Value> = client.raw().delete("/v1/posts/p1").unwrap();
    assert_eq!(deleted, None);
    let deleted: Option<Value> = client.raw().delete("/v1/posts/p2").unwrap();
    assert_eq!(deleted, None);
    let head = client.raw().head("/v1/posts", &[]).unwrap();
    assert_eq!(head.status(), 200);
    assert!(head.body().is_empty());
    let response = client.delete("/v1/posts/p3").send().unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(server.count("DELETE"), 3, "each asked once");
    assert_eq!(server.connections(), 1, "and the connection kept");
}

#[test]
fn a_body_labelled_gzip_that_is_not_gzip_is_an_error_naming_the_encoding_and_is_not_retried() {
    for encoding in ["gzip", "br"] {
        let server = Hostile::scripted(vec![encoded(encoding, br#"{"data": []}"#)]);
        let err = client(server.url())
            .raw()
            .get::<Value>("/v1/bars", &[])
            .expect_err("plain JSON labelled compressed");
        let text = err.to_string();
        assert_eq!(err.kind(), ErrorKind::Decode, "{text}");
        assert!(
            text.contains(&format!("Content-Encoding: {encoding}")),
            "{text}"
        );
        assert_eq!(
            server.count("GET"),
            1,
            "the server's lie is not retried: {text}"
        );
    }
}

#[test]
fn an_action_answered_with_a_lying_encoding_says_it_was_carried_out() {
    let server = Hostile::scripted(vec![Act::Send(raw(
        201,
        &[
            ("content-type", "application/json"),
            ("content-encoding", "gzip"),
        ],
        br#"{"id": "post_1"}"#,
    ))]);
    let err = client(server.url())
        .raw()
        .post::<Value, _>("/v1/posts", &serde_json::json!({"text": "hi"}))
        .expect_err("undecodable");
    assert!(err.action_succeeded(), "{err}");
    assert!(err.to_string().contains("do not repeat it"), "{err}");
    assert_eq!(server.count("POST"), 1);
}

#[test]
fn a_truncated_gzip_stream_is_an_error_and_a_compressed_error_page_is_read() {
    let json = big_list();
    let gz = gzip(json.as_bytes());
    // The whole stream's length announced, half of it sent: the decoder never sees its
    // trailer. And a gzip stream cut short but framed honestly (its own length).
    let half = &gz[..gz.len() / 2];
    let mut cut = raw(
        200,
        &[
            ("content-type", "application/json"),
            ("content-encoding", "gzip"),
            ("content-length", &gz.len().to_string()),
            ("connection", "close"),
        ],
        &[],
    );
    cut.extend_from_slice(half);
    let page = gzip(br#"{"error": {"code": "not_found", "message": "no such bar"}}"#);
    let server = Hostile::scripted(vec![
        Act::SendThenStall(cut, Duration::from_millis(10)),
        encoded("gzip", half),
        Act::Send(raw(
            404,
            &[
                ("content-type", "application/json"),
                ("content-encoding", "gzip"),
            ],
            &page,
        )),
    ]);
    let client = client(server.url());
    let first = client
        .with_options(&core_http::config::RequestOptions::new().max_retries(0))
        .raw()
        .get::<Value>("/v1/bars", &[])
        .expect_err("cut short");
    assert_eq!(first.kind(), ErrorKind::Connection, "{first}");
    let second = client
        .raw()
        .get::<Value>("/v1/bars", &[])
        .expect_err("cut short");
    assert_eq!(second.kind(), ErrorKind::Decode, "{second}");
    assert!(second.to_string().contains("gzip"), "{second}");
    let third = client
        .raw()
        .get::<Value>("/v1/bars/9", &[])
        .expect_err("404");
    assert_eq!(third.status(), Some(404));
    assert_eq!(
        third.api().map(|a| a.message.as_str()),
        Some("no such bar"),
        "{third}"
    );
}

/// 64 MiB of zeros, gzipped: about 64 KB.
fn zeros_member() -> Vec<u8> {
    gzip(&vec![0u8; 64 << 20])
}

#[test]
fn a_decompression_bomb_stops_at_the_cap_in_bounded_memory_and_time() {
    // 160 gzip members of 64 MiB of zeros each: 10 GiB decoded from about 10 MB on the
    // wire (gzip's members concatenate).
    let member = std::sync::Arc::new(zeros_member());
    let wire = member.len() * 160;
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n\
         content-length: {wire}\r\n\r\n"
    );
    let server = Hostile::start(move |_| Act::Repeat {
        head: head.clone().into_bytes(),
        chunk: member.clone(),
        times: 160,
    });
    let client = HttpClient::builder()
        .base_url(server.url())
        .api_key("sk_test_compression")
        .max_body_size(4 << 20)
        .build()
        .unwrap();
    reset_peak();
    let before = memory_mib("VmHWM");
    let started = Instant::now();
    let err = client
        .raw()
        .get::<Value>("/v1/bars", &[])
        .expect_err("10 GiB is over the cap");
    let took = started.elapsed();
    let grown = memory_mib("VmHWM") - before;
    eprintln!(
        "a {:.1} MB gzip bomb of 10 GiB: {err} in {took:?}, peak grew {grown:.1} MiB",
        wire as f64 / 1e6
    );
    assert!(
        matches!(err, core_http::Error::ResponseTooLarge { limit, .. } if limit == 4 << 20),
        "{err}"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    // About the 4 MiB cap's buffer (a vector doubling to it), not 10 GiB.
    assert!(grown < 16.0, "grew {grown:.1} MiB");
    assert_eq!(
        server.count("GET"),
        1,
        "an answer too large is not asked again"
    );
}

#[test]
fn a_brotli_bomb_stops_at_the_cap() {
    // 64 MiB of zeros in a few hundred bytes of brotli.
    let bomb = brotli(&vec![0u8; 64 << 20]);
    assert!(bomb.len() < 64 * 1024, "{}", bomb.len());
    let server = Hostile::scripted(vec![encoded("br", &bomb)]);
    let started = Instant::now();
    let err = client(server.url())
        .raw()
        .get::<Value>("/v1/bars", &[])
        .expect_err("over the 16 MiB default cap");
    eprintln!(
        "a {} byte brotli bomb of 64 MiB: {err} in {:?}",
        bomb.len(),
        started.elapsed()
    );
    assert!(
        matches!(err, core_http::Error::ResponseTooLarge { .. }),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

fn pdf() -> Vec<u8> {
    let mut pdf = b"%PDF-1.7\n".to_vec();
    pdf.extend(std::iter::repeat_n(b"0 0 0 rg 1 1 1 RG\n".as_slice(), 20_000).flatten());
    pdf.extend_from_slice(b"%%EOF\n");
    pdf
}

fn pdf_answer(encoding: &str, body: &[u8]) -> Act {
    Act::Send(raw(
        200,
        &[
            ("content-type", "application/pdf"),
            ("content-encoding", encoding),
        ],
        body,
    ))
}

#[test]
fn a_compressed_download_is_checked_on_its_decoded_bytes() {
    let pdf = pdf();
    let gz = gzip(&pdf);
    let server = Hostile::scripted(vec![
        pdf_answer("gzip", &gz),
        pdf_answer("br", &brotli(&pdf)),
        pdf_answer("gzip", &gz[..gz.len() - 9]),
        pdf_answer("gzip", &pdf),
    ]);
    let client = esign_client::Client::builder()
        .base_url(server.url())
        .api_key("sk_test")
        .build()
        .unwrap();
    for _ in 0..2 {
        let mut seen = Vec::new();
        let mut out = Vec::new();
        let done = client
            .documents()
            .download("doc_1")
            .on_progress(|bytes, total| seen.push((bytes, total)))
            .to_writer(&mut out)
            .unwrap();
        assert_eq!(out, pdf);
        assert_eq!(done.bytes, pdf.len() as u64);
        // Decoded bytes, and no total: the Content-Length counted compressed ones.
        assert_eq!(seen.last(), Some(&(pdf.len() as u64, None)));
    }
    let short = client
        .documents()
        .download_to("doc_1", &mut Vec::new())
        .expect_err("cut");
    assert!(short.to_string().contains("gzip"), "{short}");
    let lie = client
        .documents()
        .download_to("doc_1", &mut Vec::new())
        .expect_err("lie");
    assert_eq!(lie.kind(), ErrorKind::Decode, "{lie}");
    assert!(lie.to_string().contains("Content-Encoding: gzip"), "{lie}");
}

/// One GET on a fresh socket, as bytes: the head as text and the body as sent.
fn get_raw(url: &str, path: &str, key: &str, accept: Option<&str>) -> (String, Vec<u8>) {
    use std::io::Read;
    let addr = url.trim_start_matches("http://").split('/').next().unwrap();
    let mut socket = std::net::TcpStream::connect(addr).unwrap();
    let accept = accept
        .map(|a| format!("accept-encoding: {a}\r\n"))
        .unwrap_or_default();
    write!(
        socket,
        "GET {path} HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {key}\r\n{accept}connection: close\r\n\r\n"
    )
    .unwrap();
    let mut all = Vec::new();
    socket.read_to_end(&mut all).unwrap();
    let split = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&all[..split]).to_ascii_lowercase();
    let mut body = all[split + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = unchunk(&body);
    }
    (head, body)
}

fn unchunk(mut wire: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line = wire.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&wire[..line]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&wire[line + 2..line + 2 + size]);
        wire = &wire[line + 2 + size + 2..];
    }
}

#[test]
fn the_sandbox_compresses_a_large_json_answer_when_asked_and_can_lie_about_it() {
    use std::io::Read;
    // A Wednesday afternoon: the last day's minute bars are a whole session's, more than
    // the threshold, whatever day the suite runs on.
    let sandbox = sandbox::Sandbox::builder()
        .frozen_at(time::macros::datetime!(2026-03-04 20:00 UTC))
        .start()
        .unwrap();
    let path = "/trading/v1/history?symbol=AAPL&timeframe=1Min&limit=1000";
    let (plain_head, plain) = get_raw(sandbox.url(), path, sandbox.api_key(), None);
    assert!(plain_head.starts_with("http/1.1 200"), "{plain_head}");
    assert!(!plain_head.contains("content-encoding"), "{plain_head}");
    for (asked, named) in [("gzip", "gzip"), ("br", "br"), ("gzip, br", "br")] {
        let (head, body) = get_raw(sandbox.url(), path, sandbox.api_key(), Some(asked));
        assert!(
            head.contains(&format!("content-encoding: {named}")),
            "{asked}: {head}"
        );
        let mut decoded = Vec::new();
        match named {
            "gzip" => flate2::read::GzDecoder::new(&body[..]).read_to_end(&mut decoded),
            _ => brotli::Decompressor::new(&body[..], 4096).read_to_end(&mut decoded),
        }
        .unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&decoded).unwrap(),
            serde_json::from_slice::<Value>(&plain).unwrap()
        );
        assert!(
            body.len() * 4 < plain.len(),
            "{} of {}",
            body.len(),
            plain.len()
        );
    }
    // A small answer goes as it is.
    let (small, _) = get_raw(
        sandbox.url(),
        "/trading/v1/clock",
        sandbox.api_key(),
        Some("gzip"),
    );
    assert!(!small.contains("content-encoding"), "{small}");

    // The client asks, and reads it; a fault labels a plain answer gzip.
    let client = trading_client::Client::new(sandbox.trading().url(), sandbox.api_key()).unwrap();
    let query =
        trading_client::history::ListBars::new("AAPL", trading_client::markets::Timeframe::Minute)
            .limit(1000);
    let page = client.history().list(&query).unwrap();
    assert!(page.data.len() > 100, "{}", page.data.len());
    sandbox.inject(sandbox::Fault::on("GET", "/trading/v1/history").wrong_encoding());
    let err = client.history().list(&query).expect_err("a lie");
    assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
    assert!(err.to_string().contains("Content-Encoding: gzip"), "{err}");
    assert!(
        client.history().list(&query).is_ok(),
        "the next answer is honest"
    );
}
