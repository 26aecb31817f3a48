//! The builder's network settings: which roots are trusted, whether plain HTTP is
//! allowed, and the proxy; one setting for calls and streams alike.

use super::{ClientBuilder, ServiceClient};
use crate::net::tls::RootCertificates;
use crate::{Result, auth::Secret};

impl<C: ServiceClient> ClientBuilder<C> {
    /// Allows plain `http://` to hosts other than loopback. Defaults to `false`: only
    /// `https://`, or `http://` to `localhost`, 127.0.0.0/8 and `[::1]`.
    ///
    /// ```
    /// let refused = core_http::HttpClient::builder()
    ///     .base_url("http://api.internal")
    ///     .api_key("sk_test")
    ///     .build();
    /// assert!(refused.is_err()); // the key would cross the network in clear
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("http://api.internal")
    ///     .api_key("sk_test")
    ///     .allow_insecure_http(true)
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.config.allow_insecure_http = allow;
        self
    }

    /// Trusts exactly the certificate authorities in `pem` (one or more PEM
    /// certificates) for HTTPS and `wss://`, instead of the built-in Mozilla set: for a
    /// private deployment or a TLS-inspecting proxy. Defaults to the Mozilla roots.
    ///
    /// ```no_run
    /// let pem = std::fs::read("/etc/ssl/private-ca.pem")?;
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.internal.example.com")
    ///     .api_key("sk_test")
    ///     .root_certificates_pem(&pem)?
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn root_certificates_pem(mut self, pem: &[u8]) -> Result<Self> {
        self.config.roots = RootCertificates::from_pem(pem)?;
        Ok(self)
    }

    /// Sends every call and stream through this HTTP proxy (`http://host:port`, with
    /// `user:password@` when it asks for credentials), whatever the environment says,
    /// loopback hosts included; the hosts in `bypass` (`NO_PROXY` rules: `name`, `.name`,
    /// `*`) are reached directly. Calls and streams alike go through a `CONNECT` tunnel,
    /// TLS to the service inside it, all within the call's timeout. The credentials go
    /// only to the proxy and are never shown; a proxy's 401, 403 or 407 is never retried.
    ///
    /// By default the proxies are read from the environment as curl reads them:
    /// `HTTPS_PROXY` for `https://` and `wss://` URLs, `HTTP_PROXY` for `http://` and
    /// `ws://`, `ALL_PROXY` for both when the scheme's own is not set, `NO_PROXY` over
    /// all (each in lower or upper case, lower first); a loopback host (`localhost`,
    /// `127.0.0.0/8`, `::1`, so the local sandbox) is never reached through the
    /// environment's proxy.
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .proxy("http://me:secret@proxy.corp:3128", &["internal.corp"])
    ///     .build()?;
    /// assert!(!format!("{client:?}").contains("secret"));
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn proxy(mut self, url: impl Into<String>, bypass: &[&str]) -> Self {
        self.config.proxy_choice = crate::proxy::ProxyChoice::Given {
            url: Secret::new(url.into()),
            bypass: bypass
                .iter()
                .map(|h| h.trim().to_ascii_lowercase())
                .collect(),
        };
        self
    }

    /// Reaches the network directly, whatever `HTTPS_PROXY` and the others say.
    ///
    /// ```
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.example.com")
    ///     .no_proxy()
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    pub fn no_proxy(mut self) -> Self {
        self.config.proxy_choice = crate::proxy::ProxyChoice::Off;
        self
    }

    /// Presents this client certificate (mutual TLS) to services that ask for one, on
    /// calls and streams alike: `certs_pem` holds the chain (the client's certificate
    /// first), `key_pem` its private key (PKCS#8, PKCS#1 or SEC1, unencrypted). The key
    /// is never shown in `Debug` or an error.
    ///
    /// ```no_run
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://gateway.corp.example")
    ///     .client_certificate_pem(
    ///         &std::fs::read("client.pem")?,
    ///         &std::fs::read("client.key")?,
    ///     )?
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn client_certificate_pem(mut self, certs_pem: &[u8], key_pem: &[u8]) -> Result<Self> {
        self.config.identity = Some(crate::net::tls::Identity::from_pem(certs_pem, key_pem)?);
        Ok(self)
    }

    /// Trusts the operating system's certificate store instead of Mozilla's roots (feature
    /// `system-roots`): where a company installs its own root, on calls and streams
    /// alike. Read once, now; `SSL_CERT_FILE` and `SSL_CERT_DIR` point elsewhere when
    /// set. An error when the store holds no certificate.
    ///
    /// ```no_run
    /// let client = core_http::HttpClient::builder()
    ///     .base_url("https://api.corp.example")
    ///     .system_roots()?
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), core_http::Error>(())
    /// ```
    #[cfg(feature = "system-roots")]
    pub fn system_roots(mut self) -> Result<Self> {
        self.config.roots = RootCertificates::system()?;
        Ok(self)
    }
}
