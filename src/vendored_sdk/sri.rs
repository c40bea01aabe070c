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
//! Decoding is the `base64` crate's standard engine, which requires canonical padding and
//! refuses non-zero trailing bits; the length and padding are checked first so that each
//! refusal keeps its plain reason.

/// One `<algorithm>-<base64>` token of an integrity string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SriHash {
    /// As written, e.g. `sha512`, `sha1`.
    pub(crate) algorithm: String,
    /// The decoded digest.
    pub(crate) digest: Vec<u8>,
}

/// Why an integrity string is not well-formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SriError {
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
pub(crate) fn parse(integrity: &str) -> Result<Vec<SriHash>, SriError> {
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
pub(crate) fn decode_base64(s: &str) -> Result<Vec<u8>, &'static str> {
    use base64::{DecodeError, Engine};
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return Err("no digest after the `-`");
    }
    if !bytes.len().is_multiple_of(4) {
        return Err("length is not a multiple of 4");
    }
    if bytes.iter().rev().take_while(|&&b| b == b'=').count() > 2 {
        return Err("more than two `=`");
    }
    // STANDARD: canonical padding required, trailing bits must be zero.
    base64::engine::general_purpose::STANDARD
        .decode(bytes)
        .map_err(|e| match e {
            DecodeError::InvalidLastSymbol(..) => "non-zero bits after the last byte",
            DecodeError::InvalidByte(..) => "a character outside the base64 alphabet",
            DecodeError::InvalidLength(_) | DecodeError::InvalidPadding => {
                "padding is not canonical"
            }
        })
}

/// The canonical encoding, for reporting the integrity a tarball should have.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
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
    fn each_refusal_keeps_its_reason() {
        for (bad, reason) in [
            ("", "no digest after the `-`"),
            ("Zm9vYg=", "length is not a multiple of 4"),
            ("Zm9vYh==", "non-zero bits after the last byte"),
            ("Zm9-Yg==", "a character outside the base64 alphabet"),
            ("Zm=vYg==", "a character outside the base64 alphabet"),
            ("Z===", "more than two `=`"),
        ] {
            assert_eq!(decode_base64(bad), Err(reason), "{bad:?}");
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
