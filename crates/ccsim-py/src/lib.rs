//! Python bindings: the `ccbench._core` module.
//!
//! The scenario arrives as one JSON document (built by `Scenario.to_sim_config`), the
//! run happens entirely in Rust, and the traces come back as numpy arrays (one per
//! column, no per-row Python objects). Times become float seconds, and "never
//! happened" becomes NaN.

use ccsim::packet::NEVER;
use ccsim::qdisc::Reason;
use ccsim::{ConfigError, RunStats, Simulation};
use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::time::Instant;

create_exception!(_core, SimConfigError, PyValueError, "A scenario value the simulator cannot accept.");

fn config_err(py: Python<'_>, e: ConfigError) -> PyErr {
    let err = SimConfigError::new_err(e.to_string());
    let value = err.value(py);
    let _ = value.setattr("field", e.field.clone());
    let _ = value.setattr("msg", e.msg.clone());
    err
}

/// Nanoseconds to float seconds, NEVER to NaN; converts in place (same-sized
/// elements: `collect` reuses the allocation), so a column is never held twice.
fn secs(v: Vec<u64>) -> Vec<f64> {
    v.into_iter().map(|t| if t == NEVER { f64::NAN } else { t as f64 * 1e-9 }).collect()
}

/// Hands the heap pages freed by the dropped simulation back to the system.
/// glibc's `free` keeps them in the process (only the top of the main heap shrinks
/// on its own), so they would stay in RSS under everything Python allocates
/// next: `malloc_trim` releases the free pages inside the heap too (madvise
/// DONTNEED, glibc >= 2.8). Other allocators return memory by their own rules.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own free lists; no pointer is passed.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn secs1(t: u64) -> f64 {
    if t == NEVER {
        f64::NAN
    } else {
        t as f64 * 1e-9
    }
}

/// Builds the simulation (all validation happens here) and runs it, calling
/// `progress(fraction)` now and then; Ctrl-C stops the run and raises. With a
/// `sink`, the `state` and `queue` rows are handed to `sink(table, columns)` in
/// chunks of at least `chunk_rows` during the run (the last rows stay in the
/// traces); the time the sink takes is not counted in the run's wall time.
fn build_and_run(
    py: Python<'_>,
    config_json: &str,
    progress: Option<&Bound<'_, PyAny>>,
    sink: Option<&Bound<'_, PyAny>>,
    chunk_rows: usize,
) -> PyResult<(Simulation, RunStats, f64)> {
    let cfg: ccsim::SimConfig = serde_json::from_str(config_json)
        .map_err(|e| config_err(py, ConfigError::new("scenario", format!("invalid simulator config: {e}"))))?;
    let mut sim = Simulation::new(&cfg).map_err(|e| config_err(py, e))?;
    drop(cfg); // the parsed config is not needed during the run
    let mut interrupted: Option<PyErr> = None;
    let start = Instant::now();
    let mut sink_s = 0.0;
    // Names once, for every chunk: the tables' categories.
    let names = match sink {
        Some(_) => Some((sim.flow_names().into_pyobject(py)?, sim.link_names().into_pyobject(py)?)),
        None => None,
    };
    let stats = sim.run_streaming(&mut |traces, frac| {
        if let Err(e) = py.check_signals() {
            interrupted = Some(e);
            return false;
        }
        if let (Some(sink), Some((flows, links))) = (sink, &names) {
            let t = Instant::now();
            let mut pass = || -> PyResult<()> {
                if traces.state.flow.len() >= chunk_rows.max(1) {
                    sink.call1(("state", state_dict(py, &mut traces.state)?, flows, links))?;
                }
                if traces.queue.link.len() >= chunk_rows.max(1) {
                    sink.call1(("queue", queue_dict(py, &mut traces.queue)?, flows, links))?;
                }
                Ok(())
            };
            if let Err(e) = pass() {
                interrupted = Some(e);
                return false;
            }
            sink_s += t.elapsed().as_secs_f64();
        }
        if let Some(cb) = progress {
            if let Err(e) = cb.call1((frac,)) {
                interrupted = Some(e);
                return false;
            }
        }
        true
    });
    let wall = start.elapsed().as_secs_f64() - sink_s;
    if let Some(e) = interrupted {
        if e.is_instance_of::<PyKeyboardInterrupt>(py) {
            return Err(e);
        }
        return Err(e);
    }
    Ok((sim, stats, wall))
}

fn stats_dict<'py>(py: Python<'py>, stats: &RunStats, wall: f64) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("events", stats.events)?;
    d.set_item("wall_s", wall)?;
    d.set_item("sim_end_s", stats.sim_end_ns as f64 * 1e-9)?;
    d.set_item("peak_packets_alive", stats.peak_packets_alive)?;
    d.set_item("link_tx_pkts", stats.link_tx_pkts)?;
    d.set_item("bottleneck_tx_pkts", stats.monitored_tx_pkts)?;
    d.set_item("bottleneck_drops", stats.monitored_drops)?;
    Ok(d)
}

/// The `state` trace's columns as numpy arrays; the trace is left empty.
fn state_dict<'py>(py: Python<'py>, st: &mut ccsim::trace::StateTrace) -> PyResult<Bound<'py, PyDict>> {
    let s = PyDict::new(py);
    s.set_item("flow", std::mem::take(&mut st.flow).into_pyarray(py))?;
    s.set_item("conn", std::mem::take(&mut st.conn).into_pyarray(py))?;
    s.set_item("t", secs(std::mem::take(&mut st.t)).into_pyarray(py))?;
    s.set_item("cwnd_pkts", std::mem::take(&mut st.cwnd_pkts).into_pyarray(py))?;
    s.set_item("ssthresh_pkts", std::mem::take(&mut st.ssthresh_pkts).into_pyarray(py))?;
    s.set_item("srtt_s", secs(std::mem::take(&mut st.srtt_ns)).into_pyarray(py))?;
    s.set_item("rttvar_s", secs(std::mem::take(&mut st.rttvar_ns)).into_pyarray(py))?;
    s.set_item("rto_s", secs(std::mem::take(&mut st.rto_ns)).into_pyarray(py))?;
    s.set_item("inflight_pkts", std::mem::take(&mut st.inflight_pkts).into_pyarray(py))?;
    s.set_item("sacked_pkts", std::mem::take(&mut st.sacked_pkts).into_pyarray(py))?;
    s.set_item("lost_pkts", std::mem::take(&mut st.lost_pkts).into_pyarray(py))?;
    s.set_item("retrans_pkts", std::mem::take(&mut st.retrans_pkts).into_pyarray(py))?;
    s.set_item("ca_state", std::mem::take(&mut st.ca_state).into_pyarray(py))?;
    s.set_item("pacing_rate_bps", std::mem::take(&mut st.pacing_rate_bps).into_pyarray(py))?;
    s.set_item("delivered_pkts", std::mem::take(&mut st.delivered_pkts).into_pyarray(py))?;
    Ok(s)
}

/// The `queue` trace's columns as numpy arrays; the trace is left empty.
fn queue_dict<'py>(py: Python<'py>, q: &mut ccsim::trace::QueueTrace) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("link", std::mem::take(&mut q.link).into_pyarray(py))?;
    d.set_item("t", secs(std::mem::take(&mut q.t)).into_pyarray(py))?;
    d.set_item("backlog_bytes", std::mem::take(&mut q.backlog_bytes).into_pyarray(py))?;
    d.set_item("backlog_pkts", std::mem::take(&mut q.backlog_pkts).into_pyarray(py))?;
    Ok(d)
}

/// simulate(config_json, progress=None, sink=None, chunk_rows=1000000) -> dict of tables (dicts of numpy arrays),
/// names and run statistics.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None, sink=None, chunk_rows=1_000_000))]
fn simulate<'py>(
    py: Python<'py>,
    config_json: &str,
    progress: Option<Bound<'py, PyAny>>,
    sink: Option<Bound<'py, PyAny>>,
    chunk_rows: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let (sim, stats, wall) = build_and_run(py, config_json, progress.as_ref(), sink.as_ref(), chunk_rows)?;
    // The engine's state goes first, and its pages back to the system, before any
    // Python object is made: what Python allocates afterwards (numpy, then pandas
    // and the tables) does not stack on top of the dead simulation.
    let done = sim.finish();
    release_freed_memory();
    let out = PyDict::new(py);
    // The traces move into numpy: no column is copied.
    let mut tr = done.traces;

    let p = PyDict::new(py);
    p.set_item("flow", std::mem::take(&mut tr.packets.flow).into_pyarray(py))?;
    p.set_item("msg", std::mem::take(&mut tr.packets.msg).into_pyarray(py))?;
    p.set_item("bytes", std::mem::take(&mut tr.packets.bytes).into_pyarray(py))?;
    p.set_item("t_write", secs(std::mem::take(&mut tr.packets.t_write)).into_pyarray(py))?;
    p.set_item("t_first_tx", secs(std::mem::take(&mut tr.packets.t_first_tx)).into_pyarray(py))?;
    p.set_item("t_arrive", secs(std::mem::take(&mut tr.packets.t_arrive)).into_pyarray(py))?;
    p.set_item("t_deliver", secs(std::mem::take(&mut tr.packets.t_deliver)).into_pyarray(py))?;
    out.set_item("packets", p)?;

    out.set_item("queue", queue_dict(py, &mut tr.queue)?)?;

    let d = PyDict::new(py);
    d.set_item("link", std::mem::take(&mut tr.drops.link).into_pyarray(py))?;
    d.set_item("t", secs(std::mem::take(&mut tr.drops.t)).into_pyarray(py))?;
    d.set_item("flow", std::mem::take(&mut tr.drops.flow).into_pyarray(py))?;
    d.set_item("seq", std::mem::take(&mut tr.drops.seq).into_pyarray(py))?;
    d.set_item("kind", std::mem::take(&mut tr.drops.kind).into_pyarray(py))?;
    d.set_item("reason", std::mem::take(&mut tr.drops.reason).into_pyarray(py))?;
    out.set_item("drops", d)?;

    out.set_item("state", state_dict(py, &mut tr.state)?)?;

    let lg = &mut tr.link_log;
    let l = PyDict::new(py);
    l.set_item("link", std::mem::take(&mut lg.link).into_pyarray(py))?;
    l.set_item("t", secs(std::mem::take(&mut lg.t)).into_pyarray(py))?;
    l.set_item("flow", std::mem::take(&mut lg.flow).into_pyarray(py))?;
    l.set_item("bytes", std::mem::take(&mut lg.bytes).into_pyarray(py))?;
    l.set_item("data", std::mem::take(&mut lg.data).into_pyarray(py))?;
    l.set_item("seq", std::mem::take(&mut lg.seq).into_pyarray(py))?;
    out.set_item("link_log", l)?;

    let summaries = done.flows;
    let f = PyDict::new(py);
    macro_rules! col {
        ($name:literal, $e:expr) => {
            f.set_item($name, summaries.iter().map($e).collect::<Vec<_>>().into_pyarray(py))?;
        };
    }
    f.set_item("flow", summaries.iter().map(|s| s.name.clone()).collect::<Vec<_>>())?;
    f.set_item("transport", summaries.iter().map(|s| s.transport).collect::<Vec<_>>())?;
    f.set_item("cc", summaries.iter().map(|s| s.cc.clone()).collect::<Vec<_>>())?;
    col!("start_s", |s| s.start_ns as f64 * 1e-9);
    col!("end_s", |s| s.end_ns as f64 * 1e-9);
    col!("msgs_sent", |s| s.msgs_sent);
    col!("msgs_delivered", |s| s.msgs_delivered);
    col!("bytes_sent", |s| s.bytes_sent);
    col!("bytes_delivered", |s| s.bytes_delivered);
    col!("pkts_sent", |s| s.pkts_sent);
    col!("pkts_dropped", |s| s.pkts_dropped);
    col!("retrans_bytes", |s| s.retrans_bytes);
    col!("loss_events", |s| s.loss_events);
    col!("timeouts", |s| s.timeouts);
    col!("fast_recoveries", |s| s.fast_recoveries);
    col!("rtt_p50_s", |s| secs1(s.rtt_p50_ns));
    col!("rtt_p95_s", |s| secs1(s.rtt_p95_ns));
    col!("completion_s", |s| secs1(s.completion_ns));
    out.set_item("flows", f)?;

    let caps = pyo3::types::PyList::empty(py);
    for (links, path, st) in done.captures {
        let c = PyDict::new(py);
        c.set_item("link", links)?;
        c.set_item("path", path)?;
        c.set_item("packets", st.packets)?;
        c.set_item("bytes", st.bytes)?;
        c.set_item("skipped", st.skipped)?;
        c.set_item("limit_reached_s", st.limit_reached_ns.map(|t| t as f64 * 1e-9))?;
        c.set_item("error", st.error)?;
        caps.append(c)?;
    }
    out.set_item("pcap", caps)?;

    out.set_item("link_names", done.link_names)?;
    out.set_item("flow_names", done.flow_names)?;
    out.set_item("reasons", Reason::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>())?;
    out.set_item("stats", stats_dict(py, &stats, wall)?)?;
    Ok(out)
}

/// run_stats(config_json) -> dict: runs without building any output table (for
/// benchmarks: numpy is not even imported).
#[pyfunction]
fn run_stats<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let (sim, stats, wall) = build_and_run(py, config_json, None, None, 0)?;
    let d = stats_dict(py, &stats, wall)?;
    d.set_item("packets_rows", sim.traces.packets.len())?;
    Ok(d)
}

fn parse(py: Python<'_>, config_json: &str) -> PyResult<ccsim::SimConfig> {
    serde_json::from_str(config_json)
        .map_err(|e| config_err(py, ConfigError::new("scenario", format!("invalid simulator config: {e}"))))
}

/// The pre-flight estimate as a dict (`ccsim::estimate::Estimate`), with the memory
/// available now (`available_bytes`, NaN where unknown).
fn estimate_dict<'py>(py: Python<'py>, cfg: &ccsim::SimConfig) -> PyResult<Bound<'py, PyDict>> {
    let e = ccsim::estimate::Estimate::of(cfg);
    let d = PyDict::new(py);
    d.set_item("nodes", e.nodes)?;
    d.set_item("links", e.links)?;
    d.set_item("flows", e.flows)?;
    d.set_item("state_rows", e.state_rows)?;
    d.set_item("packet_rows", e.packet_rows)?;
    d.set_item("queue_rows", e.queue_rows)?;
    d.set_item("setup_bytes", e.setup_bytes)?;
    d.set_item("trace_bytes", e.trace_bytes)?;
    d.set_item("total_bytes", e.total_bytes)?;
    d.set_item("packets", e.packets)?;
    d.set_item("events", e.events)?;
    d.set_item("available_bytes", ccsim::estimate::available_memory().unwrap_or(f64::NAN))?;
    d.set_item("summary", e.summary())?;
    Ok(d)
}

/// estimate(config_json) -> dict: the pre-flight estimate of memory and events,
/// from the config alone (nothing is built).
#[pyfunction]
fn estimate<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let cfg = parse(py, config_json)?;
    estimate_dict(py, &cfg)
}

/// validate(config_json) -> dict: refuses a run that would not fit in memory (from
/// the estimate, before anything is allocated), then builds the simulation without
/// running it; returns the estimate.
#[pyfunction]
fn validate<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let cfg = parse(py, config_json)?;
    Simulation::new(&cfg).map_err(|e| config_err(py, e))?;
    estimate_dict(py, &cfg)
}

/// cc_list() -> list of {name, summary, source, params: [{name, default, doc}]}: the
/// congestion-control registry, for `ccbench cc list`.
#[pyfunction]
fn cc_list(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    use ccsim::tcp::cc::{registry, ParamValue};
    registry()
        .iter()
        .map(|spec| {
            let d = PyDict::new(py);
            d.set_item("name", spec.name)?;
            d.set_item("summary", spec.summary)?;
            d.set_item("source", spec.source)?;
            let params = spec
                .params
                .iter()
                .map(|p| {
                    let pd = PyDict::new(py);
                    pd.set_item("name", p.name)?;
                    match p.default {
                        ParamValue::Int(v) => pd.set_item("default", v)?,
                        ParamValue::Float(v) => pd.set_item("default", v)?,
                        ParamValue::Bool(v) => pd.set_item("default", v)?,
                    }
                    pd.set_item("doc", p.doc)?;
                    Ok(pd)
                })
                .collect::<PyResult<Vec<_>>>()?;
            d.set_item("params", params)?;
            Ok(d)
        })
        .collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SimConfigError", m.py().get_type::<SimConfigError>())?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(run_stats, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(cc_list, m)?)?;
    Ok(())
}
