//! A caching name resolver for the transport.
//!
//! `ureq` resolves the host before every request, even one that will reuse a pooled
//! connection, and with a timeout set it does so on a freshly spawned thread. Measured
//! here, that cost more than the rest of a keep-alive call. This resolver keeps answers
//! for 30 seconds, so a client talking to one service resolves about twice a minute.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// How long a resolved address list is reused.
const TTL: Duration = Duration::from_secs(30);

#[derive(Debug, Default)]
pub(crate) struct CachingResolver {
    inner: DefaultResolver,
    /// `scheme://authority`, when it was resolved, and what to. A client talks to one
    /// or a few hosts: a short list, searched without making a key.
    cache: Mutex<Vec<(String, Instant, ResolvedSocketAddrs)>>,
}

/// Whether `key` is `scheme://authority`.
fn is_key(key: &str, scheme: &str, authority: &str) -> bool {
    key.len() == scheme.len() + 3 + authority.len()
        && key.starts_with(scheme)
        && key[scheme.len()..].starts_with("://")
        && key.ends_with(authority)
}

impl Resolver for CachingResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let scheme = uri.scheme_str().unwrap_or_default();
        let authority = uri.authority().map(|a| a.as_str()).unwrap_or_default();
        if let Ok(cache) = self.cache.lock()
            && let Some((_, at, addrs)) = cache.iter().find(|(k, ..)| is_key(k, scheme, authority))
            && at.elapsed() < TTL
        {
            return Ok(addrs.clone());
        }
        // A failed lookup is "host not found": a connection error that never reached a
        // server, not an I/O error in the middle of an exchange.
        let addrs = match self.inner.resolve(uri, config, timeout) {
            Ok(addrs) => addrs,
            Err(ureq::Error::Io(_)) => return Err(ureq::Error::HostNotFound),
            Err(e) => return Err(e),
        };
        if let Ok(mut cache) = self.cache.lock() {
            cache.retain(|(k, at, _)| at.elapsed() < TTL && !is_key(k, scheme, authority));
            if cache.len() >= 256 {
                cache.remove(0);
            }
            cache.push((
                format!("{scheme}://{authority}"),
                Instant::now(),
                addrs.clone(),
            ));
        }
        Ok(addrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_the_scheme_and_authority_exactly() {
        assert!(is_key("https://a.io:8443", "https", "a.io:8443"));
        assert!(!is_key("https://a.io:8443", "http", "a.io:8443"));
        assert!(!is_key("https://a.io:8443", "https", "a.io:844"));
        assert!(!is_key("https//:a.io:8443", "https", "a.io:8443"));
        assert!(!is_key("http://a.io", "https", "a.io"));
    }
}
