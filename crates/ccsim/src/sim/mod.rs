//! The simulation: the event loop and the world it acts on.

mod capture;
mod tcp;

pub use capture::node_addr;

use crate::app::App;
use crate::config::{FlowConfig, SimConfig, TransportConfig};
use crate::error::ConfigError;
use crate::event::{Event, EventQueue};
use crate::ids::{FlowId, LinkId, NodeId, PacketId};
use crate::link::{Link, LinkVar};
use crate::link_jitter::DelayModel;
use crate::link_rate::RateModel;
use crate::loss::{Fate, LossModel};
use crate::packet::{Packet, PacketPool, NEVER};
use crate::pcap::PcapStats;
use crate::qdisc::{AnyQdisc, QItem, Qdisc, QdiscOut, Reason};
use crate::rng::{self, Rng};
use crate::routing::{Hop, Routing};
use crate::time::{tx_time_ns, Nanos};
use crate::topology::Network;
use crate::trace::{percentile, FlowSummary, Traces};

/// How a flow moves its messages.
enum Transport {
    Udp { header_bytes: u32 },
    Tcp(Box<tcp::TcpGroup>),
}

struct Flow {
    name: String,
    src: NodeId,
    dst: NodeId,
    app: App,
    app_rng: Rng,
    start_ns: Nanos,
    stop_ns: Nanos,
    transport: Transport,
    /// Hash handed to qdiscs for per-flow scheduling.
    hash: u32,
    msgs_sent: u64,
    msgs_delivered: u64,
    bytes_sent: u64,
    bytes_delivered: u64,
    /// Data packets handed to the network, and those of them dropped on the way.
    pkts_sent: u64,
    pkts_dropped: u64,
}

/// Figures about the run itself, for `ccbench bench`.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub events: u64,
    pub sim_end_ns: Nanos,
    pub peak_packets_alive: usize,
    /// Packets that finished serialisation on any link.
    pub link_tx_pkts: u64,
    /// Packets that finished serialisation on the monitored (bottleneck) links.
    pub monitored_tx_pkts: u64,
    /// Packets dropped at the monitored links (queue or loss model).
    pub monitored_drops: u64,
}

pub struct Simulation {
    pub now: Nanos,
    end_ns: Nanos,
    events: EventQueue,
    net: Network,
    links: Vec<Link>,
    flows: Vec<Flow>,
    pool: PacketPool,
    qout: QdiscOut<PacketId>,
    pub traces: Traces,
    queue_sample_ns: Nanos,
    state_sample_ns: Nanos,
    state_on_change: bool,
    monitored: Vec<LinkId>,
    /// Packet captures (`SimConfig::pcap`); `None` in a run without any.
    captures: Option<Box<capture::Captures>>,
}

impl Simulation {
    /// Builds a simulation from a resolved config. All validation happens here.
    pub fn new(cfg: &SimConfig) -> Result<Simulation, ConfigError> {
        if cfg.duration_ns == 0 {
            return Err(ConfigError::new("run.duration", "duration must be positive (e.g. \"60s\")"));
        }
        // Before anything is allocated: a run that cannot fit is refused here.
        if let Some(available) = crate::estimate::available_memory() {
            crate::estimate::Estimate::of(cfg).check(cfg, available)?;
        }
        let net = Network::build(&cfg.topology)?;
        for (i, name) in cfg.log_links.iter().enumerate() {
            if !net.links.iter().any(|l| l.name == *name) {
                let names: Vec<&str> = net.links.iter().map(|l| l.name.as_str()).collect();
                return Err(ConfigError::new(
                    format!("log_links[{i}]"),
                    format!("no link named {name:?}; links are {names:?}"),
                ));
            }
        }
        let mut links = Vec::with_capacity(net.links.len());
        for spec in &net.links {
            let qdisc = AnyQdisc::build(
                &spec.cfg.queue,
                spec.cfg.rate_bps,
                rng::stream(cfg.seed, &format!("link/{}/qdisc", spec.name)),
                &format!("{}.queue", spec.field),
            )?;
            let loss = match &spec.cfg.loss {
                Some(l) => Some(Box::new(LossModel::new(
                    l,
                    rng::stream(cfg.seed, &format!("link/{}/loss", spec.name)),
                    &format!("{}.loss", spec.field),
                )?)),
                None => None,
            };
            let rate = match &spec.cfg.rate_var {
                Some(r) => Some(RateModel::new(r, &format!("{}.rate", spec.field))?),
                None => None,
            };
            let delay = match &spec.cfg.jitter {
                Some(j) => Some(DelayModel::new(
                    j,
                    spec.cfg.delay_ns,
                    rng::stream(cfg.seed, &format!("link/{}/jitter", spec.name)),
                    &format!("{}.jitter", spec.field),
                )?),
                None => None,
            };
            links.push(Link {
                name: spec.name.clone(),
                from: spec.from,
                to: spec.to,
                // A rate or delay model is marked in the field the hot path reads
                // anyway, so a constant link pays no extra load (see `Link`).
                rate_bps: if rate.is_some() { 0 } else { spec.cfg.rate_bps },
                delay_ns: if delay.is_some() { crate::link::DELAY_VARIES } else { spec.cfg.delay_ns },
                qdisc,
                loss,
                monitor: spec.cfg.monitor,
                log: cfg.log_links.iter().any(|n| *n == spec.name),
                pcap: cfg.pcap.iter().any(|c| c.links.contains(&spec.name)),
                in_service: None,
                pipe: Default::default(),
                tx_pkts: 0,
                tx_bytes: 0,
                var: LinkVar::new(rate, delay),
            });
        }
        let captures = capture::Captures::open(&cfg.pcap, &net)?.map(Box::new);
        let mut sim = Simulation {
            captures,
            now: 0,
            end_ns: cfg.duration_ns,
            events: EventQueue::default(),
            monitored: (0..links.len()).filter(|&i| links[i].monitor).map(|i| LinkId(i as u32)).collect(),
            net,
            links,
            flows: Vec::new(),
            pool: PacketPool::default(),
            qout: QdiscOut::default(),
            traces: Traces::default(),
            queue_sample_ns: cfg.queue_sample_ns,
            state_sample_ns: cfg.state_sample_ns,
            state_on_change: cfg.state_on_change,
        };
        let mut names = std::collections::HashSet::new();
        for (i, f) in cfg.flows.iter().enumerate() {
            if !names.insert(f.name.as_str()) {
                return Err(ConfigError::new(
                    format!("flows[{i}].name"),
                    format!("flow name {:?} is used twice", f.name),
                ));
            }
            sim.add_flow(cfg.seed, i, f)?;
        }
        if sim.queue_sample_ns > 0 && !sim.monitored.is_empty() {
            sim.events.schedule(0, Event::SampleQueues);
        }
        let any_tcp = sim.flows.iter().any(|f| matches!(f.transport, Transport::Tcp(_)));
        if sim.state_sample_ns > 0 && any_tcp {
            sim.events.schedule(0, Event::SampleState);
        }
        Ok(sim)
    }

    fn add_flow(&mut self, seed: u64, i: usize, f: &FlowConfig) -> Result<(), ConfigError> {
        let field = format!("flows[{i}]");
        let node = |name: &str, which: &str| {
            self.net.node(name).ok_or_else(|| {
                ConfigError::new(
                    format!("{field}.{which}"),
                    format!("unknown node {name:?}; nodes are {:?}", self.net.nodes),
                )
            })
        };
        let (src, dst) = (node(&f.src, "src")?, node(&f.dst, "dst")?);
        if src == dst {
            return Err(ConfigError::new(format!("{field}.dst"), "a flow needs two different nodes"));
        }
        for (a, b) in [(src, dst), (dst, src)] {
            if self.net.path(a, b).is_none() {
                return Err(ConfigError::new(
                    field.clone(),
                    format!("no route from {:?} to {:?}", self.net.nodes[a.idx()], self.net.nodes[b.idx()]),
                ));
            }
        }
        let app = App::build(&f.app, &format!("{field}.app"))?;
        if f.split == 0 || f.connections == 0 || f.connections > 64 {
            return Err(ConfigError::new(
                field.clone(),
                format!(
                    "split = {} and connections = {}: accepted: split >= 1, 1 <= connections <= 64",
                    f.split, f.connections
                ),
            ));
        }
        let transport = match &f.transport {
            TransportConfig::Udp { header_bytes } => {
                if app.needs_tcp() {
                    return Err(ConfigError::new(
                        format!("{field}.app.kind"),
                        "this application needs transport kind \"tcp\"",
                    ));
                }
                if f.split > 1 || f.connections > 1 {
                    return Err(ConfigError::new(field.clone(), "split and connections need transport kind \"tcp\""));
                }
                Transport::Udp { header_bytes: *header_bytes }
            }
            TransportConfig::Tcp(cfg) => {
                let n = f.connections as usize;
                let bulk = match app {
                    App::Bulk { remaining: Some(_) } if n > 1 => {
                        return Err(ConfigError::new(
                            field.clone(),
                            "a fixed-size bulk transfer runs on one connection",
                        ))
                    }
                    App::Web { .. } if n > 1 => {
                        return Err(ConfigError::new(field.clone(), "web sessions run on one connection"))
                    }
                    App::Bulk { remaining } => Some(remaining),
                    _ => None,
                };
                let mut conns = Vec::with_capacity(n);
                for k in 0..n {
                    let mut t = tcp::TcpFlow::new(cfg, f.start_ns, &format!("{field}.transport"), bulk)?;
                    let label = if k == 0 { format!("flow/{}/cc", f.name) } else { format!("flow/{}/cc/{k}", f.name) };
                    t.snd.set_rng(rng::stream(seed, &label));
                    t.rcv.set_jiffy_clock(cfg.kernel_hz, kernel_tick_phase(seed, cfg.kernel_hz));
                    conns.push(t);
                }
                Transport::Tcp(Box::new(tcp::TcpGroup::new(conns, f.scheduler, f.split)))
            }
        };
        let id = FlowId(self.flows.len() as u32);
        let mut app_rng = rng::stream(seed, &format!("flow/{}/app", f.name));
        let mut app = app;
        let first = app.first_wake(f.start_ns, &mut app_rng);
        let stop_ns = f.stop_ns.unwrap_or(Nanos::MAX);
        if first < stop_ns.min(self.end_ns) {
            self.events.schedule(first, Event::AppWake(id));
        }
        self.flows.push(Flow {
            name: f.name.clone(),
            src,
            dst,
            app,
            app_rng,
            start_ns: f.start_ns,
            stop_ns,
            transport,
            hash: rng::mix64(seed ^ rng::mix64(id.0 as u64 + 1)) as u32,
            msgs_sent: 0,
            msgs_delivered: 0,
            bytes_sent: 0,
            bytes_delivered: 0,
            pkts_sent: 0,
            pkts_dropped: 0,
        });
        Ok(())
    }

    /// Runs to the end of the configured duration. `progress(sim_time_fraction)` is
    /// called every few hundred thousand events; returning `false` stops the run early.
    pub fn run(&mut self, progress: &mut dyn FnMut(f64) -> bool) -> RunStats {
        self.run_streaming(&mut |_, frac| progress(frac))
    }

    /// `run`, with the traces handed to the callback too: it may drain the rows
    /// that are final when written (`state`, `queue`) to stream them out, so a long
    /// run never holds them all. `packets` rows change until their message is
    /// delivered and `drops` feed the run's statistics: those stay.
    pub fn run_streaming(&mut self, progress: &mut dyn FnMut(&mut Traces, f64) -> bool) -> RunStats {
        let mut until_report: u32 = 1 << 18;
        while let Some(t) = self.events.peek_time() {
            // The run covers [0, duration): an event exactly at the end does not run.
            if t >= self.end_ns {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.dispatch(ev);
            self.events.done();
            if self.events.purge_due() {
                self.purge_superseded_timers();
            }
            until_report -= 1;
            if until_report == 0 {
                until_report = 1 << 18;
                if !progress(&mut self.traces, self.now as f64 / self.end_ns as f64) {
                    break;
                }
            }
        }
        progress(&mut self.traces, 1.0);
        if let Some(c) = self.captures.as_deref_mut() {
            c.finish();
        }
        self.merge_parallel_deliveries();
        RunStats {
            events: self.events.processed,
            sim_end_ns: self.now.max(self.end_ns),
            peak_packets_alive: self.pool.capacity_used(),
            link_tx_pkts: self.links.iter().map(|l| l.tx_pkts).sum(),
            monitored_tx_pkts: self.monitored.iter().map(|l| self.links[l.idx()].tx_pkts).sum(),
            monitored_drops: {
                let d = &self.traces.drops;
                (0..d.kind.len()).filter(|&i| d.kind[i] == 0 && self.links[d.link[i] as usize].monitor).count() as u64
            },
        }
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::LinkTxDone(l) => self.link_tx_done(l),
            Event::LinkDeliver(l) => self.link_deliver(l),
            Event::AppWake(f) => self.app_wake(f),
            Event::TransportTimer(f, k) => self.tcp_timer(f, k as usize),
            Event::SampleQueues => self.sample_queues(),
            Event::SampleState => self.sample_state(),
        }
    }

    // ---- links -------------------------------------------------------------------

    /// Offers a packet to a link's qdisc and starts the serialiser if it is idle.
    fn enqueue(&mut self, l: LinkId, pid: PacketId) {
        let p = self.pool.get(pid);
        let hash = self.packet_hash(p);
        let item = QItem { pkt: pid, bytes: p.bytes, flow_hash: hash, ect: p.ect, enq_ns: self.now };
        let link = &mut self.links[l.idx()];
        link.qdisc.enqueue(item, self.now, &mut self.qout);
        self.apply_qdisc_verdicts(l);
        if self.links[l.idx()].in_service.is_none() {
            self.start_tx(l);
        }
    }

    /// The hash of a packet's connection, for flow-hashing qdiscs and ECMP.
    /// Parallel connections are separate flows to both.
    #[inline]
    fn packet_hash(&self, p: &Packet) -> u32 {
        self.flows[p.flow.idx()].hash ^ (p.conn as u32).wrapping_mul(0x9E37_79B9)
    }

    fn start_tx(&mut self, l: LinkId) {
        let link = &mut self.links[l.idx()];
        let next = link.qdisc.dequeue(self.now, &mut self.qout);
        if let Some(item) = next {
            link.in_service = Some(item.pkt);
            link.qdisc.tx_started(item.bytes);
            let done = if link.rate_bps != 0 {
                self.now + tx_time_ns(item.bytes, link.rate_bps)
            } else {
                Self::varying_tx_done(link, item.bytes, self.now)
            };
            self.events.schedule(done, Event::LinkTxDone(l));
        }
        self.apply_qdisc_verdicts(l);
    }

    /// Applies the drops and marks the last qdisc call reported. Almost every call
    /// has none: the check is inlined and the work is out of line, so the common case
    /// does not pay the big function's register saves.
    #[inline]
    fn apply_qdisc_verdicts(&mut self, l: LinkId) {
        if !(self.qout.dropped.is_empty() && self.qout.marked.is_empty()) {
            self.apply_qdisc_verdicts_slow(l);
        }
    }

    #[cold]
    #[inline(never)]
    fn apply_qdisc_verdicts_slow(&mut self, l: LinkId) {
        for i in 0..self.qout.marked.len() {
            let (pid, reason) = self.qout.marked[i];
            self.pool.get_mut(pid).ce = true;
            self.log_drop(l, pid, 1, reason);
        }
        for i in 0..self.qout.dropped.len() {
            let (pid, reason) = self.qout.dropped[i];
            self.log_drop(l, pid, 0, reason);
            self.pool.free(pid);
        }
        self.qout.clear();
    }

    fn log_drop(&mut self, l: LinkId, pid: PacketId, kind: u8, reason: Reason) {
        let p = self.pool.get(pid);
        let d = &mut self.traces.drops;
        d.link.push(l.0);
        d.t.push(self.now);
        d.flow.push(p.flow.0);
        d.seq.push(if matches!(self.flows[p.flow.idx()].transport, Transport::Udp { .. }) {
            self.traces.packets.msg[p.msg as usize]
        } else {
            p.seg.seq
        });
        d.kind.push(kind);
        d.reason.push(reason.code());
        if kind == 0 && p.to_receiver {
            self.flows[p.flow.idx()].pkts_dropped += 1;
        }
    }

    fn link_tx_done(&mut self, l: LinkId) {
        let link = &mut self.links[l.idx()];
        let pid = link.in_service.take().expect("tx done without a packet in service");
        link.qdisc.tx_finished();
        let bytes = self.pool.get(pid).bytes;
        link.tx_pkts += 1;
        link.tx_bytes += bytes as u64;
        if link.log || link.pcap {
            self.record_departure(l, pid);
        }
        let link = &mut self.links[l.idx()];
        let fate = match link.loss.as_mut() {
            Some(m) => m.decide(self.pool.get(pid).ect),
            None => Fate::Pass,
        };
        match fate {
            Fate::Drop => {
                self.log_drop(l, pid, 0, Reason::LossModel);
                self.pool.free(pid);
            }
            Fate::Pass | Fate::Mark => {
                if fate == Fate::Mark {
                    self.pool.get_mut(pid).ce = true;
                    self.log_drop(l, pid, 1, Reason::LossModel);
                }
                let link = &mut self.links[l.idx()];
                if link.delay_ns == 0 {
                    // A zero-delay wire (the default access link) hands the packet
                    // over at once: no pipe, no delivery event. The serialiser starts
                    // on its next packet first, as it would before a delivery event
                    // at this instant ran.
                    let node = link.to;
                    self.start_tx(l);
                    self.arrive(node, pid);
                    return;
                }
                if link.delay_ns == crate::link::DELAY_VARIES {
                    self.jitter_wire(l, pid);
                    self.start_tx(l);
                    return;
                }
                let arrive = self.now + link.delay_ns;
                link.pipe.push_back((arrive, pid));
                if link.pipe.len() == 1 {
                    self.events.schedule(arrive, Event::LinkDeliver(l));
                }
            }
        }
        self.start_tx(l);
    }

    /// A packet enters the wire of a link with a random delay.
    #[cold]
    #[inline(never)]
    fn jitter_wire(&mut self, l: LinkId, pid: PacketId) {
        let link = &mut self.links[l.idx()];
        let v = link.var.as_deref_mut().expect("a link with a delay model");
        let arrive = v.delay.as_mut().expect("a delay model").arrival(self.now);
        if v.reorders() {
            // One delivery event per packet: events run in (time, entry) order, and so
            // do the heap's pops, so each event pops the packet it was scheduled for.
            // The FIFO pipe stays empty, which is how `link_deliver` tells.
            v.entered += 1;
            v.heap.push(std::cmp::Reverse((arrive, v.entered, pid)));
            self.events.schedule(arrive, Event::LinkDeliver(l));
        } else {
            // Delivery times never decrease: the FIFO pipe holds.
            link.pipe.push_back((arrive, pid));
            if link.pipe.len() == 1 {
                self.events.schedule(arrive, Event::LinkDeliver(l));
            }
        }
    }

    /// End of serialisation on a link with a trace or schedule.
    #[cold]
    #[inline(never)]
    fn varying_tx_done(link: &mut Link, bytes: u32, now: Nanos) -> Nanos {
        let v = link.var.as_deref_mut().and_then(|v| v.rate.as_mut());
        v.expect("a link with rate 0 has a rate model").finish(bytes, now)
    }

    #[cold]
    #[inline(never)]
    fn link_deliver_reordered(&mut self, l: LinkId) {
        let link = &mut self.links[l.idx()];
        let v = link.var.as_deref_mut().expect("a reordering link");
        let std::cmp::Reverse((_, _, pid)) = v.heap.pop().expect("delivery from an empty wire");
        let node = link.to;
        self.arrive(node, pid);
    }

    /// A packet finished serialisation on a logged or captured link: out of line, so
    /// that links with neither pay one test of two flags.
    #[inline(never)]
    fn record_departure(&mut self, l: LinkId, pid: PacketId) {
        if self.links[l.idx()].log {
            let p = self.pool.get(pid);
            let lg = &mut self.traces.link_log;
            lg.link.push(l.0);
            lg.t.push(self.now);
            lg.flow.push(p.flow.0);
            lg.bytes.push(p.bytes);
            lg.data.push(p.to_receiver);
            lg.seq.push(match self.flows[p.flow.idx()].transport {
                Transport::Udp { .. } => self.traces.packets.msg[p.msg as usize],
                Transport::Tcp(_) => {
                    if p.to_receiver {
                        p.seg.seq
                    } else {
                        p.seg.ack
                    }
                }
            });
        }
        if self.links[l.idx()].pcap {
            self.capture_departure(l, pid);
        }
    }

    fn link_deliver(&mut self, l: LinkId) {
        let Some((_, pid)) = crate::fifo::pop_front_rewind(&mut self.links[l.idx()].pipe) else {
            return self.link_deliver_reordered(l);
        };
        if let Some(&(next, _)) = self.links[l.idx()].pipe.front() {
            self.events.schedule(next, Event::LinkDeliver(l));
        }
        let node = self.links[l.idx()].to;
        self.arrive(node, pid);
    }

    /// A packet reaches `node`: deliver it there or forward it.
    fn arrive(&mut self, node: NodeId, pid: PacketId) {
        let dst = self.pool.get(pid).dst;
        if dst == node {
            self.deliver(pid);
        } else {
            let raw = self.net.routing.next_raw(node, dst);
            let l = if Routing::is_link(raw) { LinkId(raw) } else { self.ecmp_hop(node, dst, pid) };
            self.enqueue(l, pid);
        }
    }

    /// The next hop where ECMP splits (out of line: the plain lookup stays small).
    #[inline(never)]
    fn ecmp_hop(&self, node: NodeId, dst: NodeId, pid: PacketId) -> LinkId {
        match self.net.next_hop(node, dst) {
            Hop::Ecmp(g) => self.net.routing.pick(g, self.packet_hash(self.pool.get(pid)), node),
            Hop::Link(l) => l,
            Hop::Unreachable => unreachable!("routes checked when the flow was built"),
        }
    }

    // ---- flows -------------------------------------------------------------------

    fn app_wake(&mut self, f: FlowId) {
        let flow = &mut self.flows[f.idx()];
        if self.now >= flow.stop_ns {
            return;
        }
        let emit = flow.app.emit(self.now, &mut flow.app_rng);
        if emit.next_wake < flow.stop_ns.min(self.end_ns) {
            self.events.schedule(emit.next_wake, Event::AppWake(f));
        }
        self.send_message(f, emit.bytes);
    }

    fn send_message(&mut self, f: FlowId, bytes: u32) {
        let flow = &mut self.flows[f.idx()];
        let msg = flow.msgs_sent;
        flow.msgs_sent += 1;
        flow.bytes_sent += bytes as u64;
        match flow.transport {
            Transport::Tcp(_) => self.tcp_app_write(f, msg, bytes),
            Transport::Udp { header_bytes } => {
                flow.pkts_sent += 1;
                let row = self.traces.packets.push(f.0, msg, bytes, self.now);
                // UDP has no send buffer: the datagram goes to the NIC at once.
                self.traces.packets.t_first_tx[row as usize] = self.now;
                let pkt = Packet {
                    flow: f,
                    src: flow.src,
                    dst: flow.dst,
                    bytes: bytes + header_bytes,
                    to_receiver: true,
                    msg: row,
                    ..Default::default()
                };
                let pid = self.pool.alloc(pkt);
                let src = flow.src;
                self.arrive(src, pid);
            }
        }
    }

    fn deliver(&mut self, pid: PacketId) {
        let p = *self.pool.get(pid);
        self.pool.free(pid);
        let flow = &mut self.flows[p.flow.idx()];
        match flow.transport {
            Transport::Tcp(_) => self.tcp_deliver(p.flow, &p),
            Transport::Udp { .. } => {
                let row = p.msg as usize;
                let pk = &mut self.traces.packets;
                if pk.t_arrive[row] == NEVER {
                    pk.t_arrive[row] = self.now;
                    pk.t_deliver[row] = self.now;
                    flow.msgs_delivered += 1;
                    flow.bytes_delivered += pk.bytes[row] as u64;
                }
            }
        }
    }

    /// With parallel connections the receiving application merges by message number
    /// (Brosh et al.): message i is delivered once it and every earlier message have
    /// arrived in order on their connections, so its `t_deliver` is the running
    /// maximum over the flow's messages in write order (never = never).
    fn merge_parallel_deliveries(&mut self) {
        let multi: Vec<bool> =
            self.flows.iter().map(|f| matches!(&f.transport, Transport::Tcp(g) if g.conns.len() > 1)).collect();
        if !multi.iter().any(|&m| m) {
            return;
        }
        let mut last = vec![0u64; self.flows.len()];
        let mut delivered = vec![0u64; self.flows.len()];
        let pk = &mut self.traces.packets;
        for i in 0..pk.len() {
            let f = pk.flow[i] as usize;
            if multi[f] {
                pk.t_deliver[i] = pk.t_deliver[i].max(last[f]);
                last[f] = pk.t_deliver[i];
                delivered[f] += (pk.t_deliver[i] != NEVER) as u64;
            }
        }
        for (f, flow) in self.flows.iter_mut().enumerate() {
            if multi[f] {
                flow.msgs_delivered = delivered[f];
            }
        }
    }

    // ---- sampling ----------------------------------------------------------------

    fn sample_queues(&mut self) {
        for &l in &self.monitored {
            let q = &self.links[l.idx()].qdisc;
            let tr = &mut self.traces.queue;
            tr.link.push(l.0);
            tr.t.push(self.now);
            tr.backlog_bytes.push(q.backlog_bytes());
            tr.backlog_pkts.push(q.backlog_pkts());
        }
        self.events.schedule(self.now + self.queue_sample_ns, Event::SampleQueues);
    }

    fn sample_state(&mut self) {
        for i in 0..self.flows.len() {
            let f = &self.flows[i];
            if let Transport::Tcp(g) = &f.transport {
                if self.now >= f.start_ns {
                    for k in 0..g.conns.len() {
                        self.record_state(FlowId(i as u32), k);
                    }
                }
            }
        }
        self.events.schedule(self.now + self.state_sample_ns, Event::SampleState);
    }

    // ---- results -----------------------------------------------------------------

    pub fn link_names(&self) -> Vec<String> {
        self.links.iter().map(|l| l.name.clone()).collect()
    }

    pub fn flow_names(&self) -> Vec<String> {
        self.flows.iter().map(|f| f.name.clone()).collect()
    }

    pub fn flow_summaries(&self) -> Vec<FlowSummary> {
        self.flows
            .iter()
            .map(|f| {
                let mut s = FlowSummary {
                    name: f.name.clone(),
                    transport: "udp",
                    start_ns: f.start_ns,
                    end_ns: f.stop_ns.min(self.end_ns),
                    msgs_sent: f.msgs_sent,
                    msgs_delivered: f.msgs_delivered,
                    bytes_sent: f.bytes_sent,
                    bytes_delivered: f.bytes_delivered,
                    pkts_sent: f.pkts_sent,
                    pkts_dropped: f.pkts_dropped,
                    rtt_p50_ns: NEVER,
                    rtt_p95_ns: NEVER,
                    completion_ns: NEVER,
                    ..Default::default()
                };
                if let Transport::Tcp(g) = &f.transport {
                    s.transport = "tcp";
                    s.cc = g.conns[0].cc_name.clone();
                    // The run ends at the end of the simulation even if the app stopped
                    // earlier: TCP keeps delivering what it had buffered.
                    s.end_ns = self.end_ns;
                    s.bytes_sent = 0;
                    let mut rtt = Vec::new();
                    for t in &g.conns {
                        let st = t.snd.stats();
                        s.bytes_sent += st.bytes_sent;
                        s.retrans_bytes += st.retrans_bytes;
                        s.loss_events += st.loss_events;
                        s.timeouts += st.timeouts;
                        s.fast_recoveries += st.fast_recoveries;
                        rtt.extend_from_slice(&st.rtt_samples_us);
                    }
                    s.bytes_delivered = g.conns.iter().map(|t| t.rcv.rcv_nxt()).sum();
                    s.rtt_p50_ns = percentile(&mut rtt, 50.0).map_or(NEVER, |v| v as u64 * 1000);
                    s.rtt_p95_ns = percentile(&mut rtt, 95.0).map_or(NEVER, |v| v as u64 * 1000);
                    let done = g.conns[0].completion_ns;
                    s.completion_ns = if done == NEVER { NEVER } else { done - f.start_ns };
                }
                s
            })
            .collect()
    }

    /// The TCP sender of flow `flow` (index in the config; its first connection when
    /// the flow is split over several), for tests and tools that inspect
    /// congestion-control state after a run; `None` for UDP flows.
    pub fn tcp_sender(&self, flow: usize) -> Option<&crate::tcp::TcpSender> {
        match &self.flows.get(flow)?.transport {
            Transport::Tcp(g) => g.conns.first().map(|c| &c.snd),
            Transport::Udp { .. } => None,
        }
    }

    /// What each packet capture file wrote: (links joined with "+", path, stats), in
    /// configuration order.
    pub fn capture_stats(&self) -> Vec<(String, String, PcapStats)> {
        self.captures.as_ref().map_or_else(Vec::new, |c| c.stats())
    }

    /// Everything a finished run hands out, taken apart from the engine's state: the
    /// simulation (flows, links, packet pool, event queue, routes) is dropped here,
    /// before the caller turns the traces into its own objects, so the two are never
    /// held together (at 10,000 flows the state is about as large as the traces).
    pub fn finish(mut self) -> Finished {
        Finished {
            traces: std::mem::take(&mut self.traces),
            flows: self.flow_summaries(),
            flow_names: self.flow_names(),
            link_names: self.link_names(),
            captures: self.capture_stats(),
        }
    }

    /// Total packets serialised on `link` so far.
    pub fn link_tx_pkts(&self, name: &str) -> Option<u64> {
        self.links.iter().find(|l| l.name == name).map(|l| l.tx_pkts)
    }
}

/// A finished run's outputs (`Simulation::finish`).
pub struct Finished {
    pub traces: Traces,
    pub flows: Vec<FlowSummary>,
    pub flow_names: Vec<String>,
    pub link_names: Vec<String>,
    /// (links joined with "+", path, stats) of every packet capture, in config order.
    pub captures: Vec<(String, String, PcapStats)>,
}

/// Where a run's kernel timer ticks fall within a tick: one phase for every host, as
/// the emulator's network namespaces share one kernel (and its jiffies), drawn from
/// the seed because a run starts at no particular point of the tick.
fn kernel_tick_phase(seed: u64, hz: u32) -> Nanos {
    use rand::Rng as _;
    rng::stream(seed, "kernel/tick_phase").random_range(0..crate::time::jiffy_ns(hz))
}

/// Builds and runs a simulation from its JSON config (the form Python sends).
pub fn run_json(json: &str, progress: &mut dyn FnMut(f64) -> bool) -> Result<(Simulation, RunStats), ConfigError> {
    let cfg: SimConfig = serde_json::from_str(json).map_err(|e| ConfigError::new("scenario", e.to_string()))?;
    let mut sim = Simulation::new(&cfg)?;
    let stats = sim.run(progress);
    Ok((sim, stats))
}

#[cfg(test)]
mod tick_tests {
    use super::kernel_tick_phase;

    #[test]
    fn the_kernel_tick_phase_is_drawn_from_the_seed_within_one_tick() {
        let phases: Vec<u64> = (1..=50).map(|s| kernel_tick_phase(s, 250)).collect();
        assert!(phases.iter().all(|&p| p < 4_000_000), "within one 4 ms tick");
        assert_eq!(kernel_tick_phase(7, 250), kernel_tick_phase(7, 250), "same seed, same phase");
        let distinct: std::collections::BTreeSet<_> = phases.iter().map(|p| p / 400_000).collect();
        assert!(distinct.len() >= 8, "50 seeds spread over the tick: {distinct:?}");
        assert!(kernel_tick_phase(3, 1000) < 1_000_000);
    }
}
