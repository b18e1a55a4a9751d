//! The real-time bottleneck: one thread per direction reads packets from one TUN
//! device, runs them through a [`Pipe`] (the ccsim qdisc and loss code) and writes them
//! to the other TUN device at their scheduled departure time.
//!
//! Timing: the thread sleeps in `ppoll` on its input device until `spin_ns` before the
//! next scheduled event (timer slack 1 ns), then spins — polling the device without
//! blocking — until the event is due. Every departure records `actual - scheduled`
//! (ns), the timing error reported in the run's metadata.

use crate::packet::{self, Class, FlowMap, FlowSpec};
use crate::pipe::{Meta, Out, Pipe};
use crate::sys;
use ccsim::qdisc::Reason;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub const BUF_SIZE: usize = 2048;

/// One record of the queue table.
#[derive(Clone, Copy, Debug)]
pub struct QueueRec {
    pub t: u64,
    pub bytes: u64,
    pub link: u32,
    pub pkts: u32,
}

/// One record of the drops table (kind 0 = drop, 1 = mark).
#[derive(Clone, Copy, Debug)]
pub struct DropRec {
    pub t: u64,
    pub seq: u64,
    pub link: u32,
    pub flow: i32,
    pub kind: u8,
    pub reason: u8,
}

/// Message-timestamp trace: kind 0 = first transmission seen at the bottleneck's input
/// (bytes `[start, end)` of a TCP flow, or UDP message `start`), 1 = written to the
/// receiving side (arrival at the receiver host).
#[derive(Clone, Copy, Debug)]
pub struct TraceRec {
    pub t: u64,
    pub start: u64,
    pub end: u64,
    pub flow: u32,
    pub kind: u32,
}

#[derive(Default)]
pub struct Logs {
    pub queue: Vec<QueueRec>,
    pub drops: Vec<DropRec>,
    pub trace: Vec<TraceRec>,
    /// actual - scheduled departure, ns (capped at `MAX_ERRORS` entries).
    pub errors: Vec<i64>,
    pub pkts_read: u64,
    pub pkts_written: u64,
    pub pkts_unmapped: u64,
    pub write_errors: u64,
    pub max_pkt_bytes: u32,
    pub pkts_tx: u64,
    pub pkts_dropped: u64,
    pub pkts_marked: u64,
    /// The thread runs SCHED_FIFO (asked for with `--rt-prio` and granted).
    pub realtime: bool,
}

const MAX_ERRORS: usize = 50_000_000;

/// Everything one direction needs.
pub struct Direction {
    pub link: u32,
    pub monitor: bool,
    pub in_fd: RawFd,
    pub out_fd: RawFd,
    pub pipe: Pipe,
    pub flows: Vec<FlowSpec>,
    /// Access delay before the queue, by source address.
    pub pre: Box<dyn Fn(u32) -> u64 + Send>,
    /// Access delay after the link, by destination address.
    pub post: Box<dyn Fn(u32) -> u64 + Send>,
    pub spin_ns: u64,
    /// Run start (packets before it are forwarded but traces start at 0 there).
    pub t0: u64,
    /// Packet capture of this direction's departures, if asked for.
    pub tap: Option<crate::capture::Tap>,
}

struct Pool {
    bufs: Vec<Box<[u8; BUF_SIZE]>>,
    lens: Vec<u32>,
    cls: Vec<Class>,
    free: Vec<u32>,
}

impl Pool {
    fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        self.bufs.push(Box::new([0u8; BUF_SIZE]));
        self.lens.push(0);
        self.cls.push(Class { flow: -1, data_dir: false, seq: 0, end: 0, trace: false, tcp: false, has_data: false });
        (self.bufs.len() - 1) as u32
    }
}

pub fn run(mut d: Direction, stop: Arc<AtomicBool>) -> Logs {
    sys::set_timer_slack_ns(1);
    let mut logs = Logs::default();
    let mut map = FlowMap::new(&d.flows);
    let mut pool = Pool { bufs: Vec::new(), lens: Vec::new(), cls: Vec::new(), free: Vec::new() };
    let mut out: Vec<Out> = Vec::with_capacity(64);
    let mut spare: Option<u32> = None;
    while !stop.load(Ordering::Relaxed) {
        let now = sys::mono_ns();
        d.pipe.advance(now, &mut out);
        handle(&mut d, &mut pool, &mut logs, &mut out);
        // Drain the input device.
        for _ in 0..256 {
            let idx = spare.take().unwrap_or_else(|| pool.alloc());
            let buf = &mut pool.bufs[idx as usize];
            let n = unsafe { libc::read(d.in_fd, buf.as_mut_ptr() as *mut libc::c_void, BUF_SIZE) };
            if n <= 0 {
                spare = Some(idx);
                break;
            }
            let t = sys::mono_ns();
            logs.pkts_read += 1;
            let n = n as usize;
            logs.max_pkt_bytes = logs.max_pkt_bytes.max(n as u32);
            d.pipe.advance(t, &mut out);
            handle(&mut d, &mut pool, &mut logs, &mut out);
            let buf = &pool.bufs[idx as usize];
            let Some(p) = packet::parse(&buf[..n]) else {
                // not IPv4 (e.g. an IPv6 router solicitation): not forwarded
                logs.pkts_unmapped += 1;
                spare = Some(idx);
                continue;
            };
            let c = map.classify(&p);
            if c.flow < 0 {
                logs.pkts_unmapped += 1;
            }
            if c.trace && c.data_dir && c.has_data && t >= d.t0 {
                let first = if c.tcp { map.first_tx(&c) } else { Some((c.seq, c.end)) };
                if let Some((s, e)) = first {
                    logs.trace.push(TraceRec { t, start: s, end: e, flow: c.flow as u32, kind: 0 });
                }
            }
            pool.lens[idx as usize] = n as u32;
            pool.cls[idx as usize] = c;
            let meta = Meta {
                idx,
                bytes: p.ip_len.max(n as u32),
                flow_hash: packet::flow_hash(&p),
                ect: p.ect,
                pre_ns: (d.pre)(p.src),
                post_ns: (d.post)(p.dst),
            };
            d.pipe.arrive(meta, t, &mut out);
            handle(&mut d, &mut pool, &mut logs, &mut out);
        }
        // Wait for the next event: sleep in ppoll, spin the last `spin_ns`.
        let next = d.pipe.next_event();
        let now = sys::mono_ns();
        if next > now.saturating_add(d.spin_ns) {
            let wait = (next - now - d.spin_ns).min(50_000_000);
            sys::poll_readable(d.in_fd, wait);
        } else {
            std::hint::spin_loop();
        }
    }
    logs.pkts_tx = d.pipe.n_tx;
    logs.pkts_dropped = d.pipe.n_drop;
    logs.pkts_marked = d.pipe.n_mark;
    logs
}

fn handle(d: &mut Direction, pool: &mut Pool, logs: &mut Logs, out: &mut Vec<Out>) {
    for o in out.drain(..) {
        match o {
            Out::Deliver { idx, at } => {
                let n = pool.lens[idx as usize] as usize;
                let buf = &pool.bufs[idx as usize];
                // The departure is the moment the packet is handed to the receiving
                // side's kernel (the write itself runs that kernel's receive path).
                let t = sys::mono_ns();
                let r = unsafe { libc::write(d.out_fd, buf.as_ptr() as *const libc::c_void, n) };
                if r < 0 {
                    logs.write_errors += 1;
                } else {
                    logs.pkts_written += 1;
                }
                if let Some(tap) = &d.tap {
                    tap.send(t, &buf[..n]);
                }
                if logs.errors.len() < MAX_ERRORS {
                    logs.errors.push(t as i64 - at as i64);
                }
                let c = pool.cls[idx as usize];
                if c.trace && c.data_dir && c.has_data && t >= d.t0 {
                    logs.trace.push(TraceRec { t, start: c.seq, end: c.end, flow: c.flow as u32, kind: 1 });
                }
                pool.free.push(idx);
            }
            Out::Drop { idx, t, reason } => {
                let c = pool.cls[idx as usize];
                logs.drops.push(DropRec { t, seq: c.seq, link: d.link, flow: c.flow, kind: 0, reason: reason.code() });
                pool.free.push(idx);
            }
            Out::Mark { idx, t, reason } => {
                let c = pool.cls[idx as usize];
                let n = pool.lens[idx as usize] as usize;
                packet::set_ce(&mut pool.bufs[idx as usize][..n]);
                logs.drops.push(DropRec { t, seq: c.seq, link: d.link, flow: c.flow, kind: 1, reason: reason.code() });
            }
            Out::Sample { t, backlog_bytes, backlog_pkts } => {
                if d.monitor {
                    logs.queue.push(QueueRec { t, bytes: backlog_bytes, link: d.link, pkts: backlog_pkts });
                }
            }
        }
    }
}

/// Reason names in code order (the `reason` column's categories).
pub fn reason_names() -> Vec<&'static str> {
    Reason::ALL.iter().map(|r| r.as_str()).collect()
}
