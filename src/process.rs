//! Running a client CLI: an argv array (never a shell), from a directory of our choosing, with
//! a deadline. The child gets its own process group so that on a timeout the whole group is
//! killed: `claude mcp get` starts the server it health-checks, and a hung grandchild holding
//! our pipes must not hang us too. (duct, which we would otherwise use, kills only the direct
//! child and then waits for the pipes, which such a grandchild keeps open.)

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("timed out after {secs} s and was killed")]
    TimedOut { secs: u64 },
}

/// One call to make.
pub struct Call<'a> {
    pub program: &'a Path,
    pub args: Vec<OsString>,
    pub env: Vec<(&'static str, OsString)>,
    /// Start from an empty environment (then `env`), not the caller's.
    pub clear_env: bool,
    pub cwd: &'a Path,
    pub timeout: Duration,
}

pub fn run(call: &Call) -> Result<Output, ProcessError> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(call.program);
    cmd.args(&call.args)
        .current_dir(call.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if call.clear_env {
        cmd.env_clear();
    }
    for (k, v) in &call.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|source| ProcessError::Spawn {
        program: call.program.to_path_buf(),
        source,
    })?;
    let pgid = child.id() as i32;
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let deadline = Instant::now() + call.timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
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

#[allow(unsafe_code)]
fn kill_group(pgid: i32) {
    // SAFETY: kill(2) with a negative pid signals the process group we created for the child;
    // it takes no pointers. ESRCH (group already gone) is the common, harmless outcome.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
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
        })
        .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/claude"));
    }
}
