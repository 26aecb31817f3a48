//! Credentials kept below the HTTP layer, so that no log of any crate (`ureq_proto`
//! dumps every byte of a request and its answer at `trace`) can hold one.
//!
//! A credential a request carries (a key, a token, a header named like one, an OAuth
//! client secret) is given to the layers above the socket as a **stand-in**: random
//! letters and digits of the same length, one per credential for as long as it is
//! remembered. The socket swaps the stand-in for the credential as the bytes reach it (a
//! request's head, or the token request's form body), and no byte above it ever held
//! the credential. Coming the other way, a credential a server echoes is swapped for
//! its stand-in before anything reads it, and the access token a token endpoint answers
//! for its stand-in (the same one when the endpoint hands out the same token again): the
//! client's token cache holds only stand-ins. Texts shown to people (errors) blank the
//! stand-ins too ([`Masks::conceal`]).
//!
//! Three rules keep what reaches the socket exactly what was given:
//! - one credential, one stand-in, and a stand-in is never masked again (a value that
//!   holds one is a stand-in's carrier, kept as it is), so swapping back is one pass in
//!   any order;
//! - the client's own credentials (its key, its header's value, its client secret) are
//!   never forgotten; tokens and rotated keys are, the least recently used first, beyond
//!   [`REMEMBERED`];
//! - a token that cannot be a header's value (a line break, a control character) is
//!   given a stand-in that is never swapped back: the token request fails
//!   ([`Masks::refusal`]) and nothing is sent with it.
//!
//! A credential shorter than [`MIN_LEN`] is not masked (its stand-in could be
//! mistaken for other text); none of the services' keys are that short.

use std::sync::Mutex;

use memchr::memmem;

/// The shortest credential masked.
pub(crate) const MIN_LEN: usize = 8;

/// How many credentials are remembered besides the client's own (a rotated key or a new
/// token adds one; the least recently used is forgotten).
const REMEMBERED: usize = 32;

/// Where a credential's stand-in may be swapped back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
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
    /// The client's own: never forgotten.
    pinned: bool,
    /// Why the credential cannot be sent (a token with a line break): its stand-in is
    /// never swapped back.
    refused: Option<&'static str>,
    /// When it was last used (a counter), to forget the least recently used.
    used: u64,
}

/// The credentials of one client and their stand-ins.
#[derive(Default)]
pub(crate) struct Masks {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    entries: Vec<Entry>,
    clock: u64,
}

impl State {
    fn touch(&mut self, i: usize) {
        self.clock += 1;
        self.entries[i].used = self.clock;
    }

    /// The entry whose stand-in `value` holds.
    fn carrying(&self, value: &[u8]) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.find_standin.find(value).is_some())
    }

    fn add(&mut self, real: &[u8], standin: Vec<u8>, kind: Kind) -> usize {
        self.clock += 1;
        self.entries.push(Entry {
            find_real: memmem::Finder::new(real).into_owned(),
            find_standin: memmem::Finder::new(&standin).into_owned(),
            real: real.to_vec(),
            standin,
            place: kind.place,
            client_secret: kind.client_secret,
            pinned: kind.pinned,
            refused: kind.refused,
            used: self.clock,
        });
        let forgettable = self.entries.iter().filter(|e| !e.pinned).count();
        if forgettable > REMEMBERED
            && let Some(oldest) = self
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| !e.pinned)
                .min_by_key(|(_, e)| e.used)
                .map(|(i, _)| i)
        {
            self.entries.remove(oldest);
        }
        self.entries.len() - 1
    }
}

/// What a new entry is.
#[derive(Clone, Copy)]
struct Kind {
    place: Place,
    client_secret: bool,
    pinned: bool,
    refused: Option<&'static str>,
}

const HEADER: Kind = Kind {
    place: Place::Head,
    client_secret: false,
    pinned: false,
    refused: None,
};

impl std::fmt::Debug for Masks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Masks(***)")
    }
}

/// What keeps `value` from being sent as a header's value as it is (RFC 9110 §5.5: no
/// control character but a tab, no whitespace at either end), in words; `None` when it
/// can be. A credential is sent exactly as it was given or not at all, so one with such a
/// byte is refused before anything is sent.
pub(crate) fn header_value_problem(value: &[u8]) -> Option<&'static str> {
    let control = |b: &u8| (*b < 0x20 && *b != b'\t') || *b == 0x7f;
    match value {
        [] => Some("is empty"),
        [.., b'\r' | b'\n'] => Some("ends with a line break"),
        v if v.iter().any(|b| matches!(b, b'\r' | b'\n')) => Some("holds a line break"),
        v if v.contains(&0) => Some("holds a NUL byte"),
        v if v.iter().any(control) => Some("holds a control character"),
        [b' ' | b'\t', ..] => Some("starts with whitespace"),
        [.., b' ' | b'\t'] => Some("ends with whitespace"),
        _ => None,
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
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The stand-in of `real` for a header's value; `real` itself when it is too short
    /// to mask or carries a stand-in already.
    pub(crate) fn header(&self, real: &str) -> String {
        self.standin_for(real, HEADER)
    }

    /// [`Masks::header`] for one of the client's own credentials (its key, its
    /// header's value), never forgotten.
    pub(crate) fn own_header(&self, real: &str) -> String {
        self.standin_for(
            real,
            Kind {
                pinned: true,
                ..HEADER
            },
        )
    }

    /// The stand-in of an OAuth client secret as it goes into the token request's form
    /// body (`encoded`: form-encoded).
    pub(crate) fn client_secret(&self, encoded: &str) -> String {
        self.standin_for(
            encoded,
            Kind {
                place: Place::Body,
                client_secret: true,
                pinned: true,
                refused: None,
            },
        )
    }

    fn standin_for(&self, real: &str, kind: Kind) -> String {
        if real.len() < MIN_LEN {
            return real.to_owned();
        }
        let mut state = self.lock();
        // A value carrying a stand-in ("Bearer <a token's stand-in>") is kept as it is:
        // the stand-in inside is swapped back at the socket.
        let found = match state.entries.iter().position(|e| e.real == real.as_bytes()) {
            Some(i) => Some(i),
            None => state.carrying(real.as_bytes()),
        };
        if let Some(i) = found {
            state.touch(i);
            state.entries[i].pinned |= kind.pinned;
            if state.entries[i].real == real.as_bytes() {
                return String::from_utf8_lossy(&state.entries[i].standin).into_owned();
            }
            return real.to_owned();
        }
        let made = standin(real.len());
        let shown = String::from_utf8_lossy(&made).into_owned();
        state.add(real.as_bytes(), made, kind);
        shown
    }

    /// The stand-in of an access token a token endpoint answered (its value as JSON
    /// decodes it): the one it has when it is known (the endpoint handed out the same
    /// token again), or a new one. A token that cannot be a header's value gets a
    /// stand-in that is never swapped back.
    fn hide_token(&self, real: &[u8]) -> Vec<u8> {
        let mut state = self.lock();
        if let Some(i) = state.entries.iter().position(|e| e.real == real) {
            state.touch(i);
            return state.entries[i].standin.clone();
        }
        if let Some(i) = state.carrying(real)
            && state.entries[i].standin == real
        {
            // Blanked on its way in: a token this client knows.
            state.touch(i);
            return real.to_vec();
        }
        let made = standin(real.len());
        let refused = header_value_problem(real);
        state.add(real, made.clone(), Kind { refused, ..HEADER });
        made
    }

    /// Why the credential whose stand-in `text` holds cannot be sent, when it cannot.
    pub(crate) fn refusal(&self, text: &str) -> Option<&'static str> {
        let state = self.lock();
        state
            .carrying(text.as_bytes())
            .and_then(|i| state.entries[i].refused)
    }

    /// Swaps the stand-ins in outgoing `bytes` for their credentials, in place: those of
    /// headers only when `head` (the bytes are a request's head). `true` when an OAuth
    /// client secret went out (the answer is a token to hide).
    pub(crate) fn reveal(&self, bytes: &mut [u8], head: bool) -> bool {
        let state = self.lock();
        let mut client_secret = false;
        for entry in &state.entries {
            if (entry.place == Place::Head && !head) || entry.refused.is_some() {
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
        let state = self.lock();
        for entry in &state.entries {
            blank_one(entry, bytes, before);
        }
    }

    /// Whether `text` holds a stand-in.
    pub(crate) fn finds(&self, text: &str) -> bool {
        self.lock().carrying(text.as_bytes()).is_some()
    }

    /// `text` with every stand-in shown as `***`, when it holds one.
    pub(crate) fn conceal(&self, text: &str) -> Option<String> {
        let state = self.lock();
        let mut out: Option<String> = None;
        for entry in &state.entries {
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
        self.lock()
            .entries
            .iter()
            .map(|e| e.real.len())
            .max()
            .unwrap_or(0)
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
    state: ScanState,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ScanState {
    /// Looking for the member's name.
    #[default]
    Name,
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
        // The value's end: the first quote not escaped.
        let start = i + 1;
        let mut end = start;
        loop {
            match bytes.get(end) {
                None => return Scanned::More,
                Some(b'\\') => end += 2,
                Some(b'"') => break,
                Some(_) => end += 1,
            }
        }
        self.state = ScanState::Done;
        let raw = &bytes[start..end];
        // A line break from a chunk's framing: not a value read as it is (the token is
        // masked where it is used instead).
        if raw.iter().any(|b| matches!(b, b'\r' | b'\n')) {
            return Scanned::Ready;
        }
        let Ok(real) = serde_json::from_slice::<String>(&bytes[start - 1..=end]) else {
            return Scanned::Ready;
        };
        if real.len() < MIN_LEN {
            return Scanned::Ready;
        }
        // The value decoded is never longer than its JSON: the stand-in, its closing
        // quote, and spaces (JSON's whitespace) where the escapes were.
        let made = masks.hide_token(real.as_bytes());
        let quote = start + made.len();
        bytes[start..quote].copy_from_slice(&made);
        bytes[quote] = b'"';
        bytes[quote + 1..=end].fill(b' ');
        Scanned::Ready
    }
}

#[cfg(test)]
mod tests;
