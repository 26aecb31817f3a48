//! Property tests of what a sender's delivery can be: a signed body verifies and any
//! change to it fails; no delivery, however malformed, panics the verifier.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, SystemTime};

use proptest::prelude::*;

use core_webhooks::{sign, verify, verify_envelope_at};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(2000)
    ))]

    #[test]
    fn signed_bodies_verify_and_any_change_fails(body in prop::collection::vec(any::<u8>(), 0..200), flip in any::<prop::sample::Index>(), ts in 1_000_000_000i64..2_000_000_000) {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(ts as u64);
        let signature = sign(SECRET, "msg_1", ts, &body).unwrap();
        let headers = [("webhook-id", "msg_1".to_owned()), ("webhook-timestamp", ts.to_string()), ("webhook-signature", signature)];
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        prop_assert!(verify(SECRET, &headers[..], &body, now).is_ok());
        if !body.is_empty() {
            let mut tampered = body.clone();
            let i = flip.index(tampered.len());
            tampered[i] ^= 0x01;
            prop_assert!(verify(SECRET, &headers[..], &tampered, now).is_err());
        }
    }

    #[test]
    fn arbitrary_deliveries_never_panic(id in "\\PC{0,20}", ts in "\\PC{0,12}", sig in "\\PC{0,80}", body in prop::collection::vec(any::<u8>(), 0..100), secret in "\\PC{0,40}") {
        let headers = [("webhook-id", id.as_str()), ("webhook-timestamp", ts.as_str()), ("webhook-signature", sig.as_str())];
        let _ = verify_envelope_at(&secret, &headers[..], &body, SystemTime::now());
        let _ = verify_envelope_at(SECRET, &headers[..], &body, SystemTime::now());
    }
}
