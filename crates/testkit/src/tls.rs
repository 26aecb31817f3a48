//! A TLS server's settings for tests on loopback: a throwaway root (its PEM, for the
//! client's `root_certificates_pem`) and a server configuration whose certificate for
//! `127.0.0.1` that root signed.
//!
//! ```
//! let (root_pem, server) = service_clients_testkit::tls::local_root_and_server();
//! assert!(root_pem.starts_with("-----BEGIN CERTIFICATE-----"));
//! # let _ = server;
//! ```

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, SanType};

/// A new root (its PEM) and a server configuration with a certificate for `127.0.0.1`
/// it signed (rustls on ring, TLS 1.2 and 1.3, no client certificates).
pub fn local_root_and_server() -> (String, Arc<rustls::ServerConfig>) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "testkit root");
    let ca_key = KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let mut leaf_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    leaf_params.subject_alt_names = vec![SanType::IpAddress("127.0.0.1".parse().unwrap())];
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "127.0.0.1");
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = leaf_params.signed_by(&leaf_key, &ca, &ca_key).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![leaf.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
    )
    .unwrap();
    (ca.pem(), Arc::new(config))
}
