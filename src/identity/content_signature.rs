//! The `content` and `signature` checks of a release: its files against its `MANIFEST.sha256`,
//! and that manifest's signature against every trust policy given, over the same bytes read
//! once. A policy that lies inside the prefix it vouches for fails.

use std::fs;
use std::path::{Path, PathBuf};

use crate::content::manifest::{self, ManifestError};
use crate::identity::checks::Target;
use crate::identity::report::Check;
use crate::trust::allowed_signers::Policy;
use crate::trust::provenance;
use crate::trust::signature::{self, SignatureError};
use crate::trust::Trust;

/// Why one trust policy does not vouch for the release.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TrustError {
    #[error(
        "the trust policy {} lies inside the prefix {} it vouches for: whoever can write the \
         release can write the policy; keep it outside, owned by root",
        .policy.display(), .prefix.display()
    )]
    PolicyInsidePrefix { policy: PathBuf, prefix: PathBuf },
    #[error(transparent)]
    Signature(#[from] SignatureError),
}

/// The `content` check, and the `signature` check ([`signature::check`]) over the very bytes
/// of the manifest that `content` checks the release against: read once, so that a manifest
/// swapped between two reads cannot have one checked for content and another for the signature.
///
/// `content` runs when the release holds a manifest, or one is required (`--content`, or a trust
/// policy: the signature covers the manifest, the manifest the files). `signature` runs with a
/// trust policy, every one of `target.trust` having to pass; without one, `unchecked_row` adds a
/// pass that only says whether the release is signed ("unsigned", "signed, not checked").
pub(crate) fn content_and_signature(target: &Target, unchecked_row: bool) -> Vec<Check> {
    let required = target.require_content || !target.trust.is_empty();
    let signed = !target.trust.signers.is_empty();
    let proven = &target.trust.builders;
    let mut checks = Vec::new();
    let dir = match target.release.dir() {
        Ok(dir) => dir,
        Err(e) => {
            if required {
                checks.push(Check::from_result("content", Err(&e)));
            }
            if !proven.is_empty() {
                let why = format!("no release to check: {e}");
                checks.push(Check::from_result("provenance", Err(why)));
            }
            if signed {
                let why = format!("no release to check: {e}");
                checks.push(Check::from_result("signature", Err(why)));
            } else if unchecked_row {
                let why = "not checked: no trust policy".to_string();
                checks.push(Check::skipped("signature", why));
            }
            return checks;
        }
    };
    let shown = |e: &ManifestError| match e.help() {
        Some(help) => format!("{e} ({help})"),
        None => e.to_string(),
    };
    let bytes = manifest::read_manifest(&dir);
    let content = match &bytes {
        Ok(b) => match manifest::verify_release_against(&dir, b, manifest::default_jobs()) {
            Ok(report) if report.ok() => Some(Ok(report.summary())),
            Ok(report) => Some(Err(report.summary())),
            Err(e) => Some(Err(shown(&e))),
        },
        Err(ManifestError::NoManifest { .. }) if !required => None,
        Err(e) => Some(Err(shown(e))),
    };
    if let Some(content) = content {
        checks.push(Check::from_result("content", content));
    }
    checks.extend(proofs(
        target.trust,
        &target.prefix,
        &dir,
        &bytes,
        unchecked_row,
    ));
    checks
}

/// The `provenance` and `signature` rows of `trust` for the release directory `dir` of the
/// deployment `prefix`, over the manifest as it was read once (`bytes`, the same the content
/// check used). Each runs when `trust` asks for it, every policy of its kind having to pass;
/// without a policy, `unchecked_row` adds rows that only say what the release holds ("signed,
/// not checked", a bundle "present, not checked"). A policy or trusted root inside `prefix`
/// vouches for nothing.
pub(crate) fn proofs(
    trust: &Trust,
    prefix: &Path,
    dir: &Path,
    bytes: &Result<Vec<u8>, ManifestError>,
    unchecked_row: bool,
) -> Vec<Check> {
    let mut checks = Vec::new();
    let missing = |e: &ManifestError, what: &str| {
        let shown = match e.help() {
            Some(help) => format!("{e} ({help})"),
            None => e.to_string(),
        };
        Err(format!(
            "{shown}; {what} covers the manifest, so it must be there"
        ))
    };
    if !trust.builders.is_empty() {
        let result = match bytes {
            Err(e) => missing(e, "a provenance bundle"),
            Ok(manifest) => joined(trust.builders.iter().map(|(policy, roots)| {
                for file in [Some(policy.path.as_path()), roots.file()]
                    .into_iter()
                    .flatten()
                {
                    outside(file, prefix).map_err(|e| e.to_string())?;
                }
                provenance::check(policy, roots, dir, manifest).map_err(|e| e.to_string())
            })),
        };
        checks.push(Check::from_result("provenance", result));
    } else if unchecked_row && dir.join(provenance::BUNDLE_NAME).exists() {
        checks.push(Check::skipped(
            "provenance",
            format!(
                "{} is present, not checked: no builder policy (--trusted-builder FILE checks it)",
                provenance::BUNDLE_NAME
            ),
        ));
    }
    if trust.signers.is_empty() {
        if unchecked_row {
            checks.push(Check::skipped("signature", signature::unchecked(dir)));
        }
        return checks;
    }
    let result = match bytes {
        Err(e) => missing(e, "a signature"),
        Ok(manifest) => {
            let now = std::time::SystemTime::now();
            joined(trust.signers.iter().map(|p| {
                policy_outside(p, prefix).map_err(|e| e.to_string())?;
                signature::check(p, dir, manifest, now).map_err(|e| e.to_string())
            }))
        }
    };
    checks.push(Check::from_result("signature", result));
    checks
}

/// Every verdict passed: their evidence joined; else every failure joined.
fn joined(verdicts: impl Iterator<Item = Result<String, String>>) -> Result<String, String> {
    let (passed, failed): (Vec<_>, Vec<_>) = verdicts.partition(Result::is_ok);
    let text = |v: Vec<Result<String, String>>| {
        v.into_iter()
            .map(|r| r.unwrap_or_else(|e| e))
            .collect::<Vec<_>>()
            .join("; ")
    };
    match failed.is_empty() {
        true => Ok(text(passed)),
        false => Err(text(failed)),
    }
}

/// A trust policy inside the prefix it vouches for vouches for nothing: whoever can write the
/// release can write the policy too. Compared by path components after resolving both.
pub(crate) fn policy_outside(policy: &Policy, prefix: &Path) -> Result<(), TrustError> {
    outside(&policy.path, prefix)
}

/// The trust file `file` (a policy, a trusted root) lies outside `prefix`, by path components
/// after resolving both.
pub(crate) fn outside(file: &Path, prefix: &Path) -> Result<(), TrustError> {
    let (Ok(resolved), Ok(root)) = (fs::canonicalize(file), fs::canonicalize(prefix)) else {
        return Ok(());
    };
    if resolved.starts_with(&root) {
        return Err(TrustError::PolicyInsidePrefix {
            policy: file.to_path_buf(),
            prefix: prefix.to_path_buf(),
        });
    }
    Ok(())
}
