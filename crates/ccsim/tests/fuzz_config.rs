//! Fuzzing of the simulator's config parser and validation (issue 19, item 6): the JSON
//! a scenario compiles to (`tests/fuzz_configs/*.json`, from `examples/*.toml`) is
//! mutated (leaves replaced by extreme or ill-typed values, keys removed or added, array
//! elements duplicated or dropped, the text truncated or garbled), and every mutant must
//! either be refused with an error naming a field or build a simulation: never a panic.
//!
//! Findings (fixed): a link delay near 2^64 overflowed the route computation
//! (`topology.rs`: now refused above one day); a bottleneck rate near 2^64 overflowed
//! the pre-flight estimate (`estimate.rs`). 2^32 dumbbell pairs aborted on memory until
//! the pre-flight estimate refused them.
//!
//! CI runs [`CI_CASES`] cases per property; a longer run for developers:
//!     PROPTEST_CASES=100000 cargo test --release -p ccsim --test fuzz_config
//! (`FUZZ_TRACE=1` writes each built mutant to /tmp/fuzz_last.json first: the culprit
//! when a case aborts instead of panicking, e.g. on memory under `ulimit -v`.)

use ccsim::{SimConfig, Simulation};
use proptest::prelude::*;
use serde_json::{json, Value};

const CI_CASES: u32 = 256;

const BASES: [&str; 4] = [
    include_str!("fuzz_configs/adsl1_voip.json"),
    include_str!("fuzz_configs/brosh_droptail.json"),
    include_str!("fuzz_configs/luebben_fig9.json"),
    include_str!("fuzz_configs/dc_incast.json"),
];

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(CI_CASES);
    ProptestConfig { cases: n, failure_persistence: None, ..ProptestConfig::default() }
}

/// Extreme and ill-typed values a careless or hostile scenario could carry.
fn nasty(k: u8) -> Value {
    match k % 16 {
        0 => json!(0),
        1 => json!(1),
        2 => json!(-1),
        3 => json!(u64::MAX),
        4 => json!(u64::MAX as f64 * 4.0),
        5 => json!(1e308),
        6 => json!(-1e308),
        7 => json!(0.5),
        8 => json!(i64::MIN),
        9 => json!((1u64 << 53) + 1),
        10 => json!("1e999"),
        11 => Value::Null,
        12 => json!(true),
        13 => json!([]),
        14 => json!({}),
        _ => json!(u32::MAX),
    }
}

/// Every path (as indices into objects/arrays) of `v`, depth first.
fn paths(v: &Value, at: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (i, (_, c)) in m.iter().enumerate() {
                at.push(i);
                paths(c, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                at.push(i);
                paths(c, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn node<'a>(v: &'a mut Value, path: &[usize]) -> &'a mut Value {
    let mut cur = v;
    for &i in path {
        cur = match cur {
            Value::Object(m) => m.values_mut().nth(i).unwrap(),
            Value::Array(a) => &mut a[i],
            _ => unreachable!(),
        };
    }
    cur
}

/// Applies mutation `(which, op, k)` to `v`.
fn mutate(v: &mut Value, which: usize, op: u8, k: u8) {
    let mut all = Vec::new();
    paths(v, &mut Vec::new(), &mut all);
    let path = &all[which % all.len()];
    let n = node(v, path);
    match (op % 5, n) {
        (0, n) => *n = nasty(k),
        (1, Value::Object(m)) if !m.is_empty() => {
            let key = m.keys().nth(k as usize % m.len()).unwrap().clone();
            m.remove(&key);
        }
        (2, Value::Object(m)) => {
            m.insert(format!("unknown_{k}"), json!(1));
        }
        (3, Value::Array(a)) if !a.is_empty() && a.len() < 200 => {
            let c = a[k as usize % a.len()].clone();
            a.push(c);
        }
        (4, Value::Array(a)) if !a.is_empty() => {
            a.remove(k as usize % a.len());
        }
        (_, n) => *n = nasty(k.wrapping_add(op)),
    }
}

/// Parse and validate: a config error names a field; nothing panics.
fn check(text: &str) {
    if let Ok(cfg) = serde_json::from_str::<SimConfig>(text) {
        if std::env::var_os("FUZZ_TRACE").is_some() {
            std::fs::write("/tmp/fuzz_last.json", text).unwrap();
        }
        if let Err(e) = Simulation::new(&cfg) {
            assert!(!e.to_string().is_empty());
        }
    }
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn fuzz_mutated_scenarios_are_refused_or_built(
        base in 0..BASES.len(),
        muts in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..5),
    ) {
        let mut v: Value = serde_json::from_str(BASES[base]).unwrap();
        for (which, op, k) in muts {
            mutate(&mut v, which, op, k);
        }
        check(&v.to_string());
    }

    #[test]
    fn fuzz_garbled_text_is_refused(base in 0..BASES.len(), cut in any::<usize>(), flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8)) {
        let mut b = BASES[base].as_bytes().to_vec();
        b.truncate(cut % (b.len() + 1));
        for (at, x) in flips {
            if !b.is_empty() {
                let n = b.len();
                b[at % n] ^= x;
            }
        }
        if let Ok(text) = std::str::from_utf8(&b) {
            check(text);
        }
        let _ = serde_json::from_slice::<SimConfig>(&b);
    }

    #[test]
    fn fuzz_arbitrary_bytes_are_refused(b in prop::collection::vec(any::<u8>(), 0..512)) {
        if let Ok(text) = std::str::from_utf8(&b) {
            check(text);
        }
    }
}

#[test]
fn the_bases_are_valid() {
    for b in BASES {
        let cfg: SimConfig = serde_json::from_str(b).unwrap();
        Simulation::new(&cfg).unwrap();
    }
}

/// Regression (found by `fuzz_mutated_scenarios_are_refused_or_built`): a link delay
/// near 2^64 ns overflowed the route computation; it is now a config error.
#[test]
fn a_link_delay_beyond_a_day_is_refused() {
    let v: Value = serde_json::from_str(BASES[0]).unwrap();
    let mut all = Vec::new();
    paths(&v, &mut Vec::new(), &mut all);
    let mut hit = 0;
    for p in all {
        let mut w = v.clone();
        let n = node(&mut w, &p);
        if let Value::Object(m) = n {
            if m.contains_key("delay_ns") {
                m.insert("delay_ns".into(), json!(u64::MAX));
                let cfg: SimConfig = serde_json::from_value(w).unwrap();
                let e = Simulation::new(&cfg).err().expect("refused").to_string();
                assert!(e.contains("delay") && e.contains("at most 1 day"), "{e}");
                hit += 1;
            }
        }
    }
    assert!(hit >= 2);
}
