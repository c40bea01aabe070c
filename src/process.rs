//! Running a client CLI: an argv array (never a shell), from a directory of our choosing, with
//! a deadline. The child gets its own process group so that on a timeout the whole group is
//! killed: `claude mcp get` starts the server it health-checks, and a hung grandchild holding
//! our pipes must not hang us too. (duct, which we would otherwise use, kills only the direct
//! child and then waits for the pipes, which such a grandchild keeps open.)
//!
//! No client call outlives its run:
//! - Each child asks the kernel for SIGKILL when its parent dies (`PR_SET_PDEATHSIG`), so a
//!   run killed with SIGKILL takes its child with it. (Linux sends it when the *thread* that
//!   spawned the child exits: every call here waits for its child on the spawning thread.)
//! - A mutating call (`mcp add|add-json|remove`) inherits the descriptors of the run's locks
//!   ([`hold_across_exec`]): the lock outlives the run for as long as anything it
//!   started could still change the config, whatever escaped the parent-death signal (a
//!   node launcher's own child, say).
//! - SIGINT and SIGTERM only set a flag ([`catch_signals`]); the wait loop sees it, kills the
//!   child's group and returns [`ProcessError::Interrupted`], and the caller rolls back.
//!   Calls made while rolling back are [`shielded`]: a second Ctrl-C does not stop the
//!   restore it is waiting for.

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

static SIGNALLED: OnceLock<Arc<AtomicBool>> = OnceLock::new();
/// The descriptors every mutating client call inherits: the run's locks.
static HELD: Mutex<Vec<RawFd>> = Mutex::new(Vec::new());

/// Hand `fd` (a held lock, see [`crate::registration::lock`]) down to every child started with
/// `holds_lock`, until [`release`].
pub(crate) fn hold_across_exec(fd: RawFd) {
    if let Ok(mut held) = HELD.lock() {
        held.push(fd);
    }
}

/// Stop handing `fd` down (its lock is released).
pub(crate) fn release(fd: RawFd) {
    if let Ok(mut held) = HELD.lock() {
        held.retain(|h| *h != fd);
    }
}

/// The descriptors [`hold_across_exec`] holds now.
pub(crate) fn held_fds() -> Vec<RawFd> {
    HELD.lock().map(|v| v.clone()).unwrap_or_default()
}
static SHIELD: AtomicUsize = AtomicUsize::new(0);

/// From now on SIGINT and SIGTERM set a flag instead of killing the process: the run stops
/// its client call, rolls back and exits 2.
pub(crate) fn catch_signals() {
    let flag = SIGNALLED.get_or_init(|| Arc::new(AtomicBool::new(false)));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, Arc::clone(flag));
    }
}

/// Whether SIGINT or SIGTERM arrived since [`catch_signals`].
pub(crate) fn interrupted() -> bool {
    SIGNALLED.get().is_some_and(|f| f.load(Ordering::SeqCst))
}

/// Run `f` with client calls that a signal does not stop (a rollback, a recovery).
pub(crate) fn shielded<T>(f: impl FnOnce() -> T) -> T {
    SHIELD.fetch_add(1, Ordering::SeqCst);
    let out = f();
    SHIELD.fetch_sub(1, Ordering::SeqCst);
    out
}

fn stop_requested() -> bool {
    interrupted() && SHIELD.load(Ordering::SeqCst) == 0
}

#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ProcessError {
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("timed out after {secs} s and was killed")]
    TimedOut { secs: u64 },
    #[error("interrupted by a signal (SIGINT or SIGTERM)")]
    Interrupted,
}

/// One call to make.
pub(crate) struct Call<'a> {
    pub(crate) program: &'a Path,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(&'static str, OsString)>,
    /// Start from an empty environment (then `env`), not the caller's.
    pub(crate) clear_env: bool,
    pub(crate) cwd: &'a Path,
    pub(crate) timeout: Duration,
    /// Hand the run's lock descriptors down to the child (a call that changes a config).
    pub(crate) holds_lock: bool,
}

pub(crate) fn run(call: &Call) -> Result<Output, ProcessError> {
    if stop_requested() {
        return Err(ProcessError::Interrupted);
    }
    let mut cmd = Command::new(call.program);
    cmd.args(&call.args)
        .current_dir(call.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if call.clear_env {
        cmd.env_clear();
    }
    for (k, v) in &call.env {
        cmd.env(k, v);
    }
    let (mut child, pgid) =
        spawn_group(&mut cmd, call.holds_lock).map_err(|source| ProcessError::Spawn {
            program: call.program.to_path_buf(),
            source,
        })?;
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let deadline = Instant::now() + call.timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) if stop_requested() => {
                kill_group(pgid);
                let _ = child.wait();
                return Err(ProcessError::Interrupted);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    // Whatever the child left running in its group goes too (its health-checked server).
    kill_group(pgid);
    let Some(status) = status else {
        let _ = child.wait();
        return Err(ProcessError::TimedOut {
            secs: call.timeout.as_secs(),
        });
    };
    // A grandchild that escaped the group may still hold a pipe: do not wait on it forever.
    let grace = Duration::from_secs(2);
    Ok(Output {
        status,
        stdout: stdout.recv_timeout(grace).unwrap_or_default(),
        stderr: stderr.recv_timeout(grace).unwrap_or_default(),
    })
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            let _ = tx.send(String::from_utf8_lossy(&buf).into_owned());
        });
    }
    rx
}

/// Between fork and exec, in the child: SIGKILL when the parent dies, and keep `keep` (lock
/// descriptors, close-on-exec in the parent) open across exec.
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command, parent: rustix::process::Pid, keep: Vec<std::os::fd::RawFd>) {
    use std::os::unix::process::CommandExt;
    // There is no safe way to run code in the child before exec: std's `pre_exec` is unsafe
    // because the closure runs in a forked copy of a multi-threaded process.
    // SAFETY: the closure only makes system calls (prctl, getppid, fcntl) through rustix,
    // which are async-signal-safe; it allocates nothing, takes no lock, and touches no
    // memory but its own captures (`keep` is allocated before the fork). Clearing
    // FD_CLOEXEC in the child changes the child's descriptor table only.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // The parent may have died before the line above: then no signal will come.
            // (An errno, not a message: nothing may allocate here.)
            if rustix::process::getppid() != Some(parent) {
                return Err(rustix::io::Errno::SRCH.into());
            }
            for fd in &keep {
                let fd = std::os::fd::BorrowedFd::borrow_raw(*fd);
                rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())?;
            }
            Ok(())
        });
    }
}

/// Spawn `cmd` as the leader of a process group of its own, dying with this process; with
/// `holds_lock`, holding the run's lock descriptors across exec. The one way this crate
/// starts a child (client calls here, the MCP handshake's server in
/// [`crate::identity::handshake`]), so that every child gets the same guarantees.
pub(crate) fn spawn_group(
    cmd: &mut Command,
    holds_lock: bool,
) -> std::io::Result<(std::process::Child, rustix::process::Pid)> {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    let keep: Vec<std::os::fd::RawFd> = if holds_lock { held_fds() } else { Vec::new() };
    die_with_parent(cmd, rustix::process::getpid(), keep);
    let child = cmd.spawn()?;
    let pgid = rustix::process::Pid::from_child(&child);
    Ok((child, pgid))
}

/// Signal every process of the group `pgid` (a group [`spawn_group`] made). ESRCH (the
/// group is already gone) is the common, harmless outcome.
pub(crate) fn signal_group(pgid: rustix::process::Pid, signal: rustix::process::Signal) {
    let _ = rustix::process::kill_process_group(pgid, signal);
}

fn kill_group(pgid: rustix::process::Pid) {
    signal_group(pgid, rustix::process::Signal::KILL);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, secs: u64) -> Result<Output, ProcessError> {
        run(&Call {
            program: Path::new("/bin/sh"),
            args: vec!["-c".into(), script.into()],
            env: vec![("MCP_DEPLOY_T", "v".into())],
            clear_env: false,
            cwd: Path::new("/"),
            timeout: Duration::from_secs(secs),
            holds_lock: false,
        })
    }

    #[test]
    fn captures_output_status_and_env() {
        let out = sh("echo out $MCP_DEPLOY_T; pwd; echo err >&2; exit 3", 10).unwrap();
        assert_eq!(out.stdout, "out v\n/\n");
        assert_eq!(out.stderr, "err\n");
        assert_eq!(out.status.code(), Some(3));
    }

    #[test]
    fn a_cleared_environment_holds_only_what_is_passed() {
        let out = run(&Call {
            program: Path::new("/usr/bin/env"),
            args: vec![],
            env: vec![("MCP_DEPLOY_T", "v".into())],
            clear_env: true,
            cwd: Path::new("/"),
            timeout: Duration::from_secs(10),
            holds_lock: false,
        })
        .unwrap();
        assert_eq!(out.stdout, "MCP_DEPLOY_T=v\n");
    }

    #[test]
    fn a_hang_is_killed_with_its_children() {
        // The grandchild keeps stdout open; without killing the group we would wait 100 s.
        let start = Instant::now();
        let err = sh("sleep 100 & sleep 100", 1).unwrap_err();
        assert!(matches!(err, ProcessError::TimedOut { secs: 1 }), "{err}");
        assert!(start.elapsed() < Duration::from_secs(50));
    }

    #[test]
    fn missing_program_names_it() {
        let err = run(&Call {
            program: Path::new("/nonexistent/claude"),
            args: vec![],
            env: vec![],
            clear_env: false,
            cwd: Path::new("/"),
            timeout: Duration::from_secs(1),
            holds_lock: false,
        })
        .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/claude"));
    }
}
