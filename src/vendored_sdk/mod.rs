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
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::content::digest::{self, Algorithm};
use crate::fsio::{self, IoError};

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
pub(crate) fn verify(
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
    // The manifest may live in DIR; it is then neither an artifact nor a sidecar.
    let manifest_rel = manifest
        .as_ref()
        .and_then(|m| fs::canonicalize(&m.path).ok())
        .and_then(|p| p.strip_prefix(&root).ok().map(Path::to_path_buf));

    let mut checks = Vec::new();
    let mut ignored = Vec::new();
    let nodes = walk(&root)?;
    let mut candidates: BTreeSet<PathBuf> = BTreeSet::new();
    for (rel, kind) in &nodes {
        if manifest_rel.as_ref() == Some(rel) {
            continue;
        } else if let Some(artifact) = artifact_of_sidecar(rel) {
            candidates.insert(artifact);
        } else if is_archive(rel) && *kind != Kind::Dir {
            candidates.insert(rel.clone());
        }
    }
    for (rel, kind) in &nodes {
        let reason = if manifest_rel.as_ref() == Some(rel) {
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
        // Which package this tarball is, so that the project can be held to installing that
        // package from it and from nowhere else. The tarball's own word first (it is the file
        // the digests vouch for); a JSON release manifest's `name` when it has none.
        let package = match &hashes {
            Some(_) => tarball::package_of(&root.join(rel))
                .map_err(|e| IoError::new("cannot read", &path, e))?
                .map(|(name, _)| name),
            None => None,
        }
        .or_else(|| {
            let released = manifest.as_ref()?.get(file_name)?;
            let package = released.package.as_deref()?;
            // `@scope/name@1.2.3` -> `@scope/name`.
            match package.get(1..)?.rfind('@') {
                Some(i) => Some(package[..i + 1].to_string()),
                None => Some(package.to_string()),
            }
        });
        artifacts.insert(
            rel.clone(),
            Artifact {
                hashes,
                verified,
                package,
            },
        );
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
            npm::check_project(&project, &vendor_rel, &artifacts, &mut checks, &mut ignored);
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
    // The walk saw a regular file; open_regular refuses one swapped for a link or a FIFO
    // since, and the read is bounded like any sidecar.
    let mut bytes = Vec::new();
    fsio::open_regular(&root.join(sidecar_rel))
        .and_then(|f| f.take(fsio::limits::SIDECAR + 1).read_to_end(&mut bytes))
        .map_err(|e| IoError::new("cannot read", sidecar, e))?;
    if bytes.len() as u64 > fsio::limits::SIDECAR {
        let e = VendorError::SidecarMalformed {
            sidecar: sidecar.to_path_buf(),
            source: crate::content::sumfile::SumFileError::Malformed {
                file: sidecar.to_path_buf(),
                line: 1,
                reason: "larger than 64 KiB, the most a sidecar (one line) may be",
                text: String::new(),
            },
        };
        return Ok((Err(e), None));
    }
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
