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
//!
//! Here: the walk, the artifact, sidecar and manifest checks, the commands. `artifact.rs` holds
//! what one artifact is, `npm.rs` checks the project around DIR, `error.rs` holds [`VendorError`], `report.rs` the report.

mod artifact;
mod error;
pub(crate) mod lockfile;
mod npm;
pub(crate) mod release_manifest;
mod report;
pub(crate) mod sri;
mod tarball;

pub(crate) use error::VendorError;
pub(crate) use report::{Ignored, ManifestInfo, ProjectInfo, VendorCheck, VendorReport};

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::content::digest::{self, Algorithm};
use crate::fsio::{self, DirError, IoError};

use crate::content::sumfile::{self, display_path};
use artifact::{hash_artifact, is_archive, Artifact, Hashes};
use release_manifest::ReleaseManifest;
use report::{pass, Pass};

/// The suffix of a sidecar.
pub(crate) const SIDECAR_SUFFIX: &str = ".sha256";

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

/// Run every check. `Err` is "could not run" (exit 2); failed checks are in the report.
/// The steps are the module header's.
pub(crate) fn verify(
    dir: &Path,
    manifest: Option<&Path>,
    project: Option<&Path>,
) -> Result<VendorReport, VendorError> {
    let root = fsio::canonical_dir(dir, "vendor")?;
    let manifest = manifest.map(release_manifest::load).transpose()?;
    let manifest_rel = manifest_in_dir(&root, manifest.as_ref());
    let nodes = walk(&root)?;
    let mut run = Run {
        dir,
        root,
        manifest,
        nodes,
        checks: Vec::new(),
        ignored: Vec::new(),
    };
    // 1. The walk.
    let candidates = run.find_artifacts(manifest_rel.as_deref());
    // 2. Per artifact.
    let artifacts = run.check_artifacts(&candidates)?;
    run.list_unvendored_releases(&artifacts);
    // 3. The npm project.
    let project = run.check_project(project, &artifacts)?;
    Ok(run.into_report(project))
}

/// The manifest may live in DIR; it is then neither an artifact nor a sidecar.
fn manifest_in_dir(root: &Path, manifest: Option<&ReleaseManifest>) -> Option<PathBuf> {
    manifest
        .and_then(|m| fs::canonicalize(&m.path).ok())
        .and_then(|p| p.strip_prefix(root).ok().map(Path::to_path_buf))
}

/// One run of [`verify`]: what it reads, and what it has found so far.
struct Run<'a> {
    /// DIR as given: the paths in messages are under it.
    dir: &'a Path,
    /// DIR, canonical: the files are read under it.
    root: PathBuf,
    manifest: Option<ReleaseManifest>,
    /// Every entry under `root`, by path relative to it.
    nodes: BTreeMap<PathBuf, Kind>,
    checks: Vec<VendorCheck>,
    ignored: Vec<Ignored>,
}

impl Run<'_> {
    /// Step 1: the artifacts (by path relative to DIR); every other entry is listed as
    /// ignored, with the reason, and no artifact at all fails `artifacts`.
    fn find_artifacts(&mut self, manifest_rel: Option<&Path>) -> BTreeSet<PathBuf> {
        let is_manifest = |rel: &Path| manifest_rel == Some(rel);
        let mut candidates: BTreeSet<PathBuf> = BTreeSet::new();
        for (rel, kind) in &self.nodes {
            if is_manifest(rel) {
                continue;
            } else if let Some(artifact) = artifact_of_sidecar(rel) {
                candidates.insert(artifact);
            } else if is_archive(rel) && *kind != Kind::Dir {
                candidates.insert(rel.clone());
            }
        }
        for (rel, kind) in &self.nodes {
            let reason = if is_manifest(rel) {
                "the release manifest (--manifest)"
            } else if *kind == Kind::Dir
                || candidates.contains(rel)
                || artifact_of_sidecar(rel).is_some()
            {
                continue;
            } else if *kind == Kind::Symlink {
                "a symlink with no .sha256 sidecar: not followed, not an artifact"
            } else {
                "no .sha256 sidecar and not a package archive: not an artifact"
            };
            self.ignored.push(Ignored {
                path: display_path(&self.dir.join(rel)),
                reason: reason.into(),
            });
        }
        if candidates.is_empty() {
            self.checks.push(VendorCheck::new(
                "artifacts",
                display_path(self.dir),
                Err(VendorError::NoArtifacts {
                    dir: self.dir.to_path_buf(),
                }),
            ));
        }
        candidates
    }

    /// Step 2, every artifact: what the checks established, by path relative to DIR. An
    /// orphan sidecar's artifact is not among them.
    fn check_artifacts(
        &mut self,
        candidates: &BTreeSet<PathBuf>,
    ) -> Result<BTreeMap<PathBuf, Artifact>, VendorError> {
        let mut buf = vec![0u8; digest::BUF_SIZE];
        let mut artifacts = BTreeMap::new();
        for rel in candidates {
            if let Some(artifact) = self.check_artifact(rel, &mut buf)? {
                artifacts.insert(rel.clone(), artifact);
            }
        }
        Ok(artifacts)
    }

    /// Step 2, one artifact: `artifact`, `sidecar`, `manifest`; `None` when it is missing
    /// (its sidecar is an orphan).
    fn check_artifact(
        &mut self,
        rel: &Path,
        buf: &mut [u8],
    ) -> Result<Option<Artifact>, VendorError> {
        let subject = display_path(rel);
        let path = self.dir.join(rel);
        let sidecar_rel = sidecar_of(rel);
        let sidecar = self.dir.join(&sidecar_rel);
        let file_name = rel.file_name().expect("a walked file has a name");
        let Some(&kind) = self.nodes.get(rel) else {
            self.checks.push(VendorCheck::new(
                "sidecar",
                display_path(&sidecar_rel),
                Err(VendorError::Orphan {
                    sidecar,
                    artifact: path,
                }),
            ));
            return Ok(None);
        };
        let hashes = match kind {
            Kind::File => Some(hash_artifact(&self.root.join(rel), buf)?),
            _ => None,
        };
        let artifact_check = check_regular(&path, kind, hashes.as_ref());
        let mut verified = artifact_check.is_ok();
        self.checks
            .push(VendorCheck::new("artifact", &subject, artifact_check));

        let sidecar_check = check_sidecar(
            &self.root,
            &self.nodes,
            &sidecar_rel,
            &sidecar,
            file_name,
            &hashes,
        )?;
        verified &= sidecar_check.result.is_ok();
        self.checks
            .push(VendorCheck::new("sidecar", &subject, sidecar_check.result));

        if let Some(m) = &self.manifest {
            let r = check_manifest(
                m,
                &path,
                file_name,
                sidecar_check.digest.as_deref(),
                &hashes,
            );
            verified &= r.is_ok();
            self.checks.push(VendorCheck::new("manifest", &subject, r));
        }
        let package = self.package_of(rel, &path, hashes.is_some())?;
        Ok(Some(Artifact {
            hashes,
            verified,
            package,
        }))
    }

    /// Which package the tarball at `rel` is, so that the project can be held to installing
    /// that package from it and from nowhere else. The tarball's own word first (it is the
    /// file the digests vouch for; read only when it is a regular file); a JSON release
    /// manifest's `name` when it has none.
    fn package_of(
        &self,
        rel: &Path,
        path: &Path,
        regular: bool,
    ) -> Result<Option<String>, VendorError> {
        let own = if regular {
            tarball::package_of(&self.root.join(rel))
                .map_err(|e| IoError::new("cannot read", path, e))?
                .map(|(name, _)| name)
        } else {
            None
        };
        Ok(own.or_else(|| {
            let file_name = rel.file_name()?;
            let released = self.manifest.as_ref()?.get(file_name)?;
            let package = released.package.as_deref()?;
            // `@scope/name@1.2.3` -> `@scope/name`.
            match package.get(1..)?.rfind('@') {
                Some(i) => Some(package[..i + 1].to_string()),
                None => Some(package.to_string()),
            }
        }))
    }

    /// What the release manifest lists and DIR does not hold, listed as ignored.
    fn list_unvendored_releases(&mut self, artifacts: &BTreeMap<PathBuf, Artifact>) {
        let Some(m) = &self.manifest else { return };
        let listed: BTreeSet<&OsStr> = artifacts.keys().filter_map(|r| r.file_name()).collect();
        for name in m.files.keys().filter(|n| !listed.contains(n.as_os_str())) {
            self.ignored.push(Ignored {
                path: format!("{} : {}", m.path.display(), name.to_string_lossy()),
                reason: "listed by the release manifest, not vendored here".into(),
            });
        }
    }

    /// Step 3: the npm project around DIR (or `--project`), when there is one.
    fn check_project(
        &mut self,
        project: Option<&Path>,
        artifacts: &BTreeMap<PathBuf, Artifact>,
    ) -> Result<Option<ProjectInfo>, VendorError> {
        let project_dir = match project {
            Some(p) => Some(fs::canonicalize(p).map_err(|source| DirError::Unusable {
                what: "vendor",
                dir: p.to_path_buf(),
                source,
            })?),
            None => lockfile::find_project_dir(&self.root),
        };
        let Some(pd) = project_dir else {
            self.ignored.push(Ignored {
                path: display_path(self.dir),
                reason: "no package.json above it (up to the repository root): \
                         dependency and lockfile checks did not run"
                    .into(),
            });
            return Ok(None);
        };
        let project = lockfile::read_project(&pd)?;
        let vendor_rel = self
            .root
            .strip_prefix(&pd)
            .map_err(|_| VendorError::OutsideProject {
                dir: self.dir.to_path_buf(),
                project: pd.clone(),
            })?
            .to_path_buf();
        npm::check_project(
            &project,
            &vendor_rel,
            artifacts,
            &mut self.checks,
            &mut self.ignored,
        );
        Ok(Some(ProjectInfo {
            dir: project.dir.to_string_lossy().into_owned(),
            package_json: project.package_json.to_string_lossy().into_owned(),
            lockfile: project
                .lockfile
                .as_ref()
                .map(|l| l.path.to_string_lossy().into_owned()),
            lockfile_version: project.lockfile.as_ref().map(|l| l.version),
        }))
    }

    fn into_report(self, project: Option<ProjectInfo>) -> VendorReport {
        let manifest_info = self.manifest.as_ref().map(|m| ManifestInfo {
            path: m.path.to_string_lossy().into_owned(),
            format: m.format.name(),
            entries: m.files.len(),
        });
        VendorReport::new(self.dir, manifest_info, project, self.checks, self.ignored)
    }
}

/// The `artifact` check: a regular file (then it was hashed).
fn check_regular(path: &Path, kind: Kind, hashes: Option<&Hashes>) -> Result<Pass, VendorError> {
    match hashes {
        Some(h) => pass(
            format!("regular file, {} bytes, sha256 {}", h.len, h.sha256),
            h.sha256.clone(),
        ),
        None => Err(VendorError::NotRegular {
            path: path.to_path_buf(),
            kind: kind.describe(),
        }),
    }
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

/// The `sidecar` check's outcome, and the digest the sidecar holds when it is well-formed
/// (the `manifest` check compares it too).
struct SidecarCheck {
    result: Result<Pass, VendorError>,
    digest: Option<String>,
}

/// The `sidecar` check: well-formed, and equal to the tarball's sha256 when there is one.
fn check_sidecar(
    root: &Path,
    nodes: &BTreeMap<PathBuf, Kind>,
    sidecar_rel: &Path,
    sidecar: &Path,
    file_name: &OsStr,
    hashes: &Option<Hashes>,
) -> Result<SidecarCheck, VendorError> {
    let digest = match sidecar_digest(root, nodes, sidecar_rel, sidecar, file_name)? {
        Ok(digest) => digest,
        Err(e) => {
            return Ok(SidecarCheck {
                result: Err(e),
                digest: None,
            })
        }
    };
    let result = match hashes {
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
    Ok(SidecarCheck {
        result,
        digest: Some(digest),
    })
}

/// The digest of the sidecar's one line, which names `file_name`. The outer `Err` is "could
/// not run" (an I/O error); the inner one a sidecar that is missing, not a regular file, or
/// malformed: that fails its artifact only.
fn sidecar_digest(
    root: &Path,
    nodes: &BTreeMap<PathBuf, Kind>,
    sidecar_rel: &Path,
    sidecar: &Path,
    file_name: &OsStr,
) -> Result<Result<String, VendorError>, VendorError> {
    let kind = match nodes.get(sidecar_rel) {
        None => {
            let artifact = sidecar.with_file_name(file_name);
            return Ok(Err(VendorError::SidecarMissing {
                artifact,
                sidecar: sidecar.to_path_buf(),
            }));
        }
        Some(k) => *k,
    };
    if kind != Kind::File {
        return Ok(Err(VendorError::NotRegular {
            path: sidecar.to_path_buf(),
            kind: kind.describe(),
        }));
    }
    // The walk saw a regular file; open_regular refuses one swapped for a link or a FIFO
    // since, and the read is bounded like any sidecar.
    let mut bytes = Vec::new();
    fsio::open_regular(&root.join(sidecar_rel))
        .and_then(|f| f.take(fsio::limits::SIDECAR + 1).read_to_end(&mut bytes))
        .map_err(|e| IoError::new("cannot read", sidecar, e))?;
    if bytes.len() as u64 > fsio::limits::SIDECAR {
        return Ok(Err(VendorError::SidecarMalformed {
            sidecar: sidecar.to_path_buf(),
            source: crate::content::sumfile::SumFileError::Malformed {
                file: sidecar.to_path_buf(),
                line: 1,
                reason: "larger than 64 KiB, the most a sidecar (one line) may be",
                text: String::new(),
            },
        }));
    }
    let entries = match sumfile::parse(Algorithm::Sha256, sidecar, &bytes) {
        Ok(v) => v,
        Err(source) => {
            return Ok(Err(VendorError::SidecarMalformed {
                sidecar: sidecar.to_path_buf(),
                source,
            }))
        }
    };
    let expected_name = display_path(Path::new(file_name));
    if entries.len() != 1 {
        return Ok(Err(VendorError::SidecarLines {
            sidecar: sidecar.to_path_buf(),
            lines: entries.len(),
            expected: expected_name,
        }));
    }
    let entry = &entries[0];
    if entry.path.as_os_str() != file_name {
        return Ok(Err(VendorError::SidecarNamesOther {
            sidecar: sidecar.to_path_buf(),
            expected: expected_name,
            actual: display_path(&entry.path),
        }));
    }
    Ok(Ok(entry.digest.clone()))
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

/// What `pin-vendor` did: refused (the manifest lacks the tarball or disagrees; nothing was
/// written), or wrote the sidecar.
pub(crate) enum Pinned {
    Refused {
        error: VendorError,
        manifest: PathBuf,
    },
    Written {
        sidecar: PathBuf,
        sha256: String,
        /// `written`, `unchanged`, or `replaced: was "…"`.
        change: String,
    },
}

/// Write TARBALL.sha256, after the release manifest at `manifest` (when given) agrees.
pub(crate) fn pin(tarball: &Path, manifest: Option<&Path>) -> Result<Pinned, VendorError> {
    let meta = fs::symlink_metadata(tarball)
        .map_err(|e| VendorError::from(IoError::new("cannot use", tarball, e)))?;
    if !meta.is_file() {
        return Err(VendorError::NotRegular {
            path: tarball.to_path_buf(),
            kind: Kind::of(meta.file_type()).describe(),
        });
    }
    let file_name = tarball.file_name().expect("a regular file has a name");
    let hashes = hash_artifact(tarball, &mut vec![0u8; digest::BUF_SIZE])?;
    if let Some(path) = manifest {
        let m = release_manifest::load(path)?;
        if let Err(error) = check_manifest(&m, tarball, file_name, None, &Some(hashes.clone())) {
            return Ok(Pinned::Refused {
                error,
                manifest: path.to_path_buf(),
            });
        }
    }
    let sidecar = tarball.with_file_name(sidecar_of(Path::new(file_name)));
    let old = fsio::read_input(&sidecar, "sidecar", fsio::limits::SIDECAR).ok();
    let line = sumfile::format_line(&hashes.sha256, Path::new(file_name));
    fsio::write_atomic(&sidecar, &line, false)?;
    let change = match old {
        None => "written".to_string(),
        Some(o) if o == line => "unchanged".to_string(),
        Some(o) => format!("replaced: was {:?}", String::from_utf8_lossy(&o).trim_end()),
    };
    Ok(Pinned::Written {
        sidecar,
        sha256: hashes.sha256,
        change,
    })
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
}
