//! Release content identity: `MANIFEST.sha256` at the top of a release lists the SHA-256 of
//! every regular file in it, in the format `sha256sum` writes, so that `sha256sum -c` can
//! check it too.
//!
//! Creating a manifest:
//! 1. Walk the release without following symlinks. Regular files are listed (the manifest
//!    itself excepted); symlinks must resolve inside the release, compared by path
//!    components after canonicalizing both sides, and one that leads to a regular file is
//!    listed too, with the digest of what it leads to (what `sha256sum -c` computes, since it
//!    follows links): a link re-pointed at another file of the release (`bin/codetools ->
//!    ../lib/helper`) is then modified, and an added one is added. Links to directories
//!    cannot be said in this format and are not listed. Any other file type (fifo, socket,
//!    device) is refused, since reading one could block or lie.
//! 2. Hash the files on `jobs` threads pulling from one shared index, so a few large files
//!    and many small ones spread evenly.
//! 3. Sort by the bytes of the relative path and write the manifest atomically.
//!
//! What mcp-deploy itself writes into a prefix is not release content: in a `prefix` layout
//! (orchestrata's) the release directory is the prefix, and install writes its rendered
//! document `mcp/<name>.mcp.json` there, and the pin of checked launches,
//! `.mcp-deploy/pin.json`. Exactly those files are left out of create and verify — a regular,
//! non-executable file named `<server-name>.mcp.json` directly in `mcp/` at the top of the
//! release, or `pin.json` directly in `.mcp-deploy/` — and nothing else under `mcp/` or
//! `.mcp-deploy/`: an executable, a file with another name, a subdirectory's files are
//! content like any other (docs/content.md).
//!
//! Verifying reports every difference at once — modified, missing and added files,
//! escaping symlinks, unsupported file types — instead of stopping at the first.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::num::NonZeroUsize;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::content::digest::{self, Algorithm};
use crate::content::sumfile::{self, display_path, SumFileError};
use crate::fsio::{self, DirError, IoError};

/// The manifest's file name, at the top of the release.
pub(crate) const MANIFEST_NAME: &str = "MANIFEST.sha256";

/// The builder's signature of the manifest (`ssh-keygen -Y sign`), beside it. Like the
/// manifest, it is not content: it is made after the manifest, over it. Only a regular file of
/// that name at the top is left out; a symlink of that name is content like any other link
/// (and the `signature` check refuses it).
pub(crate) const SIGNATURE_NAME: &str = "MANIFEST.sha256.sig";

/// The Sigstore bundle of the build that made the release (its provenance,
/// [`crate::trust::provenance`]), beside the manifest: like the signature, made over the
/// manifest and not content.
pub(crate) const PROVENANCE_NAME: &str = "MANIFEST.sha256.sigstore.json";

/// Why a manifest could not be created or checked (exit 2), as opposed to a check that ran
/// and found differences ([`ContentReport`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ManifestError {
    #[error(transparent)]
    Dir(#[from] DirError),
    #[error("{path} does not exist")]
    NoManifest { path: PathBuf },
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    SumFile(#[from] SumFileError),
    #[error("cannot walk {path}: {message}")]
    Walk { path: PathBuf, message: String },
    #[error("symlinks that leave the release {dir}: {}", list_links(links))]
    EscapingSymlinks {
        dir: PathBuf,
        links: Vec<EscapingSymlink>,
    },
    #[error(
        "{dir}: not a regular file, directory or symlink: {}",
        list_paths(paths)
    )]
    SpecialFiles { dir: PathBuf, paths: Vec<PathBuf> },
}

impl ManifestError {
    pub(crate) fn help(&self) -> Option<String> {
        match self {
            ManifestError::NoManifest { path } => Some(format!(
                "create it when the release is built: mcp-deploy manifest create {}",
                path.parent().unwrap_or(Path::new(".")).display()
            )),
            ManifestError::SumFile(e) => e.help(),
            ManifestError::Io(e) => e.help(),
            ManifestError::EscapingSymlinks { .. } => Some(
                "a release must be self-contained: make the link relative to a file inside \
                 the release, or copy the file in"
                    .to_string(),
            ),
            ManifestError::SpecialFiles { .. } => Some(
                "remove them from the release; only files, directories and symlinks are allowed"
                    .to_string(),
            ),
            // Every variant listed: a new one must decide on its help here.
            ManifestError::Dir(_) | ManifestError::Walk { .. } => None,
        }
    }
}

/// A symlink inside the release that resolves outside it, or not at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EscapingSymlink {
    /// Relative to the release.
    pub(crate) path: PathBuf,
    /// What the link says (`readlink`), for the message.
    pub(crate) target: PathBuf,
    /// The link dangles rather than pointing out.
    pub(crate) dangling: bool,
}

pub(crate) fn list_links(links: &[EscapingSymlink]) -> String {
    links
        .iter()
        .map(|l| {
            format!(
                "{} -> {}{}",
                display_path(&l.path),
                display_path(&l.target),
                if l.dangling { " (dangling)" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn list_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| display_path(p))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The outcome of checking a release against its manifest. Paths are relative to `dir`
/// and sorted bytewise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContentReport {
    /// The directory as given.
    pub(crate) dir: PathBuf,
    /// Files the manifest lists.
    pub(crate) files: usize,
    /// Listed, present, and different (or no longer a regular file).
    pub(crate) modified: Vec<PathBuf>,
    /// Listed and absent.
    pub(crate) missing: Vec<PathBuf>,
    /// Regular files present and not listed.
    pub(crate) added: Vec<PathBuf>,
    pub(crate) escaping_symlinks: Vec<EscapingSymlink>,
    /// Fifos, sockets, devices: nothing a release holds.
    pub(crate) special_files: Vec<PathBuf>,
    /// Rendered documents mcp-deploy writes (`mcp/<name>.mcp.json`): not content, not checked.
    pub(crate) not_content: Vec<PathBuf>,
}

impl ContentReport {
    /// Every listed file matches and nothing else is wrong.
    pub(crate) fn ok(&self) -> bool {
        self.modified.is_empty()
            && self.missing.is_empty()
            && self.added.is_empty()
            && self.escaping_symlinks.is_empty()
            && self.special_files.is_empty()
    }

    /// One line: `1342 files match MANIFEST.sha256`, or
    /// `2 modified (bin/x, lib/y), 1 missing (z)`; at most 3 paths per kind are named.
    pub(crate) fn summary(&self) -> String {
        if self.ok() {
            let s = if self.files == 1 { "" } else { "s" };
            let mut line = format!("{} file{s} match {MANIFEST_NAME}", self.files);
            if !self.not_content.is_empty() {
                let named: Vec<String> = self.not_content.iter().map(|p| display_path(p)).collect();
                line.push_str(&format!(
                    " ({} written by mcp-deploy, not content)",
                    named.join(", ")
                ));
            }
            return line;
        }
        fn part(kind: &str, paths: &[&Path]) -> Option<String> {
            if paths.is_empty() {
                return None;
            }
            let mut named: Vec<String> = paths.iter().take(3).map(|p| display_path(p)).collect();
            if paths.len() > 3 {
                named.push(format!("… {} more", paths.len() - 3));
            }
            Some(format!("{} {kind} ({})", paths.len(), named.join(", ")))
        }
        fn refs(v: &[PathBuf]) -> Vec<&Path> {
            v.iter().map(PathBuf::as_path).collect()
        }
        let links: Vec<&Path> = self
            .escaping_symlinks
            .iter()
            .map(|l| l.path.as_path())
            .collect();
        [
            part("modified", &refs(&self.modified)),
            part("missing", &refs(&self.missing)),
            part("added", &refs(&self.added)),
            part("escaping symlinks", &links),
            part("special files", &refs(&self.special_files)),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
    }

    /// The `--json` document (see docs/content.md). Paths that are not UTF-8 are decoded
    /// lossily; the human report escapes them instead.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let paths = |v: &[PathBuf]| -> Vec<String> {
            v.iter().map(|p| p.to_string_lossy().into_owned()).collect()
        };
        serde_json::json!({
            "ok": self.ok(),
            "dir": self.dir.to_string_lossy(),
            "manifest": MANIFEST_NAME,
            "files": self.files,
            "modified": paths(&self.modified),
            "missing": paths(&self.missing),
            "added": paths(&self.added),
            "escaping_symlinks": self.escaping_symlinks.iter().map(|l| serde_json::json!({
                "path": l.path.to_string_lossy(),
                "target": l.target.to_string_lossy(),
                "dangling": l.dangling,
            })).collect::<Vec<_>>(),
            "special_files": paths(&self.special_files),
            "not_content": paths(&self.not_content),
            "summary": self.summary(),
        })
    }
}

/// What a walk of the release found.
#[derive(Debug, Default)]
struct Scan {
    /// Regular files, relative, the top-level manifest excepted, and symlinks that lead to a
    /// regular file inside the release (listed by the digest of what they lead to).
    files: Vec<PathBuf>,
    /// Of `files`, the symlinks, each with the canonical path of the file it leads to.
    link_targets: HashMap<PathBuf, PathBuf>,
    escaping_symlinks: Vec<EscapingSymlink>,
    special_files: Vec<PathBuf>,
    /// Symlinks that resolve inside the release: fine, but not regular files.
    inner_symlinks: HashSet<PathBuf>,
    /// Documents mcp-deploy writes into the release ([`is_rendered_document`]).
    not_content: Vec<PathBuf>,
}

/// Whether `rel` (relative to the release) is where install writes a document of its own: a
/// rendered document, `mcp/<name>.mcp.json` (`<name>` a valid server name, directly under a
/// top-level `mcp/`), or the pin of checked launches, `.mcp-deploy/pin.json` (in a prefix
/// layout the release is the prefix, where the pin lives: before, the install after the one
/// that pinned it failed `content` with "1 added (.mcp-deploy/pin.json)").
pub(crate) fn is_rendered_document_path(rel: &Path) -> bool {
    use std::path::Component::Normal;
    let mut c = rel.components();
    match (c.next(), c.next(), c.next()) {
        (Some(Normal(dir)), Some(Normal(file)), None)
            if dir == crate::state::DIR && (file == "pin.json" || file == "tools.json") =>
        {
            true
        }
        (Some(Normal(dir)), Some(Normal(file)), None) if dir == "mcp" => file
            .to_str()
            .and_then(|f| f.strip_suffix(".mcp.json"))
            .is_some_and(|name| crate::deployment::declaration::validate_name(name).is_ok()),
        _ => false,
    }
}

/// [`is_rendered_document_path`], and what is there is what install writes: a regular file
/// nobody can execute. An executable under that name is content (and fails as added).
fn is_rendered_document(root: &Path, rel: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    is_rendered_document_path(rel)
        && fs::symlink_metadata(root.join(rel))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 == 0)
}

/// The number of hashing threads when none is asked for: every core.
pub(crate) fn default_jobs() -> NonZeroUsize {
    std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
}

/// Write `dir/MANIFEST.sha256` for the release at `dir`; returns the number of files listed.
pub(crate) fn create_manifest(dir: &Path, jobs: NonZeroUsize) -> Result<usize, ManifestError> {
    let root = fsio::canonical_dir(dir, "release")?;
    let scan = scan(&root)?;
    if !scan.escaping_symlinks.is_empty() {
        return Err(ManifestError::EscapingSymlinks {
            dir: dir.to_path_buf(),
            links: scan.escaping_symlinks,
        });
    }
    if !scan.special_files.is_empty() {
        return Err(ManifestError::SpecialFiles {
            dir: dir.to_path_buf(),
            paths: scan.special_files,
        });
    }
    let digests = hash_files(&root, &scan.files, &scan.link_targets, jobs)?;
    let mut out = Vec::with_capacity(scan.files.len() * 100);
    for (path, hex) in scan.files.iter().zip(&digests) {
        out.extend_from_slice(&sumfile::format_line(hex, path));
    }
    // A release is world-readable data: not private even when it lives under $HOME.
    fsio::write_atomic(&dir.join(MANIFEST_NAME), &out, false)?;
    Ok(scan.files.len())
}

/// Check the release at `dir` against its `MANIFEST.sha256`, hashing on every core.
pub(crate) fn verify_release(dir: &Path) -> Result<ContentReport, ManifestError> {
    verify_release_with(dir, default_jobs())
}

/// [`verify_release`] on `jobs` threads.
pub(crate) fn verify_release_with(
    dir: &Path,
    jobs: NonZeroUsize,
) -> Result<ContentReport, ManifestError> {
    let bytes = read_manifest(dir)?;
    verify_release_against(dir, &bytes, jobs)
}

/// The bytes of `dir/MANIFEST.sha256`: bounded, never through a symlink.
///
/// The `signature` check verifies these bytes and the `content` check then checks the release
/// against the same bytes ([`verify_release_against`]): read twice, a manifest swapped between
/// the two reads would let a signed manifest vouch for an unsigned one.
pub(crate) fn read_manifest(dir: &Path) -> Result<Vec<u8>, ManifestError> {
    let root = fsio::canonical_dir(dir, "release")?;
    let manifest_path = dir.join(MANIFEST_NAME);
    let bytes = match fsio::read_input(
        &root.join(MANIFEST_NAME),
        "content manifest",
        fsio::limits::CONTENT_MANIFEST,
    ) {
        Ok(b) => b,
        Err(e) if e.source.kind() == io::ErrorKind::NotFound => {
            return Err(ManifestError::NoManifest {
                path: manifest_path,
            })
        }
        Err(e) => return Err(IoError::new("refused", &manifest_path, e.source).into()),
    };
    // `create` writes a regular file. A link may lead to any file the verifier can read
    // (`-> ~/.npmrc`), and a malformed line is quoted in the error: what a link leads to is
    // never parsed (it was read only for read_input's type and size refusals).
    if fs::symlink_metadata(root.join(MANIFEST_NAME)).is_ok_and(|m| m.file_type().is_symlink()) {
        let why = "it is a symlink; manifest create writes a regular file, and a link is not \
                   followed (it may lead to a file that is not the release's)";
        return Err(IoError::new("refused", &manifest_path, io::Error::other(why)).into());
    }
    Ok(bytes)
}

/// Check the release at `dir` against `bytes`, its manifest as [`read_manifest`] read it.
pub(crate) fn verify_release_against(
    dir: &Path,
    bytes: &[u8],
    jobs: NonZeroUsize,
) -> Result<ContentReport, ManifestError> {
    let root = fsio::canonical_dir(dir, "release")?;
    let manifest_path = dir.join(MANIFEST_NAME);
    let mut entries = sumfile::parse(Algorithm::Sha256, &manifest_path, bytes)?;
    let scan = scan(&root)?;
    // A manifest made before rendered documents were left out may list one: it is not content
    // whatever the manifest says, unless what is there now is content (an executable).
    entries.retain(|e| !is_rendered_document_path(&e.path) || scan.files.contains(&e.path));

    let present: HashSet<&Path> = scan.files.iter().map(PathBuf::as_path).collect();
    let listed: HashSet<&Path> = entries.iter().map(|e| e.path.as_path()).collect();
    let mut modified = Vec::new();
    let mut missing = Vec::new();
    let mut to_hash = Vec::new();
    for entry in &entries {
        if present.contains(entry.path.as_path()) {
            to_hash.push(entry);
        } else if scan.inner_symlinks.contains(&entry.path)
            || scan.special_files.contains(&entry.path)
            || root.join(&entry.path).symlink_metadata().is_ok()
        {
            // Still there, but no longer a regular file (a symlink, a directory, a fifo).
            modified.push(entry.path.clone());
        } else {
            missing.push(entry.path.clone());
        }
    }
    let paths: Vec<PathBuf> = to_hash.iter().map(|e| e.path.clone()).collect();
    let digests = hash_files(&root, &paths, &scan.link_targets, jobs)?;
    for (entry, hex) in to_hash.iter().zip(&digests) {
        if *hex != entry.digest {
            modified.push(entry.path.clone());
        }
    }
    let added: Vec<PathBuf> = scan
        .files
        .iter()
        .filter(|p| !listed.contains(p.as_path()))
        .cloned()
        .collect();
    sort_bytewise(&mut modified);
    sort_bytewise(&mut missing);
    Ok(ContentReport {
        dir: dir.to_path_buf(),
        files: entries.len(),
        modified,
        missing,
        added,
        escaping_symlinks: scan.escaping_symlinks,
        special_files: scan.special_files,
        not_content: scan.not_content,
    })
}

fn sort_bytewise(paths: &mut [PathBuf]) {
    paths.sort_unstable_by(|a, b| a.as_os_str().as_bytes().cmp(b.as_os_str().as_bytes()));
}

/// Walk the canonical `root` without following links. Results are sorted bytewise.
fn scan(root: &Path) -> Result<Scan, ManifestError> {
    let mut scan = Scan::default();
    let entries = fsio::walk_no_follow(root).map_err(|e| ManifestError::Walk {
        path: e.path,
        message: e.message,
    })?;
    for (rel, kind) in entries {
        let path = root.join(&rel);
        if kind.is_file() {
            if is_rendered_document(root, &rel) {
                scan.not_content.push(rel);
            } else if ![MANIFEST_NAME, SIGNATURE_NAME, PROVENANCE_NAME]
                .iter()
                .any(|n| rel.as_os_str() == *n)
            {
                scan.files.push(rel);
            }
        } else if kind.is_symlink() {
            let target = fs::read_link(&path).unwrap_or_default();
            // Path::starts_with compares whole components: /opt/rel2 is not inside /opt/rel.
            match fs::canonicalize(&path) {
                Ok(resolved) if resolved.starts_with(root) => {
                    // A link to a file is listed by what it leads to, so that re-pointing it
                    // at another file of the release is seen (the manifest itself excepted:
                    // it changes as it is written).
                    let to_file = fs::metadata(&resolved).is_ok_and(|m| m.is_file())
                        && resolved != root.join(MANIFEST_NAME);
                    if to_file {
                        scan.files.push(rel.clone());
                        scan.link_targets.insert(rel.clone(), resolved);
                    }
                    scan.inner_symlinks.insert(rel);
                }
                Ok(_) => scan.escaping_symlinks.push(EscapingSymlink {
                    path: rel,
                    target,
                    dangling: false,
                }),
                Err(_) => scan.escaping_symlinks.push(EscapingSymlink {
                    path: rel,
                    target,
                    dangling: true,
                }),
            }
        } else if !kind.is_dir() {
            scan.special_files.push(rel);
        }
    }
    sort_bytewise(&mut scan.files);
    scan.escaping_symlinks.sort_unstable_by(|a, b| {
        a.path
            .as_os_str()
            .as_bytes()
            .cmp(b.path.as_os_str().as_bytes())
    });
    sort_bytewise(&mut scan.special_files);
    Ok(scan)
}

/// SHA-256 of each of `files` (relative to `root`), in the same order, on `jobs` threads.
///
/// Workers take the next index from one atomic counter, so the work spreads by what is left
/// rather than by a split made up front: one huge file does not leave the other core idle
/// through a thousand small ones. Each worker owns one read buffer for its whole life.
/// A symlink of `links` is hashed as the (canonical, inside the release) file it leads to.
fn hash_files(
    root: &Path,
    files: &[PathBuf],
    links: &HashMap<PathBuf, PathBuf>,
    jobs: NonZeroUsize,
) -> Result<Vec<String>, IoError> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<io::Result<String>>>> =
        Mutex::new((0..files.len()).map(|_| None).collect());
    let workers = jobs.get().min(files.len()).max(1);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                let mut buf = vec![0u8; digest::BUF_SIZE];
                let mut done = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(rel) = files.get(i) else { break };
                    let path = links.get(rel).cloned().unwrap_or_else(|| root.join(rel));
                    let r = fsio::open_regular(&path).and_then(|mut f| {
                        digest::digest_reader(Algorithm::Sha256, &mut f, &mut buf)
                            .map(|d| digest::to_hex(&d))
                    });
                    let failed = r.is_err();
                    done.push((i, r));
                    if failed {
                        // Stop taking work from this worker; the error is reported below.
                        next.store(files.len(), Ordering::Relaxed);
                        break;
                    }
                }
                let mut all = results.lock().unwrap_or_else(|p| p.into_inner());
                for (i, r) in done {
                    all[i] = Some(r);
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut out = Vec::with_capacity(files.len());
    for (rel, r) in files.iter().zip(results) {
        match r {
            Some(Ok(hex)) => out.push(hex),
            Some(Err(e)) => return Err(IoError::new("cannot read", &root.join(rel), e)),
            // Indices are handed out in order, and every index handed out is reported, so an
            // index never handed out lies after the failure that stopped the queue, and that
            // failure has been returned above.
            None => unreachable!("file {} was never hashed", rel.display()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("bin")).unwrap();
        fs::write(dir.path().join("bin/x"), b"x").unwrap();
        fs::write(dir.path().join("VERSION"), b"v").unwrap();
        dir
    }

    #[test]
    fn verify_release_is_what_the_content_check_calls() {
        let dir = release();
        create_manifest(dir.path(), NonZeroUsize::MIN).unwrap();
        let report = verify_release(dir.path()).unwrap();
        assert!(report.ok(), "{report:?}");
        assert_eq!(report.files, 2);
        assert_eq!(report.summary(), "2 files match MANIFEST.sha256");

        fs::write(dir.path().join("bin/x"), b"y").unwrap();
        let report = verify_release(dir.path()).unwrap();
        assert!(!report.ok());
        assert_eq!(report.modified, [PathBuf::from("bin/x")]);
        assert_eq!(report.summary(), "1 modified (bin/x)");
        assert_eq!(report.to_json()["ok"], false);
    }

    #[test]
    fn a_release_without_a_manifest_is_no_manifest() {
        let dir = release();
        let err = verify_release(dir.path()).unwrap_err();
        assert!(matches!(err, ManifestError::NoManifest { .. }), "{err}");
        assert!(
            err.help().unwrap().contains("manifest create"),
            "{:?}",
            err.help()
        );
    }

    #[test]
    fn summary_names_at_most_three_paths_per_kind() {
        let p = |s: &str| PathBuf::from(s);
        let report = ContentReport {
            dir: p("r"),
            files: 9,
            modified: vec![p("a"), p("b"), p("c"), p("d"), p("e")],
            missing: vec![p("new\nline")],
            added: vec![],
            escaping_symlinks: vec![EscapingSymlink {
                path: p("l"),
                target: p("/etc"),
                dangling: false,
            }],
            special_files: vec![],
            not_content: vec![],
        };
        assert_eq!(
            report.summary(),
            "5 modified (a, b, c, … 2 more), 1 missing (new\\nline), 1 escaping symlinks (l)"
        );
        let one = ContentReport {
            files: 1,
            modified: vec![],
            missing: vec![],
            escaping_symlinks: vec![],
            ..report
        };
        assert_eq!(one.summary(), "1 file match MANIFEST.sha256");
    }

    #[test]
    fn rendered_documents_in_a_prefix_are_not_content_and_nothing_else_under_mcp_is() {
        use std::os::unix::fs::PermissionsExt;
        let dir = release();
        fs::create_dir_all(dir.path().join("mcp")).unwrap();
        fs::write(dir.path().join("mcp/orchestrata.mcp.json"), b"{}").unwrap();
        assert_eq!(create_manifest(dir.path(), NonZeroUsize::MIN).unwrap(), 2);
        // Install rewrites its document: still passes, and says what it left out.
        fs::write(dir.path().join("mcp/orchestrata.mcp.json"), b"{\"x\":1}").unwrap();
        let r = verify_release(dir.path()).unwrap();
        assert!(r.ok(), "{r:?}");
        assert!(
            r.summary()
                .contains("mcp/orchestrata.mcp.json written by mcp-deploy"),
            "{}",
            r.summary()
        );
        // An executable under that name, another name, a nested file: content, so added.
        for (rel, mode) in [
            ("mcp/evil.mcp.json", 0o755),
            ("mcp/helper", 0o755),
            ("mcp/notes.json", 0o644),
            ("mcp/sub/x.mcp.json", 0o644),
            ("mcp/bad name.mcp.json", 0o644),
        ] {
            let p = dir.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, b"#!/bin/sh\n").unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
            let r = verify_release(dir.path()).unwrap();
            assert_eq!(r.added, [PathBuf::from(rel)], "{rel}");
            fs::remove_file(&p).unwrap();
        }
        // A real file tampered still fails.
        fs::write(dir.path().join("bin/x"), b"y").unwrap();
        assert_eq!(
            verify_release(dir.path()).unwrap().modified,
            [PathBuf::from("bin/x")]
        );
    }
}
