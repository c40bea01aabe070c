//! Everything that can go wrong in the vendored-SDK verifier, with the evidence (paths,
//! expected and actual values) and what to do about it.

use std::path::PathBuf;

use crate::content::sumfile::SumFileError;
use crate::fsio::{self, DirError, IoError};

/// Everything that can go wrong. Where a variant occurs decides the exit status (see the
/// module header): the first group stops the run (exit 2); the second is the evidence of a
/// failed check (exit 1), or a refusal of `pin-vendor`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VendorError {
    // Could not run.
    #[error(transparent)]
    Dir(#[from] DirError),
    #[error(transparent)]
    Walk(#[from] fsio::WalkError),
    #[error(transparent)]
    Io(#[from] IoError),
    #[error("release manifest {path}: {reason}")]
    ManifestMalformed { path: PathBuf, reason: String },
    #[error("release manifest {} is neither JSON nor sha256sum format: {source}", path.display())]
    ManifestSumFile {
        path: PathBuf,
        #[source]
        source: SumFileError,
    },
    #[error("release manifest {path} lists the file name {file} twice")]
    ManifestDuplicate { path: PathBuf, file: String },
    #[error("no package.json in {dir}")]
    NoPackageJson { dir: PathBuf },
    #[error("{path}: {reason}")]
    ProjectMalformed { path: PathBuf, reason: String },
    #[error(
        "{path}: lockfileVersion {found} is unsupported: regenerate with npm 7 or later \
         (lockfileVersion 2 and 3 are read)"
    )]
    LockfileVersion { path: PathBuf, found: String },
    #[error("vendor directory {dir} is not inside the project {project}")]
    OutsideProject { dir: PathBuf, project: PathBuf },

    // A check failed.
    #[error("{path} is {kind}, not a regular file")]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{dir} holds no artifacts: no .sha256 sidecar and no package archive")]
    NoArtifacts { dir: PathBuf },
    #[error("{artifact} has no sidecar: {sidecar} does not exist")]
    SidecarMissing { artifact: PathBuf, sidecar: PathBuf },
    #[error("sidecar refused: {source}")]
    SidecarMalformed {
        sidecar: PathBuf,
        #[source]
        source: SumFileError,
    },
    #[error("sidecar {sidecar} has {lines} lines; it must have exactly one, for {expected}")]
    SidecarLines {
        sidecar: PathBuf,
        lines: usize,
        expected: String,
    },
    #[error("sidecar {sidecar} names {actual}, not {expected}")]
    SidecarNamesOther {
        sidecar: PathBuf,
        expected: String,
        actual: String,
    },
    #[error("orphan sidecar {sidecar}: {artifact} does not exist")]
    Orphan { sidecar: PathBuf, artifact: PathBuf },
    #[error("{path}: {what} {expected} differs from {against} {actual}")]
    DigestMismatch {
        path: PathBuf,
        what: &'static str,
        against: &'static str,
        expected: String,
        actual: String,
    },
    #[error("release manifest {manifest} does not list {file}")]
    NotInManifest { manifest: PathBuf, file: String },
    #[error("{subject}: {spec} leaves the vendor directory {vendor}")]
    LeavesVendor {
        subject: String,
        spec: String,
        vendor: PathBuf,
    },
    #[error("{subject}: {spec} names {path}, which is not an artifact in the vendor directory")]
    NotAnArtifact {
        subject: String,
        spec: String,
        path: PathBuf,
    },
    #[error("{subject}: {spec} names {path}, which failed verification")]
    Unverified {
        subject: String,
        spec: String,
        path: PathBuf,
    },
    #[error("{place}: {name} is {spec}, not its vendored tarball {expected}")]
    ForeignSource {
        place: String,
        name: String,
        spec: String,
        expected: String,
    },
    #[error("{project} has file: dependencies into the vendor directory but no package-lock.json")]
    NoLockfile { project: PathBuf },
    #[error("{lockfile} has no entry {key}")]
    LockEntryMissing { lockfile: PathBuf, key: String },
    #[error("{lockfile}: {key}: resolved is {actual}, expected {expected}")]
    ResolvedMismatch {
        lockfile: PathBuf,
        key: String,
        expected: String,
        actual: String,
    },
    #[error("{lockfile}: {key}: integrity is missing")]
    IntegrityMissing { lockfile: PathBuf, key: String },
    #[error("{lockfile}: {key}: integrity is malformed: {reason}")]
    IntegrityMalformed {
        lockfile: PathBuf,
        key: String,
        reason: String,
    },
    #[error("{lockfile}: {key}: integrity holds a {algorithm} hash; only sha512 is accepted")]
    IntegrityNotSha512 {
        lockfile: PathBuf,
        key: String,
        algorithm: String,
    },
    #[error("{lockfile}: {key}: integrity decodes to {actual} bytes, a sha512 is {expected}")]
    IntegrityLength {
        lockfile: PathBuf,
        key: String,
        expected: usize,
        actual: usize,
    },
    #[error("{lockfile}: {key}: integrity {actual} is not the tarball's {expected}")]
    IntegrityMismatch {
        lockfile: PathBuf,
        key: String,
        expected: String,
        actual: String,
    },
    #[error(
        "{lockfile}: {key}: integrity cannot be checked: resolved names no vendored regular file"
    )]
    IntegrityNoArtifact { lockfile: PathBuf, key: String },
}

impl VendorError {
    /// What the user can do about it.
    pub(crate) fn help(&self) -> Option<String> {
        use VendorError as E;
        let pin = "if the tarball is the released one, rewrite the sidecar with \
                   `mcp-deploy pin-vendor TARBALL --manifest FILE`";
        let reinstall = "reinstall from the verified tarball so npm rewrites the entry: \
                         `npm install --no-audit --no-fund ./vendor/…/NAME.tgz`";
        Some(match self {
            E::Dir(_) => {
                "name the vendor directory, e.g. `mcp-deploy verify-vendor vendor/`".into()
            }
            E::Walk(_) => return None,
            E::Io(e) => return e.help(),
            E::ManifestMalformed { .. } | E::ManifestDuplicate { .. } => {
                "use the release manifest as the SDK's release published it; see /usr/share/doc/mcp-deploy/vendor.md \
                 for the formats"
                    .into()
            }
            E::ManifestSumFile { source, .. } => source.help()?,
            E::NoPackageJson { .. } => "point --project at the directory with package.json".into(),
            E::ProjectMalformed { .. } => "restore the file from version control".into(),
            E::LockfileVersion { .. } => {
                "regenerate the lockfile with npm 7 or later (`npm install`)".into()
            }
            E::OutsideProject { .. } => "the vendor directory must lie inside --project".into(),
            E::NotRegular { .. } => {
                "vendor the artifact itself: a symlink or a special file proves nothing".into()
            }
            E::NoArtifacts { .. } => {
                "check the directory; vendor the tarball and pin it with `mcp-deploy pin-vendor`"
                    .into()
            }
            E::SidecarMissing { .. } | E::SidecarMalformed { .. } => pin.into(),
            E::SidecarLines { .. } | E::SidecarNamesOther { .. } => pin.into(),
            E::Orphan { .. } => "remove the sidecar, or restore its artifact".into(),
            E::DigestMismatch { .. } => {
                format!("find out which is right: re-download the tarball from the release; {pin}")
            }
            E::NotInManifest { .. } => {
                "vendor only files this release published, or give the right --manifest".into()
            }
            E::LeavesVendor { .. } | E::NotAnArtifact { .. } => {
                "depend on the tarball inside the vendor directory: \
                 `\"file:vendor/<sdk>/<name>.tgz\"`"
                    .into()
            }
            E::Unverified { .. } => "fix the artifact's own failed checks first".into(),
            E::ForeignSource { .. } => "a vendored package comes from its vendored tarball and \
                 nowhere else: depend on `file:vendor/<sdk>/<name>.tgz`, drop the other source \
                 (registry range, URL, git, link, alias, override), and reinstall"
                .into(),
            E::NoLockfile { .. } => "run `npm install` and commit package-lock.json".into(),
            E::LockEntryMissing { .. } | E::ResolvedMismatch { .. } => reinstall.into(),
            E::IntegrityMissing { .. }
            | E::IntegrityMalformed { .. }
            | E::IntegrityNotSha512 { .. }
            | E::IntegrityLength { .. }
            | E::IntegrityMismatch { .. }
            | E::IntegrityNoArtifact { .. } => reinstall.into(),
        })
    }

    /// `(expected, actual)` where the failure compares two values.
    pub(crate) fn evidence(&self) -> (Option<String>, Option<String>) {
        use VendorError as E;
        match self {
            E::DigestMismatch {
                expected, actual, ..
            }
            | E::ResolvedMismatch {
                expected, actual, ..
            }
            | E::IntegrityMismatch {
                expected, actual, ..
            }
            | E::SidecarNamesOther {
                expected, actual, ..
            } => (Some(expected.clone()), Some(actual.clone())),
            E::ForeignSource { expected, spec, .. } => (Some(expected.clone()), Some(spec.clone())),
            E::IntegrityLength {
                expected, actual, ..
            } => (Some(expected.to_string()), Some(actual.to_string())),
            _ => (None, None),
        }
    }
}
