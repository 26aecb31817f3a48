//! Which certificate authorities the client trusts: the built-in Mozilla set, or exactly
//! the ones the user gave. One setting serves HTTPS and (with the `ws` feature) `wss://`.

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};

/// The trusted roots of a client.
#[derive(Clone, Default)]
pub(crate) enum RootCertificates {
    /// Mozilla's roots, as shipped by `webpki-roots`.
    #[default]
    Mozilla,
    /// Exactly these DER certificates.
    Custom(Arc<Vec<Vec<u8>>>),
}

impl RootCertificates {
    /// Reads one or more PEM certificates; anything else in `pem` is an error.
    pub(crate) fn from_pem(pem: &[u8]) -> Result<Self> {
        let mut certs = Vec::new();
        for item in ureq::tls::parse_pem(pem) {
            match item {
                Ok(ureq::tls::PemItem::Certificate(cert)) => certs.push(cert.der().to_vec()),
                Ok(_) => {
                    return Err(Error::config(
                        "the root certificates' PEM holds something other than certificates",
                    ));
                }
                Err(e) => {
                    return Err(Error::config(format!(
                        "the root certificates are not valid PEM: {e}"
                    )));
                }
            }
        }
        if certs.is_empty() {
            return Err(Error::config(
                "no certificate found in the root certificates' PEM",
            ));
        }
        Ok(RootCertificates::Custom(Arc::new(certs)))
    }

    /// The operating system's store (feature `system-roots`).
    #[cfg(feature = "system-roots")]
    pub(crate) fn system() -> Result<Self> {
        let found = rustls_native_certs::load_native_certs();
        if found.certs.is_empty() {
            let why = found
                .errors
                .first()
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            return Err(Error::config(format!(
                "no certificate found in the system's store{why}"
            )));
        }
        Ok(RootCertificates::Custom(Arc::new(
            found.certs.iter().map(|c| c.as_ref().to_vec()).collect(),
        )))
    }

    /// The `ureq` TLS settings for these roots (rustls with the ring provider), with the
    /// client's certificate when it has one.
    pub(crate) fn ureq_config(&self, identity: Option<&Identity>) -> ureq::tls::TlsConfig {
        let builder = ureq::tls::TlsConfig::builder()
            .provider(ureq::tls::TlsProvider::Rustls)
            .client_cert(identity.map(|i| i.ureq.clone()));
        match self {
            RootCertificates::Mozilla => builder.root_certs(ureq::tls::RootCerts::WebPki),
            RootCertificates::Custom(ders) => {
                let certs: Vec<ureq::tls::Certificate<'static>> = ders
                    .iter()
                    .map(|der| ureq::tls::Certificate::from_der(der).to_owned())
                    .collect();
                builder.root_certs(ureq::tls::RootCerts::new_with_certs(&certs))
            }
        }
        .build()
    }
}

/// The client's own certificate, for a service behind a gateway that asks for one
/// (mutual TLS): its chain and its private key, as ureq takes them (calls) and as rustls
/// takes them (streams).
#[derive(Clone)]
pub(crate) struct Identity {
    ureq: ureq::tls::ClientCert,
    #[cfg_attr(not(feature = "ws"), allow(dead_code))]
    rustls: Arc<(
        Vec<rustls::pki_types::CertificateDer<'static>>,
        rustls::pki_types::PrivateKeyDer<'static>,
    )>,
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Identity({} certificates, key ***)", self.rustls.0.len())
    }
}

impl Identity {
    /// The chain (leaf first) from `certs_pem` and the key from `key_pem` (PKCS#8,
    /// PKCS#1 or SEC1, unencrypted). No message ever holds the key's bytes.
    pub(crate) fn from_pem(certs_pem: &[u8], key_pem: &[u8]) -> Result<Self> {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(certs_pem)
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::config(format!("the client certificate is not valid PEM: {e}")))?;
        if chain.is_empty() {
            return Err(Error::config(
                "no certificate found in the client certificate's PEM",
            ));
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|_| {
            Error::config(
                "no private key (PKCS#8, PKCS#1 or SEC1, unencrypted) in the client key's PEM",
            )
        })?;
        let ureq_chain: Vec<ureq::tls::Certificate<'static>> = chain
            .iter()
            .map(|c| ureq::tls::Certificate::from_der(c.as_ref()).to_owned())
            .collect();
        let ureq_key = ureq::tls::PrivateKey::from_pem(key_pem)
            .map_err(|_| Error::config("the client key is not valid PEM"))?;
        Ok(Identity {
            ureq: ureq::tls::ClientCert::new_with_certs(&ureq_chain, ureq_key),
            rustls: Arc::new((chain, key)),
        })
    }

    /// The chain and key as rustls takes them (for streams).
    #[cfg_attr(not(feature = "ws"), allow(dead_code))]
    pub(crate) fn rustls_parts(
        &self,
    ) -> (
        Vec<rustls::pki_types::CertificateDer<'static>>,
        rustls::pki_types::PrivateKeyDer<'static>,
    ) {
        (self.rustls.0.clone(), self.rustls.1.clone_key())
    }
}

impl fmt::Debug for RootCertificates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RootCertificates::Mozilla => f.write_str("Mozilla"),
            RootCertificates::Custom(c) => write!(f, "Custom({} certificates)", c.len()),
        }
    }
}
