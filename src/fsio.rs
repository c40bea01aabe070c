//! Writing files so that they appear whole or not at all.
//!
//! A file is written to a temporary file in the destination's own directory (so the final
//! rename never crosses a file system), flushed to disk, renamed over the destination, and
//! then the directory itself is synced so that the rename survives a power loss. A reader
//! sees the old content or the new, never a prefix of the new. Files under the user's home
//! directory get mode 0600, since they describe which programs an agent runs.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// An I/O failure with the path it happened on.
#[derive(Debug, thiserror::Error)]
#[error("{action} {path}: {source}")]
pub struct IoError {
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl IoError {
    pub fn new(action: &'static str, path: &Path, source: io::Error) -> Self {
        IoError {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Atomically replace `path` with `contents`. `private` forces mode 0600; otherwise the file
/// is 0600 when it lies under `$HOME` and 0644 elsewhere.
pub fn write_atomic(path: &Path, contents: &[u8], private: bool) -> Result<(), IoError> {
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
    let mut tmp = tempfile::Builder::new()
        .prefix(".mcp-deploy.")
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

/// Sync a directory so that a rename inside it is durable.
pub fn sync_dir(dir: &Path) -> Result<(), IoError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| IoError::new("cannot sync directory", dir, e))
}

/// Read a file into a string, naming the file on failure.
pub fn read_to_string(path: &Path) -> Result<String, IoError> {
    fs::read_to_string(path).map_err(|e| IoError::new("cannot read", path, e))
}

/// Read a file we own the format of (a journal, a flat document, a client config), following
/// symlinks but refusing anything that is not a regular file: a fifo planted where the file
/// should be would block a plain read forever (`O_NONBLOCK` keeps the open from blocking).
pub fn read_regular(path: &Path) -> io::Result<String> {
    use std::io::Read;
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("it is not a regular file"));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

/// Like [`write_atomic`], but when `path` is a symlink the file it (finally) points to is
/// replaced, in that file's own directory, and the link stays a link. A dangling link is
/// refused: the file it names is not ours to create.
pub fn write_atomic_through_links(
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
pub fn open_regular(path: &Path) -> io::Result<fs::File> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
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
pub struct WalkError {
    pub path: PathBuf,
    pub message: String,
}

/// Every entry below `root` (not `root` itself) as its path relative to `root` and its own
/// type: symlinks are not followed, so a link is reported as a link, wherever it points.
pub fn walk_no_follow(root: &Path) -> Result<Vec<(PathBuf, fs::FileType)>, WalkError> {
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

fn is_under_home(path: &Path) -> bool {
    let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
        return false;
    };
    let home = fs::canonicalize(&home).unwrap_or_else(|_| PathBuf::from(home));
    let parent = path.parent().unwrap_or(path);
    let parent = fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
    parent.starts_with(&home)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
