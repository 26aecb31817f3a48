//! TLS against a local server with certificates made in the test: a custom root is
//! accepted; an expired, a wrong-host and a self-signed certificate are refused with a
//! clear error that says nothing was sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
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
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    let requests = Arc::new(AtomicUsize::new(0));
    let seen = requests.clone();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let config = config.clone();
            let seen = seen.clone();
            thread::spawn(move || {
                let Ok(conn) = rustls::ServerConnection::new(config) else {
                    return;
                };
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let mut reader = BufReader::new(&mut tls);
                let mut line = String::new();
                loop {
                    line.clear();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) if line == "\r\n" => break,
                        Ok(_) => {}
                    }
                }
                seen.fetch_add(1, Ordering::SeqCst);
                let _ = tls.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
                );
                let _ = tls.flush();
            });
        }
    });
    (url, requests)
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
    assert!(matches!(err, Error::Connect { .. }), "{err:?}");
    assert!(!err.may_have_been_processed(), "{err:?}");
    let text = err.to_string().to_ascii_lowercase();
    assert!(
        text.contains("tls") && text.contains("certificate"),
        "{text}"
    );
    assert_eq!(requests.load(Ordering::SeqCst), 0, "no request was read");
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
