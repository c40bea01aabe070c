//! Writing files so that they appear whole or not at all.
//!
//! A file is written to a temporary file in the destination's own directory (so the final
//! rename never crosses a file system), flushed to disk, renamed over the destination, and
//! then the directory itself is synced so that the rename survives a power loss. A reader
//! sees the old content or the new, never a prefix of the new. Files under the user's home
//! directory get mode 0600, since they describe which programs an agent runs.

use rustix::fs::OFlags;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// An I/O failure with the path it happened on.
#[derive(Debug, thiserror::Error)]
#[error("{action} {path}: {source}")]
pub(crate) struct IoError {
    pub(crate) action: &'static str,
    pub(crate) path: PathBuf,
    #[source]
    pub(crate) source: io::Error,
}

impl IoError {
    /// What to do about a refused input (wrong file type, over its size bound).
    pub(crate) fn help(&self) -> Option<String> {
        match self.source.kind() {
            io::ErrorKind::InvalidInput => Some(
                "replace it with a regular file (or a symlink to one): a FIFO, socket, device \
                 or directory is never read, since reading it could block or never end"
                    .into(),
            ),
            io::ErrorKind::FileTooLarge => {
                Some("check what the file is; the size bounds are listed in /usr/share/doc/mcp-deploy/content.md".into())
            }
            _ => None,
        }
    }

    pub(crate) fn new(action: &'static str, path: &Path, source: io::Error) -> Self {
        IoError {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Atomically replace `path` with `contents`. `private` forces mode 0600; otherwise the file
/// is 0600 when it lies under `$HOME` and 0644 elsewhere.
pub(crate) fn write_atomic(path: &Path, contents: &[u8], private: bool) -> Result<(), IoError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(|e| IoError::new("cannot create directory", &dir, e))?;
    let mode = if private || is_under_home(path) {
        0o600
    } else {
        0o644
    };
    write_atomic_mode(path, contents, mode)
}

/// [`write_atomic`] with the file's mode given (a client's own config keeps the mode it had).
pub(crate) fn write_atomic_mode(path: &Path, contents: &[u8], mode: u32) -> Result<(), IoError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(|e| IoError::new("cannot create directory", &dir, e))?;
    sweep_partials(&dir);
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!("{PARTIAL_PREFIX}{}.", std::process::id()))
        .suffix(".partial")
        .tempfile_in(&dir)
        .map_err(|e| IoError::new("cannot create a temporary file in", &dir, e))?;
    let write = |tmp: &mut tempfile::NamedTempFile| -> io::Result<()> {
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(mode))?;
        tmp.write_all(contents)?;
        tmp.as_file().sync_all()
    };
    write(&mut tmp).map_err(|e| IoError::new("cannot write", tmp.path(), e))?;
    tmp.persist(path)
        .map_err(|e| IoError::new("cannot rename into place", path, e.error))?;
    sync_dir(&dir)
}

/// The name of a file being written: `.mcp-deploy.<pid>.<random>.partial`, renamed into place
/// when whole. The pid tells a killed run's leftover from a live run's file.
const PARTIAL_PREFIX: &str = ".mcp-deploy.";

/// Remove the `.partial` files that killed runs left in `dir` (a kill -9 between the write and
/// the rename): only regular files of ours, named with the pid of a process that is gone.
/// Best effort: a file that cannot be removed stays, as it would have.
fn sweep_partials(dir: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let me = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.ends_with(".partial"))
            .and_then(|n| n.strip_prefix(PARTIAL_PREFIX))
            .and_then(|rest| rest.split('.').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let gone = rustix::process::Pid::from_raw(pid).is_none_or(|p| {
            matches!(
                rustix::process::test_kill_process(p),
                Err(rustix::io::Errno::SRCH)
            )
        });
        if pid == std::process::id() as i32 || !gone {
            continue;
        }
        let path = entry.path();
        if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file() && m.uid() == me) {
            let _ = fs::remove_file(&path);
        }
    }
}

/// Sync a directory so that a rename inside it is durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), IoError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| IoError::new("cannot sync directory", dir, e))
}

/// The size bounds of the files mcp-deploy reads, by kind (documented in docs/content.md).
/// Each is far above what a real file of that kind holds and far below what would hurt the
/// machine: a bound is there so that `MANIFEST.sha256 -> /dev/zero`, or a 1 GiB "flat
/// document", is refused at once rather than read until memory runs out.
pub(crate) mod limits {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    /// `VERSION`: one sha and a newline.
    pub(crate) const VERSION: u64 = 4 * KIB;
    /// A `.sha256` sidecar: one `sha256sum` line.
    pub(crate) const SIDECAR: u64 = 64 * KIB;
    /// `MANIFEST.sha256`: about 100 bytes a file; 64 MiB is over half a million files.
    pub(crate) const CONTENT_MANIFEST: u64 = 64 * MIB;
    /// A vendored SDK's release manifest (`--manifest`).
    pub(crate) const RELEASE_MANIFEST: u64 = 16 * MIB;
    /// `package-lock.json` / `npm-shrinkwrap.json`: big monorepos reach tens of MiB.
    pub(crate) const LOCKFILE: u64 = 256 * MIB;
    /// `package.json`.
    pub(crate) const PACKAGE_JSON: u64 = 16 * MIB;
    /// A declaration (`--config`), a template, a flat document, a journal, a rendered
    /// document, a project `.mcp.json`.
    pub(crate) const DOCUMENT: u64 = 16 * MIB;
    /// A client's own config file: Claude's `.claude.json` keeps per-project history and
    /// legitimately grows to several MiB.
    pub(crate) const CLIENT_CONFIG: u64 = 256 * MIB;
    /// The JSON-with-comments file of a client mcp-deploy edits (OpenCode, Cursor): a few KiB
    /// in practice. Its concrete syntax tree takes about 45 times the file's size in memory
    /// (a 39 MiB file: 1.7 GiB), so a file at the client-config bound would exhaust memory
    /// rather than be refused.
    pub(crate) const CLIENT_JSONC: u64 = 4 * MIB;
    /// A trust policy (`--trusted-signers`, an `allowed_signers` file): about 100 bytes a
    /// signer.
    pub(crate) const ALLOWED_SIGNERS: u64 = 4 * MIB;
    /// `MANIFEST.sha256.sig`: an armored SSHSIG is about 300 bytes (Ed25519) to 3 KiB (RSA
    /// 16384).
    pub(crate) const SIGNATURE: u64 = 64 * KIB;
    /// A builder trust policy (`--trusted-builder`, TOML): a few hundred bytes a builder.
    pub(crate) const BUILDER_POLICY: u64 = MIB;
}

fn describe_type(t: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    }
}

fn show_bytes(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// Read the input file at `path` — a `kind` of file (`"VERSION file"`, `"lockfile"`), at most
/// `max` bytes — refusing at once anything that could make the read block or never end.
///
/// Symlinks are followed (a release's `VERSION` may be one); what they lead to must be a
/// regular file. The type is looked at before the open (so that a socket is named as one
/// rather than failing with ENXIO), the open is `O_NONBLOCK` (so that a FIFO swapped in
/// after that look cannot block it), and the type is checked again on the opened handle.
/// At most `max + 1` bytes are read: one more than the bound tells an oversized file from
/// one exactly at it, and `/dev/zero` behind a symlink never gets that far. A refusal is an
/// [`IoError`] of kind `InvalidInput` (wrong type) or `FileTooLarge` (over the bound); a
/// missing file keeps `NotFound`, which callers treat as absent where absence is allowed.
pub(crate) fn read_input(path: &Path, kind: &str, max: u64) -> Result<Vec<u8>, IoError> {
    read_bounded(path, kind, max, true)
}

/// [`read_input`], but a symlink at `path` itself is refused, also one swapped in after the
/// type was looked at (`O_NOFOLLOW` on the open): for a file that must be the release's own,
/// such as its signature.
pub(crate) fn read_input_no_follow(path: &Path, kind: &str, max: u64) -> Result<Vec<u8>, IoError> {
    read_bounded(path, kind, max, false)
}

fn read_bounded(path: &Path, kind: &str, max: u64, follow: bool) -> Result<Vec<u8>, IoError> {
    let refuse = |kind_of: io::ErrorKind, why: String| {
        IoError::new("refused", path, io::Error::new(kind_of, why))
    };
    let not_regular = |t: fs::FileType| {
        refuse(
            io::ErrorKind::InvalidInput,
            format!(
                "the {kind} must be a regular file, but this is {}",
                describe_type(t)
            ),
        )
    };
    let meta = if follow {
        fs::metadata(path)
    } else {
        fs::symlink_metadata(path)
    }
    .map_err(|e| IoError::new("cannot read", path, e))?;
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    let flags = if follow {
        OFlags::NONBLOCK
    } else {
        OFlags::NONBLOCK | OFlags::NOFOLLOW
    };
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
        .map_err(|e| IoError::new("cannot read", path, e))?;
    let meta = file
        .metadata()
        .map_err(|e| IoError::new("cannot read", path, e))?;
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    let too_large = || {
        refuse(
            io::ErrorKind::FileTooLarge,
            format!(
                "it is larger than {}, the most a {kind} may be",
                show_bytes(max)
            ),
        )
    };
    if meta.len() > max {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(meta.len().min(max) as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| IoError::new("cannot read", path, e))?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_input`], as UTF-8 text.
pub(crate) fn read_input_string(path: &Path, kind: &str, max: u64) -> Result<String, IoError> {
    let bytes = read_input(path, kind, max)?;
    String::from_utf8(bytes).map_err(|_| {
        IoError::new(
            "refused",
            path,
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the {kind} is not UTF-8 text"),
            ),
        )
    })
}

/// [`read_input_string`], with a missing file as `None`.
pub(crate) fn read_input_if_exists(
    path: &Path,
    kind: &str,
    max: u64,
) -> Result<Option<String>, IoError> {
    match read_input_string(path, kind, max) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.source.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Like [`write_atomic`], but when `path` is a symlink the file it (finally) points to is
/// replaced, in that file's own directory, and the link stays a link. A dangling link is
/// refused: the file it names is not ours to create.
pub(crate) fn write_atomic_through_links(
    path: &Path,
    contents: &[u8],
    private: bool,
) -> Result<(), IoError> {
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return write_atomic(path, contents, private);
    }
    let target = fs::canonicalize(path).map_err(|e| {
        IoError::new(
            "cannot follow the symlink",
            path,
            io::Error::new(e.kind(), format!("{e} (its target must exist)")),
        )
    })?;
    write_atomic(&target, contents, private)
}

/// Open a file a walk saw as regular, refusing it if it has since become something else.
///
/// Between the walk and the read the tree may change. `O_NOFOLLOW` refuses a file swapped
/// for a symlink (which could point anywhere), `O_NONBLOCK` keeps a file swapped for a fifo
/// from blocking the open forever, and the type is checked again on the opened handle.
pub(crate) fn open_regular(path: &Path) -> io::Result<fs::File> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(
            "changed while being checked: no longer a regular file",
        ));
    }
    Ok(file)
}

/// A failure walking a tree, with the path it happened on.
#[derive(Debug, thiserror::Error)]
#[error("cannot walk {path}: {message}")]
pub(crate) struct WalkError {
    pub(crate) path: PathBuf,
    pub(crate) message: String,
}

/// Every entry below `root` (not `root` itself) as its path relative to `root` and its own
/// type: symlinks are not followed, so a link is reported as a link, wherever it points.
pub(crate) fn walk_no_follow(root: &Path) -> Result<Vec<(PathBuf, fs::FileType)>, WalkError> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root).follow_links(false).min_depth(1) {
        let entry = entry.map_err(|e| WalkError {
            path: e.path().unwrap_or(root).to_path_buf(),
            message: e.to_string(),
        })?;
        let rel = entry
            .path()
            .strip_prefix(root)
            .expect("walkdir yields paths under its root")
            .to_path_buf();
        out.push((rel, entry.file_type()));
    }
    Ok(out)
}

/// Why a directory to work in cannot be used (manifest's release directory, verify-vendor's
/// vendor directory): `what` names it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DirError {
    #[error("{what} directory {dir} cannot be used: {source}")]
    Unusable {
        what: &'static str,
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{dir} is not a directory")]
    NotADirectory { dir: PathBuf },
}

/// `dir`, canonical; it must be a directory (`what` names it in the error).
pub(crate) fn canonical_dir(dir: &Path, what: &'static str) -> Result<PathBuf, DirError> {
    let root = fs::canonicalize(dir).map_err(|source| DirError::Unusable {
        what,
        dir: dir.to_path_buf(),
        source,
    })?;
    if !root.is_dir() {
        return Err(DirError::NotADirectory {
            dir: dir.to_path_buf(),
        });
    }
    Ok(root)
}

fn is_under_home(path: &Path) -> bool {
    let Some(home) = crate::dirs::home_if_set() else {
        return false;
    };
    let home = fs::canonicalize(&home).unwrap_or(home);
    let parent = path.parent().unwrap_or(path);
    let parent = fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
    parent.starts_with(&home)
}

/// Whether only the users `owners` can replace `path`: it and every directory above it owned
/// by one of them, and writable by no one else — except a directory owned by root with the
/// sticky bit (`/tmp`), where no one replaces what another user owns — both along the path as
/// given (a symlinked component is judged by the directory that holds it) and along the real
/// path it resolves to. `Err`: the first place that lets someone else in, and why.
pub(crate) fn only_owners_can_replace(path: &Path, owners: &[u32]) -> Result<(), String> {
    // The path as given, then the real one it resolves to: a symlinked component is replaced
    // only through the directory that holds it (checked on the way up), and what it leads to
    // is checked on the real path. A symlink's own mode (always 0777) says nothing.
    owners_along(path, owners)?;
    if let Ok(real) = fs::canonicalize(path) {
        if real != path {
            owners_along(&real, owners)?;
        }
    }
    Ok(())
}

fn owners_along(path: &Path, owners: &[u32]) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let mut at = Some(path);
    while let Some(p) = at {
        let m = fs::symlink_metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if m.file_type().is_symlink() {
            at = p.parent();
            continue;
        }
        if !owners.contains(&m.uid()) {
            return Err(format!(
                "{} is owned by uid {}, not by {}",
                p.display(),
                m.uid(),
                owners
                    .iter()
                    .map(|u| if *u == 0 {
                        "root".to_string()
                    } else {
                        format!("uid {u}")
                    })
                    .collect::<Vec<_>>()
                    .join(" or ")
            ));
        }
        let sticky_root_dir = m.is_dir() && m.uid() == 0 && m.mode() & 0o1000 != 0;
        if m.mode() & 0o022 != 0 && !sticky_root_dir {
            return Err(format!(
                "{} is writable by group or others (mode {:o})",
                p.display(),
                m.mode() & 0o7777
            ));
        }
        at = p.parent();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_input_no_follow_refuses_a_link_that_read_input_follows() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sig");
        fs::write(&file, b"data").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(
            read_input_no_follow(&file, "signature", 16).unwrap(),
            b"data"
        );
        assert_eq!(read_input(&link, "signature", 16).unwrap(), b"data");
        let e = read_input_no_follow(&link, "signature", 16).unwrap_err();
        assert!(e.to_string().contains("this is a symlink"), "{e}");
        assert_eq!(e.source.kind(), io::ErrorKind::InvalidInput);
        let e = read_input_no_follow(&file, "signature", 3).unwrap_err();
        assert_eq!(e.source.kind(), io::ErrorKind::FileTooLarge);
    }

    /// The stress test's kill -9 between a write and its rename left `.partial` files that no
    /// later run removed: the next write into the directory removes those of dead runs.
    #[test]
    fn a_killed_runs_partial_file_is_removed_by_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("doc.json");
        // A pid that is gone: a child that has exited and been reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let leftover = dir
            .path()
            .join(format!(".mcp-deploy.{dead}.abc123.partial"));
        let live = dir
            .path()
            .join(format!(".mcp-deploy.{}.def456.partial", std::process::id()));
        let other = dir.path().join(".mcp-deploy.notapid.partial");
        for f in [&leftover, &live, &other] {
            fs::write(f, b"half").unwrap();
        }
        write_atomic(&p, b"whole", false).unwrap();
        assert!(!leftover.exists(), "a dead run's partial file is removed");
        assert!(
            live.exists() && other.exists(),
            "a live run's, or one not ours by name, stays"
        );
        assert_eq!(fs::read(&p).unwrap(), b"whole");
    }

    #[test]
    fn replaces_whole_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/doc.json");
        write_atomic(&p, b"one", false).unwrap();
        write_atomic(&p, b"two", true).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let names: Vec<_> = fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("doc.json")]);
    }

    #[test]
    fn failure_names_the_path_and_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should go: the rename fails, the directory stays.
        let p = dir.path().join("taken");
        fs::create_dir(&p).unwrap();
        fs::write(p.join("keep"), b"x").unwrap();
        let err = write_atomic(&p, b"new", false).unwrap_err();
        assert!(err.to_string().contains("taken"), "{err}");
        assert_eq!(fs::read(p.join("keep")).unwrap(), b"x");
    }

    #[test]
    fn open_regular_refuses_symlinks_and_fifos_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("VERSION"), b"v").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("VERSION", &link).unwrap();
        assert!(open_regular(&link).is_err());
        let fifo = dir.path().join("fifo");
        let st = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(st.success());
        let err = open_regular(&fifo).unwrap_err();
        assert!(
            err.to_string().contains("no longer a regular file"),
            "{err}"
        );
        assert!(open_regular(&dir.path().join("VERSION")).is_ok());
    }

    #[test]
    fn read_input_refuses_what_could_block_or_never_end() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("ok"), b"12345").unwrap();
        assert_eq!(
            read_input(&d.join("ok"), "VERSION file", 5).unwrap(),
            b"12345"
        );
        let big = read_input(&d.join("ok"), "VERSION file", 4).unwrap_err();
        assert_eq!(big.source.kind(), io::ErrorKind::FileTooLarge);
        assert!(
            big.to_string()
                .contains("larger than 4 bytes, the most a VERSION file may be"),
            "{big}"
        );
        let fifo = d.join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        std::os::unix::fs::symlink("fifo", d.join("to-fifo")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("to-zero")).unwrap();
        let _sock = std::os::unix::net::UnixListener::bind(d.join("sock")).unwrap();
        for (name, what) in [
            ("fifo", "a FIFO"),
            ("to-fifo", "a FIFO"),
            ("to-zero", "a character device"),
            ("sock", "a socket"),
            (".", "a directory"),
        ] {
            let start = std::time::Instant::now();
            let err = read_input(&d.join(name), "lockfile", 1 << 20).unwrap_err();
            assert!(start.elapsed() < std::time::Duration::from_secs(1));
            assert_eq!(err.source.kind(), io::ErrorKind::InvalidInput, "{name}");
            assert!(err.to_string().contains(what), "{name}: {err}");
            assert!(
                err.to_string()
                    .contains("the lockfile must be a regular file"),
                "{err}"
            );
            assert!(err.help().is_some());
        }
        assert_eq!(
            read_input_if_exists(&d.join("absent"), "journal", 10).unwrap(),
            None
        );
    }

    /// A prefix reached through a symlinked component (the promote test's `link -> opt`):
    /// the link's own mode 0777 says nothing; what it leads to is judged on the real path.
    #[test]
    fn a_symlinked_component_is_judged_by_what_it_leads_to() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let real = dir.path().join("real");
        fs::create_dir(&real).unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o755)).unwrap();
        fs::write(real.join("pin.json"), "{}").unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let me = rustix::process::geteuid().as_raw();
        let via_link = dir.path().join("link/pin.json");
        assert_eq!(only_owners_can_replace(&via_link, &[0, me]), Ok(()));
        fs::set_permissions(&real, fs::Permissions::from_mode(0o777)).unwrap();
        let err = only_owners_can_replace(&via_link, &[0, me]).unwrap_err();
        assert!(err.contains("writable by group or others"), "{err}");
    }
}
