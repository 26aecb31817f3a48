//! A Redis URL (`redis://[[user]:password@]host[:port][/db]`, `rediss://` for TLS), read
//! into where to connect and how to log in. Its `Debug` and every error about it leave
//! the password out, however the URL is mistyped.

use std::fmt;

/// A Redis URL, whose `Debug` shows no password.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisUrl(String);

impl RedisUrl {
    pub(crate) fn new(url: String) -> Self {
        RedisUrl(url)
    }

    /// The URL as given, password included (its `Debug` blanks it).
    ///
    /// ```
    /// let budget = core_budgets::Budget::redis("redis://:pw@127.0.0.1:6379");
    /// if let core_budgets::Budget::Redis(url) = &budget {
    ///     assert_eq!(url.expose(), "redis://:pw@127.0.0.1:6379");
    ///     assert_eq!(format!("{url:?}"), "RedisUrl(\"redis://***@127.0.0.1:6379\")");
    /// }
    /// ```
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // scheme://[user[:password]@]host...: everything before the last `@` is blanked.
        let shown = match self.0.split_once("://") {
            Some((scheme, rest)) => match rest.rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://***@{host}"),
                None => self.0.clone(),
            },
            None => "***".into(),
        };
        f.debug_tuple("RedisUrl").field(&shown).finish()
    }
}

/// Where a Redis URL connects and how it logs in.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Server {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) tls: bool,
    pub(crate) user: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) db: u32,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("db", &self.db)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Reads `url`; an error says what is wrong without showing the password.
    pub(crate) fn parse(url: &str) -> Result<Server, String> {
        let url = url.trim();
        let (scheme, rest) = url
            .split_once("://")
            .ok_or("it is not a redis:// or rediss:// URL")?;
        let tls = match scheme.to_ascii_lowercase().as_str() {
            "redis" => false,
            "rediss" => true,
            _ => return Err("it is not a redis:// or rediss:// URL".into()),
        };
        let rest = rest.split(['?', '#']).next().unwrap_or_default();
        let (login, place) = match rest.rsplit_once('@') {
            Some((login, place)) => (Some(login), place),
            None => (None, rest),
        };
        let (hostport, path) = match place.find('/') {
            Some(i) => (&place[..i], &place[i + 1..]),
            None => (place, ""),
        };
        let (host, port) = split_port(hostport)?;
        if host.is_empty() {
            return Err("it names no host".into());
        }
        let db = match path.trim_end_matches('/') {
            "" => 0,
            digits => digits
                .parse()
                .map_err(|_| "its database (after the host's /) is not a number")?,
        };
        let (user, password) = match login {
            None => (None, None),
            Some(login) => {
                let (user, password) = match login.split_once(':') {
                    Some((user, password)) => (user, Some(password)),
                    None => ("", Some(login)),
                };
                let user = (!user.is_empty()).then(|| decode(user)).transpose()?;
                let password = password.map(decode).transpose()?;
                (user, password.filter(|p| !p.is_empty()))
            }
        };
        Ok(Server {
            host: host.to_owned(),
            port,
            tls,
            user,
            password,
            db,
        })
    }
}

/// `host[:port]` or `[v6][:port]`; the port 6379 by default.
fn split_port(hostport: &str) -> Result<(&str, u16), String> {
    let bad_port = || "its port is not a number from 1 to 65535".to_owned();
    if let Some(v6) = hostport.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or("its IPv6 address has no closing ]")?;
        return match after.strip_prefix(':') {
            Some(port) => Ok((host, port.parse().map_err(|_| bad_port())?)),
            None if after.is_empty() => Ok((host, 6379)),
            None => Err(bad_port()),
        };
    }
    match hostport.rsplit_once(':') {
        Some((host, port)) => Ok((host, port.parse().map_err(|_| bad_port())?)),
        None => Ok((hostport, 6379)),
    }
}

/// Percent-decodes a user or password (never shown in an error).
fn decode(part: &str) -> Result<String, String> {
    let bytes = part.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("its user or password has a % not followed by two hex digits")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "its user or password is not UTF-8 once decoded".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_and_their_passwords_never_shown() {
        let s = Server::parse("rediss://app:p%40ss%3Aword@redis.internal:6380/2").unwrap();
        assert_eq!(
            (s.host.as_str(), s.port, s.tls, s.db),
            ("redis.internal", 6380, true, 2)
        );
        assert_eq!(s.user.as_deref(), Some("app"));
        assert_eq!(s.password.as_deref(), Some("p@ss:word"));
        assert!(!format!("{s:?}").contains("p@ss"));
        let s = Server::parse("redis://:secret@[::1]").unwrap();
        assert_eq!((s.host.as_str(), s.port, s.user), ("::1", 6379, None));
        let s = Server::parse("REDIS://localhost").unwrap();
        assert_eq!((s.password, s.db), (None, 0));
        for bad in [
            "redis:/:hunter2@host:6379",
            "\"redis://:hunter2@host\"",
            "redis://:hunter2@",
            "redis://:hunter2@host:99999",
            "redis://:hunter2@host/x",
            "redis://:hunter2%zz@host",
            "redis://:hunter2@[::1",
        ] {
            let err = Server::parse(bad).unwrap_err();
            assert!(!err.contains("hunter2"), "{bad}: {err}");
        }
    }
}
