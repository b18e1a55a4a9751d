//! ccprobe: path loss-process probe after Wei's PlanetLab UDP loss-measurement system
//! (thesis §4.3). A client sends UDP test packets (sequence number, timestamp,
//! checksum) to a server in a smooth (paced CBR) or bursty (TCP-like on/off within an
//! RTT) pattern; the server detects losses with a 128-packet reordering window and
//! reports them over a TCP control connection. See `proto` for the message formats
//! (protocol v2: authenticated datagrams, bounded messages) and `server` for the limits
//! that make the server safe to run on a public host.

pub mod args;
pub mod auth;
pub mod client;
pub mod proto;
pub mod server;
pub mod session;
pub mod window;

use std::net::IpAddr;
use std::time::{SystemTime, UNIX_EPOCH};

/// At most this many concurrent clients per server (thesis §4.3); `--max-clients` can
/// only lower it.
pub const MAX_CLIENTS: usize = 10;
/// Default packet size: 48 bytes, the thesis's small probe (header only, no padding).
pub const DEFAULT_SIZE: usize = 48;
/// Default rate, packets/s: half the thesis's limit of 1 packet/ms, so the average stays
/// well below it and a bursty run still fits the default per-client cap.
pub const DEFAULT_RATE: f64 = 500.0;
/// The thesis's limit, 1 packet/ms: the default (and, towards any non-loopback address,
/// the highest allowed) per-client rate cap.
pub const THESIS_MAX_RATE: f64 = 1000.0;
/// Absolute ceiling of the rate cap on loopback (for tests that need many packets fast).
pub const LOOPBACK_MAX_RATE: f64 = 200_000.0;
pub const DEFAULT_IDLE_S: f64 = 10.0;
/// The server's per-client token bucket holds this many seconds of packets at its cap.
pub const BUCKET_S: f64 = 0.25;
/// Longest on/off period of the bursty pattern (its burst must fit the server's bucket).
pub const MAX_BURST_PERIOD_S: f64 = 0.2;
/// A sequence number more than this above the highest received is a protocol error.
pub const MAX_JUMP: u64 = 1 << 20;

/// Highest rate cap (packets/s) allowed towards/on `ip`.
pub fn rate_ceiling(ip: IpAddr) -> f64 {
    if ip.is_loopback() {
        LOOPBACK_MAX_RATE
    } else {
        THESIS_MAX_RATE
    }
}

/// Wall clock, ns since the Unix epoch.
pub fn wall_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

/// Checks a rate cap against the ceiling for `ip`; one-line error naming the option.
pub fn check_rate_cap(max_rate: f64, ip: IpAddr) -> Result<(), String> {
    if max_rate <= 0.0 || max_rate.is_nan() {
        return Err(format!("--max-rate: must be a positive number of packets/s, got {max_rate}"));
    }
    let ceil = rate_ceiling(ip);
    if max_rate > ceil {
        return Err(if ip.is_loopback() {
            format!("--max-rate: at most {ceil} packets/s even on loopback, got {max_rate}")
        } else {
            format!(
                "--max-rate: above {THESIS_MAX_RATE} packets/s (1 per ms, the thesis's limit) is allowed only on loopback, \
                 and {ip} is not loopback (got {max_rate})"
            )
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::assertions_on_constants)]
    fn defaults_follow_the_thesis() {
        assert_eq!(DEFAULT_IDLE_S, 10.0);
        assert_eq!(MAX_CLIENTS, 10);
        assert_eq!(window::WINDOW, 128);
        assert_eq!(DEFAULT_SIZE, proto::UDP_HEADER);
        assert_eq!(proto::UDP_MAX, 400);
        assert!(DEFAULT_RATE < THESIS_MAX_RATE);
        let c = server::ServerConfig::from_args(&[]).unwrap();
        assert_eq!(c.idle_timeout.as_secs_f64(), 10.0);
        assert_eq!(c.max_clients, 10);
        assert_eq!(c.max_rate, THESIS_MAX_RATE);
        assert_eq!(c.bind.to_string(), "127.0.0.1");
    }

    #[test]
    fn rate_caps() {
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        let far: IpAddr = "192.0.2.1".parse().unwrap();
        assert!(check_rate_cap(50_000.0, lo).is_ok());
        assert!(check_rate_cap(1000.0, far).is_ok());
        assert!(check_rate_cap(1001.0, far).unwrap_err().contains("only on loopback"));
        assert!(check_rate_cap(1e9, lo).is_err());
        assert!(check_rate_cap(0.0, lo).is_err());
    }
}
