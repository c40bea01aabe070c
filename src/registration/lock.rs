//! One run at a time per client config: an exclusive advisory lock (`flock`, through
//! `std::fs::File::lock`) on a file in the config's state directory ([`crate::state`]). Two promotes, or a promote and a CI job,
//! serialise instead of interleaving their `remove`/`add-json` calls. A waiting run says so
//! once, naming who holds the lock now, and gives up after `--lock-timeout` (exit 2).
//!
//! Who holds it is read from the kernel (`/proc/locks`, the lock's device and inode), with
//! the holder named from `/proc/<pid>/cmdline` (its program; its arguments only when it is an
//! mcp-deploy run, since another's may hold secrets): any process may take the lock
//! (`flock(1)`, an editor, a backup tool), so the pid the last mcp-deploy run wrote into the
//! file only says who took it last. That pid is named only when the kernel does not tell.
//!
//! The lock file is never deleted: deleting it would let a third run lock a new inode while
//! the second still waits on the old one. The kernel drops the lock when the holder exits,
//! however it exits, so a crashed run never leaves a stale lock.
//!
//! A run takes several locks (one per client, one for the flat document): [`acquire_all`]
//! takes each file once (two clients may share a home, the document may sit in one) and in
//! the order of their paths, so that two runs never wait on each other crosswise. A promote
//! or rollback takes its prefix's lock ([`crate::promotion`]) before any of these, and no run
//! waits for a prefix lock while it holds one of these: the order stays one-way.
//!
//! The kernel releases a `flock` only when every descriptor of its open file is closed. The
//! descriptors of the held locks are handed down to each mutating client call
//! ([`crate::process::hold_across_exec`]): should the run die while a child still runs, the
//! lock stays held until that child (and whatever it started) is gone too.

use rustix::fs::OFlags;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub(crate) enum LockError {
    #[error("cannot open the lock file {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the lock file {path} is not a regular file")]
    NotAFile { path: PathBuf },
    #[error("interrupted while waiting for the lock {path}")]
    Interrupted { path: PathBuf },
    #[error(
        "{path} is held now by {holder}, still after {}",
        humantime::format_duration(*timeout)
    )]
    TimedOut {
        path: PathBuf,
        holder: String,
        timeout: Duration,
    },
}

impl LockError {
    pub(crate) fn help(&self) -> Option<String> {
        match self {
            LockError::TimedOut { .. } => Some(
                "wait for that process to finish (the lock is released when it exits), or raise --lock-timeout"
                    .into(),
            ),
            LockError::NotAFile { .. } => Some(
                "mcp-deploy keeps only its own files there: remove it and run again".into(),
            ),
            LockError::Open { .. } | LockError::Interrupted { .. } => None,
        }
    }
}

/// A held lock; released on drop.
#[derive(Debug)]
pub(crate) struct Lock {
    file: File,
}

impl Lock {
    /// Take the lock at `path`, waiting up to `timeout`. `on_wait` is called once, with the
    /// holder's description, if the lock is busy.
    pub(crate) fn acquire(
        path: &Path,
        timeout: Duration,
        on_wait: impl FnOnce(&str),
    ) -> Result<Lock, LockError> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let open_err = |source| LockError::Open {
            path: path.to_path_buf(),
            source,
        };
        // O_NONBLOCK|O_NOFOLLOW: a fifo or a symlink planted where the lock should be is
        // refused, never waited on or followed.
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags((OFlags::NONBLOCK | OFlags::NOFOLLOW).bits() as i32)
            .open(path)
            .map_err(open_err)?;
        if !file.metadata().map_err(open_err)?.is_file() {
            return Err(LockError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let deadline = Instant::now() + timeout;
        let mut on_wait = Some(on_wait);
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    if let Some(f) = on_wait.take() {
                        f(&holder(&mut file));
                    }
                    if crate::process::interrupted() {
                        return Err(LockError::Interrupted {
                            path: path.to_path_buf(),
                        });
                    }
                    if Instant::now() >= deadline {
                        return Err(LockError::TimedOut {
                            path: path.to_path_buf(),
                            holder: holder(&mut file),
                            timeout,
                        });
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(TryLockError::Error(e)) => return Err(open_err(e)),
            }
        }
        // Say who holds it, for the next run that has to wait.
        let _ = file
            .set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| writeln!(file, "{}", std::process::id()))
            .and_then(|()| file.flush());
        crate::process::hold_across_exec(file.as_fd());
        Ok(Lock { file })
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let fd = self.file.as_raw_fd();
        crate::process::release(fd);
        let _ = self.file.unlock();
    }
}

/// Take every lock of `paths` (canonical paths, see [`crate::state::file`]), each once, in
/// path order. `on_wait` is told of each busy one.
pub(crate) fn acquire_all(
    paths: &[PathBuf],
    timeout: Duration,
    on_wait: impl Fn(&Path, &str),
) -> Result<Vec<Lock>, LockError> {
    let mut paths = paths.to_vec();
    paths.sort();
    paths.dedup();
    paths
        .iter()
        .map(|p| Lock::acquire(p, timeout, |holder| on_wait(p, holder)))
        .collect()
}

/// Who holds the busy lock on `file` now, as far as can be known: the kernel's word first
/// ([`kernel_holder`]), else the pid the last mcp-deploy run that took it wrote into it.
fn holder(file: &mut File) -> String {
    if let Ok(meta) = file.metadata() {
        match kernel_holder(&meta) {
            Some(Some(pid)) => return describe(pid),
            // The process that took it has exited; one it handed the descriptor down to
            // (a client call it started) keeps the lock.
            Some(None) => {
                if let Some(pid) = opened_by(&meta) {
                    return format!(
                        "{}, which holds it through a descriptor handed down by the process \
                         that took it (that one has exited)",
                        describe(pid)
                    );
                }
            }
            None => {}
        }
    }
    let mut text = String::new();
    let _ = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_string(&mut text));
    match text.trim().parse::<u32>() {
        Ok(pid) if crate::state::alive(pid as i32) => format!(
            "{} (the last mcp-deploy run that took it; the kernel did not say who holds it now)",
            describe(pid)
        ),
        // The kernel names no live locker: the one that took it has exited, and a
        // descriptor it handed down (a client call it started) keeps the lock.
        Ok(pid) => format!(
            "pid {pid}, which has exited: a client call it started still holds the lock until \
             it ends"
        ),
        Err(_) => "a process the kernel did not name".into(),
    }
}

/// What `/proc/locks` says of the `flock` on the file of `meta` (a held lock, not a waiter's
/// `->` line): `Some(Some(pid))` a live process of our pid namespace took it, `Some(None)`
/// the one that took it is gone (the kernel prints 0 for it), `None` it does not say.
fn kernel_holder(meta: &std::fs::Metadata) -> Option<Option<u32>> {
    use std::os::unix::fs::MetadataExt;
    let dev = meta.dev();
    // The kernel prints MAJOR:MINOR in hex and the inode in decimal.
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let want = format!("{major:02x}:{minor:02x}:{}", meta.ino());
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // `1: FLOCK  ADVISORY  WRITE 1234 fe:00:5472786 0 EOF`
        if fields.get(1) != Some(&"FLOCK") || fields.get(5) != Some(&want.as_str()) {
            return None;
        }
        let pid: u32 = fields.get(4)?.parse().ok()?;
        Some((pid > 0 && crate::state::alive(pid as i32)).then_some(pid))
    })
}

/// The lowest pid other than ours with the file of `meta` open (`/proc/<pid>/fd/*`), when
/// `/proc` lets us look.
fn opened_by(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let me = std::process::id();
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid| *pid != me)
        .collect();
    pids.sort_unstable();
    pids.into_iter().find(|pid| {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return false;
        };
        fds.filter_map(Result::ok).any(|fd| {
            std::fs::metadata(fd.path())
                .is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
        })
    })
}

/// `pid 123, an mcp-deploy run (`mcp-deploy install …`)`, or `pid 123 (`flock`), not an
/// mcp-deploy run`: from `/proc` when readable, an mcp-deploy run's command line (at most 200
/// characters), another program's name alone.
fn describe(pid: u32) -> String {
    let argv: Vec<String> = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    let named = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().trim_end_matches(" (deleted)") == "mcp-deploy")
    };
    let ours =
        exe.as_deref().is_some_and(named) || argv.first().is_some_and(|a| named(Path::new(a)));
    // Another program's arguments are not ours to print: a client call's argv holds the
    // entry it registers, env values and headers included. Its program says enough to find
    // it; an mcp-deploy run takes no secret on its command line, so all of it is shown.
    let mut command = match (ours, argv.first()) {
        (true, _) => argv.join(" "),
        (false, Some(program)) => program.clone(),
        (false, None) => String::new(),
    };
    if command.chars().count() > 200 {
        command = command.chars().take(199).collect::<String>() + "…";
    }
    let command = if command.is_empty() {
        String::new()
    } else {
        format!(" (`{command}`)")
    };
    if ours {
        format!("pid {pid}, an mcp-deploy run{command}")
    } else if argv.is_empty() && exe.is_none() {
        format!("pid {pid} (its command line is not readable)")
    } else {
        format!("pid {pid}{command}, not an mcp-deploy run")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_waits_names_the_holder_and_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let held = Lock::acquire(&path, Duration::from_secs(1), |_| {}).unwrap();
        let mut said = String::new();
        let err =
            Lock::acquire(&path, Duration::from_millis(200), |h| said = h.to_string()).unwrap_err();
        let me = format!("pid {}", std::process::id());
        assert!(said.starts_with(&me), "{said}");
        assert!(err.to_string().contains(&me), "{err}");
        drop(held);
        Lock::acquire(&path, Duration::from_millis(200), |_| {
            panic!("free, no wait")
        })
        .unwrap();
    }

    #[test]
    fn the_same_file_twice_is_locked_once_and_a_fifo_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.lock");
        let locks = acquire_all(
            &[p.clone(), p.clone()],
            Duration::from_millis(200),
            |_, _| panic!("no wait on our own lock"),
        )
        .unwrap();
        assert_eq!(locks.len(), 1);
        assert!(crate::process::held_fds().contains(&locks[0].file.as_raw_fd()));
        drop(locks);
        let fifo = dir.path().join("f.lock");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let err = Lock::acquire(&fifo, Duration::from_millis(100), |_| {}).unwrap_err();
        assert!(matches!(err, LockError::NotAFile { .. }), "{err}");
    }
}
