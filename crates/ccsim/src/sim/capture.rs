//! Packet captures of links (`SimConfig::pcap`): every packet that leaves a captured
//! link's transmitter is written to that link's pcap file (one file may take several
//! links, e.g. both directions of the bottleneck) with IPv4 and TCP/UDP
//! headers built from the simulated packet, as tcpdump on the sending interface would
//! see it (a loss model drops and marks on the wire, after this point).
//!
//! What the headers carry:
//! - addresses per host: dumbbell hosts `srv{i}` / `cli{i}` get the emulator's
//!   addresses (`10.78.0.1` for srv0, `10.79.0.1` for cli0: host i + 1 of a /16 per
//!   side), so one filter fits both backends; any other node (index k) gets
//!   `10.80.0.0` + k + 1;
//! - ports per flow and connection as the emulator binds them: the sender's is
//!   `20000 + flow + conn`, the receiver's `30000 + flow` (so each connection of a flow
//!   has its own 4-tuple);
//! - TCP: sequence numbers are the simulator's byte offsets (initial sequence number
//!   0; connections start established, there is no handshake to capture), the
//!   receiver's own sequence number stays 0; ACK on every segment, ECE and CWR as
//!   the segment carries them; the advertised window is shifted by a window scale of
//!   10 (what Linux 6.18 picks for its default 32 MiB `tcp_rmem[2]`:
//!   `ilog2(tcp_rmem[2]) - 15` in `tcp_select_initial_window`);
//!   timestamps (in ms, Linux's `tcp_time_stamp` clock) when the simulated header has
//!   room for them; SACK and DSACK blocks as sent;
//! - IP: ECT(0) for ECN-capable packets, CE once marked, DF set, TTL 64;
//! - the IP total length is the simulated packet size; payload bytes are zeros.

use std::path::Path;

use super::{Simulation, Transport};
use crate::config::PcapConfig;
use crate::error::ConfigError;
use crate::ids::{LinkId, PacketId};
use crate::packet::Packet;
use crate::pcap::wire::{self, Ip, Tcp};
use crate::pcap::{PcapStats, PcapWriter, MAX_SNAPLEN};
use crate::topology::Network;

/// Window scale shift applied to the advertised receive window.
const WSCALE: u32 = 10;
const SPORT0: u32 = 20_000;
/// Hosts per side in the emulator's addressing plan (`ccemu::MAX_PAIRS`).
const MAX_PAIRS: u32 = 65_534;
const DPORT0: u32 = 30_000;

/// One capture file and what it wrote.
pub struct CaptureFile {
    /// The captured links, joined with "+".
    pub links: String,
    pub path: String,
    writer: PcapWriter<std::io::BufWriter<std::fs::File>>,
}

/// The captures of a run and the addressing they share.
pub(super) struct Captures {
    /// Index into `files` per link, or `NONE`.
    file_of_link: Vec<u32>,
    files: Vec<CaptureFile>,
    /// IPv4 address per node.
    addr: Vec<[u8; 4]>,
    /// Header scratch space, reused for every packet.
    buf: Vec<u8>,
}

const NONE: u32 = u32::MAX;

/// The IPv4 address of node `idx` named `name` (module docs).
pub fn node_addr(name: &str, idx: usize) -> [u8; 4] {
    // the emulator's plan (`ccemu::host_addr`): one /16 per side, host i is i + 1
    for (prefix, octet) in [("srv", 78u8), ("cli", 79u8)] {
        if let Some(i) = name.strip_prefix(prefix).and_then(|s| s.parse::<u32>().ok()) {
            // only the canonical spelling: "srv01" or "srv+1" must not share srv1's address
            if i < MAX_PAIRS && i.to_string() == name[prefix.len()..] {
                let n = i + 1;
                return [10, octet, (n >> 8) as u8, n as u8];
            }
        }
    }
    let n = idx as u32 + 1;
    [10, (80 + (n >> 16)).min(255) as u8, (n >> 8) as u8, n as u8]
}

/// A port in the registered/dynamic range, wrapping for very many flows.
fn port(base: u32, offset: u32) -> u16 {
    (1024 + (base - 1024 + offset) % (65_536 - 1024)) as u16
}

impl Captures {
    /// Opens one file per configured capture; `None` when there are none.
    pub(super) fn open(cfg: &[PcapConfig], net: &Network) -> Result<Option<Captures>, ConfigError> {
        if cfg.is_empty() {
            return Ok(None);
        }
        let mut file_of_link = vec![NONE; net.links.len()];
        let mut files = Vec::with_capacity(cfg.len());
        for (i, c) in cfg.iter().enumerate() {
            let field = |f: &str| format!("pcap[{i}].{f}");
            if c.links.is_empty() {
                return Err(ConfigError::new(field("links"), "no link given; name at least one"));
            }
            for name in &c.links {
                let Some(l) = net.links.iter().position(|l| l.name == *name) else {
                    let names: Vec<&str> = net.links.iter().map(|l| l.name.as_str()).collect();
                    return Err(ConfigError::new(
                        field("links"),
                        format!("no link named {name:?}; links are {names:?}"),
                    ));
                };
                if file_of_link[l] != NONE {
                    return Err(ConfigError::new(field("links"), format!("link {name:?} is captured twice")));
                }
                file_of_link[l] = files.len() as u32;
            }
            if !(1..=MAX_SNAPLEN).contains(&c.snaplen) {
                return Err(ConfigError::new(
                    field("snaplen"),
                    format!("{} bytes; accepted: 1..={MAX_SNAPLEN}", c.snaplen),
                ));
            }
            let writer = PcapWriter::create(Path::new(&c.path), c.snaplen, c.max_bytes)
                .map_err(|e| ConfigError::new(field("path"), format!("cannot create {:?}: {e}", c.path)))?;
            files.push(CaptureFile { links: c.links.join("+"), path: c.path.clone(), writer });
        }
        let addr = net.nodes.iter().enumerate().map(|(i, n)| node_addr(n, i)).collect();
        Ok(Some(Captures { file_of_link, files, addr, buf: Vec::with_capacity(128) }))
    }

    /// Flushes every file.
    pub(super) fn finish(&mut self) {
        for f in &mut self.files {
            f.writer.finish();
        }
    }

    /// (links joined with "+", path, stats) per file.
    pub(super) fn stats(&self) -> Vec<(String, String, PcapStats)> {
        self.files.iter().map(|f| (f.links.clone(), f.path.clone(), f.writer.stats().clone())).collect()
    }
}

impl Simulation {
    /// Writes packet `pid`, which just left link `l`, to the link's capture.
    pub(super) fn capture_departure(&mut self, l: LinkId, pid: PacketId) {
        let Some(cap) = self.captures.as_deref_mut() else { return };
        let file = cap.file_of_link[l.idx()];
        if file == NONE {
            return;
        }
        let p: &Packet = self.pool.get(pid);
        let k = p.flow.0;
        let ip = Ip {
            src: cap.addr[p.src.idx()],
            dst: cap.addr[p.dst.idx()],
            ecn: match (p.ect, p.ce) {
                (_, true) => wire::ECN_CE,
                (true, false) => wire::ECN_ECT0,
                (false, false) => wire::ECN_NOT_ECT,
            },
        };
        let (snd_port, rcv_port) = (port(SPORT0, k + p.conn as u32), port(DPORT0, k));
        let (sport, dport) = if p.to_receiver { (snd_port, rcv_port) } else { (rcv_port, snd_port) };
        cap.buf.clear();
        let len = match self.flows[k as usize].transport {
            Transport::Udp { .. } => wire::udp_packet(
                &mut cap.buf,
                &ip,
                sport,
                dport,
                p.bytes.saturating_sub(wire::IP_HEADER + wire::UDP_HEADER),
            ),
            Transport::Tcp(_) => {
                let s = &p.seg;
                let mut sacks = [(0u32, 0u32); crate::tcp::MAX_SACK_BLOCKS];
                for (o, b) in sacks.iter_mut().zip(s.sacks()) {
                    *o = (b.start as u32, b.end as u32);
                }
                let sacks = &sacks[..s.sacks().len()];
                let sack_bytes = if sacks.is_empty() { 0 } else { (2 + 8 * sacks.len() as u32).div_ceil(4) * 4 };
                // Option space of the simulated header besides SACK (`header_bytes` - 40):
                // 12 of it is the timestamps option when there is room for it.
                let other = p.bytes.saturating_sub(wire::IP_HEADER + wire::TCP_HEADER + s.len + sack_bytes);
                let ts = other >= 12;
                let ms = |t: u64| (t / 1_000_000) as u32;
                let tcp = Tcp {
                    sport,
                    dport,
                    seq: if p.to_receiver { s.seq as u32 } else { 0 },
                    ack: if p.to_receiver { 0 } else { s.ack as u32 },
                    flags: wire::TCP_ACK
                        | if s.ece { wire::TCP_ECE } else { 0 }
                        | if s.psh { wire::TCP_PSH } else { 0 }
                        | if s.cwr { wire::TCP_CWR } else { 0 },
                    window: (s.rwnd >> WSCALE).min(u16::MAX as u64) as u16,
                    timestamps: ts.then(|| (ms(s.tsval), ms(s.tsecr))),
                    sacks,
                    pad: (other - if ts { 12 } else { 0 }).div_ceil(4) * 4,
                };
                wire::tcp_packet(&mut cap.buf, &ip, &tcp, s.len)
            }
        };
        let now = self.now;
        cap.files[file as usize].writer.record(now, len, &cap.buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumbbell_hosts_get_the_emulator_addresses() {
        assert_eq!(node_addr("srv0", 2), [10, 78, 0, 1]);
        assert_eq!(node_addr("cli3", 9), [10, 79, 0, 4]);
        assert_eq!(node_addr("srv300", 9), [10, 78, 1, 45]);
        assert_eq!(node_addr("rtr_srv", 0), [10, 80, 0, 1]);
        assert_eq!(node_addr("srv+1", 300), [10, 80, 1, 45]);
        assert_eq!(node_addr("srv70000", 5), [10, 80, 0, 6]);
        assert_eq!(node_addr("srv01", 7), [10, 80, 0, 8]);
        assert_eq!(node_addr("h", 70_000), [10, 81, 0x11, 0x71]);
    }

    #[test]
    fn ports_match_the_emulator_and_wrap_inside_the_unprivileged_range() {
        assert_eq!(port(SPORT0, 0), 20_000);
        assert_eq!(port(DPORT0, 2), 30_002);
        assert_eq!(port(DPORT0, 35_535), 65_535);
        assert_eq!(port(DPORT0, 35_536), 1024);
    }
}
