//! Credentials kept below the HTTP layer, so that no log of any crate (`ureq_proto`
//! dumps every byte of a request and its answer at `trace`) can hold one.
//!
//! A credential a request carries (a key, a token, a header named like one, an OAuth
//! client secret) is given to the layers above the socket as a **stand-in**: random
//! letters and digits of the same length, made once per value. The socket swaps the
//! stand-in for the credential as the bytes reach it (a request's head, or the token
//! request's form body), and no byte above it ever held the credential. Coming the
//! other way, a credential a server echoes is swapped for its stand-in before anything
//! reads it, and the access token a token endpoint answers for a new stand-in: the
//! client's token cache holds only stand-ins. Texts shown to people (errors) blank the
//! stand-ins too ([`Masks::conceal`]).
//!
//! A credential shorter than [`MIN_LEN`] is not masked (its stand-in could be
//! mistaken for other text); none of the services' keys are that short.

use std::sync::Mutex;

use memchr::memmem;

/// The shortest credential masked.
pub(crate) const MIN_LEN: usize = 8;

/// How many credentials are remembered (a rotating key or a refreshed token adds one;
/// the oldest is forgotten).
const REMEMBERED: usize = 32;

/// Where a credential's stand-in may be swapped back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// In a request's head (a header's value).
    Head,
    /// Anywhere in a request (a token request's form body).
    Body,
}

struct Entry {
    real: Vec<u8>,
    standin: Vec<u8>,
    /// Searchers for each, built once.
    find_real: memmem::Finder<'static>,
    find_standin: memmem::Finder<'static>,
    place: Place,
    /// The credential is an OAuth client secret: a request carrying it is a token
    /// request, whose answer holds a token to hide.
    client_secret: bool,
}

impl Entry {
    fn new(real: Vec<u8>, standin: Vec<u8>, place: Place, client_secret: bool) -> Self {
        Entry {
            find_real: memmem::Finder::new(&real).into_owned(),
            find_standin: memmem::Finder::new(&standin).into_owned(),
            real,
            standin,
            place,
            client_secret,
        }
    }
}

/// The credentials of one client and their stand-ins.
#[derive(Default)]
pub(crate) struct Masks {
    entries: Mutex<Vec<Entry>>,
}

impl std::fmt::Debug for Masks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Masks(***)")
    }
}

/// Random letters and digits, `len` of them.
fn standin(len: usize) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = vec![0u8; len];
    crate::random::fill(&mut bytes);
    for b in &mut bytes {
        *b = ALPHABET[usize::from(*b) % ALPHABET.len()];
    }
    bytes
}

impl Masks {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The stand-in of `real` for a header's value (made once per value); `real` itself
    /// when it is too short to mask or is a stand-in already.
    pub(crate) fn header(&self, real: &str) -> String {
        self.standin_for(real, Place::Head, false)
    }

    /// The stand-in of an OAuth client secret as it goes into the token request's form
    /// body (`encoded`: form-encoded).
    pub(crate) fn client_secret(&self, encoded: &str) -> String {
        self.standin_for(encoded, Place::Body, true)
    }

    fn standin_for(&self, real: &str, place: Place, client_secret: bool) -> String {
        if real.len() < MIN_LEN {
            return real.to_owned();
        }
        let mut entries = self.lock();
        if let Some(i) = entries.iter().position(|e| e.real == real.as_bytes()) {
            // Most recently used last.
            let entry = entries.remove(i);
            let shown = String::from_utf8_lossy(&entry.standin).into_owned();
            entries.push(entry);
            return shown;
        }
        if entries.iter().any(|e| e.standin == real.as_bytes()) {
            return real.to_owned();
        }
        let made = standin(real.len());
        let shown = String::from_utf8_lossy(&made).into_owned();
        entries.push(Entry::new(
            real.as_bytes().to_vec(),
            made,
            place,
            client_secret,
        ));
        if entries.len() > REMEMBERED {
            entries.remove(0);
        }
        shown
    }

    /// Registers a credential that came in (an access token) under a new stand-in;
    /// returns the stand-in.
    fn hide(&self, real: &[u8]) -> Vec<u8> {
        let made = standin(real.len());
        let mut entries = self.lock();
        entries.push(Entry::new(real.to_vec(), made.clone(), Place::Head, false));
        if entries.len() > REMEMBERED {
            entries.remove(0);
        }
        made
    }

    /// Swaps the stand-ins in outgoing `bytes` for their credentials, in place: those of
    /// headers only when `head` (the bytes are a request's head). `true` when an OAuth
    /// client secret went out (the answer is a token to hide).
    pub(crate) fn reveal(&self, bytes: &mut [u8], head: bool) -> bool {
        let entries = self.lock();
        let mut client_secret = false;
        for entry in entries.iter() {
            if entry.place == Place::Head && !head {
                continue;
            }
            let mut from = 0;
            while let Some(at) = entry.find_standin.find(&bytes[from..]) {
                let at = from + at;
                bytes[at..at + entry.real.len()].copy_from_slice(&entry.real);
                client_secret |= entry.client_secret;
                from = at + entry.real.len();
            }
        }
        client_secret
    }

    /// Swaps the credentials in incoming `bytes` for their stand-ins, in place. `before`
    /// is the end of the bytes that came before them (kept by the caller), so that a
    /// credential cut across two reads is hidden in this one (its part here).
    pub(crate) fn blank(&self, bytes: &mut [u8], before: &[u8]) {
        let entries = self.lock();
        for entry in entries.iter() {
            blank_one(entry, bytes, before);
        }
    }

    /// Whether `text` holds a stand-in.
    pub(crate) fn finds(&self, text: &str) -> bool {
        self.lock()
            .iter()
            .any(|e| e.find_standin.find(text.as_bytes()).is_some())
    }

    /// `text` with every stand-in shown as `***`, when it holds one.
    pub(crate) fn conceal(&self, text: &str) -> Option<String> {
        let entries = self.lock();
        let mut out: Option<String> = None;
        for entry in entries.iter() {
            let Ok(standin) = std::str::from_utf8(&entry.standin) else {
                continue;
            };
            let current = out.as_deref().unwrap_or(text);
            if entry.find_standin.find(current.as_bytes()).is_some() {
                out = Some(current.replace(standin, "***"));
            }
        }
        out
    }

    /// The longest credential remembered (how much of the bytes before a read must be
    /// kept to find one cut across reads).
    pub(crate) fn longest(&self) -> usize {
        self.lock().iter().map(|e| e.real.len()).max().unwrap_or(0)
    }
}

/// Swaps `entry`'s credential in `bytes` for its stand-in, and the part of it in
/// `bytes` when it began in `before`.
fn blank_one(entry: &Entry, bytes: &mut [u8], before: &[u8]) {
    let real = &entry.real;
    let mut from = 0;
    while let Some(at) = entry.find_real.find(&bytes[from..]) {
        let at = from + at;
        bytes[at..at + real.len()].copy_from_slice(&entry.standin);
        from = at + real.len();
    }
    // Cut across the reads: a tail of `before` that starts `real`, and the rest here.
    for cut in 1..real.len().min(before.len() + 1) {
        let (head, rest) = real.split_at(cut);
        if before.ends_with(head) && bytes.starts_with(rest) {
            bytes[..rest.len()].copy_from_slice(&entry.standin[cut..]);
            break;
        }
    }
}

/// Reads the access token of a token endpoint's answer out of incoming bytes and puts a
/// stand-in in its place, as the bytes arrive: the JSON member `"access_token"`, its
/// string value held back until its closing quote has come.
#[derive(Debug, Default)]
pub(crate) struct TokenScan {
    /// Bytes of the answer seen so far that may still be part of the member.
    state: ScanState,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ScanState {
    /// Looking for the member's name.
    #[default]
    Name,
    /// The name and its colon seen; the value's opening quote next.
    Value,
    /// Done: the token was hidden (or the answer holds none that can be).
    Done,
}

/// The member whose value is hidden.
const NAME: &[u8] = b"\"access_token\"";

/// What [`TokenScan::scan`] asks of the reader.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scanned {
    /// The bytes may be handed on.
    Ready,
    /// The bytes end inside what is being read (the name, or the token): read more
    /// before handing any on.
    More,
}

impl TokenScan {
    /// Looks at the whole answer received so far (`bytes`, starting with its first
    /// byte): hides the token in place once its value is whole.
    pub(crate) fn scan(&mut self, bytes: &mut [u8], masks: &Masks) -> Scanned {
        if self.state == ScanState::Done {
            return Scanned::Ready;
        }
        let Some(name) = memmem::find(bytes, NAME) else {
            // The name may be cut at the end: wait for the rest of it (from its third
            // byte on: an answer that ends in a quote is not kept waiting).
            let partial = (3..NAME.len()).any(|n| bytes.ends_with(&NAME[..n]));
            return if partial {
                Scanned::More
            } else {
                Scanned::Ready
            };
        };
        self.state = ScanState::Value;
        let mut i = name + NAME.len();
        while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\r' | b'\n' | b':') {
            i += 1;
        }
        if i == bytes.len() {
            return Scanned::More;
        }
        if bytes[i] != b'"' {
            // Not a string: nothing to hide here.
            self.state = ScanState::Done;
            return Scanned::Ready;
        }
        let start = i + 1;
        let Some(len) = bytes[start..].iter().position(|b| *b == b'"') else {
            return Scanned::More;
        };
        let value = &bytes[start..start + len];
        // An escape, or a line break from a chunk's framing: not a value read as it is.
        if len >= MIN_LEN && !value.iter().any(|b| matches!(b, b'\\' | b'\r' | b'\n')) {
            let made = masks.hide(value);
            bytes[start..start + len].copy_from_slice(&made);
        }
        self.state = ScanState::Done;
        Scanned::Ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standin_is_the_credentials_length_and_swapped_back_only_where_it_belongs() {
        let masks = Masks::default();
        let key = "sk_live_0123456789abcdef";
        let shown = masks.header(&format!("Bearer {key}"));
        assert_eq!(shown.len(), key.len() + 7);
        assert!(!shown.contains(key));
        assert_eq!(masks.header(&format!("Bearer {key}")), shown, "made once");
        assert_eq!(
            masks.header(&shown),
            shown,
            "a stand-in is not masked again"
        );
        let mut head = format!("GET / HTTP/1.1\r\nauthorization: {shown}\r\n\r\n").into_bytes();
        assert!(!masks.reveal(&mut head, true));
        assert!(String::from_utf8_lossy(&head).contains(key));
        // In a body, a header's stand-in stays as it is.
        let mut body = shown.clone().into_bytes();
        masks.reveal(&mut body, false);
        assert_eq!(body, shown.as_bytes());
        // A client secret is swapped in a body, and says so.
        let secret = masks.client_secret("s3cr3t%2Bvalue");
        let mut form = format!("grant_type=client_credentials&client_secret={secret}").into_bytes();
        assert!(masks.reveal(&mut form, false));
        assert!(String::from_utf8_lossy(&form).ends_with("client_secret=s3cr3t%2Bvalue"));
        // Too short to mask.
        assert_eq!(masks.header("abc"), "abc");
    }

    #[test]
    fn an_echoed_credential_is_hidden_even_cut_across_two_reads() {
        let masks = Masks::default();
        let standin = masks.header("sk_test_ECHOED_KEY");
        let mut one = b"{\"error\":\"bad key sk_test_ECHOED_KEY\"}".to_vec();
        masks.blank(&mut one, b"");
        let text = String::from_utf8_lossy(&one).into_owned();
        assert!(
            !text.contains("ECHOED") && text.contains(&standin),
            "{text}"
        );
        assert_eq!(
            masks.conceal(&text).as_deref(),
            Some("{\"error\":\"bad key ***\"}")
        );
        let before = b"... sk_test_ECH".to_vec();
        let mut after = b"OED_KEY is not valid".to_vec();
        masks.blank(&mut after, &before);
        assert_eq!(after[..7], standin.as_bytes()[11..]);
        assert!(after.ends_with(b" is not valid"));
    }

    #[test]
    fn a_token_is_hidden_once_its_value_is_whole() {
        let masks = Masks::default();
        let mut scan = TokenScan::default();
        let mut answer = br#"{"token_type":"Bearer","access_to"#.to_vec();
        assert_eq!(scan.scan(&mut answer, &masks), Scanned::More);
        answer.extend_from_slice(br#"ken": "tok_0123456789"#);
        assert_eq!(scan.scan(&mut answer, &masks), Scanned::More);
        answer.extend_from_slice(br#"abcdef","expires_in":3600}"#);
        assert_eq!(scan.scan(&mut answer, &masks), Scanned::Ready);
        let text = String::from_utf8_lossy(&answer).into_owned();
        assert!(!text.contains("tok_0123456789abcdef"), "{text}");
        // The stand-in in a header is swapped for the token at the socket.
        let standin: String = text
            .split("\"access_token\": \"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or_default()
            .to_owned();
        let mut head = format!("authorization: Bearer {standin}\r\n\r\n").into_bytes();
        masks.reveal(&mut head, true);
        assert!(String::from_utf8_lossy(&head).contains("tok_0123456789abcdef"));
    }
}
