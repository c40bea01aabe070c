//! One run at a time per client config: an exclusive advisory lock (`flock`, through
//! `std::fs::File::lock`) on a file beside the config. Two promotes, or a promote and a CI job,
//! serialise instead of interleaving their `remove`/`add-json` calls. A waiting run says so
//! once, naming the holder's pid, and gives up after `--lock-timeout` (exit 2).
//!
//! The lock file is never deleted: deleting it would let a third run lock a new inode while
//! the second still waits on the old one. The kernel drops the lock when the holder exits,
//! however it exits, so a crashed run never leaves a stale lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot open the lock file {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("another mcp-deploy run ({holder}) still holds {path} after {secs} s")]
    TimedOut {
        path: PathBuf,
        holder: String,
        secs: u64,
    },
}

impl LockError {
    pub fn help(&self) -> Option<String> {
        match self {
            LockError::TimedOut { .. } => Some(
                "wait for that run to finish, or raise --lock-timeout; the lock is released when its process exits"
                    .into(),
            ),
            LockError::Open { .. } => None,
        }
    }
}

/// A held lock; released on drop.
#[derive(Debug)]
pub struct Lock {
    file: File,
    pub path: PathBuf,
}

impl Lock {
    /// Take the lock at `path`, waiting up to `timeout`. `on_wait` is called once, with the
    /// holder's description, if the lock is busy.
    pub fn acquire(
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
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(open_err)?;
        let deadline = Instant::now() + timeout;
        let mut on_wait = Some(on_wait);
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    if let Some(f) = on_wait.take() {
                        f(&holder(&mut file));
                    }
                    if Instant::now() >= deadline {
                        return Err(LockError::TimedOut {
                            path: path.to_path_buf(),
                            holder: holder(&mut file),
                            secs: timeout.as_secs(),
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
        Ok(Lock {
            file,
            path: path.to_path_buf(),
        })
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

fn holder(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_string(&mut text));
    match text.trim().parse::<u32>() {
        Ok(pid) => format!("pid {pid}"),
        Err(_) => "pid unknown".into(),
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
        assert_eq!(said, me);
        assert!(err.to_string().contains(&me), "{err}");
        drop(held);
        Lock::acquire(&path, Duration::from_millis(200), |_| {
            panic!("free, no wait")
        })
        .unwrap();
    }
}
