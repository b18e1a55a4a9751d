//! TCP flows inside the simulation: the glue between the sans-IO sender and receiver
//! and the event-driven world, plus the per-message timestamps of the Lübben study.
//!
//! Every application write is a message `[start, end)` in the byte stream. It is
//! stamped with
//! - `t_write`: when the application wrote it (also when the send buffer was full and
//!   the write blocked: the blocked bytes wait here, in order),
//! - `t_first_tx`: when its first byte first left the sender,
//! - `t_arrive`: when its last byte first arrived at the receiving host,
//! - `t_deliver`: when its last byte was delivered in order to the application.

use super::{Simulation, Transport};
use crate::config::Scheduler;
use crate::qdisc::Qdisc;
use crate::event::Event;
use crate::ids::FlowId;
use crate::packet::{Packet, NEVER};
use crate::tcp::{EcnMode, ReceiverConfig, Segment, TcpConfig, TcpReceiver, TcpSender};
use crate::time::{Nanos, NS_PER_MS, NS_PER_US};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
struct Msg {
    row: u32,
    start: u64,
    end: u64,
}

pub(super) struct TcpFlow {
    pub snd: TcpSender,
    pub rcv: TcpReceiver,
    pub header_bytes: u32,
    pub cc_name: String,
    /// Messages written and not yet delivered, in stream order.
    msgs: VecDeque<Msg>,
    /// Absolute index of `msgs[0]`, and of the first message not yet transmitted.
    msgs_base: u64,
    tx_next: u64,
    /// Bytes the application has written so far (accepted or blocked).
    app_seq: u64,
    /// Bytes written but not yet accepted by the send buffer.
    blocked: u64,
    /// Greedy application: `Some(remaining)` (None inside = unlimited).
    bulk: Option<Option<u64>>,
    bulk_total: Option<u64>,
    /// Time of the earliest pending `TransportTimer` event (NEVER = none).
    timer_at: Nanos,
    pub completion_ns: Nanos,
    pub data_pkts_sent: u64,
    /// Last (cwnd, ca_state) recorded, for sampling on change.
    last_sample: (u32, u8),
    /// The SYN exchange still to be measured on the path (`handshake_rtt`): `Some(true)`
    /// with the backlog it would meet, `Some(false)` on the idle path
    /// (`handshake_queues`); `None` once taken, or when there is none to take.
    pending_handshake: Option<bool>,
}

/// A TCP flow's connections (one, or N parallel ones) and how messages are spread
/// over them.
pub(super) struct TcpGroup {
    pub conns: Vec<TcpFlow>,
    pub scheduler: Scheduler,
    /// Split-N: pieces per message.
    pub split: u32,
    rr_next: usize,
}

impl TcpGroup {
    pub fn new(conns: Vec<TcpFlow>, scheduler: Scheduler, split: u32) -> TcpGroup {
        TcpGroup { conns, scheduler, split: split.max(1), rr_next: 0 }
    }

    /// The connection the next message goes to.
    fn pick(&mut self) -> usize {
        let n = self.conns.len();
        match self.scheduler {
            Scheduler::RoundRobin => {
                let k = self.rr_next;
                self.rr_next = (k + 1) % n;
                k
            }
            // Brosh et al.'s delay-aware scheduler: least send backlog among the
            // connections not in RTO recovery (all of them if every one is). Ties go
            // round-robin from the last pick, so idle connections share the load (and
            // keep their windows open) instead of the first one taking every message.
            Scheduler::LeastBacklog => {
                let start = self.rr_next;
                let key = |k: usize, c: &TcpFlow| (c.snd.backlog_bytes() + c.blocked, (k + n - start) % n);
                let best = self
                    .conns
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !c.snd.in_rto())
                    .min_by_key(|&(k, c)| key(k, c))
                    .or_else(|| self.conns.iter().enumerate().min_by_key(|&(k, c)| key(k, c)));
                let k = best.map_or(0, |(k, _)| k);
                self.rr_next = (k + 1) % n;
                k
            }
        }
    }
}

impl TcpFlow {
    pub fn new(
        cfg: &TcpConfig,
        now: Nanos,
        field: &str,
        bulk: Option<Option<u64>>,
    ) -> Result<TcpFlow, crate::ConfigError> {
        let snd = TcpSender::from_config(cfg, now, field)?;
        let ecn_mode = match (cfg.ecn, cfg.cc.name.as_str()) {
            (false, _) => EcnMode::Off,
            (true, name) if crate::tcp::cc::accurate_ecn(name) => EcnMode::Dctcp,
            (true, _) => EcnMode::Classic,
        };
        let rcfg = ReceiverConfig {
            mss: cfg.mss,
            sack: cfg.sack,
            dsack: cfg.dsack,
            delayed_ack: cfg.delayed_ack,
            quickack_segments: cfg.quickack_segments,
            delack_min_ns: cfg.delack_min_ms * NS_PER_MS,
            delack_max_ns: cfg.delack_max_ms * NS_PER_MS,
            rcvbuf_bytes: cfg.rcvbuf_bytes,
            rcvbuf_initial_bytes: cfg.rcvbuf_initial_bytes,
            moderate_rcvbuf: cfg.moderate_rcvbuf,
            scaling_ratio: cfg.rcv_scaling_ratio,
            ecn_mode,
            // the passive side's sample of the same handshake (SYN-ACK to ACK)
            srtt_ns: (cfg.syn_rtt_us > 0).then_some(cfg.syn_rtt_us * 1000),
            ..ReceiverConfig::default()
        };
        rcfg.validate().map_err(|e| crate::ConfigError::new(format!("{field}.{}", e.field), e.msg))?;
        Ok(TcpFlow {
            snd,
            rcv: TcpReceiver::new(rcfg),
            header_bytes: cfg.header_bytes,
            cc_name: cfg.cc.name.clone(),
            msgs: VecDeque::new(),
            msgs_base: 0,
            tx_next: 0,
            app_seq: 0,
            blocked: 0,
            bulk_total: bulk.flatten(),
            bulk,
            timer_at: NEVER,
            completion_ns: NEVER,
            data_pkts_sent: 0,
            last_sample: (0, u8::MAX),
            pending_handshake: (cfg.handshake_rtt && cfg.syn_rtt_us == 0).then_some(cfg.handshake_queues),
        })
    }

    /// Hands blocked application bytes (and, for a bulk sender, new ones) to the
    /// send buffer as far as it has room.
    fn fill(&mut self, now: Nanos) {
        if self.blocked > 0 {
            let took = self.snd.write(now, self.blocked);
            self.blocked -= took;
        }
        if self.blocked == 0 {
            if let Some(remaining) = self.bulk.as_mut() {
                let want = remaining.unwrap_or(u64::MAX / 4);
                if want > 0 {
                    let took = self.snd.write(now, want);
                    if let Some(r) = remaining.as_mut() {
                        *r -= took;
                    }
                }
            }
        }
    }
}

/// Connection `k` of TCP flow `f`, borrowing only the flow arena (so the traces can
/// be borrowed alongside).
fn tcp_of(flows: &mut [super::Flow], f: FlowId, k: usize) -> &mut TcpFlow {
    match &mut flows[f.idx()].transport {
        Transport::Tcp(g) => &mut g.conns[k],
        Transport::Udp { .. } => unreachable!("not a TCP flow"),
    }
}

fn group_of(flows: &mut [super::Flow], f: FlowId) -> &mut TcpGroup {
    match &mut flows[f.idx()].transport {
        Transport::Tcp(g) => g,
        Transport::Udp { .. } => unreachable!("not a TCP flow"),
    }
}

impl Simulation {
    fn tcp(&mut self, f: FlowId, k: usize) -> &mut TcpFlow {
        tcp_of(&mut self.flows, f, k)
    }

    /// The application writes a message of `bytes` (or, for bulk, starts writing).
    /// With split-N the message goes as N writes back to back; with parallel
    /// connections the scheduler picks the connection for the whole message.
    pub(super) fn tcp_app_write(&mut self, f: FlowId, msg: u64, bytes: u32) {
        let now = self.now;
        if bytes == 0 {
            for k in 0..group_of(&mut self.flows, f).conns.len() {
                self.tcp(f, k).fill(now);
                self.tcp_pump(f, k);
            }
            return;
        }
        let row = self.traces.packets.push(f.0, msg, bytes, now);
        let g = group_of(&mut self.flows, f);
        let k = g.pick();
        let split = g.split.min(bytes);
        let t = &mut g.conns[k];
        t.msgs.push_back(Msg { row, start: t.app_seq, end: t.app_seq + bytes as u64 });
        t.app_seq += bytes as u64;
        for i in 0..split {
            // Pieces as equal as integers allow; each is its own write (TCP_NODELAY
            // then sends each as its own segment when the window allows).
            let piece = bytes / split + u32::from(i < bytes % split);
            let t = self.tcp(f, k);
            t.blocked += piece as u64;
            t.fill(now);
            self.tcp_pump(f, k);
        }
    }

    /// Sends every segment the sender allows now, then re-arms the flow's timer.
    fn tcp_pump(&mut self, f: FlowId, k: usize) {
        let now = self.now;
        let (src, dst) = (self.flows[f.idx()].src, self.flows[f.idx()].dst);
        if let Some(queues) = tcp_of(&mut self.flows, f, k).pending_handshake.take() {
            let rtt = self.syn_rtt_ns(f, queues);
            let t = tcp_of(&mut self.flows, f, k);
            t.snd.handshake_sample(now, rtt.div_ceil(NS_PER_US));
            t.rcv.set_handshake_srtt(rtt);
        }
        loop {
            let t = tcp_of(&mut self.flows, f, k);
            let Some(seg) = t.snd.poll_transmit(now) else { break };
            let ect = t.snd.ect(&seg);
            let bytes = seg.wire_bytes(t.header_bytes);
            if seg.len > 0 {
                t.data_pkts_sent += 1;
            }
            if !seg.retrans && seg.len > 0 {
                // Stamp t_first_tx of every message whose first byte this segment carries.
                let end = seg.end_seq();
                while t.tx_next < t.msgs_base + t.msgs.len() as u64 {
                    let m = t.msgs[(t.tx_next - t.msgs_base) as usize];
                    if m.start >= end {
                        break;
                    }
                    self.traces.packets.t_first_tx[m.row as usize] = now;
                    t.tx_next += 1;
                }
            }
            let pkt =
                Packet { flow: f, conn: k as u8, src, dst, bytes, ect, to_receiver: true, seg, ..Default::default() };
            let pid = self.pool.alloc(pkt);
            self.flows[f.idx()].pkts_sent += 1;
            self.arrive(src, pid);
        }
        self.tcp_rearm(f, k);
    }

    /// The RTT a SYN and its SYN-ACK would measure on flow `f`'s path now: per link,
    /// propagation, the serialisation of 60 bytes and, with `queues`, the bytes queued
    /// ahead (the packet in service counted whole). A link with a random delay counts
    /// its configured (mean) delay, and a varying rate its configured part: a model's
    /// draw is not taken, as it would move the run's random streams.
    fn syn_rtt_ns(&self, f: FlowId, queues: bool) -> Nanos {
        const SYN_BYTES: u64 = 60;
        let fl = &self.flows[f.idx()];
        let mut total: Nanos = 0;
        for (a, b) in [(fl.src, fl.dst), (fl.dst, fl.src)] {
            let Some(path) = self.net.path_hashed(a, b, fl.hash) else { continue };
            for l in path {
                let link = &self.links[l.idx()];
                if link.delay_ns != crate::link::DELAY_VARIES {
                    total += link.delay_ns;
                } else if let Some(d) = link.var.as_ref().and_then(|v| v.delay.as_ref()) {
                    // a jittered link's delay is its configured mean (it used to count 0,
                    // which halved a jittered dumbbell's handshake sample)
                    total += d.mean_ns();
                }
                if link.rate_bps > 0 {
                    let queued = if queues {
                        link.qdisc.backlog_bytes() + link.in_service.map_or(0, |p| self.pool.get(p).bytes as u64)
                    } else {
                        0
                    };
                    total += ((SYN_BYTES + queued) as u128 * 8_000_000_000 / link.rate_bps as u128) as Nanos;
                }
            }
        }
        total.max(1)
    }

    /// Sends the ACKs the receiver has ready.
    fn tcp_send_acks(&mut self, f: FlowId, k: usize) {
        let now = self.now;
        let (src, dst) = (self.flows[f.idx()].src, self.flows[f.idx()].dst);
        loop {
            let t = self.tcp(f, k);
            let Some(ack) = t.rcv.poll_ack(now) else { break };
            let bytes = ack.wire_bytes(t.header_bytes);
            let pkt = Packet {
                flow: f,
                conn: k as u8,
                src: dst,
                dst: src,
                bytes,
                to_receiver: false,
                seg: ack,
                ..Default::default()
            };
            let pid = self.pool.alloc(pkt);
            self.arrive(dst, pid);
        }
    }

    fn tcp_rearm(&mut self, f: FlowId, k: usize) {
        let t = self.tcp(f, k);
        let next = match (t.snd.next_timer(), t.rcv.next_timer()) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(NEVER),
        };
        if next < t.timer_at {
            let superseded = t.timer_at != NEVER;
            t.timer_at = next;
            if superseded {
                self.events.mark_superseded();
            }
            let at = next.max(self.now);
            self.events.schedule(at, Event::TransportTimer(f, k as u32));
        }
    }

    /// Drops transport-timer entries later than their connection's armed time: each
    /// was superseded by an earlier one and would only re-run the timer handler with
    /// nothing due (the connection re-arms at its earliest deadline whenever its timer
    /// fires). The live entry sits at the armed time, or at `now` if that time had
    /// passed when it was scheduled.
    pub(super) fn purge_superseded_timers(&mut self) {
        let (flows, now) = (&self.flows, self.now);
        self.events.purge(|t, ev| match *ev {
            Event::TransportTimer(f, k) => match &flows[f.idx()].transport {
                Transport::Tcp(g) => t <= g.conns[k as usize].timer_at.max(now),
                Transport::Udp { .. } => true,
            },
            _ => true,
        });
    }

    pub(super) fn tcp_timer(&mut self, f: FlowId, k: usize) {
        let now = self.now;
        let t = self.tcp(f, k);
        if t.timer_at <= now {
            t.timer_at = NEVER;
        }
        let snd_due = t.snd.next_timer().is_some_and(|d| d <= now);
        let rcv_due = t.rcv.next_timer().is_some_and(|d| d <= now);
        if snd_due {
            t.snd.on_timer(now);
        }
        if rcv_due {
            t.rcv.on_timer(now);
            self.tcp_send_acks(f, k);
        }
        if snd_due {
            self.tcp(f, k).fill(now);
            self.tcp_pump(f, k);
            self.tcp_sample_on_change(f, k);
        } else {
            // Only the receiver's timer (a compressed SACK, a delayed ACK), or an entry
            // superseded by an earlier one: the sender's state did not change since
            // its last ACK or send, each of which ran the pump, so it has nothing new
            // to send (a third of a lossy BBR run's events are such timers).
            self.tcp_rearm(f, k);
        }
    }

    /// A TCP packet reached its destination host.
    pub(super) fn tcp_deliver(&mut self, f: FlowId, p: &Packet) {
        let now = self.now;
        let k = p.conn as usize;
        if p.to_receiver {
            let seg: Segment = p.seg;
            let t = tcp_of(&mut self.flows, f, k);
            let arrival = t.rcv.on_segment(now, &seg, p.ce);
            // t_arrive: first arrival of each message's last byte.
            if seg.len > 0 {
                let first = t.msgs.partition_point(|m| m.end <= seg.seq);
                for i in first..t.msgs.len() {
                    let m = t.msgs[i];
                    if m.end > seg.end_seq() {
                        break;
                    }
                    let col = &mut self.traces.packets.t_arrive[m.row as usize];
                    if *col == NEVER {
                        *col = now;
                    }
                }
            }
            let t = tcp_of(&mut self.flows, f, k);
            let rcv_nxt = arrival.rcv_nxt_after;
            let mut delivered_msgs = 0;
            while let Some(m) = t.msgs.front().copied() {
                if m.end > rcv_nxt {
                    break;
                }
                t.msgs.pop_front();
                t.msgs_base += 1;
                self.traces.packets.t_deliver[m.row as usize] = now;
                delivered_msgs += 1;
            }
            let t = self.tcp(f, k);
            if let Some(total) = t.bulk_total {
                if t.completion_ns == NEVER && rcv_nxt >= total {
                    t.completion_ns = now;
                }
            }
            let flow = &mut self.flows[f.idx()];
            flow.msgs_delivered += delivered_msgs;
            if delivered_msgs > 0 && now < flow.stop_ns {
                // Request/response applications react to delivery (web think time).
                if let Some(at) = flow.app.after_delivery(now, &mut flow.app_rng) {
                    if at < flow.stop_ns.min(self.end_ns) {
                        self.events.schedule(at, Event::AppWake(f));
                    }
                }
            }
            self.tcp_send_acks(f, k);
            self.tcp_rearm(f, k);
        } else {
            let t = self.tcp(f, k);
            t.snd.on_ack(now, &p.seg);
            t.fill(now);
            self.tcp_pump(f, k);
            self.tcp_sample_on_change(f, k);
        }
    }

    fn tcp_sample_on_change(&mut self, f: FlowId, k: usize) {
        if !self.state_on_change {
            return;
        }
        let t = self.tcp(f, k);
        let st = t.snd.state();
        let key = (st.cwnd, st.ca_state as u8);
        if key != t.last_sample {
            t.last_sample = key;
            self.record_state(f, k);
        }
    }

    /// Appends one TCP state sample of connection `k` of flow `f` to the state trace.
    pub(super) fn record_state(&mut self, f: FlowId, k: usize) {
        let now = self.now;
        let Transport::Tcp(g) = &self.flows[f.idx()].transport else { return };
        let st = g.conns[k].snd.state();
        let tr = &mut self.traces.state;
        tr.flow.push(f.0);
        tr.conn.push(k as u8);
        tr.t.push(now);
        tr.cwnd_pkts.push(st.cwnd as f64);
        tr.ssthresh_pkts.push(st.ssthresh as f64);
        tr.srtt_ns.push(if st.srtt == 0 { NEVER } else { st.srtt });
        tr.rttvar_ns.push(if st.srtt == 0 { NEVER } else { st.rttvar });
        tr.rto_ns.push(st.rto);
        tr.inflight_pkts.push(st.in_flight);
        tr.sacked_pkts.push(st.sacked);
        tr.lost_pkts.push(st.lost);
        tr.retrans_pkts.push(st.retrans_out);
        tr.ca_state.push(st.ca_state as u8);
        tr.pacing_rate_bps.push(st.pacing_rate_bps as f64);
        tr.delivered_pkts.push(st.delivered);
    }
}
