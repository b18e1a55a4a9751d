//! Deterministic random streams.
//!
//! Every random process (a link's loss model, a queue's drop decisions, an
//! application's jitter, ...) gets its own generator, seeded from the run seed and a
//! stable label such as `"flow/voip/app"`. Adding a flow therefore never shifts the
//! random numbers another flow or link sees.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator used everywhere in the simulator.
pub type Rng = Xoshiro256PlusPlus;

/// SplitMix64 finaliser (Steele et al. 2014): a bijective mixer with good avalanche,
/// used to turn (seed, label) into a well-spread 64-bit stream seed.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a over the label bytes; stable across platforms and Rust versions
/// (unlike `std::hash`).
fn label_hash(label: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The random stream for the process named `label` in a run with `seed`.
pub fn stream(seed: u64, label: &str) -> Rng {
    let s = mix64(seed ^ mix64(label_hash(label)));
    Rng::seed_from_u64(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng as _;

    #[test]
    fn same_seed_and_label_give_same_stream() {
        let a: Vec<u64> = (0..4).map(|_| 0).scan(stream(7, "x"), |r, _| Some(r.random())).collect();
        let b: Vec<u64> = (0..4).map(|_| 0).scan(stream(7, "x"), |r, _| Some(r.random())).collect();
        assert_eq!(a, b);
    }

    #[test]
    fn labels_and_seeds_separate_streams() {
        let x: u64 = stream(7, "flow/a").random();
        let y: u64 = stream(7, "flow/b").random();
        let z: u64 = stream(8, "flow/a").random();
        assert_ne!(x, y);
        assert_ne!(x, z);
    }
}
