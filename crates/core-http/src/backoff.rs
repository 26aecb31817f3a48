//! Exponential backoff with jitter, one definition shared by the HTTP retry policy
//! (0.5 s doubling to 8 s, scaled by a factor in [0.75, 1]) and the WebSocket reconnect
//! policy (1 s doubling to 30 s, full jitter).

use std::time::Duration;

/// Delays that double from `initial` up to `max`, each scaled down by a random factor
/// in `[1 - jitter, 1]`: `jitter` 0.25 keeps delays within 75–100 % of the nominal value,
/// `jitter` 1.0 is "full jitter" (anywhere from zero to the nominal value).
///
/// ```
/// use std::time::Duration;
/// use core_http::config::Backoff; // any client crate re-exports it
///
/// let b = Backoff::new(Duration::from_millis(500), Duration::from_secs(8), 0.25);
/// // `random` is a number in [0, 1): 0 gives the nominal delay.
/// assert_eq!(b.delay(0, 0.0), Duration::from_millis(500));
/// assert_eq!(b.delay(3, 0.0), Duration::from_secs(4));
/// assert_eq!(b.delay(10, 0.0), Duration::from_secs(8));
/// assert_eq!(b.delay(0, 1.0), Duration::from_millis(375));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Backoff {
    /// The first delay.
    pub initial: Duration,
    /// The longest delay.
    pub max: Duration,
    /// How much of each delay is random, from 0 (none) to 1 (full jitter).
    pub jitter: f64,
}

impl Backoff {
    /// Delays from `initial` doubling up to `max`, with `jitter` (clamped to 0–1).
    pub fn new(initial: Duration, max: Duration, jitter: f64) -> Self {
        Backoff {
            initial,
            max,
            jitter: if jitter.is_finite() {
                jitter.clamp(0.0, 1.0)
            } else {
                0.0
            },
        }
    }

    /// The HTTP retry default: 0.5 s doubling to 8 s, each scaled by a factor in
    /// [0.75, 1].
    pub fn http_retry() -> Self {
        Backoff::new(Duration::from_millis(500), Duration::from_secs(8), 0.25)
    }

    /// The reconnect default of streams: 1 s doubling to 30 s, full jitter.
    pub fn reconnect() -> Self {
        Backoff::new(Duration::from_secs(1), Duration::from_secs(30), 1.0)
    }

    /// The delay before retry number `n` (0 for the first), with fresh randomness for
    /// the jitter.
    ///
    /// ```
    /// use std::time::Duration;
    /// let d = core_http::config::Backoff::reconnect().random_delay(2);
    /// assert!(d <= Duration::from_secs(4));
    /// ```
    pub fn random_delay(&self, n: u32) -> Duration {
        self.delay(n, crate::random::unit_f64())
    }

    /// The delay before retry number `n` (0 for the first), given `random` in [0, 1).
    pub fn delay(&self, n: u32, random: f64) -> Duration {
        let nominal = self
            .initial
            .saturating_mul(2u32.saturating_pow(n.min(31)))
            .min(self.max);
        let random = if random.is_finite() {
            random.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let factor = 1.0 - self.jitter.clamp(0.0, 1.0) * random;
        if factor >= 1.0 {
            return nominal;
        }
        Duration::try_from_secs_f64(nominal.as_secs_f64() * factor).unwrap_or(nominal)
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::http_retry()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_caps_and_jitters() {
        let b = Backoff::http_retry();
        assert_eq!(b.delay(0, 0.0), Duration::from_millis(500));
        assert_eq!(b.delay(1, 0.0), Duration::from_secs(1));
        assert_eq!(b.delay(4, 0.0), Duration::from_secs(8));
        assert_eq!(b.delay(40, 0.0), Duration::from_secs(8));
        assert_eq!(b.delay(u32::MAX, 0.5), Duration::from_secs(7));
        let d = b.delay(2, 0.5);
        assert!(d >= Duration::from_millis(1500) && d <= Duration::from_secs(2));

        let r = Backoff::reconnect();
        assert_eq!(r.delay(0, 0.0), Duration::from_secs(1));
        assert_eq!(r.delay(5, 0.0), Duration::from_secs(30));
        assert_eq!(
            r.delay(5, 0.999_999),
            Duration::from_secs(30).mul_f64(0.000_001)
        );
        // Odd inputs never panic.
        assert_eq!(r.delay(0, f64::NAN), Duration::from_secs(1));
        let odd = Backoff::new(Duration::MAX, Duration::MAX, f64::INFINITY);
        assert_eq!(odd.delay(3, 0.5), Duration::MAX);
    }
}
