//! Packet captures of the bottleneck (`SimConfig::pcap` in the emulator): the real
//! packets, as they leave the bottleneck, go to one writer thread per file, so the
//! real-time threads never wait for the disk. The queue between them is bounded:
//! when the disk falls behind, packets are left out of the file and counted
//! (`overflow`), never buffered without limit.
//!
//! Timestamps are CLOCK_REALTIME, as tcpdump's: the kernel's handshake before the
//! run start is in the file too, and Wireshark learns window scaling and SACK from it.

use ccsim::config::PcapConfig;
use ccsim::pcap::PcapWriter;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Link names of the emulated dumbbell's bottleneck, in direction order (down, up).
pub const LINKS: [&str; 2] = ["bottleneck_down", "bottleneck_up"];
/// Packets waiting for the writer thread, per file (about 2 s at 10k packets/s).
const QUEUE: usize = 1 << 15;

/// One packet for a capture file: realtime stamp, length on the wire, first bytes.
pub struct Rec {
    pub t_ns: u64,
    pub orig_len: u32,
    pub head: Box<[u8]>,
}

/// The sending end a bottleneck direction holds.
#[derive(Clone)]
pub struct Tap {
    tx: SyncSender<Rec>,
    snaplen: usize,
    overflow: Arc<AtomicU64>,
}

impl Tap {
    /// Hands packet `buf`, departing at monotonic `mono_ns`, to the writer; counts it
    /// as overflow when the writer's queue is full.
    pub fn send(&self, mono_ns: u64, buf: &[u8]) {
        let rec = Rec {
            t_ns: crate::sys::realtime_from_mono(mono_ns),
            orig_len: buf.len() as u32,
            head: buf[..buf.len().min(self.snaplen)].into(),
        };
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = self.tx.try_send(rec) {
            self.overflow.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A capture file being written by its thread.
pub struct Capture {
    pub cfg: PcapConfig,
    overflow: Arc<AtomicU64>,
    thread: JoinHandle<ccsim::pcap::PcapStats>,
}

/// Checks the configured captures against the bottleneck's links; the error names
/// the capture and the links the emulator has.
pub fn check(cfg: &[PcapConfig]) -> Result<(), String> {
    for (i, c) in cfg.iter().enumerate() {
        for name in &c.links {
            if !LINKS.contains(&name.as_str()) {
                return Err(format!(
                    "pcap[{i}].links: the emulator captures the bottleneck only ({}), not {name:?}",
                    LINKS.join(", ")
                ));
            }
        }
    }
    Ok(())
}

/// Opens every file and starts its writer; returns the captures and, per bottleneck
/// direction, the tap its packets go to.
pub fn start(cfg: &[PcapConfig]) -> Result<(Vec<Capture>, [Option<Tap>; 2]), String> {
    let mut caps = Vec::new();
    let mut taps: [Option<Tap>; 2] = [None, None];
    for (i, c) in cfg.iter().enumerate() {
        let mut w = PcapWriter::create(Path::new(&c.path), c.snaplen, c.max_bytes)
            .map_err(|e| format!("pcap[{i}].path: cannot create {:?}: {e}", c.path))?;
        let (tx, rx): (SyncSender<Rec>, Receiver<Rec>) = sync_channel(QUEUE);
        let overflow = Arc::new(AtomicU64::new(0));
        let tap = Tap { tx, snaplen: c.snaplen as usize, overflow: overflow.clone() };
        for (d, name) in LINKS.iter().enumerate() {
            if c.links.iter().any(|l| l == name) {
                taps[d] = Some(tap.clone());
            }
        }
        drop(tap);
        let thread = std::thread::Builder::new()
            .name(format!("ccemu-pcap{i}"))
            .spawn(move || {
                // ends when both directions have dropped their taps
                for r in rx {
                    w.record(r.t_ns, r.orig_len, &r.head);
                }
                w.finish().clone()
            })
            .map_err(|e| format!("pcap writer thread: {e}"))?;
        caps.push(Capture { cfg: c.clone(), overflow, thread });
    }
    Ok((caps, taps))
}

/// Waits for every writer (call after the directions dropped their taps) and
/// returns each file's summary for `bottleneck.json`; times in seconds since `t0`
/// (monotonic run start).
pub fn finish(caps: Vec<Capture>, t0_mono: u64) -> Vec<serde_json::Value> {
    let t0 = crate::sys::realtime_from_mono(t0_mono) as f64;
    caps.into_iter()
        .map(|c| {
            let st = c.thread.join().unwrap_or_else(|_| ccsim::pcap::PcapStats {
                error: Some("pcap writer thread panicked".into()),
                ..Default::default()
            });
            serde_json::json!({
                "link": c.cfg.links.join("+"),
                "path": c.cfg.path,
                "packets": st.packets,
                "bytes": st.bytes,
                "skipped": st.skipped + c.overflow.load(Ordering::Relaxed),
                "overflow": c.overflow.load(Ordering::Relaxed),
                "limit_reached_s": st.limit_reached_ns.map(|t| (t as f64 - t0) * 1e-9),
                "error": st.error,
            })
        })
        .collect()
}
