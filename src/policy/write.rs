//! The write of a policy file, the same for every client: under a lock
//! (`<dir>/.mcp-deploy/policy.lock`, `<dir>` the client's managed directory), the old text
//! journalled first (`policy.journal.json` beside it: the old text and the sha256 of the new),
//! the file read again just before it is replaced (a program that rewrote it since keeps its
//! change: exit 2, nothing written), then replaced atomically keeping its mode (temp file,
//! fsync, rename, directory fsync), read back and compared; on any failure the old text is put
//! back. What changes in the text is the client's own pure edit ([`Edit`]).
//!
//! Putting the old text back — the next run's recovery of an interrupted write, or this run's
//! undo of a failed one — is a compare-and-swap on the file's whole text: it is restored only
//! while it is exactly what the run wrote (its sha256 is the journal's `new_sha256`); while it
//! is still the old text there is nothing to undo. Anything else — an administrator's edit, the
//! file removed, a symlink or a FIFO in its place, a journal from a version that did not record
//! `new_sha256` — is someone else's state or one that cannot be told to be ours: the file is
//! left as it is, the journal kept, and the run stops (exit 2) naming both. The journal holds a
//! digest of the new text, not the text: the file may carry values (`env`) that need not be
//! copied once more, and the digest is all the comparison needs.

use std::path::{Path, PathBuf};

pub(crate) use crate::clients::policy::Change;

use super::PolicyError;
use crate::usage::UsageError;

/// A client's edit: the file's new text for its old one (`None`: the file does not exist),
/// `None` when nothing changes, and the change. Pure.
pub(crate) type Edit<'a> =
    dyn Fn(&Path, Option<&str>) -> Result<(Option<String>, Change), UsageError> + 'a;

/// The journal of a write under way: the file, its text before (`None`: it did not exist)
/// and the sha256 of the text being written (`None` in a journal of a version before it was
/// recorded: such a file is never restored over, see the module's header).
#[derive(serde::Serialize, serde::Deserialize)]
struct Journal {
    file: PathBuf,
    old: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    new_sha256: Option<String>,
}

/// Where putting the old text back left the file.
enum Undone {
    /// The old text is back.
    Restored,
    /// It still held the old text: nothing to undo.
    AsBefore,
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
        let said = match undo(&j, &journal, &denied)? {
            Undone::Restored => "was rolled back",
            Undone::AsBefore => "had not changed it yet: nothing to roll back",
        };
        notify(crate::notice::Notice::Recovery(format!(
            "an interrupted policy --write {said}: {} is as it was before it",
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
        new_sha256: Some(sha256(Some(&text)).expect("a text has a digest")),
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
        // The same compare-and-swap as a recovery: a file that does not hold what was just
        // written is someone else's since, and keeps their text (and the journal).
        undo(&entry, &journal, &denied)?;
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

/// The sha256 of a file's text (`None`: no file).
fn sha256(text: Option<&str>) -> Option<String> {
    text.map(|t| crate::content::digest::sha256_hex(t.as_bytes()))
}

/// Put the journalled old text back, by compare-and-swap (see the module's header): only
/// over exactly the text the journal's run wrote. Otherwise nothing is written and the error
/// names the file and the journal, which the caller keeps.
fn undo(
    j: &Journal,
    journal: &Path,
    denied: &impl Fn(&crate::fsio::IoError) -> UsageError,
) -> Result<Undone, PolicyError> {
    let kept = |why: String| -> PolicyError {
        UsageError::new(
            format!(
                "{} {why}; it is left as it is, not rolled back, and the journal {} keeps the \
                 text before (its \"old\")",
                j.file.display(),
                journal.display()
            ),
            format!(
                "keep the file as it is, or put the journal's \"old\" text back by hand; then \
                 delete {} and run policy --write again",
                journal.display()
            ),
        )
        .into()
    };
    let changed = |now: &str| {
        kept(format!(
            "changed since the interrupted policy --write: {now}, neither the text before that \
             run nor the one it wrote"
        ))
    };
    // The file as it is; one that cannot be read as a file (a FIFO, a directory) is not
    // what the run wrote.
    let now = match crate::fsio::read_input_if_exists(
        &j.file,
        "policy file",
        crate::fsio::limits::CLIENT_JSONC,
    ) {
        Ok(now) => now,
        Err(e) => return Err(changed(&format!("it cannot be read ({})", e.source))),
    };
    if now == j.old {
        return Ok(Undone::AsBefore);
    }
    let Some(written) = &j.new_sha256 else {
        return Err(kept(
            "is not the text before the interrupted policy --write, and cannot be told to be \
             the text it wrote: its journal, from an earlier version of mcp-deploy, records no \
             digest of that"
                .into(),
        ));
    };
    if sha256(now.as_deref()).as_ref() != Some(written) {
        return Err(changed(match now {
            None => "it is absent",
            Some(_) => "its text is another",
        }));
    }
    put(&j.file, j.old.as_deref(), denied)?;
    Ok(Undone::Restored)
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
