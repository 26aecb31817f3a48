//! A caching name resolver for the transport.
//!
//! `ureq` resolves the host before every request, even one that will reuse a pooled
//! connection, and with a timeout set it does so on a freshly spawned thread. Measured
//! here, that cost more than the rest of a keep-alive call. This resolver keeps answers
//! for 30 seconds, so a client talking to one service resolves about twice a minute.

use std::collections::HashMap;
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
    cache: Mutex<HashMap<String, (Instant, ResolvedSocketAddrs)>>,
}

impl Resolver for CachingResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let key = format!(
            "{}://{}",
            uri.scheme_str().unwrap_or_default(),
            uri.authority().map(|a| a.as_str()).unwrap_or_default()
        );
        if let Ok(cache) = self.cache.lock()
            && let Some((at, addrs)) = cache.get(&key)
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
            if cache.len() > 256 {
                cache.retain(|_, (at, _)| at.elapsed() < TTL);
            }
            cache.insert(key, (Instant::now(), addrs.clone()));
        }
        Ok(addrs)
    }
}
