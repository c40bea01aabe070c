//! Subresource Integrity strings as npm writes them into `package-lock.json`:
//! `sha512-<base64 of the 64-byte digest>`.
//!
//! The parse is strict, because an `integrity` field is the evidence that the tarball npm
//! installs is the one that was locked: base64 must be the standard alphabet with canonical
//! padding (no whitespace, no URL-safe letters, no stray bits after the last byte), and
//! `?options` suffixes, which npm never writes for a tarball, are refused.
//!
//! Several space-separated hashes are parsed one by one; what they must agree with is the
//! verifier's decision ([`crate::vendored_sdk`]), not this module's. npm's `ssri` accepts a
//! tarball when *any* hash of the strongest algorithm matches, so a second, attacker-chosen
//! `sha512-` beside the real one would still install; the verifier therefore requires every
//! hash to be sha512 and every one to match.
//!
//! A small decoder is written here instead of adding the `base64` crate: 40 lines that refuse
//! everything non-canonical are easier to audit than the crate's configuration of the same.

/// One `<algorithm>-<base64>` token of an integrity string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SriHash {
    /// As written, e.g. `sha512`, `sha1`.
    pub algorithm: String,
    /// The decoded digest.
    pub digest: Vec<u8>,
}

/// Why an integrity string is not well-formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SriError {
    #[error("integrity is empty")]
    Empty,
    #[error("`{token}` is not `<algorithm>-<base64>`")]
    NoAlgorithm { token: String },
    #[error("`{token}` carries options (`?…`), which npm never writes for a tarball")]
    Options { token: String },
    #[error("`{token}` is not canonical base64: {reason}")]
    Base64 { token: String, reason: &'static str },
}

/// Split an integrity string on ASCII whitespace and parse every token.
pub fn parse(integrity: &str) -> Result<Vec<SriHash>, SriError> {
    let tokens: Vec<&str> = integrity.split_ascii_whitespace().collect();
    if tokens.is_empty() {
        return Err(SriError::Empty);
    }
    tokens.into_iter().map(parse_token).collect()
}

fn parse_token(token: &str) -> Result<SriHash, SriError> {
    let (algorithm, b64) = token
        .split_once('-')
        .filter(|(a, _)| !a.is_empty() && a.bytes().all(|b| b.is_ascii_alphanumeric()))
        .ok_or_else(|| SriError::NoAlgorithm {
            token: token.to_string(),
        })?;
    if b64.contains('?') {
        return Err(SriError::Options {
            token: token.to_string(),
        });
    }
    let digest = decode_base64(b64).map_err(|reason| SriError::Base64 {
        token: token.to_string(),
        reason,
    })?;
    Ok(SriHash {
        algorithm: algorithm.to_string(),
        digest,
    })
}

/// The standard alphabet with `=` padding, as `Buffer.toString('base64')` writes it.
pub fn decode_base64(s: &str) -> Result<Vec<u8>, &'static str> {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return Err("no digest after the `-`");
    }
    if !bytes.len().is_multiple_of(4) {
        return Err("length is not a multiple of 4");
    }
    let pad = bytes.iter().rev().take_while(|&&b| b == b'=').count();
    if pad > 2 {
        return Err("more than two `=`");
    }
    let body = &bytes[..bytes.len() - pad];
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in body {
        let v = value(c).ok_or("a character outside the base64 alphabet")?;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // What is left must be the zero padding bits of a canonical encoding.
    if acc != 0 {
        return Err("non-zero bits after the last byte");
    }
    Ok(out)
}

/// The canonical encoding, for reporting the integrity a tarball should have.
pub fn encode_base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_tail_length() {
        for n in 0..10u8 {
            let data: Vec<u8> = (0..n).map(|i| i.wrapping_mul(97)).collect();
            let enc = encode_base64(&data);
            if n > 0 {
                assert_eq!(decode_base64(&enc).unwrap(), data, "{enc}");
            }
        }
        // Known answers (RFC 4648 §10).
        assert_eq!(encode_base64(b"foob"), "Zm9vYg==");
        assert_eq!(encode_base64(b"fooba"), "Zm9vYmE=");
        assert_eq!(decode_base64("Zm9vYmFy").unwrap(), b"foobar");
    }

    #[test]
    fn refuses_non_canonical_base64() {
        for bad in [
            "Zm9vYg=",
            "Zm9vYg",
            "Zm9vYh==",
            "Zm9v Yg==",
            "Zm9-Yg==",
            "Z===",
            "====",
        ] {
            assert!(decode_base64(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn parses_what_npm_writes() {
        let v = parse("sha512-p0DbIXiWcM4IhizlIpxBpiFFcRaDXc5l6YDkmWBHq0EKecUethMDECw7yRa6SUkEPnPBAdJ4WdE9FsWQXhVu0Q==").unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].algorithm, "sha512");
        assert_eq!(v[0].digest.len(), 64);
        assert_eq!(v[0].digest[0], 0xa7);
    }

    #[test]
    fn several_tokens_and_malformed_ones() {
        let v = parse(" sha1-Zm9v  sha512-Zm9vYg== ").unwrap();
        let algs: Vec<_> = v.iter().map(|h| h.algorithm.as_str()).collect();
        assert_eq!(algs, ["sha1", "sha512"]);
        assert_eq!(parse("  "), Err(SriError::Empty));
        assert!(matches!(
            parse("Zm9vYg=="),
            Err(SriError::NoAlgorithm { .. })
        ));
        assert!(matches!(
            parse("sha512-Zm9vYg==?foo"),
            Err(SriError::Options { .. })
        ));
        assert!(matches!(parse("sha512-"), Err(SriError::Base64 { .. })));
    }
}
