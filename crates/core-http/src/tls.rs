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

    /// The `ureq` TLS settings for these roots (rustls with the ring provider).
    pub(crate) fn ureq_config(&self) -> ureq::tls::TlsConfig {
        let builder = ureq::tls::TlsConfig::builder().provider(ureq::tls::TlsProvider::Rustls);
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

impl fmt::Debug for RootCertificates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RootCertificates::Mozilla => f.write_str("Mozilla"),
            RootCertificates::Custom(c) => write!(f, "Custom({} certificates)", c.len()),
        }
    }
}
