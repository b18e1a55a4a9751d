//! Simulated time: integer nanoseconds since the start of the run.
//!
//! The engine never uses floating-point time: two events scheduled for the same
//! instant compare equal exactly, and a run is bit-for-bit reproducible.

/// Nanoseconds since the run started.
pub type Nanos = u64;

pub const NS_PER_US: Nanos = 1_000;
pub const NS_PER_MS: Nanos = 1_000_000;
pub const NS_PER_SEC: Nanos = 1_000_000_000;

/// Serialisation time of `bytes` on a link of `rate_bps`, rounded up to the next
/// nanosecond so a link never transmits faster than its rate.
#[inline]
pub fn tx_time_ns(bytes: u32, rate_bps: u64) -> Nanos {
    debug_assert!(rate_bps > 0);
    let bits = bytes as u128 * 8 * NS_PER_SEC as u128;
    bits.div_ceil(rate_bps as u128) as Nanos
}

/// Converts nanoseconds to seconds for the output tables.
#[inline]
pub fn secs(t: Nanos) -> f64 {
    t as f64 * 1e-9
}

/// Converts seconds (possibly fractional) to nanoseconds, rounding to nearest.
#[inline]
pub fn from_secs_f64(s: f64) -> Nanos {
    if s <= 0.0 {
        0
    } else {
        (s * 1e9).round() as Nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_exact_for_common_sizes() {
        assert_eq!(tx_time_ns(1500, 100_000_000), 120_000);
        assert_eq!(tx_time_ns(1500, 1_500_000), 8_000_000);
        assert_eq!(tx_time_ns(186, 1_500_000), 992_000);
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1 byte at 3 bit/s = 2.666.. s
        assert_eq!(tx_time_ns(1, 3), 2_666_666_667);
    }
}
