//! Protocol v2 secrets: session ids and nonces from the OS CSPRNG (`getrandom(2)`), and
//! HMAC-SHA256 (RFC 2104) for the handshake proofs and the per-session datagram key.
//!
//! Every MAC input starts with a distinct label (domain separation), so a value computed
//! for one purpose can never be replayed as another. Without a shared token the key is
//! the empty string: the MAC then only protects integrity and binds a datagram to a
//! session whose 128-bit id an off-path attacker cannot guess; with a token an on-path
//! observer, who sees the id, still cannot forge a datagram (README "Threat model").

use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

pub const NONCE_LEN: usize = 16;
pub const PROOF_LEN: usize = 16;
/// Datagram tag: HMAC-SHA256 truncated to 96 bits (as HMAC-SHA1-96, RFC 2404; RFC 2104
/// §5 allows truncation to no less than 80 bits), so a v2 probe stays 48 bytes.
pub const TAG_LEN: usize = 12;
/// Shortest and longest accepted token, bytes.
pub const TOKEN_MIN: usize = 8;
pub const TOKEN_MAX: usize = 1024;

pub type Nonce = [u8; NONCE_LEN];
pub type Proof = [u8; PROOF_LEN];
pub type Key = [u8; 32];

/// `N` bytes from the OS CSPRNG. The probe cannot run without one (predictable ids
/// were the v1 weakness), so a failure is fatal and reported.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], String> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| format!("the OS random number generator failed: {e}"))?;
    Ok(b)
}

/// A fresh session id: 128 bits from the CSPRNG, never 0 (0 marks "no session").
pub fn new_session_id() -> Result<u128, String> {
    loop {
        let id = u128::from_be_bytes(random_bytes::<16>()?);
        if id != 0 {
            return Ok(id);
        }
    }
}

fn hmac(key: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    // HMAC accepts keys of any length (RFC 2104 §2), so this never fails
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    for p in parts {
        m.update(p);
    }
    m
}

fn full(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    hmac(key, parts).finalize().into_bytes().into()
}

fn trunc16(x: [u8; 32]) -> Proof {
    x[..PROOF_LEN].try_into().unwrap()
}

/// The client's handshake proof: it knows the token, bound to both nonces (no replay).
pub fn client_proof(token: &[u8], cn: &Nonce, sn: &Nonce) -> Proof {
    trunc16(full(token, &[b"ccprobe v2 client proof", cn, sn]))
}

/// The server's proof in the StartPacket: it knows the token and issued this id.
pub fn server_proof(token: &[u8], cn: &Nonce, sn: &Nonce, sid: u128) -> Proof {
    trunc16(full(token, &[b"ccprobe v2 server proof", cn, sn, &sid.to_be_bytes()]))
}

/// The per-session datagram key.
pub fn session_key(token: &[u8], cn: &Nonce, sn: &Nonce, sid: u128) -> Key {
    full(token, &[b"ccprobe v2 datagram key", cn, sn, &sid.to_be_bytes()])
}

/// Constant-time comparison of two proofs (through the MAC crate's verifier).
pub fn proof_ok(token: &[u8], want_parts: &[&[u8]], got: &Proof) -> bool {
    hmac(token, want_parts).verify_truncated_left(got).is_ok()
}

pub fn client_proof_ok(token: &[u8], cn: &Nonce, sn: &Nonce, got: &Proof) -> bool {
    proof_ok(token, &[b"ccprobe v2 client proof", cn, sn], got)
}

pub fn server_proof_ok(token: &[u8], cn: &Nonce, sn: &Nonce, sid: u128, got: &Proof) -> bool {
    proof_ok(token, &[b"ccprobe v2 server proof", cn, sn, &sid.to_be_bytes()], got)
}

/// Tag of a datagram: over everything but the tag field itself.
pub fn datagram_tag(key: &Key, head: &[u8], tail: &[u8]) -> [u8; TAG_LEN] {
    full(key, &[head, tail])[..TAG_LEN].try_into().unwrap()
}

pub fn datagram_tag_ok(key: &Key, head: &[u8], tail: &[u8], tag: &[u8]) -> bool {
    tag.len() == TAG_LEN && hmac(key, &[head, tail]).verify_truncated_left(tag).is_ok()
}

/// The shared token: `--token`, else the environment variable (empty = none).
pub fn token_from(option: Option<&str>, env: Option<&str>) -> Result<Option<Vec<u8>>, String> {
    match (option, env) {
        (Some(t), _) => check_token(t, "--token").map(Some),
        (None, Some(t)) if !t.is_empty() => check_token(t, crate::server::TOKEN_ENV).map(Some),
        _ => Ok(None),
    }
}

/// Checks a token given by the user; one line naming where it came from.
pub fn check_token(t: &str, source: &str) -> Result<Vec<u8>, String> {
    let n = t.len();
    if !(TOKEN_MIN..=TOKEN_MAX).contains(&n) {
        return Err(format!(
            "{source}: a token must be {TOKEN_MIN} to {TOKEN_MAX} bytes long, got {n} (the token itself is not shown)"
        ));
    }
    Ok(t.as_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_and_proofs_bind_everything() {
        let a = new_session_id().unwrap();
        let b = new_session_id().unwrap();
        assert_ne!(a, b);
        let (cn, sn) = ([1u8; 16], [2u8; 16]);
        let p = client_proof(b"secret-token", &cn, &sn);
        assert!(client_proof_ok(b"secret-token", &cn, &sn, &p));
        assert!(!client_proof_ok(b"other-token!", &cn, &sn, &p));
        assert!(!client_proof_ok(b"secret-token", &sn, &cn, &p));
        let s = server_proof(b"secret-token", &cn, &sn, a);
        assert!(server_proof_ok(b"secret-token", &cn, &sn, a, &s));
        assert!(!server_proof_ok(b"secret-token", &cn, &sn, b, &s));
        // a client proof is not a server proof (domain separation)
        assert_ne!(client_proof(b"k", &cn, &sn), trunc16(full(b"k", &[b"ccprobe v2 server proof", &cn, &sn])));
        assert_ne!(session_key(b"k", &cn, &sn, a), session_key(b"", &cn, &sn, a));
        assert!(check_token("short", "--token").unwrap_err().contains("8 to 1024 bytes"));
        assert_eq!(check_token("long enough", "--token").unwrap(), b"long enough");
    }
}
