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
//!   Without `unsafe` there is no code to run in the child before exec, so the child is our
//!   own binary first, as an exec shim ([`exec_child`]): it sets the signal, checks its parent
//!   is still the run, and execs the program. The crate has no `unsafe` at all.
//! - A mutating call (`mcp add|add-json|remove`) inherits the descriptors of the run's locks
//!   ([`hold_across_exec`]): the lock outlives the run for as long as anything it
//!   started could still change the config, whatever escaped the parent-death signal (a
//!   node launcher's own child, say). They are made inheritable in the parent only around
//!   that spawn, under a mutex every spawn takes, so no other child inherits them.
//! - SIGINT and SIGTERM only set a flag ([`catch_signals`]); the wait loop sees it, kills the
//!   child's group and returns [`ProcessError::Interrupted`], and the caller rolls back.
//!   Calls made while rolling back are [`shielded`]: a second Ctrl-C does not stop the
//!   restore it is waiting for.

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

static SIGNALLED: OnceLock<Arc<AtomicBool>> = OnceLock::new();
/// The descriptors every mutating client call inherits: a duplicate of each of the run's lock
/// descriptors (the same open file, so the same `flock`), keyed by the original's number.
static HELD: Mutex<Vec<(RawFd, OwnedFd)>> = Mutex::new(Vec::new());

/// Hand `fd` (a held lock, see [`crate::registration::lock`]) down to every child started with
/// `holds_lock`, until [`release`].
pub(crate) fn hold_across_exec(fd: BorrowedFd) {
    let Ok(dup) = fd.try_clone_to_owned() else {
        return;
    };
    if let Ok(mut held) = HELD.lock() {
        held.push((fd.as_raw_fd(), dup));
    }
}

/// Stop handing `fd` down (its lock is released).
pub(crate) fn release(fd: RawFd) {
    if let Ok(mut held) = HELD.lock() {
        held.retain(|(h, _)| *h != fd);
    }
}

/// The descriptors [`hold_across_exec`] holds now (the originals' numbers).
#[cfg(test)]
pub(crate) fn held_fds() -> Vec<RawFd> {
    HELD.lock()
        .map(|v| v.iter().map(|(fd, _)| *fd).collect())
        .unwrap_or_default()
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
    /// Stopped by us once its stdout said its work was done ([`run_until`]), not exited.
    pub(crate) stopped: bool,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ProcessError {
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("timed out after {} and was killed", humantime::format_duration(*timeout))]
    TimedOut { timeout: Duration },
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
    run_inner(call, None)
}

/// [`run`] a child that does its work and then may never exit by itself (`grok mcp add` saves
/// its config, then connects to the server it added and stays connected): once its stdout
/// holds `done`, its group is killed and the output so far returned with `stopped` set.
pub(crate) fn run_until(call: &Call, done: &str) -> Result<Output, ProcessError> {
    run_inner(call, Some(done))
}

fn run_inner(call: &Call, done: Option<&str>) -> Result<Output, ProcessError> {
    if stop_requested() {
        return Err(ProcessError::Interrupted);
    }
    let spawn_err = |source| ProcessError::Spawn {
        program: call.program.to_path_buf(),
        source,
    };
    let (mut child, pgid) = spawn_group(call.program, &call.args, call.holds_lock, |cmd| {
        cmd.current_dir(call.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if call.clear_env {
            cmd.env_clear();
        }
        for (k, v) in &call.env {
            cmd.env(k, v);
        }
    })
    .map_err(spawn_err)?;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let stdout = reader(child.stdout.take(), Some(Arc::clone(&seen)));
    let stderr = reader(child.stderr.take(), None);
    let deadline = Instant::now() + call.timeout;
    let mut stopped = false;
    let status = loop {
        let said_done = done.is_some_and(|d| {
            let seen = seen.lock().unwrap_or_else(|p| p.into_inner());
            String::from_utf8_lossy(&seen).contains(d)
        });
        if said_done {
            kill_group(pgid);
            stopped = true;
            break child.wait().ok();
        }
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
            timeout: call.timeout,
        });
    };
    // A grandchild that escaped the group may still hold a pipe: do not wait on it forever.
    let grace = Duration::from_secs(2);
    let stdout = stdout.recv_timeout(grace).unwrap_or_default();
    let stderr = stderr.recv_timeout(grace).unwrap_or_default();
    if let Some(source) = shim_failure(status, &stderr) {
        return Err(spawn_err(source));
    }
    Ok(Output {
        status,
        stdout,
        stderr,
        stopped,
    })
}

/// Read `pipe` to its end on a thread; with `seen`, what has come so far is kept there too.
fn reader(
    pipe: Option<impl Read + Send + 'static>,
    seen: Option<Arc<Mutex<Vec<u8>>>>,
) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        buf.extend_from_slice(&chunk[..n]);
                        if let Some(seen) = &seen {
                            seen.lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .extend_from_slice(&chunk[..n]);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&buf).into_owned());
        });
    }
    rx
}

/// The first argument that makes our own binary the exec shim ([`exec_child`]); `main`
/// intercepts it before the command line is parsed, so it is no part of the CLI.
pub const EXEC_CHILD: &str = "__exec-child";
/// How the shim tells the supervisor it could not start the program: this prefix, the errno,
/// a newline, on stderr, and exit [`EXIT_EXEC_FAILED`] (or [`EXIT_PARENT_GONE`]).
const SHIM_MARKER: &str = "mcp-deploy __exec-child: errno ";
const EXIT_EXEC_FAILED: u8 = 127;
const EXIT_PARENT_GONE: u8 = 125;

/// The exec shim, run as `<our binary> __exec-child --parent <pid> -- <program> <args…>`:
/// SIGKILL when the parent dies, check the parent is still `<pid>` (it may have died before
/// that), then exec the program in place, keeping environment, directory, descriptors and
/// process group. Returns only if it could not.
pub fn exec_child(args: &[OsString]) -> std::process::ExitCode {
    use std::os::unix::process::CommandExt;
    let fail = |errno: i32, code: u8| {
        eprintln!("{SHIM_MARKER}{errno}");
        std::process::ExitCode::from(code)
    };
    let (parent, program, rest) = match args {
        [flag, pid, sep, program, rest @ ..] if flag == "--parent" && sep == "--" => {
            match pid.to_str().and_then(|p| p.parse::<i32>().ok()) {
                Some(pid) => (pid, program, rest),
                None => return fail(rustix::io::Errno::INVAL.raw_os_error(), EXIT_EXEC_FAILED),
            }
        }
        _ => return fail(rustix::io::Errno::INVAL.raw_os_error(), EXIT_EXEC_FAILED),
    };
    if let Err(e) =
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
    {
        return fail(e.raw_os_error(), EXIT_EXEC_FAILED);
    }
    // The parent may have died before the line above: then no signal will come.
    if rustix::process::getppid().map(|p| p.as_raw_nonzero().get()) != Some(parent) {
        return fail(rustix::io::Errno::SRCH.raw_os_error(), EXIT_PARENT_GONE);
    }
    let err = Command::new(program).args(rest).exec();
    fail(err.raw_os_error().unwrap_or(0), EXIT_EXEC_FAILED)
}

/// The spawn error the shim reported, if it exited the way [`exec_child`] fails.
fn shim_failure(status: ExitStatus, stderr: &str) -> Option<std::io::Error> {
    let code = status.code()?;
    if code != i32::from(EXIT_EXEC_FAILED) && code != i32::from(EXIT_PARENT_GONE) {
        return None;
    }
    let errno = stderr
        .lines()
        .last()?
        .strip_prefix(SHIM_MARKER)?
        .parse()
        .ok()?;
    Some(std::io::Error::from_raw_os_error(errno))
}

/// Our own binary, to run as the shim. (A unit test runs in the test harness, not in our
/// binary: it uses the `mcp-deploy` cargo built next to it.)
fn shim_program() -> PathBuf {
    #[cfg(test)]
    {
        let exe = std::env::current_exe().expect("the test binary has a path");
        let dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>/deps");
        dir.join("mcp-deploy")
    }
    #[cfg(not(test))]
    PathBuf::from("/proc/self/exe")
}

/// Whether `program` can be found the way exec will look for it (`path` is the child's
/// PATH): a missing program is reported as a spawn error naming it, as std would.
fn locate(program: &Path, path: Option<&std::ffi::OsStr>, cwd: Option<&Path>) -> bool {
    if program.as_os_str().as_encoded_bytes().contains(&b'/') {
        return match cwd {
            Some(cwd) if program.is_relative() => cwd.join(program).exists(),
            _ => program.exists(),
        };
    }
    let path = path.unwrap_or(std::ffi::OsStr::new("/bin:/usr/bin"));
    std::env::split_paths(path).any(|dir| dir.join(program).is_file())
}

/// Every spawn takes this, so that no other spawn inherits the lock descriptors while a
/// mutating call's spawn has them open across exec.
static SPAWN: Mutex<()> = Mutex::new(());

/// Start `program` with `args` as the leader of a process group of its own, dying with this
/// process (through the [`exec_child`] shim); with `holds_lock`, holding the run's lock
/// descriptors across exec. `configure` sets the environment, directory and stdio. The one
/// way this crate starts a child (client calls here, the MCP handshake's server in
/// [`crate::identity::handshake`]), so that every child gets the same guarantees.
pub(crate) fn spawn_group(
    program: &Path,
    args: &[OsString],
    holds_lock: bool,
    configure: impl FnOnce(&mut Command),
) -> std::io::Result<(std::process::Child, rustix::process::Pid)> {
    spawn_through(&shim_program(), program, args, holds_lock, configure)
}

/// [`spawn_group`] through the shim at `shim`. When the shim itself cannot be started (a unit
/// test run before `cargo build` made `target/debug/mcp-deploy`), the error names the shim:
/// issue 36 found `cannot start /bin/sh: No such file or directory` with `/bin/sh` there.
fn spawn_through(
    shim: &Path,
    program: &Path,
    args: &[OsString],
    holds_lock: bool,
    configure: impl FnOnce(&mut Command),
) -> std::io::Result<(std::process::Child, rustix::process::Pid)> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(shim);
    cmd.arg(EXEC_CHILD)
        .arg("--parent")
        .arg(rustix::process::getpid().as_raw_nonzero().get().to_string())
        .arg("--")
        .arg(program)
        .args(args);
    configure(&mut cmd);
    cmd.process_group(0);
    let path = match cmd.get_envs().find(|(k, _)| *k == "PATH") {
        Some((_, v)) => v.map(std::ffi::OsStr::to_os_string),
        None => std::env::var_os("PATH"),
    };
    if !locate(program, path.as_deref(), cmd.get_current_dir()) {
        return Err(std::io::ErrorKind::NotFound.into());
    }
    let _spawning = SPAWN.lock().unwrap_or_else(|e| e.into_inner());
    let held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let keep: &[(RawFd, OwnedFd)] = if holds_lock { &held } else { &[] };
    set_cloexec(keep, false);
    let child = cmd.spawn();
    set_cloexec(keep, true);
    drop(held);
    let child = child.map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!(
                "{} (the exec shim every program is started through) cannot be started: {e}",
                shim.display()
            ),
        )
    })?;
    let pgid = rustix::process::Pid::from_child(&child);
    Ok((child, pgid))
}

/// Set or clear FD_CLOEXEC on the duplicated lock descriptors `fds`.
fn set_cloexec(fds: &[(RawFd, OwnedFd)], on: bool) {
    let flags = if on {
        rustix::io::FdFlags::CLOEXEC
    } else {
        rustix::io::FdFlags::empty()
    };
    for (_, fd) in fds {
        let _ = rustix::io::fcntl_setfd(fd, flags);
    }
}

/// Signal every process of the group `pgid` (a group [`spawn_group`] made). ESRCH (the
/// group is already gone) is the common, harmless outcome.
pub(crate) fn signal_group(pgid: rustix::process::Pid, signal: rustix::process::Signal) {
    let _ = rustix::process::kill_process_group(pgid, signal);
}

fn kill_group(pgid: rustix::process::Pid) {
    signal_group(pgid, rustix::process::Signal::KILL);
}

/// Crash points for the tests, like rustup's, compiled in only with the cargo feature
/// `crash-checkpoints` (off by default: the release binary and the Debian package never carry
/// them; `scripts/test.sh` turns it on, and a test that needs one refuses to run without it):
/// when `MCP_DEPLOY_CRASH_AT` names this point, the process aborts here, as a SIGKILL would
/// stop it. `MCP_DEPLOY_PAUSE_AT=POINT` instead sleeps there for 30 s (a window for a test to
/// act in), or until a SIGINT/SIGTERM (where the run catches them), or until the file
/// `MCP_DEPLOY_RESUME` names exists (the test's "go on": a command that catches no signal
/// can be resumed without waiting out the 30 s).
///
/// Its two lines go to stderr directly, not through a notice sink: they are a test harness's
/// trace, not part of what a run tells the person, compiled out of a build without the
/// feature, and a
/// checkpoint sits deep in code (`apply`, `begin`) that a notice sink would otherwise have to
/// reach for nothing a user ever sees.
pub(crate) fn checkpoint(point: &str) {
    #[cfg(feature = "crash-checkpoints")]
    {
        if std::env::var("MCP_DEPLOY_CRASH_AT").is_ok_and(|p| p == point) {
            eprintln!("mcp-deploy: crashing at checkpoint {point} (MCP_DEPLOY_CRASH_AT)");
            std::process::abort();
        }
        if std::env::var("MCP_DEPLOY_PAUSE_AT").is_ok_and(|p| p == point) {
            eprintln!("mcp-deploy: pausing at checkpoint {point} (MCP_DEPLOY_PAUSE_AT)");
            let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
            let resume = std::env::var_os("MCP_DEPLOY_RESUME").map(std::path::PathBuf::from);
            while std::time::Instant::now() < until
                && !interrupted()
                && !resume.as_ref().is_some_and(|r| r.exists())
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
    #[cfg(not(feature = "crash-checkpoints"))]
    let _ = point;
}

/// A fault for the tests (with the feature `crash-checkpoints` only): whether `MCP_DEPLOY_FAIL_AT` names this point,
/// where the caller then fails as if a check had (promote's `after-verify`).
pub(crate) fn injected_failure(point: &str) -> bool {
    #[cfg(feature = "crash-checkpoints")]
    {
        std::env::var("MCP_DEPLOY_FAIL_AT").is_ok_and(|p| p == point)
    }
    #[cfg(not(feature = "crash-checkpoints"))]
    {
        let _ = point;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

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
        assert!(
            matches!(err, ProcessError::TimedOut { timeout } if timeout == Duration::from_secs(1)),
            "{err}"
        );
        assert!(start.elapsed() < Duration::from_secs(50));
    }

    #[test]
    fn a_child_that_says_it_is_done_is_stopped_then() {
        // `grok mcp add` prints that it saved, then stays connected to the server it started.
        let call = Call {
            program: Path::new("/bin/sh"),
            args: vec!["-c".into(), "echo saved; sleep 100 & sleep 100".into()],
            env: vec![],
            clear_env: false,
            cwd: Path::new("/"),
            timeout: Duration::from_secs(50),
            holds_lock: false,
        };
        let start = Instant::now();
        let out = run_until(&call, "saved\n").unwrap();
        assert!(out.stopped);
        assert_eq!(out.stdout, "saved\n");
        assert!(start.elapsed() < Duration::from_secs(20));
        // One that never says it times out as ever.
        let call = Call {
            timeout: Duration::from_secs(1),
            ..call
        };
        let err = run_until(&call, "never").unwrap_err();
        assert!(
            matches!(err, ProcessError::TimedOut { timeout } if timeout == Duration::from_secs(1)),
            "{err}"
        );
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

    /// Issue 36, item 1: with the shim missing (`cargo test --lib` before any `cargo build`),
    /// the error named `/bin/sh`, which exists; it names the shim now.
    #[test]
    fn a_shim_that_cannot_be_started_is_the_one_named() {
        let shim = Path::new("/nonexistent/target/debug/mcp-deploy");
        let err = spawn_through(shim, Path::new("/bin/sh"), &[], false, |_| {}).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/nonexistent/target/debug/mcp-deploy (the exec shim every program is started \
             through) cannot be started: No such file or directory (os error 2)"
        );
    }

    fn fds_of_child(holds_lock: bool) -> String {
        run(&Call {
            program: Path::new("/bin/ls"),
            args: vec!["-l".into(), "/proc/self/fd/".into()],
            env: vec![],
            clear_env: false,
            cwd: Path::new("/"),
            timeout: Duration::from_secs(10),
            holds_lock,
        })
        .unwrap()
        .stdout
    }

    #[test]
    fn only_a_mutating_call_inherits_the_lock_descriptors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("held.lock");
        let file = std::fs::File::create(&path).unwrap();
        hold_across_exec(file.as_fd());
        let mutating = fds_of_child(true);
        let other = fds_of_child(false);
        release(file.as_raw_fd());
        let after = fds_of_child(true);
        let name = path.to_str().unwrap();
        assert!(mutating.contains(name), "{mutating}");
        assert!(!other.contains(name), "{other}");
        assert!(!after.contains(name), "{after}");
        // Close-on-exec again in this process once the spawn is done.
        let held = HELD.lock().unwrap();
        assert!(held.iter().all(|(_, fd)| rustix::io::fcntl_getfd(fd)
            .unwrap()
            .contains(rustix::io::FdFlags::CLOEXEC)));
    }

    #[test]
    fn the_shim_fails_when_its_parent_is_not_the_one_named() {
        let out = Command::new(shim_program())
            .args([EXEC_CHILD, "--parent", "1", "--", "/bin/true"])
            .output()
            .unwrap();
        let err = shim_failure(out.status, &String::from_utf8_lossy(&out.stderr)).unwrap();
        assert_eq!(
            err.raw_os_error(),
            Some(rustix::io::Errno::SRCH.raw_os_error())
        );
        assert_eq!(out.status.code(), Some(i32::from(EXIT_PARENT_GONE)));
    }

    #[test]
    fn an_exec_failure_is_a_spawn_error_naming_the_program() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("not-executable");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        let err = run(&Call {
            program: &script,
            args: vec![],
            env: vec![],
            clear_env: false,
            cwd: Path::new("/"),
            timeout: Duration::from_secs(10),
            holds_lock: false,
        })
        .unwrap_err();
        assert!(matches!(err, ProcessError::Spawn { .. }), "{err}");
        assert!(err.to_string().contains("not-executable"), "{err}");
    }
}
