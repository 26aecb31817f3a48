//! Deterministic identifiers: a per-prefix counter run through a seeded mixer, so ids
//! look random but are the same on every run that makes the same requests.

use std::collections::HashMap;

/// The id generator.
#[derive(Debug, Clone)]
pub(crate) struct Ids {
    seed: u64,
    counters: HashMap<&'static str, u64>,
}

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

impl Ids {
    pub(crate) fn new(seed: u64) -> Self {
        Ids {
            seed,
            counters: HashMap::new(),
        }
    }

    /// The next id with this prefix, e.g. `post_4k1x9m2q7w3e8r5t`.
    pub(crate) fn next(&mut self, prefix: &'static str) -> String {
        let counter = self.counters.entry(prefix).or_insert(0);
        *counter += 1;
        let prefix_hash = prefix.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let mut x = splitmix(self.seed ^ prefix_hash ^ counter.wrapping_mul(0x9e37_79b9));
        let mut id = String::with_capacity(prefix.len() + 17);
        id.push_str(prefix);
        id.push('_');
        for _ in 0..16 {
            id.push(char::from(ALPHABET[(x & 31) as usize]));
            x >>= 4;
            if x == 0 {
                x = splitmix(*counter);
            }
        }
        id
    }
}

/// SplitMix64, a small well-known mixer.
pub(crate) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A stable hash of a string (FNV-1a then SplitMix), for figures derived from content.
pub(crate) fn stable_hash(s: &str) -> u64 {
    splitmix(s.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_deterministic_and_distinct() {
        let mut a = Ids::new(7);
        let mut b = Ids::new(7);
        let first: Vec<String> = (0..100).map(|_| a.next("post")).collect();
        let second: Vec<String> = (0..100).map(|_| b.next("post")).collect();
        assert_eq!(first, second);
        let unique: std::collections::HashSet<_> = first.iter().collect();
        assert_eq!(unique.len(), 100);
        assert!(first[0].starts_with("post_") && first[0].len() == 21);
        assert_ne!(Ids::new(8).next("post"), first[0]);
    }
}
