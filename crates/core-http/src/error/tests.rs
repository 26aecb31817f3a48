use super::*;

fn check(body: &str, content_type: Option<&str>, code: Option<&str>, message: &str) {
    let parsed = parse_error_body(400, content_type, body.as_bytes());
    assert_eq!(parsed.code.as_deref(), code, "code for {body:?}");
    assert_eq!(parsed.message, message, "message for {body:?}");
}

#[test]
fn every_error_body_convention() {
    check(
        r#"{"type":"https://e.x/probs/out-of-credit","title":"Out of credit","detail":"Balance is 30, cost is 50","status":403}"#,
        Some("application/problem+json"),
        Some("https://e.x/probs/out-of-credit"),
        "Balance is 30, cost is 50",
    );
    check(
        r#"{"type":"about:blank","title":"Not Found"}"#,
        None,
        None,
        "Not Found",
    );
    check(
        r#"{"error":{"code":"invalid_name","message":"name is required"}}"#,
        None,
        Some("invalid_name"),
        "name is required",
    );
    check(
        r#"{"error":"invalid_client","error_description":"bad secret"}"#,
        None,
        Some("invalid_client"),
        "bad secret",
    );
    check(r#"{"error":"boom"}"#, None, Some("boom"), "boom");
    check(
        r#"{"code":"E42","message":"nope"}"#,
        None,
        Some("E42"),
        "nope",
    );
    check(
        r#"{"errorCode":7,"message":"seven"}"#,
        None,
        Some("7"),
        "seven",
    );
    check(r#"{"message":"plain"}"#, None, None, "plain");
    check(
        "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
        Some("text/html"),
        None,
        "502 Bad Gateway",
    );
    check("<html><body>oops</body></html>", None, None, "Bad Request");
    check("", None, None, "Bad Request");
    check("   \n", None, None, "Bad Request");
    check("upstream went away", None, None, "upstream went away");
    check("[1,2,3]", None, None, "[1,2,3]");
    check(r#"{"unrelated":true}"#, None, None, r#"{"unrelated":true}"#);
}

#[test]
fn error_body_values_of_every_shape() {
    // Numbers read as text, where text is read; escapes decoded.
    check(
        r#"{"error":{"code":404.5,"type":"x","message":"caf\u00e9 \"closed\""}}"#,
        None,
        Some("404.5"),
        "café \"closed\"",
    );
    // A nested object's own nested `error`, lists and unknown members are skipped;
    // its `type` stands in for a missing code, its code for a missing message.
    check(
        r#"{"error":{"type":"t","error":{"code":"deeper"},"x":[{"a":[1,{}]}],"detail":"d"}}"#,
        None,
        Some("t"),
        "d",
    );
    check(r#"{"error":{"code":"only"}}"#, None, Some("only"), "only");
    // `error` as a number, a list or null is no code: the other fields are read.
    check(r#"{"error":42,"message":"m"}"#, None, None, "m");
    check(
        r#"{"error":[1],"code":"c"}"#,
        None,
        Some("c"),
        "Bad Request",
    );
    check(r#"{"error":null,"message":"m"}"#, None, None, "m");
    // A text field holding an object, a list, a boolean or null reads as absent.
    check(
        r#"{"message":{"text":"no"},"code":["no"],"errorCode":true,"detail":null,"title":null,"error_description":{}}"#,
        None,
        None,
        r#"{"message":{"text":"no"},"code":["no"],"errorCode":true,"detail":null,"title":null,"error_description":{}}"#,
    );
    // A member given twice makes the body unreadable as JSON: shown as text.
    check(
        r#"{"message":"a","message":"b"}"#,
        None,
        None,
        r#"{"message":"a","message":"b"}"#,
    );
    check(
        r#"{"error":{"code":"a","code":"b"}}"#,
        None,
        None,
        r#"{"error":{"code":"a","code":"b"}}"#,
    );
    check(
        r#"{"message":null,"message":"b"}"#,
        None,
        None,
        r#"{"message":null,"message":"b"}"#,
    );
    // A `null` title is no title: not a problem document.
    check(r#"{"title":null,"message":"m"}"#, None, None, "m");
    // Truncated JSON is shown as text too.
    check(r#"{"message":"cut"#, None, None, r#"{"message":"cut"#);
}

#[test]
fn quota_codes_are_not_rate_limits() {
    assert_eq!(
        ErrorKind::from_status(429, Some("quota_exceeded")),
        ErrorKind::QuotaExceeded
    );
    assert_eq!(
        ErrorKind::from_status(429, Some("insufficient_quota")),
        ErrorKind::QuotaExceeded
    );
    assert_eq!(
        ErrorKind::from_status(429, Some("rate_limited")),
        ErrorKind::RateLimited
    );
    assert_eq!(ErrorKind::from_status(429, None), ErrorKind::RateLimited);
    assert_eq!(ErrorKind::from_status(503, None), ErrorKind::Server);
    assert_eq!(ErrorKind::from_status(418, None), ErrorKind::Other);
}

#[test]
fn excerpt_cuts_on_char_boundary() {
    let body = "é".repeat(300);
    let e = excerpt(body.as_bytes(), 201);
    assert!(e.ends_with('…'));
    assert!(!e.contains('\u{FFFD}'));
    assert_eq!(excerpt(b"short", 200), "short");
}

#[test]
fn error_is_send_sync_static() {
    fn assert_bounds<T: Send + Sync + 'static + std::error::Error>() {}
    assert_bounds::<Error>();
}
