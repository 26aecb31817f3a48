//! TLS against a local server with certificates made in the test: a custom root is
//! accepted; an expired, a wrong-host and a self-signed certificate are refused with a
//! clear error that says nothing was sent. TLS goes inside a proxy's tunnel, checked
//! against the service's name; a body of many TLS records is sent whole, and a kept-alive
//! TLS connection serves the next call; an upload the server takes a little at a time
//! ends at the call's deadline. A call's new connection resumes the TLS session of the
//! one before it (TLS 1.3 and 1.2): the client's one configuration holds the cache.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use core_http::{Error, HttpClient};
use rcgen::{CertificateParams, DnType, IsCa, KeyPair, SanType};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

struct Authority {
    cert: rcgen::Certificate,
    key: KeyPair,
}

fn authority() -> Authority {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(DnType::CommonName, "core-http test root");
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Authority { cert, key }
}

/// A leaf for `names` (DNS names or IPs), valid from `from` to `to` years from now.
fn leaf(
    ca: Option<&Authority>,
    names: &[&str],
    years: (i32, i32),
) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.subject_alt_names = names
        .iter()
        .map(|n| match n.parse() {
            Ok(ip) => SanType::IpAddress(ip),
            Err(_) => SanType::DnsName((*n).try_into().unwrap()),
        })
        .collect();
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now + time::Duration::days(365 * i64::from(years.0));
    params.not_after = now + time::Duration::days(365 * i64::from(years.1));
    let key = KeyPair::generate().unwrap();
    let cert = match ca {
        Some(ca) => params.signed_by(&key, &ca.cert, &ca.key).unwrap(),
        None => params.self_signed(&key).unwrap(),
    };
    (
        cert.der().clone(),
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    )
}

/// A TLS server answering `{}` to every request; returns its `https://127.0.0.1:port`
/// URL and the count of requests it read.
fn serve(cert: CertificateDer<'static>, key: PrivateKeyDer<'static>) -> (String, Arc<AtomicUsize>) {
    serve_with(server_config(cert, key, None))
}

/// A server's TLS settings; with `clients`, it asks every client for a certificate
/// from that authority (mutual TLS).
fn server_config(
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
    clients: Option<&Authority>,
) -> Arc<rustls::ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = match clients {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            roots.add(ca.cert.der().clone()).unwrap();
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
    };
    Arc::new(builder.with_single_cert(vec![cert], key).unwrap())
}

/// A client certificate from `ca`, as PEM: (chain, key).
fn client_identity(ca: &Authority) -> (String, String) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "script on a company machine");
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.cert, &ca.key).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// A TLS connection as a test server holds it.
type Served = rustls::StreamOwned<rustls::ServerConnection, std::net::TcpStream>;

/// A TLS server on this machine with `config`: each connection counted, then handed to
/// `serve` on a thread of its own (the handshake happens at its first read). Returns its
/// port and the count of connections it accepted.
fn tls_server(
    config: Arc<rustls::ServerConfig>,
    serve: impl Fn(Served) + Send + Sync + 'static,
) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let seen = connections.clone();
    let serve = Arc::new(serve);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            seen.fetch_add(1, Ordering::SeqCst);
            let (config, serve) = (config.clone(), serve.clone());
            thread::spawn(move || {
                if let Ok(conn) = rustls::ServerConnection::new(config) {
                    serve(rustls::StreamOwned::new(conn, stream));
                }
            });
        }
    });
    (port, connections)
}

/// Reads one request, its head and then a body of its `content-length`, and returns the
/// body's length; `None` when the connection (or its handshake) ends first.
fn read_request(reader: &mut impl BufRead) -> Option<usize> {
    let mut length = 0;
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {}
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(length)
}

/// A TLS server answering `{}` to a request and closing; returns its
/// `https://127.0.0.1:port` URL and the count of requests it read.
fn serve_with(config: Arc<rustls::ServerConfig>) -> (String, Arc<AtomicUsize>) {
    let requests = Arc::new(AtomicUsize::new(0));
    let seen = requests.clone();
    let (port, _) = tls_server(config, move |tls| {
        let mut reader = BufReader::new(tls);
        if read_request(&mut reader).is_none() {
            return;
        }
        seen.fetch_add(1, Ordering::SeqCst);
        let tls = reader.get_mut();
        let _ = tls.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
        );
        let _ = tls.flush();
    });
    (format!("https://127.0.0.1:{port}"), requests)
}

fn client_trusting(url: &str, ca: &Authority) -> HttpClient {
    HttpClient::builder()
        .base_url(url)
        .root_certificates_pem(ca.cert.pem().as_bytes())
        .unwrap()
        .max_retries(0)
        .build()
        .unwrap()
}

fn refused(err: &Error, requests: &AtomicUsize) {
    assert!(matches!(err, Error::Tls { .. }), "{err:?}");
    assert!(!err.may_have_been_processed(), "{err:?}");
    let text = err.to_string().to_ascii_lowercase();
    assert!(
        text.contains("tls") && text.contains("certificate"),
        "{text}"
    );
    assert_eq!(requests.load(Ordering::SeqCst), 0, "no request was read");
}

/// A TLS server (a certificate for `names` from `ca`) that reads each request's body by
/// its `content-length` and answers `{"got": <bytes>}`, keeping the connection open;
/// returns its port and the count of connections it accepted.
fn serve_uploads(ca: &Authority, names: &[&str]) -> (u16, Arc<AtomicUsize>) {
    let (cert, key) = leaf(Some(ca), names, (-1, 1));
    tls_server(server_config(cert, key, None), |tls| {
        let mut reader = BufReader::new(tls);
        while let Some(length) = read_request(&mut reader) {
            let answer = format!("{{\"got\": {length}}}");
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                answer.len()
            );
            let tls = reader.get_mut();
            if tls.write_all(head.as_bytes()).is_err()
                || tls.write_all(answer.as_bytes()).is_err()
                || tls.flush().is_err()
            {
                return;
            }
        }
    })
}

#[test]
fn a_tls_upload_to_a_server_that_takes_a_little_at_a_time_ends_at_the_deadline() {
    // After the handshake the server takes 16 KB every 50 ms, never the whole 32 MB
    // body: each TLS write makes some progress before its wait runs out. The call must
    // still end at its deadline, not one timeout later for each part the server took.
    let ca = authority();
    let (cert, key) = leaf(Some(&ca), &["127.0.0.1"], (-1, 1));
    let (port, _) = tls_server(server_config(cert, key, None), |mut tls| {
        let mut chunk = vec![0u8; 16 * 1024];
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(10) {
            if matches!(tls.read(&mut chunk), Ok(0) | Err(_)) {
                return;
            }
            thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    let budget = std::time::Duration::from_millis(800);
    let client = HttpClient::builder()
        .base_url(format!("https://127.0.0.1:{port}"))
        .root_certificates_pem(ca.cert.pem().as_bytes())
        .unwrap()
        .timeout(budget)
        .max_retries(0)
        .build()
        .unwrap();
    let upload = client
        .post("/upload")
        .bytes("application/octet-stream", vec![b'x'; 32 << 20]);
    let started = std::time::Instant::now();
    let err = upload.send().unwrap_err();
    let took = started.elapsed();
    assert!(
        took >= budget - std::time::Duration::from_millis(20),
        "early: {took:?}"
    );
    assert!(
        took < budget + std::time::Duration::from_secs(1),
        "late: {took:?}"
    );
    assert_eq!(err.kind(), core_http::ErrorKind::Timeout, "{err:?}");
}

#[test]
fn a_body_of_many_tls_records_is_sent_whole_and_the_connection_serves_the_next_call() {
    let ca = authority();
    let (port, connections) = serve_uploads(&ca, &["127.0.0.1"]);
    let client = client_trusting(&format!("https://127.0.0.1:{port}"), &ca);
    // Far more than one TLS record (16 KiB) and than a socket's buffer.
    let big = serde_json::json!({ "text": "x".repeat(3 << 20) });
    let sent = serde_json::to_vec(&big).unwrap().len();
    for body in [big, serde_json::json!({})] {
        let len = serde_json::to_vec(&body).unwrap().len();
        let answer: serde_json::Value = client.post("/upload").json(&body).send_json().unwrap();
        assert_eq!(answer, serde_json::json!({ "got": len }));
    }
    assert!(sent > 3 << 20);
    assert_eq!(
        connections.load(Ordering::SeqCst),
        1,
        "one connection, kept alive"
    );
}

#[test]
fn a_server_that_never_answers_the_handshake_is_left_at_the_connect_timeout() {
    // Accepts the connection and reads the client's hello, but never answers it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let client = HttpClient::builder()
        .base_url(format!("https://127.0.0.1:{port}"))
        .connect_timeout(std::time::Duration::from_millis(300))
        .timeout(std::time::Duration::from_secs(60))
        .max_retries(0)
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let err = client.get("/x").send().unwrap_err();
    // Bounded by the connect timeout, not the call's minute.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{err:?}"
    );
    assert_eq!(err.kind(), core_http::ErrorKind::Timeout, "{err:?}");
}

#[test]
fn tls_inside_a_proxys_tunnel_checks_the_services_name() {
    let ca = authority();
    // Names under `.test` only the proxy resolves (to this machine): the client cannot
    // reach them but through the tunnel.
    let (port, connections) = serve_uploads(&ca, &["api.service.test"]);
    let proxy = testkit::connect_proxy::ConnectProxy::start(None);
    let through = |host: &str| {
        HttpClient::builder()
            .base_url(format!("https://{host}:{port}"))
            .root_certificates_pem(ca.cert.pem().as_bytes())
            .unwrap()
            .proxy(proxy.url(), &[])
            .max_retries(0)
            .build()
            .unwrap()
    };
    let answer: serde_json::Value = through("api.service.test")
        .post("/upload")
        .json(&serde_json::json!({}))
        .send_json()
        .unwrap();
    assert_eq!(answer, serde_json::json!({ "got": 2 }));
    // The same server under another name: its certificate does not name that host.
    let err = through("other.service.test").get("/x").send().unwrap_err();
    assert!(matches!(err, Error::Tls { .. }), "{err:?}");
    assert!(!err.may_have_been_processed(), "{err:?}");
    assert!(
        err.to_string().to_ascii_lowercase().contains("certificate"),
        "{err}"
    );
    let asked: Vec<String> = proxy.asked().into_iter().map(|a| a.target).collect();
    assert_eq!(
        asked,
        [
            format!("api.service.test:{port}"),
            format!("other.service.test:{port}")
        ]
    );
    assert_eq!(connections.load(Ordering::SeqCst), 2);
}

#[test]
fn a_client_certificate_and_a_key_that_do_not_go_together_are_a_config_error() {
    let ca = authority();
    let (chain, _) = client_identity(&ca);
    let (_, other_key) = client_identity(&ca);
    let err = HttpClient::builder()
        .base_url("https://api.example.com")
        .client_certificate_pem(chain.as_bytes(), other_key.as_bytes())
        .unwrap()
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    let key_body = other_key.lines().nth(1).unwrap();
    assert!(!err.to_string().contains(key_body), "{err}");
    assert!(!format!("{err:?}").contains(key_body), "{err:?}");
}

#[test]
fn a_certificate_from_a_custom_root_is_accepted() {
    let ca = authority();
    let (cert, key) = leaf(Some(&ca), &["127.0.0.1", "localhost"], (-1, 1));
    let (url, requests) = serve(cert, key);
    let client = client_trusting(&url, &ca);
    let value: serde_json::Value = client.get("/x").send_json().unwrap();
    assert_eq!(value, serde_json::json!({}));
    assert_eq!(requests.load(Ordering::SeqCst), 1);
}

#[test]
fn an_expired_certificate_is_refused() {
    let ca = authority();
    let (cert, key) = leaf(Some(&ca), &["127.0.0.1"], (-3, -1));
    let (url, requests) = serve(cert, key);
    let err = client_trusting(&url, &ca).get("/x").send().unwrap_err();
    refused(&err, &requests);
    assert!(
        err.to_string().to_ascii_lowercase().contains("expired"),
        "{err}"
    );
}

#[test]
fn a_certificate_for_another_host_is_refused() {
    let ca = authority();
    let (cert, key) = leaf(Some(&ca), &["api.example.com"], (-1, 1));
    let (url, requests) = serve(cert, key);
    let err = client_trusting(&url, &ca).get("/x").send().unwrap_err();
    refused(&err, &requests);
}

#[test]
fn a_self_signed_certificate_is_refused() {
    let (cert, key) = leaf(None, &["127.0.0.1"], (-1, 1));
    let (url, requests) = serve(cert, key);
    // Neither the built-in roots nor an unrelated custom root trust it.
    let default_roots = HttpClient::builder()
        .base_url(&url)
        .max_retries(0)
        .build()
        .unwrap();
    refused(&default_roots.get("/x").send().unwrap_err(), &requests);
    let other = authority();
    refused(
        &client_trusting(&url, &other).get("/x").send().unwrap_err(),
        &requests,
    );
}

#[test]
fn a_root_pem_that_holds_no_certificate_is_a_config_error() {
    for pem in [&b"not pem"[..], b""] {
        let err = HttpClient::builder()
            .root_certificates_pem(pem)
            .unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{err:?}");
    }
}

#[test]
fn a_gateway_that_asks_for_a_client_certificate_gets_it() {
    let ca = authority();
    let clients = authority();
    let (cert, key) = leaf(Some(&ca), &["127.0.0.1"], (-1, 1));
    let (url, requests) = serve_with(server_config(cert, key, Some(&clients)));
    let (chain, key_pem) = client_identity(&clients);
    let client = HttpClient::builder()
        .base_url(&url)
        .root_certificates_pem(ca.cert.pem().as_bytes())
        .unwrap()
        .client_certificate_pem(chain.as_bytes(), key_pem.as_bytes())
        .unwrap()
        .max_retries(0)
        .build()
        .unwrap();
    let value: serde_json::Value = client.get("/x").send_json().unwrap();
    assert_eq!(value, serde_json::json!({}));
    assert_eq!(requests.load(Ordering::SeqCst), 1);
    // The key never shows.
    let shown = format!("{client:?}");
    let key_body = key_pem.lines().nth(1).unwrap();
    assert!(!shown.contains(key_body), "{shown}");

    // Without a certificate, or with one from another authority: refused in the
    // handshake, nothing read by the server, not retried.
    let without = client_trusting(&url, &ca);
    let err = without.get("/x").send().unwrap_err();
    assert!(!err.may_have_been_processed(), "{err:?}");
    let stranger = authority();
    let (chain, key_pem) = client_identity(&stranger);
    let wrong = HttpClient::builder()
        .base_url(&url)
        .root_certificates_pem(ca.cert.pem().as_bytes())
        .unwrap()
        .client_certificate_pem(chain.as_bytes(), key_pem.as_bytes())
        .unwrap()
        .max_retries(0)
        .build()
        .unwrap();
    let err = wrong.get("/x").send().unwrap_err();
    assert!(!err.to_string().contains(key_body), "{err}");
    assert_eq!(requests.load(Ordering::SeqCst), 1);
}

#[test]
fn a_client_certificate_that_is_not_pem_is_a_config_error_that_shows_no_key() {
    let ca = authority();
    let (chain, key_pem) = client_identity(&ca);
    for (certs, key) in [
        ("not pem", key_pem.as_str()),
        (
            chain.as_str(),
            "-----BEGIN PRIVATE KEY-----\nnot base64 at all!\n-----END PRIVATE KEY-----\n",
        ),
        (chain.as_str(), ""),
    ] {
        let err = HttpClient::builder()
            .client_certificate_pem(certs.as_bytes(), key.as_bytes())
            .unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{err:?}");
        assert!(!err.to_string().contains("not base64"), "{err}");
    }
}

/// The system store read with `SSL_CERT_FILE` pointing at a test root: run in a child
/// process (the variable is the process's), this test binary again with the helper
/// below, so that nothing else in this process sees it.
#[cfg(feature = "system-roots")]
#[test]
fn the_system_store_is_trusted_when_asked() {
    let ca = authority();
    let (cert, key) = leaf(Some(&ca), &["127.0.0.1"], (-1, 1));
    let (url, requests) = serve(cert, key);
    let file = std::env::temp_dir().join(format!("core-http-roots-{}.pem", std::process::id()));
    std::fs::write(&file, ca.cert.pem()).unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "system_roots_in_a_child",
            "--ignored",
            "--nocapture",
        ])
        .env("SSL_CERT_FILE", &file)
        .env("CORE_HTTP_TEST_URL", &url)
        .status()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    assert!(status.success(), "the child's checks failed");
    // The child's client with the system store reached the server once; its client
    // with Mozilla's roots did not.
    assert_eq!(requests.load(Ordering::SeqCst), 1);
}

/// The child of the test above (ignored on its own).
#[cfg(feature = "system-roots")]
#[test]
#[ignore = "run by the_system_store_is_trusted_when_asked, in a child process"]
fn system_roots_in_a_child() {
    let url = std::env::var("CORE_HTTP_TEST_URL").expect("run by its parent test");
    let system = HttpClient::builder()
        .base_url(&url)
        .system_roots()
        .unwrap()
        .max_retries(0)
        .build()
        .unwrap();
    let value: serde_json::Value = system.get("/x").send_json().unwrap();
    assert_eq!(value, serde_json::json!({}));
    let mozilla = HttpClient::builder()
        .base_url(&url)
        .max_retries(0)
        .build()
        .unwrap();
    assert!(mozilla.get("/x").send().is_err());
}

#[test]
fn a_calls_new_connection_resumes_the_tls_session_under_tls_1_3_and_1_2() {
    use rustls::HandshakeKind;
    let ca = authority();
    for versions in [
        &[&rustls::version::TLS13][..],
        &[&rustls::version::TLS12][..],
    ] {
        let (cert, key) = leaf(Some(&ca), &["127.0.0.1"], (-1, 1));
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_protocol_versions(versions)
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
        // Each connection's handshake as the server saw it; every answer closes its
        // connection, so each call makes a new one.
        let kinds: Arc<std::sync::Mutex<Vec<Option<HandshakeKind>>>> = Arc::default();
        let seen = kinds.clone();
        let (port, connections) = tls_server(Arc::new(config), move |tls| {
            let mut reader = BufReader::new(tls);
            if read_request(&mut reader).is_none() {
                return;
            }
            let tls = reader.get_mut();
            seen.lock().unwrap().push(tls.conn.handshake_kind());
            let _ = tls.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
            );
            let _ = tls.flush();
        });
        let client = client_trusting(&format!("https://127.0.0.1:{port}"), &ca);
        for _ in 0..3 {
            let _: serde_json::Value = client.raw().get("/v1/x", &[]).unwrap();
        }
        assert_eq!(connections.load(Ordering::SeqCst), 3);
        assert_eq!(
            *kinds.lock().unwrap(),
            [
                Some(HandshakeKind::Full),
                Some(HandshakeKind::Resumed),
                Some(HandshakeKind::Resumed)
            ],
            "{versions:?}"
        );
    }
}
