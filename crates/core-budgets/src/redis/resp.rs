//! Redis's protocol (RESP 2), the part a budget's step needs: a command written as an
//! array of bulk strings, and one answer read back whole and bounded. A peer that sends
//! more than [`MAX_ANSWER`] bytes, a line longer than [`MAX_LINE`], nesting deeper than an
//! array of integers, or anything that is not RESP is not Redis: the step ends, and its
//! connection with it. What is read is read by the deadline the connection was given.

use std::io::{self, Read};

/// The most bytes of one answer read (a step's is a few dozen).
pub(crate) const MAX_ANSWER: usize = 64 * 1024;

/// The longest line of an answer (a type, a number, a status or an error message).
const MAX_LINE: usize = 4 * 1024;

/// The most elements of an array answer.
const MAX_ITEMS: usize = 16;

/// An answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// `+OK`.
    Status(String),
    /// `-ERR ...`: the server's complaint (it never holds the client's password).
    Error(String),
    /// `:42`.
    Int(i64),
    /// `$5\r\nhello` (`None`: `$-1`).
    Bulk(Option<Vec<u8>>),
    /// `*2\r\n...`.
    Array(Vec<Reply>),
}

/// `args` as one command.
pub(crate) fn command(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Reads one whole answer from `from`: nothing after it (a peer that sends more is not
/// answering this command).
pub(crate) fn read_reply(from: &mut impl Read) -> Result<Reply, String> {
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 4096];
    loop {
        let room = MAX_ANSWER + 1 - buf.len();
        let want = room.min(chunk.len());
        let n = match from.read(&mut chunk[..want]) {
            Ok(0) => return Err("it closed the connection before answering whole".into()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                return Err("it did not answer in time".into());
            }
            Err(e) => return Err(format!("the connection failed ({})", e.kind())),
        };
        buf.extend_from_slice(&chunk[..n]);
        match parse(&buf, 0)? {
            Some((reply, used)) if used == buf.len() => return Ok(reply),
            Some(_) => return Err("it sent more than one answer: not Redis".into()),
            None if buf.len() > MAX_ANSWER => {
                return Err("it sent an answer over 64 KiB: not Redis".into());
            }
            None => {}
        }
    }
}

/// One answer at the start of `buf` and its length; `None` when more is needed.
fn parse(buf: &[u8], depth: usize) -> Result<Option<(Reply, usize)>, String> {
    let Some((line, rest)) = line(buf)? else {
        return Ok(None);
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let number = |b: &[u8]| -> Result<i64, String> {
        std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| "an answer's number is not a number: not Redis".to_owned())
    };
    let (kind, body) = line
        .split_first()
        .ok_or("an empty answer line: not Redis")?;
    let used = line.len() + 2;
    match kind {
        b'+' => Ok(Some((Reply::Status(text(body)), used))),
        b'-' => Ok(Some((Reply::Error(text(body)), used))),
        b':' => Ok(Some((Reply::Int(number(body)?), used))),
        b'$' => {
            let len = number(body)?;
            if len < 0 {
                return Ok(Some((Reply::Bulk(None), used)));
            }
            let len = usize::try_from(len).map_err(|_| "a bulk string too long")?;
            if len > MAX_ANSWER {
                return Err("a bulk string over 64 KiB: not Redis".into());
            }
            if rest.len() < len + 2 {
                return Ok(None);
            }
            if &rest[len..len + 2] != b"\r\n" {
                return Err("a bulk string not ended as announced: not Redis".into());
            }
            Ok(Some((
                Reply::Bulk(Some(rest[..len].to_vec())),
                used + len + 2,
            )))
        }
        b'*' => {
            let count = number(body)?;
            if count < 0 {
                return Ok(Some((Reply::Array(Vec::new()), used)));
            }
            let count = usize::try_from(count).unwrap_or(usize::MAX);
            if count > MAX_ITEMS || depth > 0 {
                return Err("an answer shaped as no budget step's: not Redis".into());
            }
            let mut items = Vec::with_capacity(count);
            let mut at = used;
            for _ in 0..count {
                match parse(&buf[at..], depth + 1)? {
                    Some((item, n)) => {
                        items.push(item);
                        at += n;
                    }
                    None => return Ok(None),
                }
            }
            Ok(Some((Reply::Array(items), at)))
        }
        _ => Err("an answer that is not RESP: not Redis".into()),
    }
}

/// A line (without its CRLF) and what follows it.
type Split<'a> = (&'a [u8], &'a [u8]);

/// The first line of `buf` and what follows it.
fn line(buf: &[u8]) -> Result<Option<Split<'_>>, String> {
    match buf.windows(2).position(|w| w == b"\r\n") {
        Some(end) if end <= MAX_LINE => Ok(Some((&buf[..end], &buf[end + 2..]))),
        Some(_) => Err("an answer line over 4 KiB: not Redis".into()),
        None if buf.len() > MAX_LINE => Err("an answer line over 4 KiB: not Redis".into()),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(bytes: &[u8]) -> Result<Reply, String> {
        read_reply(&mut &bytes[..])
    }

    #[test]
    fn answers_are_read_whole_and_bounded() {
        assert_eq!(whole(b"+OK\r\n"), Ok(Reply::Status("OK".into())));
        assert_eq!(whole(b":-5\r\n"), Ok(Reply::Int(-5)));
        assert_eq!(
            whole(b"*2\r\n:0\r\n:1500\r\n"),
            Ok(Reply::Array(vec![Reply::Int(0), Reply::Int(1500)]))
        );
        assert_eq!(
            whole(b"$3\r\nabc\r\n"),
            Ok(Reply::Bulk(Some(b"abc".to_vec())))
        );
        assert!(whole(b"-WRONGPASS invalid username-password pair\r\n").is_ok());
        // Not Redis.
        for bad in [
            &b"HTTP/1.1 200 OK\r\n\r\n"[..],
            b"*2\r\n*1\r\n:1\r\n:2\r\n",
            b":12x\r\n",
            b"$3\r\nabcdef\r\n",
            b"+OK\r\n+OK\r\n",
        ] {
            assert!(whole(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        // Cut short.
        assert!(whole(b"*2\r\n:0\r\n").is_err());
        // A flood after a bulk string announced too long is refused at its header.
        let mut flood = b"$999999999\r\n".to_vec();
        flood.extend(std::iter::repeat_n(b'x', 100_000));
        assert!(whole(&flood).is_err());
        let mut long = vec![b'+'; 10_000];
        long.extend_from_slice(b"\r\n");
        assert!(whole(&long).is_err());
    }

    #[test]
    fn a_command_is_an_array_of_bulk_strings() {
        assert_eq!(
            command(&[b"AUTH", b"p w"]),
            b"*2\r\n$4\r\nAUTH\r\n$3\r\np w\r\n".to_vec()
        );
    }
}
