//! The sandbox's own webhook signing (Standard Webhooks: HMAC-SHA256 over
//! `id.timestamp.body`, base64, `v1,` prefix) and URL check. It shares no code with the
//! clients it tests, so the end-to-end tests are a real check of their verifiers.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The signing key of a `whsec_<base64>` secret, or why it is not one.
pub(crate) fn secret_key(secret: &str) -> Result<Vec<u8>, String> {
    let b64 = secret.strip_prefix("whsec_").unwrap_or(secret);
    let key = STANDARD
        .decode(b64)
        .map_err(|e| format!("the secret is not base64: {e}"))?;
    if key.is_empty() {
        return Err("the secret is empty".into());
    }
    Ok(key)
}

/// The `webhook-signature` value of a delivery.
pub(crate) fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, String> {
    let key = secret_key(secret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|e| e.to_string())?;
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// Whether `url` is an absolute http(s) URL with a host and no spaces.
pub(crate) fn check_http_url(url: &str) -> Result<(), String> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{url:?} contains whitespace"));
    }
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| format!("{url:?} must be an absolute http(s) URL"))?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || host.contains('@') {
        return Err(format!("{url:?} has no usable host"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_the_published_example() {
        // The example of the Standard Webhooks specification.
        let signature = sign(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        )
        .unwrap();
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert!(sign("whsec_!!", "m", 1, b"").is_err());
    }

    #[test]
    fn urls() {
        assert!(check_http_url("https://example.com/a.pdf").is_ok());
        for bad in [
            "example.com/a",
            "ftp://x/y",
            "https://",
            "https://a b/c",
            "http://u@h/x",
        ] {
            assert!(check_http_url(bad).is_err(), "{bad}");
        }
    }
}
