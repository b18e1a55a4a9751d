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
    // Once per packet-hop: a 64-bit division is several times cheaper than a 128-bit
    // one, and bits x 1e9 fits 64 bits for any packet (it overflows past 2.3 GB).
    let bits = bytes as u64 * 8;
    match bits.checked_mul(NS_PER_SEC) {
        Some(b) => b.div_ceil(rate_bps),
        None => (bits as u128 * NS_PER_SEC as u128).div_ceil(rate_bps as u128) as Nanos,
    }
}

/// The kernel's timer tick, `1 s / CONFIG_HZ`.
#[inline]
pub fn jiffy_ns(hz: u32) -> Nanos {
    NS_PER_SEC / hz.max(1) as Nanos
}

/// When a kernel jiffies timer armed at `now` for `delay` fires, the ticks falling at
/// `phase + k * jiffy`: Linux arms a `timer_list` for `jiffies + delay` (the delay in
/// whole ticks, rounded up), so it fires on that tick, from just over `delay - 1 tick`
/// to `delay` after it was armed, as the current tick falls. `jiffy = 0`: exactly
/// `now + delay`.
#[inline]
pub fn jiffies_timer(now: Nanos, delay: Nanos, jiffy: Nanos, phase: Nanos) -> Nanos {
    if jiffy == 0 {
        return now + delay;
    }
    // callers keep the phase within a tick: a compare, not a division, per call
    let phase = if phase < jiffy { phase } else { phase % jiffy };
    (jiffies_at(now, jiffy, phase) + delay.div_ceil(jiffy).max(1)) * jiffy + phase - jiffy
}

/// The kernel's `jiffies` at `t` (`jiffy > 0`, `phase < jiffy`): ticks counted from the
/// one at `phase - jiffy`, so that times before `phase` count too.
#[inline]
pub fn jiffies_at(t: Nanos, jiffy: Nanos, phase: Nanos) -> u64 {
    (t + jiffy - phase) / jiffy
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
    fn tx_time_is_the_same_on_the_64_and_128_bit_paths() {
        let wide = |b: u32, r: u64| (b as u128 * 8 * NS_PER_SEC as u128).div_ceil(r as u128) as Nanos;
        for (b, r) in [(1500, 100_000_000), (52, 7), ((1 << 31) - 1, 3), (1 << 31, 1_000), (u32::MAX, 1)] {
            assert_eq!(tx_time_ns(b, r), wide(b, r), "{b} B at {r} bit/s");
        }
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1 byte at 3 bit/s = 2.666.. s
        assert_eq!(tx_time_ns(1, 3), 2_666_666_667);
    }
}
