//! The write of a policy file, the same for every client: under a lock
//! (`<dir>/.mcp-deploy/policy.lock`, `<dir>` the client's managed directory), the old text
//! journalled first (`policy.journal.json` beside it: an interrupted run is rolled back by the
//! next), the file read again just before it is replaced (a program that rewrote it since keeps
//! its change: exit 2, nothing written), then replaced atomically keeping its mode (temp file,
//! fsync, rename, directory fsync), read back and compared; on any failure the old text is put
//! back. What changes in the text is the client's own pure edit ([`Edit`]).

use std::path::{Path, PathBuf};

pub(crate) use crate::clients::policy::Change;

use super::PolicyError;
use crate::usage::UsageError;

/// A client's edit: the file's new text for its old one (`None`: the file does not exist),
/// `None` when nothing changes, and the change. Pure.
pub(crate) type Edit<'a> =
    dyn Fn(&Path, Option<&str>) -> Result<(Option<String>, Change), UsageError> + 'a;

/// The journal of a write under way: the file and its text before (`None`: it did not exist).
#[derive(serde::Serialize, serde::Deserialize)]
struct Journal {
    file: PathBuf,
    old: Option<String>,
}

/// What [`write`] needs besides the edit.
pub(crate) struct WriteOptions<'a> {
    /// The policy file.
    pub(crate) file: &'a Path,
    /// The managed directory its lock and journal go in (`/etc/claude-code`, `/etc/codex`).
    pub(crate) dir: &'a Path,
    pub(crate) dry_run: bool,
    pub(crate) lock_timeout: std::time::Duration,
}

/// Apply `edit` to the file (see the module's header); with `dry_run`, only say what would
/// change. Returns the change and whether it was written.
pub(crate) fn write(
    opts: &WriteOptions,
    edit: &Edit,
    notify: &impl Fn(crate::notice::Notice),
) -> Result<(Change, bool), PolicyError> {
    let path = opts.file.to_path_buf();
    if opts.dry_run {
        let (_, change) = edit(&path, read(&path)?.as_deref())?;
        return Ok((change, false));
    }
    let denied = |e: &crate::fsio::IoError| -> UsageError {
        UsageError::new(
            format!("cannot write {}: {}", path.display(), e),
            match e.source.kind() {
                std::io::ErrorKind::PermissionDenied => format!(
                    "writing {} takes root: run `sudo mcp-deploy policy --write ...`, or print \
                     the fragment with --format file and install it with your configuration \
                     management",
                    opts.dir.display()
                ),
                _ => "check the directory, then run policy --write again".to_string(),
            },
        )
    };
    let lock_path = crate::state::file(opts.dir, "policy.lock").map_err(|e| denied(&e))?;
    let journal = crate::state::file(opts.dir, "policy.journal.json").map_err(|e| denied(&e))?;
    let _lock = crate::registration::lock::Lock::acquire(&lock_path, opts.lock_timeout, |h| {
        notify(crate::notice::Notice::LockWait {
            path: lock_path.clone(),
            holder: h.to_string(),
            timeout: opts.lock_timeout,
        })
    })?;
    if let Some(j) = read(&journal)? {
        let j: Journal = serde_json::from_str(&j)
            .map_err(|e| bad(&journal, format!("not a policy journal ({e})")))?;
        // It restores one file only: the one this run writes.
        if j.file != path {
            return Err(bad(
                &journal,
                format!("it journals {}, not this file", j.file.display()),
            )
            .into());
        }
        restore(&j, &denied)?;
        notify(crate::notice::Notice::Recovery(format!(
            "an interrupted policy --write was rolled back: {} is as it was before it",
            j.file.display()
        )));
        remove(&journal, &denied)?;
    }
    let old = read(&path)?;
    let (text, change) = edit(&path, old.as_deref())?;
    let Some(text) = text else {
        return Ok((change, false));
    };
    let entry = Journal {
        file: path.clone(),
        old: old.clone(),
    };
    let body = serde_json::to_vec(&entry).expect("a journal serialises");
    crate::fsio::write_atomic(&journal, &body, true).map_err(|e| denied(&e))?;
    crate::registration::transaction::checkpoint("policy-journal-written");
    // Check again: a program that rewrote the file since it was read keeps its change, and
    // this run writes nothing (its edit was made on the text it read).
    if read(&path)? != old {
        remove(&journal, &denied)?;
        return Err(UsageError::new(
            format!(
                "{} changed while mcp-deploy was editing it: another program wrote it, and \
                 nothing was written over its change",
                path.display()
            ),
            "run policy --write again (it edits the file as it is then)",
        )
        .into());
    }
    let done = put(&path, Some(&text), &denied).and_then(|()| match read(&path)? {
        Some(back) if back == text => Ok(()),
        _ => Err(bad(&path, "it does not hold what was just written to it").into()),
    });
    if let Err(e) = done {
        restore(&entry, &denied)?;
        remove(&journal, &denied)?;
        return Err(e);
    }
    crate::registration::transaction::checkpoint("policy-written");
    remove(&journal, &denied)?;
    Ok((change, true))
}

fn read(path: &Path) -> Result<Option<String>, UsageError> {
    crate::fsio::read_input_if_exists(path, "policy file", crate::fsio::limits::CLIENT_JSONC)
        .map_err(|e| bad(path, &e))
}

/// Write `text` to `path` atomically, keeping the mode of a file that is there (a new one
/// 0644: every user's client reads it); `None`: remove it.
fn put(
    path: &Path,
    text: Option<&str>,
    denied: &impl Fn(&crate::fsio::IoError) -> UsageError,
) -> Result<(), PolicyError> {
    use std::os::unix::fs::PermissionsExt;
    let Some(text) = text else {
        return remove(path, denied);
    };
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let target = match std::fs::canonicalize(path) {
        Ok(t) => t,
        // A dangling link: the file it names is not ours to create.
        Err(_) if link => {
            return Err(bad(path, "it is a symlink to a file that does not exist").into())
        }
        Err(_) => path.to_path_buf(),
    };
    let mode = std::fs::metadata(&target).map_or(0o644, |m| m.permissions().mode() & 0o7777);
    crate::fsio::write_atomic_mode(&target, text.as_bytes(), mode).map_err(|e| denied(&e))?;
    Ok(())
}

fn restore(
    j: &Journal,
    denied: &impl Fn(&crate::fsio::IoError) -> UsageError,
) -> Result<(), PolicyError> {
    put(&j.file, j.old.as_deref(), denied)
}

fn remove(
    path: &Path,
    denied: &impl Fn(&crate::fsio::IoError) -> UsageError,
) -> Result<(), PolicyError> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(denied(&crate::fsio::IoError::new("cannot remove", path, e)).into()),
    }
    if let Some(dir) = path.parent() {
        crate::fsio::sync_dir(dir).map_err(|e| denied(&e))?;
    }
    Ok(())
}

/// A file the run cannot use as it is: nothing was written.
fn bad(path: &Path, why: impl std::fmt::Display) -> UsageError {
    UsageError::new(
        format!("{}: {why}; nothing was written", path.display()),
        "fix the file by hand, then run policy again",
    )
}
