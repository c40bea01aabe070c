//! The vendored-SDK verifier: a vendored tarball, its `.sha256` sidecar, the SDK's release
//! manifest and the npm lockfile's `integrity` must all agree.
//!
//! `verify-vendor DIR`:
//! 1. Walk DIR without following symlinks. An *artifact* is a file that has a `NAME.sha256`
//!    sidecar, or any package archive (`.tgz`, `.tar.gz`, `.tar`, …) — so an archive without
//!    a sidecar is found and failed, never passed over. Everything else is listed as ignored,
//!    with the reason.
//! 2. Per artifact: `artifact` (a regular file, hashed sha256 + sha512 through one open
//!    handle), `sidecar` (one `sha256sum` line naming the artifact's file name, equal to the
//!    tarball's sha256), and with `--manifest` `manifest` (the release lists the file name
//!    with the same digest). A sidecar without its artifact is an orphan and fails.
//! 3. The npm project around DIR (nearest ancestor with `package.json`, not above the
//!    repository root; or `--project`): every `file:` dependency into DIR names a verified
//!    artifact (`dependency`); its lockfile entry, and every lockfile entry whose `resolved`
//!    is a `file:` into DIR, has `resolved` naming that artifact (`resolved`) and an
//!    `integrity` equal to its sha512 (`integrity`).
//!
//! Exit status — the rule: 2 when an input the run depends on as a whole cannot be read as
//! what it must be (DIR, the `--manifest` document, `package.json`, the lockfile's JSON shape,
//! an I/O error); 1 when everything was read and a piece of evidence about an artifact is
//! missing, malformed or wrong (a sidecar, a file type, a manifest without the artifact, a
//! lockfile entry's `resolved` or `integrity`, a dependency path). The manifest is read all
//! or nothing, because it is the reference; a sidecar or a lockfile entry is evidence about
//! one artifact, so its defect fails that artifact and the others are still checked.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Read, Seek, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::cli::{PinVendorArgs, VerifyVendorArgs};
use crate::digest::{self, Algorithm};
use crate::error::Error;
use crate::exit::Exit;
use crate::fsio::{self, IoError};
use crate::lockfile::{self, Project};
use crate::release_manifest::{self, ReleaseManifest};
use crate::sri;
use crate::sumfile::{self, display_path, SumFileError};

/// The suffix of a sidecar.
pub const SIDECAR_SUFFIX: &str = ".sha256";

/// File names that are package archives, and so must have a sidecar.
const ARCHIVE_SUFFIXES: [&str; 7] = [
    ".tgz", ".tar.gz", ".tar", ".tar.xz", ".tar.bz2", ".tar.zst", ".zip",
];

/// Everything that can go wrong. Where a variant occurs decides the exit status (see the
/// module header): the first group stops the run (exit 2); the second is the evidence of a
/// failed check (exit 1), or a refusal of `pin-vendor`.
#[derive(Debug, thiserror::Error)]
pub enum VendorError {
    // Could not run.
    #[error("vendor directory {dir} cannot be used: {source}")]
    Dir {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{dir} is not a directory")]
    NotADirectory { dir: PathBuf },
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
    #[error("{path}: lockfileVersion {found} is not supported (2 and 3 are)")]
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
    pub fn help(&self) -> Option<String> {
        use VendorError as E;
        let pin = "if the tarball is the released one, rewrite the sidecar with \
                   `mcp-deploy pin-vendor TARBALL --manifest FILE`";
        let reinstall = "reinstall from the verified tarball so npm rewrites the entry: \
                         `npm install --no-audit --no-fund ./vendor/…/NAME.tgz`";
        Some(match self {
            E::Dir { .. } | E::NotADirectory { .. } => {
                "name the vendor directory, e.g. `mcp-deploy verify-vendor vendor/`".into()
            }
            E::Walk(_) | E::Io(_) => return None,
            E::ManifestMalformed { .. } | E::ManifestDuplicate { .. } => {
                "use the release manifest as the SDK's release published it; see docs/vendor.md \
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
    pub fn evidence(&self) -> (Option<String>, Option<String>) {
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
            E::IntegrityLength {
                expected, actual, ..
            } => (Some(expected.to_string()), Some(actual.to_string())),
            _ => (None, None),
        }
    }
}

/// One check, by name, about one subject (an artifact path relative to DIR, a package name,
/// a lockfile key), with its evidence.
#[derive(Debug, Clone, Serialize)]
pub struct VendorCheck {
    pub check: &'static str,
    pub subject: String,
    pub ok: bool,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

impl VendorCheck {
    fn new(check: &'static str, subject: impl Into<String>, r: Result<Pass, VendorError>) -> Self {
        let subject = subject.into();
        match r {
            Ok(p) => VendorCheck {
                check,
                subject,
                ok: true,
                detail: p.detail,
                expected: None,
                actual: p.actual,
                help: None,
            },
            Err(e) => {
                let (expected, actual) = e.evidence();
                VendorCheck {
                    check,
                    subject,
                    ok: false,
                    detail: e.to_string(),
                    expected,
                    actual,
                    help: e.help(),
                }
            }
        }
    }
}

/// A passing check's evidence.
struct Pass {
    detail: String,
    /// The value that was found to agree (a digest, a path).
    actual: Option<String>,
}

fn pass(detail: String, actual: impl Into<Option<String>>) -> Result<Pass, VendorError> {
    Ok(Pass {
        detail,
        actual: actual.into(),
    })
}

/// Something found and deliberately not checked, with the reason — never dropped silently.
#[derive(Debug, Clone, Serialize)]
pub struct Ignored {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ManifestInfo {
    pub path: String,
    pub format: &'static str,
    pub entries: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProjectInfo {
    pub dir: String,
    pub package_json: String,
    pub lockfile: Option<String>,
    pub lockfile_version: Option<u64>,
}

/// The whole outcome of `verify-vendor`; its JSON form is documented in docs/vendor.md.
#[derive(Debug, Clone, Serialize)]
pub struct VendorReport {
    pub ok: bool,
    pub dir: String,
    pub manifest: Option<ManifestInfo>,
    pub project: Option<ProjectInfo>,
    pub checks: Vec<VendorCheck>,
    pub ignored: Vec<Ignored>,
    pub summary: String,
}

impl VendorReport {
    fn new(
        dir: &Path,
        manifest: Option<ManifestInfo>,
        project: Option<ProjectInfo>,
        checks: Vec<VendorCheck>,
        ignored: Vec<Ignored>,
    ) -> Self {
        let failed = checks.iter().filter(|c| !c.ok).count();
        let summary = if failed == 0 {
            format!("{} checks passed", checks.len())
        } else {
            format!("{failed} of {} checks failed", checks.len())
        };
        VendorReport {
            ok: failed == 0,
            dir: dir.to_string_lossy().into_owned(),
            manifest,
            project,
            checks,
            ignored,
            summary,
        }
    }

    pub fn to_human(&self) -> String {
        let mut out = format!("vendor directory {}\n", self.dir);
        if let Some(m) = &self.manifest {
            let s = if m.entries == 1 { "" } else { "s" };
            out += &format!(
                "release manifest {} ({}, {} file{s})\n",
                m.path, m.format, m.entries
            );
        }
        if let Some(p) = &self.project {
            let lock = p.lockfile.as_deref().unwrap_or("no lockfile");
            out += &format!("npm project {} ({lock})\n", p.dir);
        }
        for c in &self.checks {
            let mark = if c.ok { "ok  " } else { "FAIL" };
            out += &format!("  {mark} {:<10} {}: {}\n", c.check, c.subject, c.detail);
            if let Some(h) = &c.help {
                out += &format!("       help: {h}\n");
            }
        }
        for i in &self.ignored {
            out += &format!("  skip {}: {}\n", i.path, i.reason);
        }
        let verdict = if self.ok { "ok" } else { "FAILED" };
        out += &format!("{verdict}: {}\n", self.summary);
        out
    }
}

/// The two digests of one artifact, from one open handle.
#[derive(Debug, Clone)]
struct Hashes {
    sha256: String,
    sha512: Vec<u8>,
    len: u64,
}

fn hash_artifact(path: &Path, buf: &mut [u8]) -> Result<Hashes, IoError> {
    let read = |buf: &mut [u8]| -> io::Result<Hashes> {
        let mut f = fsio::open_regular(path)?;
        let sha256 = digest::digest_reader(Algorithm::Sha256, &mut f, buf)?;
        let len = f.stream_position()?;
        f.rewind()?;
        let sha512 = digest::digest_reader(Algorithm::Sha512, &mut f, buf)?;
        Ok(Hashes {
            sha256: digest::to_hex(&sha256),
            sha512,
            len,
        })
    };
    read(buf).map_err(|e| IoError::new("cannot read", path, e))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Symlink,
    Other,
}

impl Kind {
    fn of(t: fs::FileType) -> Kind {
        if t.is_symlink() {
            Kind::Symlink
        } else if t.is_file() {
            Kind::File
        } else if t.is_dir() {
            Kind::Dir
        } else {
            Kind::Other
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::File => "a regular file",
            Kind::Dir => "a directory",
            Kind::Symlink => "a symlink",
            Kind::Other => "a special file (fifo, socket or device)",
        }
    }
}

fn sidecar_of(rel: &Path) -> PathBuf {
    let mut s = rel.as_os_str().to_owned();
    s.push(SIDECAR_SUFFIX);
    PathBuf::from(s)
}

fn artifact_of_sidecar(rel: &Path) -> Option<PathBuf> {
    let bytes = rel.as_os_str().as_bytes();
    let stem = bytes.strip_suffix(SIDECAR_SUFFIX.as_bytes())?;
    (!stem.is_empty() && !stem.ends_with(b"/")).then(|| PathBuf::from(OsStr::from_bytes(stem)))
}

fn is_archive(name: &Path) -> bool {
    let bytes = name.as_os_str().as_bytes();
    ARCHIVE_SUFFIXES
        .iter()
        .any(|s| bytes.len() > s.len() && bytes.ends_with(s.as_bytes()))
}

/// What one walk of DIR and its artifacts' checks established.
struct Artifact {
    hashes: Option<Hashes>,
    verified: bool,
}

/// Run every check. `Err` is "could not run" (exit 2); failed checks are in the report.
pub fn verify(
    dir: &Path,
    manifest: Option<&Path>,
    project: Option<&Path>,
) -> Result<VendorReport, VendorError> {
    let root = fs::canonicalize(dir).map_err(|source| VendorError::Dir {
        dir: dir.to_path_buf(),
        source,
    })?;
    if !root.is_dir() {
        return Err(VendorError::NotADirectory {
            dir: dir.to_path_buf(),
        });
    }
    let manifest = manifest.map(release_manifest::load).transpose()?;
    let manifest_canonical = manifest
        .as_ref()
        .and_then(|m| fs::canonicalize(&m.path).ok());

    let mut checks = Vec::new();
    let mut ignored = Vec::new();
    let nodes = walk(&root)?;
    let mut candidates: BTreeSet<PathBuf> = BTreeSet::new();
    for (rel, kind) in &nodes {
        if manifest_canonical.as_deref() == Some(root.join(rel).as_path()) {
            ignored.push(Ignored {
                path: display_path(&dir.join(rel)),
                reason: "the release manifest (--manifest)".into(),
            });
        } else if let Some(artifact) = artifact_of_sidecar(rel) {
            candidates.insert(artifact);
        } else if is_archive(rel) && *kind != Kind::Dir {
            candidates.insert(rel.clone());
        }
    }
    for (rel, kind) in &nodes {
        if *kind == Kind::Dir || candidates.contains(rel) || artifact_of_sidecar(rel).is_some() {
            continue;
        }
        if ignored
            .iter()
            .any(|i| i.path == display_path(&dir.join(rel)))
        {
            continue;
        }
        let reason = match kind {
            Kind::Symlink => "a symlink with no .sha256 sidecar: not followed, not an artifact",
            _ => "no .sha256 sidecar and not a package archive: not an artifact",
        };
        ignored.push(Ignored {
            path: display_path(&dir.join(rel)),
            reason: reason.into(),
        });
    }
    if candidates.is_empty() {
        checks.push(VendorCheck::new(
            "artifacts",
            display_path(dir),
            Err(VendorError::NoArtifacts {
                dir: dir.to_path_buf(),
            }),
        ));
    }

    let mut buf = vec![0u8; digest::BUF_SIZE];
    let mut artifacts: BTreeMap<PathBuf, Artifact> = BTreeMap::new();
    let mut listed: BTreeSet<OsString> = BTreeSet::new();
    for rel in &candidates {
        let subject = display_path(rel);
        let path = dir.join(rel);
        let sidecar_rel = sidecar_of(rel);
        let sidecar = dir.join(&sidecar_rel);
        let file_name = rel.file_name().expect("a walked file has a name");
        let Some(&kind) = nodes.get(rel) else {
            checks.push(VendorCheck::new(
                "sidecar",
                display_path(&sidecar_rel),
                Err(VendorError::Orphan {
                    sidecar,
                    artifact: path,
                }),
            ));
            continue;
        };
        let hashes = match kind {
            Kind::File => Some(hash_artifact(&root.join(rel), &mut buf)?),
            _ => None,
        };
        let artifact_check = match &hashes {
            Some(h) => pass(
                format!("regular file, {} bytes, sha256 {}", h.len, h.sha256),
                h.sha256.clone(),
            ),
            None => Err(VendorError::NotRegular {
                path: path.clone(),
                kind: kind.describe(),
            }),
        };
        let mut verified = artifact_check.is_ok();
        checks.push(VendorCheck::new("artifact", &subject, artifact_check));

        let (sidecar_check, sidecar_digest) =
            check_sidecar(&root, &nodes, &sidecar_rel, &sidecar, file_name, &hashes)?;
        verified &= sidecar_check.is_ok();
        checks.push(VendorCheck::new("sidecar", &subject, sidecar_check));

        if let Some(m) = &manifest {
            listed.insert(file_name.to_owned());
            let r = check_manifest(m, &path, file_name, sidecar_digest.as_deref(), &hashes);
            verified &= r.is_ok();
            checks.push(VendorCheck::new("manifest", &subject, r));
        }
        artifacts.insert(rel.clone(), Artifact { hashes, verified });
    }
    if let Some(m) = &manifest {
        for name in m.files.keys().filter(|n| !listed.contains(*n)) {
            ignored.push(Ignored {
                path: format!("{} : {}", m.path.display(), name.to_string_lossy()),
                reason: "listed by the release manifest, not vendored here".into(),
            });
        }
    }

    let project_dir = match project {
        Some(p) => Some(fs::canonicalize(p).map_err(|source| VendorError::Dir {
            dir: p.to_path_buf(),
            source,
        })?),
        None => lockfile::find_project_dir(&root),
    };
    let project_info = match project_dir {
        None => {
            ignored.push(Ignored {
                path: display_path(dir),
                reason: "no package.json above it (up to the repository root): \
                         dependency and lockfile checks did not run"
                    .into(),
            });
            None
        }
        Some(pd) => {
            let project = lockfile::read_project(&pd)?;
            let vendor_rel = root
                .strip_prefix(&pd)
                .map_err(|_| VendorError::OutsideProject {
                    dir: dir.to_path_buf(),
                    project: pd.clone(),
                })?
                .to_path_buf();
            check_project(&project, &vendor_rel, &artifacts, &mut checks, &mut ignored);
            Some(ProjectInfo {
                dir: project.dir.to_string_lossy().into_owned(),
                package_json: project.package_json.to_string_lossy().into_owned(),
                lockfile: project
                    .lockfile
                    .as_ref()
                    .map(|l| l.path.to_string_lossy().into_owned()),
                lockfile_version: project.lockfile.as_ref().map(|l| l.version),
            })
        }
    };

    let manifest_info = manifest.as_ref().map(|m| ManifestInfo {
        path: m.path.to_string_lossy().into_owned(),
        format: m.format.name(),
        entries: m.files.len(),
    });
    Ok(VendorReport::new(
        dir,
        manifest_info,
        project_info,
        checks,
        ignored,
    ))
}

/// Every entry under the canonical `root`, by path relative to it, without following links.
fn walk(root: &Path) -> Result<BTreeMap<PathBuf, Kind>, VendorError> {
    let entries = fsio::walk_no_follow(root)?;
    let nodes = entries
        .into_iter()
        .map(|(rel, kind)| (rel, Kind::of(kind)))
        .collect();
    Ok(nodes)
}

/// The `sidecar` check, and the digest the sidecar holds when it is well-formed.
fn check_sidecar(
    root: &Path,
    nodes: &BTreeMap<PathBuf, Kind>,
    sidecar_rel: &Path,
    sidecar: &Path,
    file_name: &OsStr,
    hashes: &Option<Hashes>,
) -> Result<(Result<Pass, VendorError>, Option<String>), VendorError> {
    let kind = match nodes.get(sidecar_rel) {
        None => {
            let artifact = sidecar.with_file_name(file_name);
            let e = VendorError::SidecarMissing {
                artifact,
                sidecar: sidecar.to_path_buf(),
            };
            return Ok((Err(e), None));
        }
        Some(k) => *k,
    };
    if kind != Kind::File {
        let e = VendorError::NotRegular {
            path: sidecar.to_path_buf(),
            kind: kind.describe(),
        };
        return Ok((Err(e), None));
    }
    let mut bytes = Vec::new();
    fsio::open_regular(&root.join(sidecar_rel))
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| IoError::new("cannot read", sidecar, e))?;
    let entries = match sumfile::parse(Algorithm::Sha256, sidecar, &bytes) {
        Ok(v) => v,
        Err(source) => {
            let e = VendorError::SidecarMalformed {
                sidecar: sidecar.to_path_buf(),
                source,
            };
            return Ok((Err(e), None));
        }
    };
    let expected_name = display_path(Path::new(file_name));
    if entries.len() != 1 {
        let e = VendorError::SidecarLines {
            sidecar: sidecar.to_path_buf(),
            lines: entries.len(),
            expected: expected_name,
        };
        return Ok((Err(e), None));
    }
    let entry = &entries[0];
    if entry.path.as_os_str() != file_name {
        let e = VendorError::SidecarNamesOther {
            sidecar: sidecar.to_path_buf(),
            expected: expected_name,
            actual: display_path(&entry.path),
        };
        return Ok((Err(e), None));
    }
    let digest = entry.digest.clone();
    let r = match hashes {
        Some(h) if h.sha256 == digest => pass(
            format!("{} matches the tarball's sha256", sidecar.display()),
            digest.clone(),
        ),
        Some(h) => Err(VendorError::DigestMismatch {
            path: sidecar.to_path_buf(),
            what: "sidecar sha256",
            against: "the tarball's",
            expected: digest.clone(),
            actual: h.sha256.clone(),
        }),
        None => pass(
            format!(
                "{} is well-formed; not compared: the artifact is not a regular file",
                sidecar.display()
            ),
            digest.clone(),
        ),
    };
    Ok((r, Some(digest)))
}

fn check_manifest(
    m: &ReleaseManifest,
    path: &Path,
    file_name: &OsStr,
    sidecar: Option<&str>,
    hashes: &Option<Hashes>,
) -> Result<Pass, VendorError> {
    let released = m.get(file_name).ok_or_else(|| VendorError::NotInManifest {
        manifest: m.path.clone(),
        file: display_path(Path::new(file_name)),
    })?;
    let mismatch = |against, actual: &str| VendorError::DigestMismatch {
        path: path.to_path_buf(),
        what: "release manifest sha256",
        against,
        expected: released.sha256.clone(),
        actual: actual.to_string(),
    };
    if let Some(s) = sidecar.filter(|s| *s != released.sha256) {
        return Err(mismatch("the sidecar's", s));
    }
    if let Some(h) = hashes.as_ref().filter(|h| h.sha256 != released.sha256) {
        return Err(mismatch("the tarball's", &h.sha256));
    }
    let what = released
        .package
        .as_deref()
        .map_or_else(String::new, |p| format!(" ({p})"));
    pass(
        format!("release manifest lists sha256 {}{what}", released.sha256),
        released.sha256.clone(),
    )
}

/// Where a `file:` path points, from the vendor directory's point of view.
enum Target {
    /// Inside the vendor directory: the path relative to it.
    Vendored(PathBuf),
    /// Meant for the vendor directory (starts there, or is an archive) but lands outside it.
    Leaves,
    /// A `file:` dependency on something else (a local directory package): not ours.
    Elsewhere,
}

fn classify(spec: &str, project: &Path, vendor_rel: &Path) -> Target {
    if let Some(t) = lockfile::file_target(spec, project) {
        if let Ok(inside) = t.strip_prefix(vendor_rel) {
            if !inside.as_os_str().is_empty() {
                return Target::Vendored(inside.to_path_buf());
            }
        }
    }
    let raw = Path::new(spec.strip_prefix("file:").unwrap_or(spec));
    let raw = raw.strip_prefix(project).unwrap_or(raw);
    let raw = raw.strip_prefix(".").unwrap_or(raw);
    if raw.starts_with(vendor_rel) || is_archive(raw) {
        Target::Leaves
    } else {
        Target::Elsewhere
    }
}

/// What a lockfile entry is expected to say, from `package.json`.
struct Expected {
    /// Relative to the vendor directory.
    artifact: PathBuf,
}

fn check_project(
    project: &Project,
    vendor_rel: &Path,
    artifacts: &BTreeMap<PathBuf, Artifact>,
    checks: &mut Vec<VendorCheck>,
    ignored: &mut Vec<Ignored>,
) {
    let vendor_display = if vendor_rel.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        vendor_rel.to_path_buf()
    };
    let names_artifact = |subject: &str, spec: &str, rel: &Path| -> Result<Pass, VendorError> {
        let path = vendor_rel.join(rel);
        match artifacts.get(rel) {
            Some(a) if a.verified => pass(
                format!("{spec} names the verified artifact {}", display_path(&path)),
                spec.to_string(),
            ),
            Some(_) => Err(VendorError::Unverified {
                subject: subject.into(),
                spec: spec.into(),
                path,
            }),
            None => Err(VendorError::NotAnArtifact {
                subject: subject.into(),
                spec: spec.into(),
                path,
            }),
        }
    };

    // package.json: every file: dependency into the vendor dir names a verified artifact.
    let mut expected: BTreeMap<String, Expected> = BTreeMap::new();
    for dep in &project.file_dependencies {
        let subject = format!("{} ({})", dep.name, dep.field);
        let r = match classify(&dep.spec, &project.dir, vendor_rel) {
            Target::Vendored(rel) => {
                let r = names_artifact(&dep.name, &dep.spec, &rel);
                expected.insert(
                    format!("node_modules/{}", dep.name),
                    Expected { artifact: rel },
                );
                r
            }
            Target::Leaves => Err(VendorError::LeavesVendor {
                subject: dep.name.clone(),
                spec: dep.spec.clone(),
                vendor: vendor_display.clone(),
            }),
            Target::Elsewhere => {
                ignored.push(Ignored {
                    path: format!("{}: {}", project.package_json.display(), subject),
                    reason: format!("{} is outside the vendor directory and not an archive: not a vendored artifact", dep.spec),
                });
                continue;
            }
        };
        checks.push(VendorCheck::new("dependency", subject, r));
    }

    let Some(lock) = &project.lockfile else {
        if !expected.is_empty() {
            checks.push(VendorCheck::new(
                "lockfile",
                display_path(&project.dir.join("package-lock.json")),
                Err(VendorError::NoLockfile {
                    project: project.dir.clone(),
                }),
            ));
        }
        return;
    };

    // The lockfile entries to check: those package.json leads to, and every entry npm
    // resolved to a file: path meant for the vendor directory (nested ones included).
    let mut keys: Vec<String> = expected.keys().cloned().collect();
    for e in &lock.entries {
        let Some(resolved) = e.resolved.as_ref().and_then(Value::as_str) else {
            continue;
        };
        if !resolved.starts_with("file:") || keys.contains(&e.key) {
            continue;
        }
        if let Target::Elsewhere = classify(resolved, &project.dir, vendor_rel) {
            ignored.push(Ignored {
                path: format!("{}: {}", lock.path.display(), e.key),
                reason: format!(
                    "resolved {resolved} is outside the vendor directory and not an archive"
                ),
            });
        } else {
            keys.push(e.key.clone());
        }
    }

    for key in keys {
        let Some(entry) = lock.get(&key) else {
            checks.push(VendorCheck::new(
                "lockfile",
                &key,
                Err(VendorError::LockEntryMissing {
                    lockfile: lock.path.clone(),
                    key: key.clone(),
                }),
            ));
            continue;
        };
        let want = expected.get(&key).map(|e| e.artifact.clone());
        let resolved = entry.resolved.as_ref();
        let resolved_str = resolved.and_then(Value::as_str);
        let target = resolved_str.map(|s| classify(s, &project.dir, vendor_rel));
        let got = match &target {
            Some(Target::Vendored(rel)) => Some(rel.clone()),
            _ => None,
        };
        let mismatch = |expected: String| VendorError::ResolvedMismatch {
            lockfile: lock.path.clone(),
            key: key.clone(),
            expected,
            actual: resolved.map_or_else(|| "missing".to_string(), Value::to_string),
        };
        let spec_of = |rel: &Path| format!("file:{}", display_path(&vendor_rel.join(rel)));
        let r = match (&want, &got, &target) {
            (_, _, Some(Target::Leaves)) => Err(VendorError::LeavesVendor {
                subject: key.clone(),
                spec: resolved_str.unwrap_or_default().to_string(),
                vendor: vendor_display.clone(),
            }),
            (Some(w), Some(g), _) if w != g => Err(mismatch(spec_of(w))),
            (Some(w), None, _) => Err(mismatch(spec_of(w))),
            // Whether that artifact passed its own checks is the `dependency` check's and
            // the artifact's business; here only the agreement of the paths is judged.
            (_, Some(g), _) if artifacts.contains_key(g) => pass(
                format!(
                    "{} names the vendored artifact {}",
                    spec_of(g),
                    display_path(&vendor_rel.join(g))
                ),
                resolved_str.unwrap_or_default().to_string(),
            ),
            (_, Some(g), _) => names_artifact(&key, resolved_str.unwrap_or_default(), g),
            (None, None, _) => Err(mismatch("a file: path into the vendor directory".into())),
        };
        checks.push(VendorCheck::new("resolved", &key, r));

        // The tarball npm will check the integrity against: the one package.json names, or
        // failing that the one resolved names.
        let hashes = want
            .as_ref()
            .or(got.as_ref())
            .and_then(|rel| artifacts.get(rel))
            .and_then(|a| a.hashes.as_ref());
        let r = match hashes {
            Some(h) => check_integrity(&lock.path, &key, entry.integrity.as_ref(), &h.sha512),
            None => Err(VendorError::IntegrityNoArtifact {
                lockfile: lock.path.clone(),
                key: key.clone(),
            }),
        };
        checks.push(VendorCheck::new("integrity", &key, r));
    }
}

/// Every hash in `integrity` must be sha512 and equal `sha512`. npm's ssri accepts a tarball
/// when any one hash of the strongest algorithm matches; requiring all of them means an
/// extra hash cannot smuggle a second tarball in, and an extra weak one cannot stand in.
fn check_integrity(
    lockfile: &Path,
    key: &str,
    integrity: Option<&Value>,
    sha512: &[u8],
) -> Result<Pass, VendorError> {
    let malformed = |reason: String| VendorError::IntegrityMalformed {
        lockfile: lockfile.to_path_buf(),
        key: key.to_string(),
        reason,
    };
    let text = match integrity {
        None | Some(Value::Null) => {
            return Err(VendorError::IntegrityMissing {
                lockfile: lockfile.to_path_buf(),
                key: key.to_string(),
            })
        }
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(malformed(format!("not a string: {other}"))),
    };
    let hashes = sri::parse(text).map_err(|e| malformed(e.to_string()))?;
    let want = format!("sha512-{}", sri::encode_base64(sha512));
    for h in &hashes {
        if h.algorithm != "sha512" {
            return Err(VendorError::IntegrityNotSha512 {
                lockfile: lockfile.to_path_buf(),
                key: key.to_string(),
                algorithm: h.algorithm.clone(),
            });
        }
        if h.digest.len() != sha512.len() {
            return Err(VendorError::IntegrityLength {
                lockfile: lockfile.to_path_buf(),
                key: key.to_string(),
                expected: sha512.len(),
                actual: h.digest.len(),
            });
        }
        if h.digest != sha512 {
            return Err(VendorError::IntegrityMismatch {
                lockfile: lockfile.to_path_buf(),
                key: key.to_string(),
                expected: want,
                actual: text.to_string(),
            });
        }
    }
    let n = hashes.len();
    let note = if n > 1 {
        format!(" (all {n} hashes)")
    } else {
        String::new()
    };
    pass(format!("{want} matches the tarball{note}"), want.clone())
}

/// `mcp-deploy verify-vendor`.
pub fn run_verify(args: &VerifyVendorArgs) -> Result<Exit, Error> {
    let report = verify(&args.dir, args.manifest.as_deref(), args.project.as_deref())?;
    let text = if args.json {
        serde_json::to_string_pretty(&report).expect("a report serializes") + "\n"
    } else {
        report.to_human()
    };
    match io::stdout().lock().write_all(text.as_bytes()) {
        // A reader that went away (`| head`) does not change the verdict.
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(IoError::new("cannot write", Path::new("<stdout>"), e).into())
        }
        _ => Ok(Exit::from_checks(report.ok)),
    }
}

/// `mcp-deploy pin-vendor`: write TARBALL.sha256, after the manifest (when given) agrees.
/// A manifest that lacks the file or disagrees is a refusal (exit 1) and nothing is written.
pub fn run_pin(args: &PinVendorArgs) -> Result<Exit, Error> {
    let tarball = &args.tarball;
    let meta = fs::symlink_metadata(tarball)
        .map_err(|e| VendorError::from(IoError::new("cannot use", tarball, e)))?;
    if !meta.is_file() {
        return Err(VendorError::NotRegular {
            path: tarball.clone(),
            kind: Kind::of(meta.file_type()).describe(),
        }
        .into());
    }
    let file_name = tarball.file_name().expect("a regular file has a name");
    let hashes =
        hash_artifact(tarball, &mut vec![0u8; digest::BUF_SIZE]).map_err(VendorError::from)?;
    if let Some(path) = &args.manifest {
        let m = release_manifest::load(path)?;
        if let Err(e) = check_manifest(&m, tarball, file_name, None, &Some(hashes.clone())) {
            eprintln!("refused: {e}; no sidecar written");
            if let Some(h) = e.help() {
                eprintln!("help: {h}");
            }
            return Ok(Exit::CheckFailed);
        }
    }
    let sidecar = tarball.with_file_name(sidecar_of(Path::new(file_name)));
    let old = fs::read(&sidecar).ok();
    let line = sumfile::format_line(&hashes.sha256, Path::new(file_name));
    fsio::write_atomic(&sidecar, &line, false).map_err(VendorError::from)?;
    let change = match old {
        None => "written".to_string(),
        Some(o) if o == line => "unchanged".to_string(),
        Some(o) => format!("replaced: was {:?}", String::from_utf8_lossy(&o).trim_end()),
    };
    println!("{}: sha256 {} ({change})", sidecar.display(), hashes.sha256);
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archives_and_sidecars_by_name() {
        assert!(is_archive(Path::new("a/acme-0.4.0.tgz")));
        assert!(is_archive(Path::new("x.tar.gz")));
        assert!(!is_archive(Path::new(".tgz")));
        assert!(!is_archive(Path::new("README.md")));
        assert_eq!(
            artifact_of_sidecar(Path::new("d/a.tgz.sha256")),
            Some(PathBuf::from("d/a.tgz"))
        );
        assert_eq!(artifact_of_sidecar(Path::new(".sha256")), None);
        assert_eq!(artifact_of_sidecar(Path::new("d/.sha256")), None);
        assert_eq!(
            sidecar_of(Path::new("d/a.tgz")),
            PathBuf::from("d/a.tgz.sha256")
        );
    }

    #[test]
    fn integrity_rules() {
        let sha = vec![7u8; 64];
        let good = format!("sha512-{}", sri::encode_base64(&sha));
        let other = format!("sha512-{}", sri::encode_base64(&[8u8; 64]));
        let check = |s: &str| check_integrity(Path::new("L"), "k", Some(&Value::from(s)), &sha);
        assert!(check(&good).is_ok());
        assert!(check(&format!("{good} {good}")).is_ok());
        assert!(matches!(
            check(&format!("{good} {other}")),
            Err(VendorError::IntegrityMismatch { .. })
        ));
        assert!(matches!(
            check(&format!("{good} sha1-{}", sri::encode_base64(&[1u8; 20]))),
            Err(VendorError::IntegrityNotSha512 { .. })
        ));
        assert!(matches!(
            check(&format!("sha512-{}", sri::encode_base64(&[7u8; 32]))),
            Err(VendorError::IntegrityLength { actual: 32, .. })
        ));
        assert!(matches!(
            check_integrity(Path::new("L"), "k", Some(&Value::from(5)), &sha),
            Err(VendorError::IntegrityMalformed { .. })
        ));
    }
}
