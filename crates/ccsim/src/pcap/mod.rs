//! Packet captures in the classic libpcap file format (what tcpdump writes and
//! Wireshark, tshark, scapy and dpkt read), streamed to disk with bounded memory.
//!
//! The file is the nanosecond-resolution variant of the format (magic `0xa1b23c4d`,
//! <https://wiki.wireshark.org/Development/LibpcapFileFormat>): simulated time is in
//! nanoseconds, and a 1500-byte packet at 10 Gbit/s lasts 1.2 us, below the
//! microsecond variant's resolution. The link type is `LINKTYPE_RAW` (101): every
//! record starts with the IPv4 header, as a TUN device delivers packets.
//!
//! [`wire`] builds the IPv4/TCP/UDP headers of a simulated packet; the simulator's
//! glue is `sim/capture.rs`, the emulator writes the real packets it forwards.

pub mod wire;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::time::Nanos;

/// `LINKTYPE_RAW`: records start with an IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// Nanosecond-resolution libpcap magic, written in host byte order.
const MAGIC_NSEC: u32 = 0xa1b2_3c4d;
/// The largest snapshot length libpcap itself uses (`MAXIMUM_SNAPLEN`).
pub const MAX_SNAPLEN: u32 = 262_144;
pub const GLOBAL_HEADER_BYTES: u64 = 24;
pub const RECORD_HEADER_BYTES: u64 = 16;

const ZEROS: [u8; 4096] = [0; 4096];

/// What a capture wrote, for the run's metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcapStats {
    /// Records written.
    pub packets: u64,
    /// File size in bytes (global header included).
    pub bytes: u64,
    /// Packets not written because the size limit was reached or writing failed.
    pub skipped: u64,
    /// Timestamp of the first packet that did not fit under the size limit.
    pub limit_reached_ns: Option<Nanos>,
    /// The first I/O error; nothing is written after it.
    pub error: Option<String>,
}

/// A pcap file being written: records go through a buffer straight to the file.
pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
    /// 0 = no limit; otherwise the file never grows beyond this many bytes.
    max_bytes: u64,
    stats: PcapStats,
}

impl PcapWriter<BufWriter<File>> {
    /// Creates (truncates) `path` and writes the global header.
    pub fn create(path: &Path, snaplen: u32, max_bytes: u64) -> io::Result<Self> {
        let file = File::create(path)?;
        PcapWriter::new(BufWriter::with_capacity(1 << 18, file), snaplen, max_bytes)
    }
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header to `out`. `snaplen` must be in 1..=[`MAX_SNAPLEN`].
    pub fn new(mut out: W, snaplen: u32, max_bytes: u64) -> io::Result<Self> {
        assert!((1..=MAX_SNAPLEN).contains(&snaplen), "snaplen {snaplen} out of range");
        let mut h = [0u8; GLOBAL_HEADER_BYTES as usize];
        h[0..4].copy_from_slice(&MAGIC_NSEC.to_ne_bytes());
        h[4..6].copy_from_slice(&2u16.to_ne_bytes()); // format version 2.4
        h[6..8].copy_from_slice(&4u16.to_ne_bytes());
        // thiszone and sigfigs stay 0 (timestamps are UTC, accuracy unstated)
        h[16..20].copy_from_slice(&snaplen.to_ne_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_RAW.to_ne_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter {
            out,
            snaplen,
            max_bytes,
            stats: PcapStats { bytes: GLOBAL_HEADER_BYTES, ..Default::default() },
        })
    }

    /// Appends one packet of `orig_len` bytes seen at `t_ns`: its first
    /// `min(orig_len, snaplen)` bytes, taken from `head` and zero-filled past its end
    /// (a simulated packet has headers but no payload bytes). Returns false when the
    /// packet was not written (size limit reached, or an earlier write failed).
    pub fn record(&mut self, t_ns: Nanos, orig_len: u32, head: &[u8]) -> bool {
        if self.stats.error.is_some() || self.stats.limit_reached_ns.is_some() {
            self.stats.skipped += 1;
            return false;
        }
        let caplen = orig_len.min(self.snaplen);
        let size = RECORD_HEADER_BYTES + caplen as u64;
        if self.max_bytes > 0 && self.stats.bytes + size > self.max_bytes {
            self.stats.limit_reached_ns = Some(t_ns);
            self.stats.skipped += 1;
            return false;
        }
        if let Err(e) = self.write_record(t_ns, orig_len, caplen, head) {
            self.stats.error = Some(e.to_string());
            self.stats.skipped += 1;
            return false;
        }
        self.stats.packets += 1;
        self.stats.bytes += size;
        true
    }

    fn write_record(&mut self, t_ns: Nanos, orig_len: u32, caplen: u32, head: &[u8]) -> io::Result<()> {
        let mut h = [0u8; RECORD_HEADER_BYTES as usize];
        h[0..4].copy_from_slice(&((t_ns / 1_000_000_000) as u32).to_ne_bytes());
        h[4..8].copy_from_slice(&((t_ns % 1_000_000_000) as u32).to_ne_bytes());
        h[8..12].copy_from_slice(&caplen.to_ne_bytes());
        h[12..16].copy_from_slice(&orig_len.to_ne_bytes());
        self.out.write_all(&h)?;
        let from_head = (caplen as usize).min(head.len());
        self.out.write_all(&head[..from_head])?;
        let mut zeros = caplen as usize - from_head;
        while zeros > 0 {
            let n = zeros.min(ZEROS.len());
            self.out.write_all(&ZEROS[..n])?;
            zeros -= n;
        }
        Ok(())
    }

    /// Flushes the buffer; returns what was written.
    pub fn finish(&mut self) -> &PcapStats {
        if self.stats.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.stats.error = Some(e.to_string());
            }
        }
        &self.stats
    }

    pub fn stats(&self) -> &PcapStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_at(b: &[u8], i: usize) -> u32 {
        u32::from_ne_bytes(b[i..i + 4].try_into().unwrap())
    }

    #[test]
    fn header_and_records_follow_the_libpcap_layout() {
        let mut w = PcapWriter::new(Vec::new(), 96, 0).unwrap();
        assert!(w.record(1_500_000_123, 1500, &[0x45, 1, 2, 3]));
        let st = w.finish().clone();
        let b = w.out;
        assert_eq!(u32_at(&b, 0), 0xa1b2_3c4d);
        assert_eq!(u32_at(&b, 16), 96);
        assert_eq!(u32_at(&b, 20), 101);
        assert_eq!(u32_at(&b, 24), 1, "seconds");
        assert_eq!(u32_at(&b, 28), 500_000_123, "nanoseconds");
        assert_eq!(u32_at(&b, 32), 96, "caplen is the snaplen");
        assert_eq!(u32_at(&b, 36), 1500, "orig_len is the packet");
        assert_eq!(&b[40..44], &[0x45, 1, 2, 3]);
        assert!(b[44..].iter().all(|&x| x == 0), "zero-filled past the headers");
        assert_eq!(b.len(), 24 + 16 + 96);
        assert_eq!(st, PcapStats { packets: 1, bytes: 136, ..Default::default() });
    }

    #[test]
    fn short_packets_are_captured_whole() {
        let mut w = PcapWriter::new(Vec::new(), 96, 0).unwrap();
        w.record(0, 52, &[0u8; 52]);
        assert_eq!(u32_at(&w.out, 32), 52);
        assert_eq!(w.out.len(), 24 + 16 + 52);
    }

    #[test]
    fn size_limit_stops_writing_and_counts_the_rest() {
        // room for the header, two 40-byte records and one of 36 bytes
        let mut w = PcapWriter::new(Vec::new(), 24, 24 + 2 * 40 + 36).unwrap();
        assert!(w.record(10, 100, &[]));
        assert!(w.record(20, 100, &[]));
        assert!(!w.record(30, 100, &[]));
        assert!(!w.record(40, 20, &[]), "nothing after the limit, even a packet that would fit");
        let st = w.finish().clone();
        assert_eq!((st.packets, st.skipped, st.bytes), (2, 2, 104));
        assert_eq!(st.limit_reached_ns, Some(30));
        assert_eq!(w.out.len() as u64, st.bytes);
    }
}
