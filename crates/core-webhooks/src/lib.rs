//! Webhooks for the service clients built on core-http: signatures in the Standard
//! Webhooks scheme (`webhook-id`, `webhook-timestamp`, `webhook-signature:
//! v1,<base64 HMAC-SHA256 of "id.timestamp.body">`), the event envelope `{"type",
//! "timestamp", "data"}`, [`webhook_events!`] (a service's typed events), and a blocking
//! [`Listener`] for a script on a port open to the internet. social-client and
//! esign-client depend on it behind their `webhooks` feature and re-export what their
//! users meet (`social_client::webhooks`).
//!
//! ```
//! use std::time::{Duration, SystemTime};
//! use core_webhooks::{sign, verify};
//!
//! let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
//! let body = br#"{"type":"post.published","timestamp":"2026-01-01T00:00:00Z","data":{}}"#;
//! let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
//! let signature = sign(secret, "msg_1", 1_700_000_000, body)?;
//! let headers = [
//!     ("webhook-id", "msg_1"),
//!     ("webhook-timestamp", "1700000000"),
//!     ("webhook-signature", signature.as_str()),
//! ];
//! verify(secret, &headers[..], body, now)?;
//! # Ok::<(), core_webhooks::WebhookError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// docs.rs (nightly, `--cfg docsrs`) labels each item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;

pub use error::WebhookError;
pub use listener::{DEFAULT_MAX_BODY, Listener, ListenerStats, QUEUE, REMEMBERED};

mod error;
mod listener;

/// Feature `http`: the `http` crate, whose `HeaderMap` implements [`WebhookHeaders`].
#[cfg(feature = "http")]
pub use http;

#[doc(hidden)]
pub mod __private {
    //! What [`webhook_events!`](crate::webhook_events) expands to; not part of the API.
    pub use core_http::Result;
    pub use serde_json;
}

/// How far a delivery's timestamp may be from now: 5 minutes either way.
pub const TOLERANCE: Duration = Duration::from_secs(300);

/// Where the webhook headers come from: implemented for slices, vectors and maps of
/// string pairs, looked up case-insensitively. Implement it for your server's header type.
pub trait WebhookHeaders {
    /// The value of a header, by case-insensitive name.
    fn header(&self, name: &str) -> Option<&str>;
}

impl<K: AsRef<str>, V: AsRef<str>> WebhookHeaders for [(K, V)] {
    fn header(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.as_ref().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }
}

impl<K: AsRef<str>, V: AsRef<str>> WebhookHeaders for Vec<(K, V)> {
    fn header(&self, name: &str) -> Option<&str> {
        self.as_slice().header(name)
    }
}

impl<K: AsRef<str>, V: AsRef<str>, S> WebhookHeaders for HashMap<K, V, S> {
    fn header(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.as_ref().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }
}

impl<K: AsRef<str>, V: AsRef<str>> WebhookHeaders for BTreeMap<K, V> {
    fn header(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.as_ref().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }
}

/// Feature `http`: the header map of axum, actix-web and hyper.
#[cfg(feature = "http")]
impl WebhookHeaders for http::HeaderMap {
    fn header(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|v| v.to_str().ok())
    }
}

impl WebhookHeaders for core_http::transport::Headers {
    fn header(&self, name: &str) -> Option<&str> {
        self.get(name)
    }
}

/// Standard base64 read with or without its `=` padding, as the Standard Webhooks
/// reference libraries read secrets and signatures (written padded).
const READ: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

fn secret_key(secret: &str) -> Result<Vec<u8>, WebhookError> {
    let b64 = secret
        .trim()
        .strip_prefix("whsec_")
        .unwrap_or(secret.trim());
    let key = READ
        .decode(b64)
        .map_err(|e| WebhookError::InvalidSecret(format!("not base64 ({e})")))?;
    if key.is_empty() {
        return Err(WebhookError::InvalidSecret("empty".into()));
    }
    Ok(key)
}

fn mac(key: &[u8], id: &str, timestamp: &str, body: &[u8]) -> Result<Hmac<Sha256>, WebhookError> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key)
        .map_err(|e| WebhookError::InvalidSecret(e.to_string()))?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(mac)
}

/// Signs a delivery: returns the `webhook-signature` value `v1,<base64>`.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, WebhookError> {
    let key = secret_key(secret)?;
    let tag = mac(&key, id, &timestamp.to_string(), body)?
        .finalize()
        .into_bytes();
    Ok(format!("v1,{}", STANDARD.encode(tag)))
}

/// Verifies a delivery against `secret`, as of `now`.
///
/// Checks that the three headers are there, that the timestamp is within 5 minutes of
/// `now`, and that one of the space-separated `v1,` signatures matches (compared in
/// constant time). Pass the body exactly as received: re-serialised JSON will not match.
pub fn verify<H: WebhookHeaders + ?Sized>(
    secret: &str,
    headers: &H,
    body: &[u8],
    now: SystemTime,
) -> Result<(), WebhookError> {
    let id = headers
        .header("webhook-id")
        .ok_or(WebhookError::MissingHeader("webhook-id"))?;
    let ts_raw = headers
        .header("webhook-timestamp")
        .ok_or(WebhookError::MissingHeader("webhook-timestamp"))?;
    let signatures = headers
        .header("webhook-signature")
        .ok_or(WebhookError::MissingHeader("webhook-signature"))?;
    let ts: i64 = ts_raw
        .trim()
        .parse()
        .map_err(|_| WebhookError::InvalidHeader {
            name: "webhook-timestamp",
            reason: format!("not a Unix time: {ts_raw:?}"),
        })?;
    let now_secs = match now.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    };
    let diff = now_secs.saturating_sub(ts);
    let tolerance = TOLERANCE.as_secs() as i64;
    if diff > tolerance {
        return Err(WebhookError::TimestampTooOld {
            age: Duration::from_secs(diff.unsigned_abs()),
        });
    }
    if diff < -tolerance {
        return Err(WebhookError::TimestampTooNew {
            ahead: Duration::from_secs(diff.unsigned_abs()),
        });
    }
    let key = secret_key(secret)?;
    let expected = mac(&key, id, ts_raw.trim(), body)?;
    for candidate in signatures.split_whitespace() {
        let Some(b64) = candidate.strip_prefix("v1,") else {
            continue;
        };
        let Ok(sig) = READ.decode(b64) else {
            continue;
        };
        if expected.clone().verify_slice(&sig).is_ok() {
            return Ok(());
        }
    }
    Err(WebhookError::SignatureMismatch)
}

/// The envelope of an event: `{"type", "timestamp", "data"}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Envelope {
    /// The event type, e.g. `post.published`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// When the event happened, as the server wrote it.
    #[serde(default)]
    pub timestamp: Option<String>,
    /// The event's data.
    #[serde(default)]
    pub data: serde_json::Value,
}

/// A service's webhook event type: what a verified [`Envelope`] becomes. Declare one
/// with [`webhook_events!`](crate::webhook_events), which writes this impl and the
/// `verify_and_parse` functions.
pub trait WebhookEvent: Sized {
    /// Types a verified envelope. A known type whose data does not decode is an error,
    /// not an unknown event, so that a changed payload is noticed.
    fn from_envelope(envelope: Envelope) -> Result<Self, WebhookError>;
}

/// Verifies a delivery's signature and timestamp (5 minutes' tolerance) with the
/// endpoint's `whsec_...` secret as of `now`, then parses the event. Pass the raw body
/// bytes, exactly as received.
pub fn verify_and_parse_at<E: WebhookEvent, H: WebhookHeaders + ?Sized>(
    secret: &str,
    headers: &H,
    body: &[u8],
    now: SystemTime,
) -> Result<E, WebhookError> {
    E::from_envelope(verify_envelope_at(secret, headers, body, now)?)
}

/// Declares a service's webhook events: the enum (each known type with its payload, and
/// `Unknown` keeping any other type whole), `event_type()`, the
/// [`WebhookEvent`](crate::WebhookEvent) impl, and, in the module where it is
/// invoked, `verify_and_parse` and `verify_and_parse_at` returning that enum.
///
/// ```
/// #[derive(Debug, Clone, PartialEq, serde::Deserialize)]
/// pub struct Post { pub id: String }
///
/// core_webhooks::webhook_events! {
///     /// An event delivered by webhook.
///     pub enum Event {
///         /// `post.published`: a post went live.
///         PostPublished(Post) = "post.published",
///     }
/// }
///
/// let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// let body = br#"{"type":"post.published","data":{"id":"p1"}}"#;
/// let headers = core_webhooks::signed_headers(secret, "msg_1", body)?;
/// let event = verify_and_parse(secret, &headers, body)?;
/// assert_eq!(event, Event::PostPublished(Post { id: "p1".into() }));
/// assert_eq!(event.event_type(), "post.published");
/// # Ok::<(), core_webhooks::WebhookError>(())
/// ```
#[macro_export]
macro_rules! webhook_events {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident($payload:ty) = $wire:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant($payload), )+
            /// An event type this version does not know, kept whole.
            Unknown {
                /// The event type as sent.
                event_type: ::std::string::String,
                /// The event's data as sent.
                data: $crate::__private::serde_json::Value,
            },
        }

        impl $name {
            /// The event type on the wire.
            pub fn event_type(&self) -> &str {
                match self {
                    $( $name::$variant(_) => $wire, )+
                    $name::Unknown { event_type, .. } => event_type,
                }
            }
        }

        impl $crate::WebhookEvent for $name {
            fn from_envelope(
                envelope: $crate::Envelope,
            ) -> ::std::result::Result<Self, $crate::WebhookError> {
                let kind = envelope.event_type.to_ascii_lowercase();
                $(
                    if kind == $wire {
                        return Ok($name::$variant(
                            $crate::__private::serde_json::from_value(envelope.data)?,
                        ));
                    }
                )+
                Ok($name::Unknown {
                    event_type: envelope.event_type,
                    data: envelope.data,
                })
            }
        }

        /// Verifies a delivery's signature and timestamp (5 minutes' tolerance) with the
        /// endpoint's `whsec_...` secret, then parses the event. Pass the raw body bytes,
        /// exactly as received.
        pub fn verify_and_parse<H: $crate::WebhookHeaders + ?Sized>(
            secret: &str,
            headers: &H,
            body: &[u8],
        ) -> ::std::result::Result<$name, $crate::WebhookError> {
            verify_and_parse_at(secret, headers, body, ::std::time::SystemTime::now())
        }

        /// A blocking listener for these events: binds an address, verifies each
        /// delivery, answers the service at once, drops redeliveries, and yields the
        /// events (`for event in listener { ... }`, or `next_timeout`). Its promises
        /// (statuses answered, limits, redeliveries) are core-http's
        /// `webhook::Listener`'s, written in this crate's README.
        pub type Listener = $crate::Listener<$name>;

        /// What a [`Listener`] has done so far (`listener.stats()`): deliveries handed
        /// over, redeliveries dropped, refusals (a bad signature apart), connections
        /// dropped.
        pub use $crate::ListenerStats;

        /// Listens on `addr` (`"0.0.0.0:8080"`; port 0 picks a free one) for deliveries
        /// signed with `secret` (the endpoint's `whsec_...`), bodies up to 1 MiB.
        pub fn listen(
            addr: impl ::std::net::ToSocketAddrs,
            secret: &str,
        ) -> $crate::__private::Result<Listener> {
            Listener::bind(addr, secret)
        }

        /// As [`verify_and_parse`], judging the timestamp against `now` (for replaying
        /// stored deliveries in tests).
        pub fn verify_and_parse_at<H: $crate::WebhookHeaders + ?Sized>(
            secret: &str,
            headers: &H,
            body: &[u8],
            now: ::std::time::SystemTime,
        ) -> ::std::result::Result<$name, $crate::WebhookError> {
            $crate::verify_and_parse_at(secret, headers, body, now)
        }
    };
}

/// A delivery of `body` signed now with `secret` as message `id`: the three Standard
/// Webhooks headers, for documentation examples and tests of receivers.
pub fn signed_headers(
    secret: &str,
    id: &str,
    body: &[u8],
) -> Result<Vec<(String, String)>, WebhookError> {
    let timestamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    Ok(vec![
        ("webhook-id".to_owned(), id.to_owned()),
        ("webhook-timestamp".to_owned(), timestamp.to_string()),
        (
            "webhook-signature".to_owned(),
            sign(secret, id, timestamp, body)?,
        ),
    ])
}

/// As [`verify_envelope`], judging the timestamp against `now` (for replaying stored
/// deliveries in tests).
pub fn verify_envelope_at<H: WebhookHeaders + ?Sized>(
    secret: &str,
    headers: &H,
    body: &[u8],
    now: SystemTime,
) -> Result<Envelope, WebhookError> {
    verify(secret, headers, body, now)?;
    Ok(serde_json::from_slice(body)?)
}

/// Verifies a delivery (as [`verify`], with the current time) and parses its envelope.
pub fn verify_envelope<H: WebhookHeaders + ?Sized>(
    secret: &str,
    headers: &H,
    body: &[u8],
) -> Result<Envelope, WebhookError> {
    verify_envelope_at(secret, headers, body, SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The example published with the Standard Webhooks specification.
    const SPEC_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const SPEC_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const SPEC_TS: i64 = 1_614_265_330;
    const SPEC_BODY: &[u8] = br#"{"test": 2432232314}"#;
    const SPEC_SIG: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn at(secs: i64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs as u64)
    }

    fn headers(sig: &str, ts: i64) -> Vec<(String, String)> {
        vec![
            ("Webhook-Id".into(), SPEC_ID.into()),
            ("Webhook-Timestamp".into(), ts.to_string()),
            ("Webhook-Signature".into(), sig.into()),
        ]
    }

    #[cfg(feature = "http")]
    #[test]
    fn an_http_header_map_is_read_case_insensitively() {
        let mut map = http::HeaderMap::new();
        for (name, value) in headers(SPEC_SIG, SPEC_TS) {
            map.insert(
                http::header::HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        assert_eq!(map.header("WEBHOOK-ID"), Some(SPEC_ID));
        verify(SPEC_SECRET, &map, SPEC_BODY, at(SPEC_TS)).unwrap();
    }

    #[test]
    fn spec_vector_signs_and_verifies() {
        assert_eq!(
            sign(SPEC_SECRET, SPEC_ID, SPEC_TS, SPEC_BODY).unwrap(),
            SPEC_SIG
        );
        verify(
            SPEC_SECRET,
            &headers(SPEC_SIG, SPEC_TS),
            SPEC_BODY,
            at(SPEC_TS),
        )
        .unwrap();
    }

    #[test]
    fn tampered_body_or_signature_is_rejected() {
        let h = headers(SPEC_SIG, SPEC_TS);
        let err = verify(SPEC_SECRET, &h, br#"{"test": 2432232315}"#, at(SPEC_TS)).unwrap_err();
        assert!(matches!(err, WebhookError::SignatureMismatch));
        let bad = headers("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OF=", SPEC_TS);
        assert!(matches!(
            verify(SPEC_SECRET, &bad, SPEC_BODY, at(SPEC_TS)),
            Err(WebhookError::SignatureMismatch)
        ));
        // A signed timestamp cannot be swapped for another.
        let moved = headers(SPEC_SIG, SPEC_TS + 1);
        assert!(matches!(
            verify(SPEC_SECRET, &moved, SPEC_BODY, at(SPEC_TS)),
            Err(WebhookError::SignatureMismatch)
        ));
        // Only v1 signatures count.
        let v2 = headers("v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", SPEC_TS);
        assert!(matches!(
            verify(SPEC_SECRET, &v2, SPEC_BODY, at(SPEC_TS)),
            Err(WebhookError::SignatureMismatch)
        ));
    }

    #[test]
    fn a_secret_and_a_signature_without_padding_are_read_as_with_it() {
        // The spec's secret decodes to 24 bytes (no padding); this one to 28 (one `=`).
        let padded = "whsec_dGhlIG5ldyBzZWNyZXQgYWZ0ZXIgcm90YXRpb24=";
        let unpadded = padded.trim_end_matches('=');
        assert_eq!(secret_key(padded).unwrap(), secret_key(unpadded).unwrap());
        let sig = sign(padded, SPEC_ID, SPEC_TS, SPEC_BODY).unwrap();
        verify(unpadded, &headers(&sig, SPEC_TS), SPEC_BODY, at(SPEC_TS)).unwrap();
        let bare_sig = sig.trim_end_matches('=').to_owned();
        assert_ne!(bare_sig, sig, "the signature ends in padding");
        verify(padded, &headers(&bare_sig, SPEC_TS), SPEC_BODY, at(SPEC_TS)).unwrap();
    }

    #[test]
    fn timestamp_tolerance() {
        let h = headers(SPEC_SIG, SPEC_TS);
        verify(SPEC_SECRET, &h, SPEC_BODY, at(SPEC_TS + 300)).unwrap();
        verify(SPEC_SECRET, &h, SPEC_BODY, at(SPEC_TS - 300)).unwrap();
        assert!(matches!(
            verify(SPEC_SECRET, &h, SPEC_BODY, at(SPEC_TS + 301)),
            Err(WebhookError::TimestampTooOld { age }) if age == Duration::from_secs(301)
        ));
        assert!(matches!(
            verify(SPEC_SECRET, &h, SPEC_BODY, at(SPEC_TS - 301)),
            Err(WebhookError::TimestampTooNew { .. })
        ));
    }

    #[test]
    fn rotated_secret_with_several_signatures() {
        let new_secret = "whsec_dGhlIG5ldyBzZWNyZXQgYWZ0ZXIgcm90YXRpb24=";
        let new_sig = sign(new_secret, SPEC_ID, SPEC_TS, SPEC_BODY).unwrap();
        // During rotation the sender signs with both secrets.
        let both = headers(&format!("{new_sig} {SPEC_SIG}"), SPEC_TS);
        verify(SPEC_SECRET, &both, SPEC_BODY, at(SPEC_TS)).unwrap();
        verify(new_secret, &both, SPEC_BODY, at(SPEC_TS)).unwrap();
        // A receiver that only knows the new secret rejects an old-only signature.
        let old_only = headers(SPEC_SIG, SPEC_TS);
        assert!(matches!(
            verify(new_secret, &old_only, SPEC_BODY, at(SPEC_TS)),
            Err(WebhookError::SignatureMismatch)
        ));
    }

    #[test]
    fn missing_and_malformed_headers() {
        let full = headers(SPEC_SIG, SPEC_TS);
        for missing in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
            let h: Vec<(String, String)> = full
                .iter()
                .filter(|(k, _)| !k.eq_ignore_ascii_case(missing))
                .cloned()
                .collect();
            assert!(
                matches!(verify(SPEC_SECRET, &h, SPEC_BODY, at(SPEC_TS)), Err(WebhookError::MissingHeader(name)) if name == missing)
            );
        }
        let mut h = full.clone();
        h[1].1 = "yesterday".into();
        assert!(matches!(
            verify(SPEC_SECRET, &h, SPEC_BODY, at(SPEC_TS)),
            Err(WebhookError::InvalidHeader {
                name: "webhook-timestamp",
                ..
            })
        ));
        assert!(matches!(
            verify("whsec_!!!", &full, SPEC_BODY, at(SPEC_TS)),
            Err(WebhookError::InvalidSecret(_))
        ));
    }
}

/// This crate's README examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
