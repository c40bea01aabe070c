//! What every client CLI call shares: finding the binary, an empty working directory, a
//! deadline, and turning a failed call into an error that names the step (never its secrets).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::ClientError;
use crate::process::{self, Call, ProcessError};

pub struct Runner {
    pub binary: PathBuf,
    timeout: Duration,
    env: Vec<(&'static str, String)>,
    /// An empty directory to run from, so that no project or local scope of the caller's
    /// working directory applies; removed when the runner is dropped.
    cwd: tempfile::TempDir,
}

impl Runner {
    /// Find `default_name` on PATH, or take `explicit` (a path, or a name to look up).
    /// `help` says how to install it.
    pub fn open(
        default_name: &str,
        explicit: Option<&Path>,
        timeout: Duration,
        env: Vec<(&'static str, String)>,
        help: String,
    ) -> Result<Runner, ClientError> {
        let missing = |binary: String, where_: &str| ClientError::Missing {
            binary,
            where_: where_.to_string(),
            help: help.clone(),
        };
        let binary = match explicit {
            Some(b) if b.components().count() > 1 => {
                if !b.is_file() {
                    return Err(missing(b.display().to_string(), ""));
                }
                b.to_path_buf()
            }
            Some(b) => which::which(b).map_err(|_| missing(b.display().to_string(), " on PATH"))?,
            None => which::which(default_name)
                .map_err(|_| missing(default_name.to_string(), " on PATH"))?,
        };
        let cwd = tempfile::Builder::new()
            .prefix("mcp-deploy-client.")
            .tempdir()
            .map_err(|e| ClientError::Spawn {
                step: "create an empty working directory".into(),
                reason: e.to_string(),
            })?;
        Ok(Runner {
            binary,
            timeout,
            env,
            cwd,
        })
    }

    /// Run the binary with `args`; `shown` is the step as it may be printed (no secret in it).
    /// Returns stdout of a call that exited 0.
    pub fn call(&self, args: &[&str], shown: String) -> Result<String, ClientError> {
        let call = Call {
            program: &self.binary,
            args: args.iter().map(OsString::from).collect(),
            env: self.env.clone(),
            cwd: self.cwd.path(),
            timeout: self.timeout,
        };
        let out = process::run(&call).map_err(|e| match e {
            ProcessError::TimedOut { secs } => ClientError::TimedOut {
                step: shown.clone(),
                secs,
            },
            ProcessError::Spawn { source, .. } => ClientError::Spawn {
                step: shown.clone(),
                reason: source.to_string(),
            },
        })?;
        if !out.status.success() {
            return Err(ClientError::Failed {
                step: shown,
                status: out.status.to_string(),
                stderr: first_lines(&out.stderr),
            });
        }
        Ok(out.stdout)
    }
}

/// The first lines of a client's stderr, enough to say what went wrong. (The clients' errors
/// for these commands name the server, never the entry's values.)
fn first_lines(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).take(5).collect();
    if lines.is_empty() {
        return "no output on stderr".into();
    }
    lines.join(" | ")
}
