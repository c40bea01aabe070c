//! The file a checked launch runs: opened once, hashed through that handle against the
//! release's manifest, and executed from that same handle (`execveat(fd, "", AT_EMPTY_PATH)`),
//! so the file verified is the file run even when its path is swapped in between.
//!
//! A `#!` script is run by its interpreter, started from its own handle, with the script's
//! handle passed as `/dev/fd/N` (kept open across the exec): the interpreter reads the very
//! file that was hashed. Node resolves that path to the script's real one, so its relative
//! `require`s still work; an interpreter that does not (Python's `sys.path[0]`) sees
//! `/dev/fd`. `#!/usr/bin/env NAME` is resolved here, on the server's `PATH`, so that what runs
//! is the file checked, not whatever `env` finds later. The interpreter is checked too: one
//! inside the release against the manifest, one outside it only as a file that only root can
//! replace (owned by root, like every directory above it, and writable by no one else).

use std::collections::HashMap;
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::LaunchError;
use crate::content::digest::{digest_reader, to_hex, Algorithm};

/// What to execute: the open file, the argument vector, and the handles the new program reads.
pub(crate) struct Image {
    pub(crate) program: File,
    pub(crate) argv: Vec<CString>,
    /// A script's handle, left open across the exec (`/dev/fd/N`).
    pub(crate) _keep: Option<File>,
    /// What runs, for the messages: the executable, and its interpreter when it is a script.
    pub(crate) shown: String,
}

/// Open `exe` (canonical, inside `release`), hash it against `manifest` (relative path to
/// hex digest), and build what runs it with `args`; `path` is the server's `PATH`.
pub(crate) fn open(
    exe: &Path,
    release: &Path,
    manifest: &HashMap<PathBuf, String>,
    argv0: &str,
    args: &[String],
    path: Option<&OsStr>,
) -> Result<Image, LaunchError> {
    let file = open_hashed(exe, release, manifest)?;
    let mut head = [0u8; 256];
    let n = file.read_at(&mut head, 0).unwrap_or(0);
    let cstr = |s: &[u8]| {
        CString::new(s).map_err(|_| LaunchError::Exec {
            what: exe.display().to_string(),
            why: "an argument holds a NUL byte".into(),
        })
    };
    if !head[..n].starts_with(b"#!") {
        let mut argv = vec![cstr(argv0.as_bytes())?];
        for a in args {
            argv.push(cstr(a.as_bytes())?);
        }
        return Ok(Image {
            program: file,
            argv,
            _keep: None,
            shown: exe.display().to_string(),
        });
    }
    let line = head[2..n].split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.trim().splitn(2, [' ', '\t']);
    let interp = parts.next().unwrap_or_default().to_string();
    let arg = parts
        .next()
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty());
    let bad = |why: String| LaunchError::Interpreter {
        script: exe.to_path_buf(),
        why,
    };
    if !interp.starts_with('/') {
        return Err(bad(format!(
            "its #! line names {interp:?}, not an absolute path"
        )));
    }
    // `#!/usr/bin/env NAME`: NAME as env would find it on the server's PATH.
    let (interp, arg) = match (Path::new(&interp).file_name(), &arg) {
        (Some(f), Some(name))
            if f == "env" && !name.contains([' ', '\t']) && !name.starts_with('-') =>
        {
            let found = which::which_in(name, path, "/").map_err(|e| {
                bad(format!(
                    "`{interp} {name}`: {name} is not on the server's PATH ({e})"
                ))
            })?;
            (found, None)
        }
        _ => (PathBuf::from(&interp), arg),
    };
    let canonical =
        std::fs::canonicalize(&interp).map_err(|e| bad(format!("{}: {e}", interp.display())))?;
    let program = if canonical.starts_with(release) {
        open_hashed(&canonical, release, manifest)?
    } else {
        only_root_can_replace(&canonical).map_err(bad)?;
        crate::fsio::open_regular(&canonical)
            .map_err(|e| bad(format!("{}: {e}", canonical.display())))?
    };
    // The script's handle stays open across the exec: the interpreter reads it there.
    rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty()).map_err(|e| {
        LaunchError::Exec {
            what: exe.display().to_string(),
            why: e.to_string(),
        }
    })?;
    let mut argv = vec![cstr(canonical.as_os_str().as_bytes())?];
    if let Some(a) = &arg {
        argv.push(cstr(a.as_bytes())?);
    }
    argv.push(cstr(format!("/dev/fd/{}", file.as_raw_fd()).as_bytes())?);
    for a in args {
        argv.push(cstr(a.as_bytes())?);
    }
    Ok(Image {
        program,
        argv,
        _keep: Some(file),
        shown: format!("{} (run by {})", exe.display(), canonical.display()),
    })
}

/// `path` (canonical, inside `release`) opened once and hashed through that handle against
/// its manifest line; the handle, when the digest is the manifest's and the file did not
/// change while it was read.
fn open_hashed(
    path: &Path,
    release: &Path,
    manifest: &HashMap<PathBuf, String>,
) -> Result<File, LaunchError> {
    let rel = path
        .strip_prefix(release)
        .map_err(|_| LaunchError::Outside {
            path: path.to_path_buf(),
            release: release.to_path_buf(),
        })?;
    let expected = manifest.get(rel).ok_or_else(|| LaunchError::NotListed {
        path: path.to_path_buf(),
    })?;
    let io = |e: std::io::Error| LaunchError::Exec {
        what: path.display().to_string(),
        why: e.to_string(),
    };
    let file = crate::fsio::open_regular(path).map_err(io)?;
    let before = file.metadata().map_err(io)?;
    let mut buf = vec![0u8; 1 << 20];
    let digest =
        digest_reader(Algorithm::Sha256, &mut (&file).take(u64::MAX), &mut buf).map_err(io)?;
    let after = file.metadata().map_err(io)?;
    let same = |m: &std::fs::Metadata| {
        (
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        )
    };
    if same(&before) != same(&after) {
        return Err(LaunchError::Changed {
            path: path.to_path_buf(),
        });
    }
    let found = to_hex(&digest);
    if &found != expected {
        return Err(LaunchError::Digest {
            path: path.to_path_buf(),
            expected: expected.clone(),
            found,
        });
    }
    Ok(file)
}

/// Whether only root can replace `path` ([`crate::fsio::only_owners_can_replace`]).
pub(crate) fn only_root_can_replace(path: &Path) -> Result<(), String> {
    crate::fsio::only_owners_can_replace(path, &[0]).map_err(|why| {
        format!(
            "{} is outside the release and not a file only root can replace: {why}",
            path.display()
        )
    })
}

/// The arguments as the kernel takes them.
pub(crate) fn c_strings(items: &[(OsString, OsString)]) -> Result<Vec<CString>, LaunchError> {
    items
        .iter()
        .map(|(k, v)| {
            CString::new(super::env::pair(k, v)).map_err(|_| LaunchError::Exec {
                what: k.to_string_lossy().into_owned(),
                why: "a variable holds a NUL byte".into(),
            })
        })
        .collect()
}
