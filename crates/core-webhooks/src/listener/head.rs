//! A delivery's request head read and checked as RFC 9112 has it, and the bytes of an
//! answer.

/// The longest request head read.
pub(super) const MAX_HEAD: usize = 16 * 1024;

/// The most headers a request head may have: as many as fit in [`MAX_HEAD`] at sixteen
/// bytes each, which no sender's head comes near (a delivery has a dozen; a proxy adds a
/// few), while the slots httparse needs stay 32 KiB, made for a head only when it is
/// parsed.
pub(super) const MAX_HEADERS: usize = MAX_HEAD / 16;

/// What a request's answer is: its status, and `Retry-After` when it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Status(pub(super) u16, pub(super) Option<u64>);

/// What a request's head says, once checked.
pub(super) enum Head {
    /// Not all of it has arrived.
    Partial,
    /// A request to refuse with this status, answered before its body is read.
    Refuse(u16, &'static str),
    /// A delivery to read: its headers, where its body starts, its length, and whether
    /// the sender waits for `100 Continue`.
    Delivery {
        headers: Vec<(String, String)>,
        start: usize,
        length: usize,
        expects_continue: bool,
    },
}

/// Reads and checks a request head from the start of `buf`.
pub(super) fn read_head(buf: &[u8], max_body: usize) -> Head {
    let mut slots = vec![httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut slots);
    let start = match request.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
            return Head::Refuse(431, "the head is too long");
        }
        Ok(httparse::Status::Partial) => return Head::Partial,
        Err(httparse::Error::TooManyHeaders) => return Head::Refuse(431, "too many headers"),
        Err(_) => return Head::Refuse(400, "a malformed head"),
    };
    if start > MAX_HEAD {
        return Head::Refuse(431, "the head is too long");
    }
    let mut headers = Vec::with_capacity(request.headers.len());
    for header in request.headers.iter() {
        let Ok(value) = std::str::from_utf8(header.value) else {
            return Head::Refuse(400, "a header value that is not text");
        };
        headers.push((header.name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    let count = |name: &str| headers.iter().filter(|(n, _)| n == name).count();
    let value = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    // RFC 9112 3.2: an HTTP/1.1 request has exactly one Host.
    if request.version == Some(1) && count("host") != 1 {
        return Head::Refuse(400, "an HTTP/1.1 request without exactly one Host");
    }
    if request.method != Some("POST") {
        return Head::Refuse(405, "not a POST");
    }
    if value("transfer-encoding").is_some() {
        return Head::Refuse(411, "a body without Content-Length");
    }
    let length = match (count("content-length"), value("content-length")) {
        (0, _) | (_, None) => return Head::Refuse(411, "a body without Content-Length"),
        (1, Some(v)) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
            match v.parse::<u64>() {
                Ok(n) => n,
                Err(_) => return Head::Refuse(413, "a body over the limit"),
            }
        }
        _ => return Head::Refuse(400, "a Content-Length that is not one number"),
    };
    if length > max_body as u64 {
        return Head::Refuse(413, "a body over the limit");
    }
    let expects_continue = match value("expect") {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("100-continue") => true,
        Some(_) => return Head::Refuse(417, "an expectation it cannot meet"),
    };
    Head::Delivery {
        headers,
        start,
        length: length as usize,
        expects_continue,
    }
}

/// The bytes of an answer: `status` (with `Retry-After` when given), no body, and the
/// connection closed after it.
pub(super) fn answer_bytes(Status(status, retry_after): Status) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Payload Too Large",
        417 => "Expectation Failed",
        431 => "Request Header Fields Too Large",
        _ => "Service Unavailable",
    };
    let mut head =
        format!("HTTP/1.1 {status} {reason}\r\ncontent-length: 0\r\nconnection: close\r\n");
    if status == 405 {
        head.push_str("allow: POST\r\n");
    }
    if let Some(seconds) = retry_after {
        head.push_str(&format!("retry-after: {seconds}\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}
