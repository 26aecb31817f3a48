//! A strict one-pass JSON scanner, for the readers that take a service's busiest answer
//! or event in the shape the service sends it, faster than `serde` and with a smaller
//! footprint on the read path (a history page's bars, a world's moves). Its methods are
//! `#[inline]`: compiled into the readers that use them, and not at all into a program
//! that has none.
//!
//! It reads only what it is sure of: every method returns `None` on anything it does
//! not expect (an escape in a string, a value of another type, a number outside what
//! it reads exactly), and the reader using it then leaves the whole text to `serde`,
//! which reads it as before, with its errors. Each such reader has a property test
//! checking that whatever it reads, `serde` reads the same.
//!
//! ```
//! use core_http::scan::Scanner;
//!
//! let mut s = Scanner::new(r#"{"seq": 42, "name": "w1"}"#);
//! let mut more = s.object().unwrap();
//! let (mut seq, mut name) = (None, None);
//! while more {
//!     match s.key().unwrap() {
//!         b"seq" => seq = s.u64(),
//!         b"name" => name = s.str().map(str::to_owned),
//!         _ => break,
//!     }
//!     more = s.next_member().unwrap();
//! }
//! assert!(s.at_end());
//! assert_eq!((seq, name.as_deref()), (Some(42), Some("w1")));
//!
//! // An escape is not read: the text is left to `serde`.
//! assert_eq!(Scanner::new(r#""a\u0062""#).str(), None);
//! ```

/// A position in a JSON text, read forward.
///
/// The text is a `str` (checked to be UTF-8 once, as a whole, or already so, as a
/// WebSocket text frame is), so that every string and number is taken from it without
/// another check.
#[derive(Debug, Clone)]
pub struct Scanner<'a> {
    s: &'a str,
    b: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    /// A scanner at the start of `text`.
    #[inline]
    pub fn new(text: &'a str) -> Self {
        Scanner {
            s: text,
            b: text.as_bytes(),
            at: 0,
        }
    }

    /// A scanner at the start of `bytes`, when they are UTF-8 (checked once, here).
    #[inline]
    pub fn from_bytes(bytes: &'a [u8]) -> Option<Self> {
        std::str::from_utf8(bytes).ok().map(Scanner::new)
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after white space, not taken.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.at).copied()
    }

    /// Takes `c` (after white space), or `None`.
    #[inline]
    pub fn byte(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.at += 1)
    }

    /// `true` when only white space is left.
    #[inline]
    pub fn at_end(&mut self) -> bool {
        self.ws();
        self.at == self.b.len()
    }

    /// The start of an object: `true` when a member follows, `false` for `{}`.
    #[inline]
    pub fn object(&mut self) -> Option<bool> {
        self.open(b'{', b'}')
    }

    /// A member's key and its `:`.
    #[inline]
    pub fn key(&mut self) -> Option<&'a [u8]> {
        let key = self.string()?;
        self.byte(b':')?;
        Some(key)
    }

    /// After an object's member: `,` (`true`: another member follows) or `}`.
    #[inline]
    pub fn next_member(&mut self) -> Option<bool> {
        self.next_in(b'}')
    }

    /// The start of an array: `true` when an element follows, `false` for `[]`.
    #[inline]
    pub fn array(&mut self) -> Option<bool> {
        self.open(b'[', b']')
    }

    /// After an array's element: `,` (`true`: another element follows) or `]`.
    #[inline]
    pub fn next_element(&mut self) -> Option<bool> {
        self.next_in(b']')
    }

    /// `open`, then `true` when something follows, `false` (and `close` taken) when
    /// nothing does.
    #[inline]
    fn open(&mut self, open: u8, close: u8) -> Option<bool> {
        self.byte(open)?;
        let empty = self.peek()? == close;
        if empty {
            self.at += 1;
        }
        Some(!empty)
    }

    /// After a member or an element: `,` (`true`: another follows) or `close`.
    #[inline]
    fn next_in(&mut self, close: u8) -> Option<bool> {
        let c = self.peek()?;
        let more = c == b',';
        (more || c == close).then(|| self.at += 1)?;
        Some(more)
    }

    /// A string without escapes or control characters: its bytes, quotes left out.
    #[inline]
    pub fn string(&mut self) -> Option<&'a [u8]> {
        let (start, end) = self.string_span()?;
        Some(&self.b[start..end])
    }

    /// Where the contents of the next string are (its quotes taken).
    #[inline]
    fn string_span(&mut self) -> Option<(usize, usize)> {
        self.byte(b'"')?;
        let start = self.at;
        loop {
            match *self.b.get(self.at)? {
                b'"' => break,
                b'\\' | 0..0x20 => return None,
                _ => self.at += 1,
            }
        }
        let end = self.at;
        self.at += 1;
        Some((start, end))
    }

    /// A string as [`string`](Self::string) reads it, as text.
    #[inline]
    pub fn str(&mut self) -> Option<&'a str> {
        let (start, end) = self.string_span()?;
        self.s.get(start..end)
    }

    /// A string with its quotes, as [`string`](Self::string) reads it (for a reader
    /// that takes a numeric string as `serde` does, quotes included).
    #[inline]
    pub fn quoted(&mut self) -> Option<&'a str> {
        self.peek()?;
        let start = self.at;
        self.string_span()?;
        self.s.get(start..self.at)
    }

    /// A JSON number, checked against the grammar: its text.
    #[inline]
    pub fn number(&mut self) -> Option<&'a str> {
        self.ws();
        let start = self.at;
        let digits = |p: &mut Self| {
            let from = p.at;
            while p.b.get(p.at).is_some_and(u8::is_ascii_digit) {
                p.at += 1;
            }
            p.at > from
        };
        if self.b.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        match self.b.get(self.at)? {
            b'0' => self.at += 1,
            b'1'..=b'9' => {
                digits(self);
            }
            _ => return None,
        }
        if self.b.get(self.at) == Some(&b'.') {
            self.at += 1;
            digits(self).then_some(())?;
        }
        if let Some(b'e' | b'E') = self.b.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.b.get(self.at) {
                self.at += 1;
            }
            digits(self).then_some(())?;
        }
        self.s.get(start..self.at)
    }

    /// The digits from here, each folded into `value` (wrapping: a caller that reads more
    /// than 19 digits must not take the value): how many there were.
    #[inline]
    fn fold_digits(&mut self, value: &mut u64) -> usize {
        let from = self.at;
        while let Some(&c) = self.b.get(self.at)
            && c.is_ascii_digit()
        {
            *value = value.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
            self.at += 1;
        }
        self.at - from
    }

    /// A JSON number's integer part (no sign), folded into `value`: how many digits it
    /// has (`0` alone is one; a leading zero ends it), or `None` when it has none.
    #[inline]
    fn integer_part(&mut self, value: &mut u64) -> Option<usize> {
        match self.b.get(self.at)? {
            b'0' => {
                self.at += 1;
                Some(1)
            }
            b'1'..=b'9' => Some(self.fold_digits(value)),
            _ => None,
        }
    }

    /// Plain digits within 64 bits (no sign, fraction or exponent), read in one pass.
    #[inline]
    pub fn u64(&mut self) -> Option<u64> {
        self.ws();
        let from = self.at;
        let mut value = 0;
        let digits = self.integer_part(&mut value)?;
        if matches!(self.b.get(self.at), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        if digits > 19 {
            // Past what 64 bits hold for certain: the exact reading decides.
            return self.s.get(from..self.at)?.parse().ok();
        }
        Some(value)
    }

    /// A number read as `serde_json` reads it into an `f64`, bit for bit (`-0` too): an
    /// integer or a decimal without an exponent, of at most 15 digits; anything else is
    /// `None`. One pass: the digits are one integer `m` below 10^15 and the fraction's
    /// length `k`, and the value is `m / 10^k`. Both are exact in an `f64` (under
    /// 2^53), so the one division rounds correctly, as `serde_json` and `str::parse`
    /// do.
    #[inline]
    pub fn f64(&mut self) -> Option<f64> {
        /// 10^k, each exact in an `f64`.
        const POW10: [f64; 16] = [
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
        ];
        self.ws();
        let negative = self.b.get(self.at) == Some(&b'-');
        if negative {
            self.at += 1;
        }
        let mut m = 0;
        let mut digits = self.integer_part(&mut m)?;
        let mut scale = 0;
        if self.b.get(self.at) == Some(&b'.') {
            self.at += 1;
            scale = self.fold_digits(&mut m);
            if scale == 0 {
                return None;
            }
            digits += scale;
        }
        if digits > 15 || matches!(self.b.get(self.at), Some(b'e' | b'E')) {
            return None;
        }
        let value = m as f64 / POW10.get(scale)?;
        Some(if negative { -value } else { value })
    }

    /// `true`, `false` or `null` (`None` for anything else; not taken).
    #[inline]
    pub fn literal(&mut self, word: &[u8]) -> bool {
        self.ws();
        if self.b[self.at..].starts_with(word) {
            self.at += word.len();
            true
        } else {
            false
        }
    }

    /// `null`, taken: `Some(true)`; something else, not taken: `Some(false)`.
    #[inline]
    pub fn null(&mut self) -> Option<bool> {
        Some(self.peek()? == b'n' && self.literal(b"null"))
    }

    /// `null` as `None`, else what `read` reads (`None` when it reads nothing).
    #[inline]
    pub fn optional<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.null()? {
            return Some(None);
        }
        read(self).map(Some)
    }

    /// `true` or `false`.
    #[inline]
    pub fn bool(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal(b"true").then_some(true),
            b'f' => self.literal(b"false").then_some(false),
            _ => None,
        }
    }

    /// A string, a number, `true`, `false` or `null`, skipped.
    #[inline]
    pub fn scalar(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b't' => self.literal(b"true").then_some(()),
            b'f' => self.literal(b"false").then_some(()),
            b'n' => self.literal(b"null").then_some(()),
            _ => self.number().map(drop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn only_what_it_is_sure_of_is_read() {
        assert_eq!(Scanner::new("01").number(), Some("0"));
        assert_eq!(Scanner::new("1.").number(), None);
        assert_eq!(Scanner::new("-").number(), None);
        assert_eq!(Scanner::new("1.0").u64(), None);
        assert_eq!(Scanner::new("18446744073709551616").u64(), None);
        assert_eq!(Scanner::new("18446744073709551615").u64(), Some(u64::MAX));
        assert_eq!(Scanner::new("007").u64(), Some(0));
        assert_eq!(
            Scanner::new("-0").f64().map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
        assert_eq!(Scanner::new("-0.250").f64(), Some(-0.25));
        assert_eq!(Scanner::new("1.e5").f64(), None);
        assert_eq!(Scanner::new("12.5e1").f64(), None);
        assert_eq!(Scanner::new("1e2").f64(), None);
        assert_eq!(Scanner::new("1234567890.123456").f64(), None);
        assert_eq!(Scanner::new("\"a\nb\"").string(), None);
        assert_eq!(Scanner::new("nul").null(), Some(false));
        assert_eq!(Scanner::new("tru").bool(), None);
        let mut s = Scanner::new(" [ ] ");
        assert_eq!(s.array(), Some(false));
        assert!(s.at_end());
    }

    proptest! {
        /// An integer is read in one pass as its number's text reads: plain digits that
        /// fit 64 bits, and nothing with a sign, a fraction or an exponent; the scanner
        /// stops where the number's text ends.
        #[test]
        fn integers_read_as_their_text_reads(
            text in r"-?[0-9]{1,22}(\.[0-9]{0,2})?([eE][+-]?[0-9]{0,2})?[,\]]?",
        ) {
            let mut number = Scanner::new(&text);
            let expected = number
                .number()
                .filter(|t| t.bytes().all(|c| c.is_ascii_digit()))
                .and_then(|t| t.parse::<u64>().ok());
            let mut fast = Scanner::new(&text);
            prop_assert_eq!(fast.u64(), expected, "{}", text);
            if expected.is_some() {
                prop_assert_eq!(fast.at, number.at, "{}", text);
            }
        }

        /// What the scanner reads as an `f64` is what `serde_json` reads, bit for bit.
        #[test]
        fn numbers_read_as_serde_json_reads_them(
            int in prop_oneof![Just("0".to_owned()), (1u64..1_000_000_000_000_000).prop_map(|n| n.to_string())],
            frac in prop_oneof![Just(String::new()), "[0-9]{1,16}".prop_map(|f| format!(".{f}"))],
            negative: bool,
        ) {
            let text = format!("{}{int}{frac}", if negative { "-" } else { "" });
            if let Some(fast) = Scanner::new(&text).f64() {
                let slow: f64 = serde_json::from_str(&text).unwrap();
                prop_assert_eq!(fast.to_bits(), slow.to_bits(), "{}", text);
            }
        }
    }
}
