//! Redaction for log lines: header values that carry credentials are never logged.

/// The value to log for a header: `***` for `authorization`, cookies, and any header whose
/// name mentions a key, token, secret, signature, password or auth (except
/// `Idempotency-Key`, which is no credential); the value otherwise.
pub fn redact_header<'a>(name: &str, value: &'a str) -> &'a str {
    if is_sensitive_header(name) {
        "***"
    } else {
        value
    }
}

/// `true` for header names whose values must never be logged or shown.
pub fn is_sensitive_header(name: &str) -> bool {
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
}
