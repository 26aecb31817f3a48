//! Keeping secrets out of what is shown: header values that carry credentials are never
//! logged, and credentials a server echoes back are blanked out of error texts.

use std::sync::Arc;

/// The value to log for a header: `***` for `authorization`, cookies, and any header whose
/// name mentions a key, token, secret, signature, password or auth (except
/// `Idempotency-Key`, which is no credential); the value otherwise.
pub(crate) fn redact_header<'a>(name: &str, value: &'a str) -> &'a str {
    if is_sensitive_header(name) {
        "***"
    } else {
        value
    }
}

/// `true` for header names whose values are credentials: they are never logged or shown,
/// and never sent to another origin than the one they were configured for.
pub(crate) fn is_sensitive_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    if n == "idempotency-key" {
        return false;
    }
    n == "authorization"
        || n == "proxy-authorization"
        || n == "cookie"
        || n == "set-cookie"
        || ["key", "token", "secret", "signature", "password", "auth"]
            .iter()
            .any(|w| n.contains(w))
}

/// Headers formatted for a log line, sensitive values redacted.
pub(crate) fn format_headers<'a>(headers: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (k, v) in headers {
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str(k);
        out.push_str(": ");
        out.push_str(redact_header(k, v));
    }
    out
}

/// The shortest credential that is searched for in texts: shorter ones would match
/// ordinary words and are not recognisable as credentials anyway.
const MIN_SECRET_LEN: usize = 8;

/// The credentials of one client (API key, client secret, credential headers, the
/// current token), to blank out of any text built from what a server sent: a crate
/// built on core-http (a stream's close reasons) gets its client's from
/// [`service::Parts`](crate::service::Parts).
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Arc<Vec<String>>,
    /// The client's credentials' stand-ins (what reaches texts in their place).
    masks: Option<Arc<crate::masks::Masks>>,
    /// A credential read anew on every connection (a stream's rotated key or refreshed
    /// token): the one in use now, when this redactor tracks one.
    current: Option<Arc<std::sync::Mutex<Option<String>>>>,
}

impl Redactor {
    pub(crate) fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .collect();
        // Longest first, so a secret that contains another is blanked whole. An insertion
        // sort (stable, like `sort_by_key`): a client has a handful of credentials, and
        // the standard sort's generic code is many times the size of this loop.
        for i in 1..secrets.len() {
            let mut j = i;
            while j > 0 && secrets[j - 1].len() < secrets[j].len() {
                secrets.swap(j - 1, j);
                j -= 1;
            }
        }
        secrets.dedup();
        Redactor {
            secrets: Arc::new(secrets),
            masks: None,
            current: None,
        }
    }

    /// This redactor, also blanking the stand-ins of `masks`.
    pub(crate) fn with_masks(mut self, masks: Arc<crate::masks::Masks>) -> Redactor {
        self.masks = Some(masks);
        self
    }

    /// This redactor, also blanking out the credential [`remember`](Self::remember)
    /// is told of (shared by its clones).
    pub fn tracking(mut self) -> Redactor {
        self.current = Some(Arc::default());
        self
    }

    /// The credential in use now (read anew for a connection), for a tracking redactor.
    pub fn remember(&self, secret: &str) {
        if let Some(current) = &self.current
            && let Ok(mut slot) = current.lock()
        {
            *slot = (secret.len() >= MIN_SECRET_LEN).then(|| secret.to_owned());
        }
    }

    /// This redactor plus one more secret (a token fetched after the client was built).
    pub(crate) fn with(&self, secret: &str) -> Redactor {
        let mut with = Redactor::new(self.secrets.iter().cloned().chain([secret.to_owned()]));
        with.masks = self.masks.clone();
        with.current = self.current.clone();
        with
    }

    /// Whether `text` holds one of the secrets (what [`apply`](Self::apply) would blank).
    pub(crate) fn finds(&self, text: &str) -> bool {
        self.secrets.iter().any(|s| text.contains(s.as_str()))
            || self.masks.as_ref().is_some_and(|m| m.finds(text))
            || self.current.as_ref().is_some_and(|current| {
                current
                    .lock()
                    .ok()
                    .is_some_and(|slot| slot.as_deref().is_some_and(|s| text.contains(s)))
            })
    }

    /// `text` with every known secret (and stand-in) replaced by `***`.
    pub fn apply(&self, text: String) -> String {
        let mut out = text;
        if let Some(masks) = &self.masks
            && let Some(concealed) = masks.conceal(&out)
        {
            out = concealed;
        }
        if let Some(current) = &self.current
            && let Ok(slot) = current.lock()
            && let Some(secret) = slot.as_deref()
            && out.contains(secret)
        {
            out = out.replace(secret, "***");
        }
        if !self.secrets.iter().any(|s| out.contains(s.as_str())) {
            return out;
        }
        for secret in self.secrets.iter() {
            out = out.replace(secret.as_str(), "***");
        }
        out
    }
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitive_headers_are_redacted() {
        for name in [
            "Authorization",
            "X-API-Key",
            "x-auth-token",
            "Cookie",
            "webhook-signature",
            "X-Client-Secret",
        ] {
            assert_eq!(redact_header(name, "v"), "***", "{name}");
        }
        for name in [
            "Content-Type",
            "Idempotency-Key",
            "X-Request-Id",
            "User-Agent",
        ] {
            assert_eq!(redact_header(name, "v"), "v", "{name}");
        }
    }

    #[test]
    fn a_secret_that_holds_another_is_blanked_whole_whatever_their_order() {
        let short = "sk_live_abcdef";
        let long = "sk_live_abcdef_and_more";
        let mid = "client_secret_1";
        for given in [
            vec![short, long, mid],
            vec![mid, short, long],
            vec![long, mid, short],
            vec![short, mid, long, short],
        ] {
            let r = Redactor::new(given.iter().map(|s| s.to_string()));
            assert_eq!(
                r.apply(format!("key {long}, also {short} and {mid}")),
                "key ***, also *** and ***",
                "{given:?}"
            );
        }
    }

    #[test]
    fn echoed_secrets_are_blanked() {
        let r = Redactor::new(["sk_live_abcdef".to_owned(), "short".to_owned()]);
        assert_eq!(
            r.apply("bad key sk_live_abcdef, short".into()),
            "bad key ***, short"
        );
        let r = r.with("tok_1234567890");
        assert_eq!(r.apply("tok_1234567890".into()), "***");
        assert_eq!(r.apply("nothing here".into()), "nothing here");
    }
}
