//! Streaming file digests.
//!
//! A file is read through one fixed buffer ([`BUF_SIZE`]) and fed to the hasher, so memory
//! does not grow with the file. The caller may pass its own buffer so that a worker hashing
//! thousands of files allocates it once. `sha2` picks the SHA-NI (x86_64) or SHA2 (aarch64)
//! instructions at run time through `cpufeatures`, so no build flag is needed for speed.
//!
//! SHA-256 is what release manifests use; SHA-512 is what npm `integrity` strings use, which
//! the vendored-SDK verifier will need, hence [`Algorithm`] rather than one hard-coded hash.

use std::io::{self, Read};

use sha2::{Digest, Sha256, Sha512};

/// Bytes read per `read(2)`: large enough that syscall overhead is noise next to hashing,
/// small enough to stay in L2 and keep peak RSS low.
pub(crate) const BUF_SIZE: usize = 256 * 1024;

/// The digests mcp-deploy computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Algorithm {
    Sha256,
    Sha512,
}

impl Algorithm {
    /// Length of the digest in lowercase hex.
    pub(crate) fn hex_len(self) -> usize {
        match self {
            Algorithm::Sha256 => 64,
            Algorithm::Sha512 => 128,
        }
    }

    /// The name the BSD (`--tag`) form of a checksum line uses: `SHA256 (name) = hex`.
    pub(crate) fn tag(self) -> &'static str {
        match self {
            Algorithm::Sha256 => "SHA256",
            Algorithm::Sha512 => "SHA512",
        }
    }
}

/// Digest everything `reader` yields, using `buf` as the only read buffer.
pub(crate) fn digest_reader(
    algorithm: Algorithm,
    reader: &mut impl Read,
    buf: &mut [u8],
) -> io::Result<Vec<u8>> {
    match algorithm {
        Algorithm::Sha256 => stream::<Sha256>(reader, buf),
        Algorithm::Sha512 => stream::<Sha512>(reader, buf),
    }
}

fn stream<D: Digest>(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<Vec<u8>> {
    let mut hasher = D::new();
    loop {
        match reader.read(buf) {
            Ok(0) => return Ok(hasher.finalize().to_vec()),
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The SHA-256 (lowercase hex) of `v`'s canonical JSON bytes: compact, object keys sorted by
/// their UTF-8 bytes at every level. It names a value that must not be shown (an entry we
/// cannot parse may hold a secret anywhere), and it is the same however the file orders keys.
pub(crate) fn canonical_json_sha256(v: &serde_json::Value) -> String {
    fn canonical(v: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), canonical(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
            other => other.clone(),
        }
    }
    let bytes = serde_json::to_vec(&canonical(v)).expect("a Value serializes");
    to_hex(&Sha256::digest(&bytes))
}

/// The form in which an entry that cannot be parsed appears anywhere mcp-deploy reports or
/// records it (ledger, error, status): `{"opaque_sha256": "<hex>"}`, never its values.
pub(crate) fn opaque(v: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({ "opaque_sha256": canonical_json_sha256(v) })
}

/// The SHA-256 of `bytes` in lowercase hex, as `sha256sum` prints it (a journal's text, a
/// manifest's bytes).
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

/// Lowercase hex, as `sha256sum` prints it.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[usize::from(b >> 4)] as char);
        s.push(HEX[usize::from(b & 0xf)] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::fs::File;
    use std::path::Path;

    /// The lowercase hex digest of the file at `path`, read through `buf`.
    fn file_hex_with(algorithm: Algorithm, path: &Path, buf: &mut [u8]) -> io::Result<String> {
        let mut file = File::open(path)?;
        digest_reader(algorithm, &mut file, buf).map(|d| to_hex(&d))
    }

    /// The lowercase hex digest of the file at `path`, with a buffer of its own.
    fn file_hex(algorithm: Algorithm, path: &Path) -> io::Result<String> {
        file_hex_with(algorithm, path, &mut vec![0; BUF_SIZE])
    }

    /// `sha256sum`'s digest of a file, lowercase hex.
    fn sha256_file(path: &Path) -> io::Result<String> {
        file_hex(Algorithm::Sha256, path)
    }

    /// `sha512sum`'s digest of a file, lowercase hex.
    fn sha512_file(path: &Path) -> io::Result<String> {
        file_hex(Algorithm::Sha512, path)
    }

    // Known answers from `printf abc | sha256sum` / `sha512sum`.
    const ABC256: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    const ABC512: &str = "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
                          2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f";
    const EMPTY256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn known_answers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("abc");
        std::fs::write(&p, b"abc").unwrap();
        assert_eq!(sha256_file(&p).unwrap(), ABC256);
        assert_eq!(sha512_file(&p).unwrap(), ABC512);
        let e = dir.path().join("empty");
        std::fs::write(&e, b"").unwrap();
        assert_eq!(sha256_file(&e).unwrap(), EMPTY256);
        assert_eq!(Algorithm::Sha256.hex_len(), ABC256.len());
        assert_eq!(Algorithm::Sha512.hex_len(), ABC512.len());
    }

    #[test]
    fn a_tiny_buffer_gives_the_same_digest_as_a_large_one() {
        // Content longer than the buffer, and not a multiple of it, crosses every boundary.
        let data: Vec<u8> = (0..100_003u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut small = [0u8; 7];
        let mut large = vec![0u8; BUF_SIZE];
        let a = digest_reader(Algorithm::Sha256, &mut &data[..], &mut small).unwrap();
        let b = digest_reader(Algorithm::Sha256, &mut &data[..], &mut large).unwrap();
        assert_eq!(a, b);
        assert_eq!(to_hex(&a), to_hex(&Sha256::digest(&data)));
    }

    #[test]
    fn missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = sha256_file(&dir.path().join("nope")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn canonical_json_digest_ignores_key_order_and_spacing() {
        let a: serde_json::Value =
            serde_json::from_str(r#"{"b":[1,{"y":1,"x":2}],"a":"t"}"#).unwrap();
        let b: serde_json::Value =
            serde_json::from_str(r#"{ "a" : "t", "b" : [1, {"x":2, "y":1}] }"#).unwrap();
        assert_eq!(canonical_json_sha256(&a), canonical_json_sha256(&b));
        // sha256 of {"a":"t","b":[1,{"x":2,"y":1}]}
        assert_eq!(
            canonical_json_sha256(&a),
            to_hex(&Sha256::digest(br#"{"a":"t","b":[1,{"x":2,"y":1}]}"#))
        );
        assert_eq!(opaque(&a)["opaque_sha256"].as_str().unwrap().len(), 64);
    }
}
