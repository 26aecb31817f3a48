//! Which certificate authorities the client trusts: the built-in Mozilla set, or exactly
//! the ones the user gave. One setting serves HTTPS and a stream's `wss://` (`core-streams`).

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
    /// Reads one or more PEM certificates; a private key in `pem` is an error, and so is
    /// PEM that cannot be read. Other sections (a certificate request, a revocation list)
    /// are passed over.
    pub(crate) fn from_pem(pem: &[u8]) -> Result<Self> {
        use rustls::pki_types::pem::{PemObject, SectionKind};
        let mut certs = Vec::new();
        for item in <(SectionKind, Vec<u8>)>::pem_slice_iter(pem) {
            match item {
                Ok((SectionKind::Certificate, der)) => certs.push(der),
                Ok((
                    SectionKind::PrivateKey
                    | SectionKind::RsaPrivateKey
                    | SectionKind::EcPrivateKey,
                    _,
                )) => {
                    return Err(Error::config(
                        "the root certificates' PEM holds something other than certificates",
                    ));
                }
                Ok(_) => {}
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

    /// The rustls configuration of calls and streams: these roots, the client's
    /// certificate when it has one, TLS 1.2 and 1.3 with the ring provider (given
    /// explicitly: no process-wide default provider is needed or set).
    pub(crate) fn rustls_config(
        &self,
        identity: Option<&Identity>,
    ) -> Result<Arc<rustls::ClientConfig>> {
        let mut roots = rustls::RootCertStore::empty();
        match self {
            RootCertificates::Mozilla => {
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            }
            RootCertificates::Custom(ders) => {
                for der in ders.iter() {
                    roots
                        .add(rustls::pki_types::CertificateDer::from(der.clone()))
                        .map_err(|e| Error::config(format!("a root certificate: {e}")))?;
                }
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::config(format!("TLS: {e}")))?
            .with_root_certificates(roots);
        let config = match identity {
            None => config.with_no_client_auth(),
            Some(identity) => {
                let (chain, key) = identity.rustls_parts();
                config.with_client_auth_cert(chain, key).map_err(|_| {
                    Error::config("the client certificate and key do not go together")
                })?
            }
        };
        Ok(Arc::new(config))
    }
}

/// The client's own certificate, for a service behind a gateway that asks for one
/// (mutual TLS): its chain and its private key, as rustls takes them.
#[derive(Clone)]
pub(crate) struct Identity {
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
        Ok(Identity {
            rustls: Arc::new((chain, key)),
        })
    }

    /// The chain and key as rustls takes them.
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

/// Why a TLS handshake failed.
#[derive(Debug)]
pub(crate) enum HandshakeError {
    /// TLS itself: a certificate, the protocol, a server answering in plain HTTP.
    Tls(String),
    /// The connection broke or its time ran out.
    Io(std::io::Error),
}

/// The TLS handshake with `host` (bare: no brackets) over `socket`, whose reads and
/// writes keep the connection's deadline.
pub(crate) fn handshake<S: std::io::Read + std::io::Write>(
    config: &Arc<rustls::ClientConfig>,
    host: &str,
    mut socket: S,
) -> std::result::Result<rustls::StreamOwned<rustls::ClientConnection, S>, HandshakeError> {
    let tls = HandshakeError::Tls;
    let name = rustls::pki_types::ServerName::try_from(host.to_owned())
        .map_err(|_| tls(format!("{host} is not a name TLS can check")))?;
    let mut conn =
        rustls::ClientConnection::new(Arc::clone(config), name).map_err(|e| tls(e.to_string()))?;
    while conn.is_handshaking() {
        if let Err(e) = conn.complete_io(&mut socket) {
            return Err(
                match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                    Some(rustls::Error::InvalidMessage(
                        rustls::InvalidMessage::InvalidContentType,
                    )) => HandshakeError::Tls(
                        "the server answered in plain HTTP, not TLS: use http:// for a server \
                     without TLS (a local one, say)"
                            .into(),
                    ),
                    Some(other) => tls(other.to_string()),
                    None => HandshakeError::Io(e),
                },
            );
        }
    }
    Ok(rustls::StreamOwned::new(conn, socket))
}
