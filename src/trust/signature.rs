//! The `signature` check: the release's `MANIFEST.sha256.sig` is an SSHSIG signature over the
//! exact bytes of its `MANIFEST.sha256`, for the `mcp-deploy` namespace, by a key the trust
//! policy lists on a line that allows that namespace and is valid now; and the manifest lists
//! `VERSION`, so that the signature covers the commit.
//!
//! The algorithm (each step's failure is the check's evidence; the key is named only by its
//! `SHA256:` fingerprint and the line's principals):
//! 1. Read `MANIFEST.sha256.sig` at the top of the release, bounded and never through a
//!    symlink (a link may lead to a signature that is not the release's); the caller has read
//!    `MANIFEST.sha256` the same way, once.
//! 2. Decode the armored SSHSIG; its namespace must be `mcp-deploy`.
//! 3. Find the policy's lines whose key is the signature's key; none is "not listed".
//! 4. Verify the signature over the manifest's bytes (RustCrypto `ssh-key`: Ed25519, ECDSA
//!    P-256/P-384/P-521, RSA of 2048 to 4096 bits with SHA-2; another key is refused naming
//!    its type or size, not as a signature that does not verify).
//! 5. One of those lines must allow the namespace and be valid now (`valid-after` <= now <=
//!    `valid-before`), else each line's reason is given.
//! 6. The manifest must list `VERSION`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use ssh_key::{Algorithm as Alg, HashAlg, SshSig};

use crate::content::digest::Algorithm;
use crate::content::manifest::MANIFEST_NAME;
use crate::content::sumfile::{self, SumFileError};
use crate::fsio::{self, IoError};
use crate::trust::allowed_signers::{Policy, Standing};
use crate::trust::{NAMESPACE, SIGNATURE_NAME};

/// Why the `signature` check fails. `key` is the signing key as `key SHA256:… (type)`, and
/// `signer` the policy line that lists it (`principals (file:line)`): public evidence, never
/// more of the policy or the release than that.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SignatureError {
    #[error(
        "unsigned: no {SIGNATURE_NAME} in {}, and the trust policy {} requires a signature by \
         one of its signers",
        .release.display(), .policy.display()
    )]
    Unsigned { release: PathBuf, policy: PathBuf },
    #[error(
        "{} is a symlink (-> {}): a release's signature must be a regular file in it, never \
         followed out of it",
        .path.display(), .target.display()
    )]
    IsALink { path: PathBuf, target: PathBuf },
    #[error(transparent)]
    Read(#[from] IoError),
    #[error(
        "{} is not an SSH signature (`ssh-keygen -Y sign` output): {why}",
        .path.display()
    )]
    NotASignature { path: PathBuf, why: ssh_key::Error },
    /// `namespace`: at most 64 characters of it.
    #[error(
        "signed by {key} for the namespace {namespace:?}, not {NAMESPACE:?}: a signature made \
         for another purpose is not a release signature"
    )]
    WrongNamespace { key: String, namespace: String },
    #[error("signed by {key}, which the trust policy {} does not list", .policy.display())]
    NotListed { key: String, policy: PathBuf },
    #[error(
        "signed by {signer} with {key}: mcp-deploy verifies Ed25519, ECDSA and RSA signatures, \
         not {algorithm}"
    )]
    Unsupported {
        signer: String,
        key: String,
        algorithm: String,
    },
    #[error(
        "signed by {signer} with {key}, an RSA key of {bits} bits: mcp-deploy verifies RSA keys \
         of 2048 to 4096 bits (sign with an Ed25519 key, or RSA within those sizes)"
    )]
    RsaSize {
        signer: String,
        key: String,
        bits: usize,
    },
    #[error(
        "the signature by {signer} with {key} does not verify over {MANIFEST_NAME} ({why}): the \
         manifest changed after it was signed, or the signature is over another file"
    )]
    DoesNotVerify {
        signer: String,
        key: String,
        why: ssh_key::Error,
    },
    /// Each line listing the key, and why it does not allow the signature now.
    #[error(
        "the signature by {key} verifies, but the trust policy does not allow it now: {}",
        .refusals.join("; ")
    )]
    NotAllowedNow { key: String, refusals: Vec<String> },
    #[error("signed, but {0}")]
    Manifest(SumFileError),
    #[error(
        "signed by {signer} with {key}, but {MANIFEST_NAME} does not list VERSION, so the \
         signature does not cover the commit"
    )]
    VersionNotListed { signer: String, key: String },
}

/// What the report says of a release's signature when no trust policy is given: whether it
/// is signed, never a verdict.
pub(crate) fn unchecked(release: &Path) -> String {
    if fs::symlink_metadata(release.join(SIGNATURE_NAME)).is_ok() {
        format!("signed, not checked: no trust policy ({SIGNATURE_NAME} is present; --trusted-signers FILE checks it)")
    } else {
        format!("unsigned: no {SIGNATURE_NAME} (not checked: no trust policy)")
    }
}

/// Run the check for the release directory `release`, whose `MANIFEST.sha256` holds `manifest`
/// (read once by the caller, bounded and never through a link: the `content` check checks the
/// files against the same bytes), at time `now`.
pub(crate) fn check(
    policy: &Policy,
    release: &Path,
    manifest: &[u8],
    now: SystemTime,
) -> Result<String, SignatureError> {
    let now = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let policy_name = policy.path.display();
    // 1. Read the signature, refusing links and anything not a regular file.
    let sig_path = release.join(SIGNATURE_NAME);
    match fs::symlink_metadata(&sig_path) {
        Err(_) => {
            return Err(SignatureError::Unsigned {
                release: release.to_path_buf(),
                policy: policy.path.clone(),
            })
        }
        Ok(m) if m.file_type().is_symlink() => {
            let target = fs::read_link(&sig_path).unwrap_or_default();
            return Err(SignatureError::IsALink {
                path: sig_path,
                target,
            });
        }
        Ok(_) => {}
    }
    // O_NOFOLLOW: a link swapped in after the look above is refused too.
    let armored = fsio::read_input_no_follow(&sig_path, "signature", fsio::limits::SIGNATURE)?;
    let manifest_path = release.join(MANIFEST_NAME);

    // 2. Decode; the namespace is fixed.
    let sig = SshSig::from_pem(&armored).map_err(|why| SignatureError::NotASignature {
        path: sig_path.clone(),
        why,
    })?;
    let fingerprint = sig.public_key().fingerprint(HashAlg::Sha256);
    let algorithm = sig.public_key().algorithm();
    let key = format!("key {fingerprint} ({algorithm})");
    if sig.namespace() != NAMESPACE {
        let ns: String = sig.namespace().chars().take(64).collect();
        return Err(SignatureError::WrongNamespace { key, namespace: ns });
    }

    // 3. The policy's lines for this key.
    let lines: Vec<_> = policy
        .signers
        .iter()
        .filter(|s| s.key.key_data() == sig.public_key())
        .collect();
    if lines.is_empty() {
        return Err(SignatureError::NotListed {
            key,
            policy: policy.path.clone(),
        });
    }
    let who = |s: &crate::trust::allowed_signers::Signer| {
        let p = printable(&s.principals);
        format!("{p} ({policy_name}:{})", s.line)
    };

    // What the crate verifies: not DSA nor security keys (sk-*), which it cannot check.
    if !matches!(
        algorithm,
        Alg::Ed25519 | Alg::Ecdsa { .. } | Alg::Rsa { .. }
    ) {
        return Err(SignatureError::Unsupported {
            signer: who(lines[0]),
            key,
            algorithm: algorithm.to_string(),
        });
    }
    // The RSA crate verifies moduli of 2048 to 4096 bits only; any other fails as a
    // "cryptographic error", which would read like a tampered manifest. Say what it is.
    if let Some(rsa) = sig.public_key().rsa() {
        let bytes = rsa.n.as_positive_bytes().unwrap_or_default();
        let bits = match bytes.first() {
            Some(first) => (bytes.len() - 1) * 8 + (8 - first.leading_zeros() as usize),
            None => 0,
        };
        if !(2048..=4096).contains(&bits) {
            return Err(SignatureError::RsaSize {
                signer: who(lines[0]),
                key,
                bits,
            });
        }
    }

    // 4. The signature itself, over the manifest's exact bytes.
    if let Err(why) = lines[0].key.verify(NAMESPACE, manifest, &sig) {
        return Err(SignatureError::DoesNotVerify {
            signer: who(lines[0]),
            key,
            why,
        });
    }

    // 5. A line that allows it now.
    let mut refusals = Vec::new();
    let mut allowed = None;
    for s in &lines {
        match s.standing(NAMESPACE, now) {
            Standing::Allowed => {
                allowed = Some(*s);
                break;
            }
            Standing::NamespaceNotAllowed(list) => refusals.push(format!(
                "{} does not allow the namespace {NAMESPACE} (namespaces=\"{}\")",
                who(s),
                printable(&list)
            )),
            Standing::NotYetValid(after) => refusals.push(format!(
                "{} is not valid yet (valid-after {})",
                who(s),
                show_time(after)
            )),
            Standing::Expired(before) => refusals.push(format!(
                "{} has expired (valid-before {})",
                who(s),
                show_time(before)
            )),
        }
    }
    let Some(signer) = allowed else {
        return Err(SignatureError::NotAllowedNow { key, refusals });
    };

    // 6. The signature covers the commit only if the manifest lists VERSION.
    let entries = sumfile::parse(Algorithm::Sha256, &manifest_path, manifest)
        .map_err(SignatureError::Manifest)?;
    if !entries.iter().any(|e| e.path == Path::new("VERSION")) {
        return Err(SignatureError::VersionNotListed {
            signer: who(signer),
            key,
        });
    }
    Ok(format!(
        "{MANIFEST_NAME} (listing VERSION) is signed by {} with {key} for {NAMESPACE}",
        who(signer)
    ))
}

/// Text from the policy as evidence: at most 128 characters, control characters escaped (a
/// principal holding a terminal escape must not recolour the report), and so are the
/// invisible formatting characters — bidirectional overrides and isolates, zero-width ones, a
/// byte-order mark — with which a principal could read as another in the report.
fn printable(text: &str) -> String {
    crate::text::printable(&text.chars().take(128).collect::<String>())
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
fn show_time(secs: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + std::time::Duration::from_secs(secs)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssh_key::private::{Ed25519Keypair, KeypairData};
    use ssh_key::{LineEnding, PrivateKey};

    fn key(seed: u8) -> PrivateKey {
        let pair = Ed25519Keypair::from_seed(&[seed; 32]);
        PrivateKey::new(KeypairData::Ed25519(pair), "test").unwrap()
    }

    fn release(manifest: &[u8], sig: Option<String>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(MANIFEST_NAME), manifest).unwrap();
        if let Some(sig) = sig {
            fs::write(dir.path().join(SIGNATURE_NAME), sig).unwrap();
        }
        dir
    }

    fn manifest_of(dir: &tempfile::TempDir) -> Vec<u8> {
        fs::read(dir.path().join(MANIFEST_NAME)).unwrap()
    }

    fn sign(k: &PrivateKey, ns: &str, msg: &[u8]) -> String {
        k.sign(ns, HashAlg::Sha512, msg)
            .unwrap()
            .to_pem(LineEnding::LF)
            .unwrap()
    }

    fn policy(line: &str) -> Policy {
        Policy::parse(Path::new("signers"), line).unwrap()
    }

    fn line(k: &PrivateKey, options: &str) -> String {
        format!(
            "builder@example.org {options} {}",
            k.public_key().to_openssh().unwrap()
        )
    }

    const MANIFEST: &[u8] =
        b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  VERSION\n";

    #[test]
    fn a_signature_made_here_passes_and_names_principal_and_fingerprint() {
        let k = key(1);
        let dir = release(MANIFEST, Some(sign(&k, NAMESPACE, MANIFEST)));
        let ok = check(
            &policy(&line(&k, "")),
            dir.path(),
            &manifest_of(&dir),
            SystemTime::now(),
        )
        .unwrap();
        let fp = k.public_key().fingerprint(HashAlg::Sha256).to_string();
        assert!(
            ok.contains(&fp) && ok.contains("builder@example.org (signers:1)"),
            "{ok}"
        );
        assert!(
            !ok.contains("AAAA"),
            "no key material beyond the fingerprint: {ok}"
        );
    }

    #[test]
    fn every_refusal_says_why() {
        let (k, other) = (key(1), key(2));
        let good = sign(&k, NAMESPACE, MANIFEST);
        type Case<'a> = (&'a str, Vec<u8>, Option<String>, String, &'a str);
        let cases: Vec<Case> = vec![
            (
                "unsigned",
                MANIFEST.to_vec(),
                None,
                line(&k, ""),
                "unsigned",
            ),
            (
                "unlisted key",
                MANIFEST.to_vec(),
                Some(sign(&other, NAMESPACE, MANIFEST)),
                line(&k, ""),
                "does not list",
            ),
            (
                "wrong namespace",
                MANIFEST.to_vec(),
                Some(sign(&k, "git", MANIFEST)),
                line(&k, ""),
                "namespace \"git\"",
            ),
            (
                "changed manifest",
                b"changed".to_vec(),
                Some(good.clone()),
                line(&k, ""),
                "does not verify",
            ),
            (
                "namespaces=git",
                MANIFEST.to_vec(),
                Some(good.clone()),
                line(&k, "namespaces=\"git\""),
                "does not allow the namespace",
            ),
            (
                "expired",
                MANIFEST.to_vec(),
                Some(good.clone()),
                line(&k, "valid-before=\"20000101Z\""),
                "has expired",
            ),
            (
                "not yet valid",
                MANIFEST.to_vec(),
                Some(good.clone()),
                line(&k, "valid-after=\"29990101Z\""),
                "not valid yet",
            ),
            (
                "garbage",
                MANIFEST.to_vec(),
                Some("-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n".into()),
                line(&k, ""),
                "not an SSH signature",
            ),
        ];
        for (name, manifest, sig, policy_line, want) in cases {
            let dir = release(&manifest, sig);
            let e = check(
                &policy(&policy_line),
                dir.path(),
                &manifest_of(&dir),
                SystemTime::now(),
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains(want), "{name}: {e}");
        }
        let no_version =
            b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  bin/x\n";
        let dir = release(no_version, Some(sign(&k, NAMESPACE, no_version)));
        let e = check(
            &policy(&line(&k, "")),
            dir.path(),
            &manifest_of(&dir),
            SystemTime::now(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("does not list VERSION"), "{e}");
    }

    #[test]
    fn a_second_line_for_the_key_can_allow_what_the_first_does_not() {
        let k = key(3);
        let text = format!(
            "{}\n{}\n",
            line(&k, "namespaces=\"git\""),
            line(&k, "namespaces=\"mcp-*\"")
        );
        let dir = release(MANIFEST, Some(sign(&k, NAMESPACE, MANIFEST)));
        let ok = check(
            &policy(&text),
            dir.path(),
            &manifest_of(&dir),
            SystemTime::now(),
        )
        .unwrap();
        assert!(ok.contains("(signers:2)"), "{ok}");
    }

    #[test]
    fn invisible_formatting_in_a_principal_is_shown_escaped() {
        let shown = printable("evil\u{202e}gro.elpmaxe@redliub\u{200b}");
        assert_eq!(shown, "evil\\u{202e}gro.elpmaxe@redliub\\u{200b}");
        assert_eq!(printable("ci@example.org"), "ci@example.org");
    }

    #[test]
    fn unchecked_says_signed_or_unsigned() {
        let dir = release(MANIFEST, None);
        assert!(unchecked(dir.path()).starts_with("unsigned"));
        fs::write(dir.path().join(SIGNATURE_NAME), "x").unwrap();
        assert!(unchecked(dir.path()).starts_with("signed, not checked"));
    }

    #[test]
    fn random_bytes_as_a_signature_never_panic() {
        let k = key(1);
        let p = policy(&line(&k, ""));
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for n in 0..200 {
            let mut junk = b"-----BEGIN SSH SIGNATURE-----\n".to_vec();
            for _ in 0..n {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                junk.push(
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n"
                        [(seed % 66) as usize],
                );
            }
            junk.extend_from_slice(b"\n-----END SSH SIGNATURE-----\n");
            let dir = release(MANIFEST, Some(String::from_utf8(junk).unwrap()));
            assert!(check(&p, dir.path(), MANIFEST, SystemTime::now()).is_err());
        }
    }
}
