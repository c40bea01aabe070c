//! What every client CLI call shares: finding the binary, an empty working directory, a
//! deadline, and turning a failed call into an error that names the step (never its secrets).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::ClientError;
use crate::process::{self, Call, ProcessError};

pub(crate) struct Runner {
    pub(crate) binary: PathBuf,
    timeout: Duration,
    env: Vec<(&'static str, OsString)>,
    clear_env: bool,
    /// An empty directory to run from, so that no project or local scope of the caller's
    /// working directory applies; removed when the runner is dropped.
    cwd: tempfile::TempDir,
    /// The directory to run from instead, for a client whose config *is* chosen by the
    /// directory it runs in (grok).
    dir: Option<PathBuf>,
}

impl Runner {
    /// Find `default_name` on PATH, or take `explicit` (a path, or a name to look up).
    /// `help` says how to install it. When `required` is false (a caller that only reads the
    /// client's config files), a binary that is not found is no error: it is never run.
    pub(crate) fn open(
        default_name: &str,
        explicit: Option<&Path>,
        required: bool,
        timeout: Duration,
        env: Vec<(&'static str, OsString)>,
        help: String,
    ) -> Result<Runner, ClientError> {
        let missing = |binary: String, where_: &str| ClientError::Missing {
            binary,
            where_: where_.to_string(),
            help: help.clone(),
        };
        let found = match explicit {
            Some(b) if b.components().count() > 1 => {
                if b.is_file() {
                    Ok(b.to_path_buf())
                } else {
                    Err(missing(b.display().to_string(), ""))
                }
            }
            Some(b) => which::which(b).map_err(|_| missing(b.display().to_string(), " on PATH")),
            None => which::which(default_name)
                .map_err(|_| missing(default_name.to_string(), " on PATH")),
        };
        let binary = match found {
            Ok(b) => b,
            Err(_) if !required => PathBuf::from(default_name),
            Err(e) => return Err(e),
        };
        // Named with our pid, so that a later run can tell a killed run's directory from a
        // live one's and remove it ([`crate::state::sweep_client_tmp_dirs`]).
        crate::state::sweep_client_tmp_dirs();
        let cwd = tempfile::Builder::new()
            .prefix(&format!(
                "{}{}.",
                crate::state::CLIENT_TMP_PREFIX,
                std::process::id()
            ))
            .tempdir()
            .map_err(|e| ClientError::Spawn {
                step: "create an empty working directory".into(),
                reason: e.to_string(),
            })?;
        Ok(Runner {
            binary,
            timeout,
            env,
            clear_env: false,
            cwd,
            dir: None,
        })
    }

    /// Run the client with only the variables passed to [`Runner::open`], not the caller's
    /// environment (for a client that expands `$VAR` references in what it saves).
    pub(crate) fn clearing_env(mut self) -> Runner {
        self.clear_env = true;
        self
    }

    /// Run the client from `dir` rather than from an empty directory.
    pub(crate) fn in_dir(mut self, dir: PathBuf) -> Runner {
        self.dir = Some(dir);
        self
    }

    /// Run the binary and return its whole output, whatever its exit status: for clients whose
    /// exit status says too little (codex and gemini exit 0 when asked to remove a missing name).
    pub(crate) fn call_raw(
        &self,
        args: &[&str],
        shown: &str,
    ) -> Result<process::Output, ClientError> {
        self.call_inner(args, shown, None)
    }

    /// [`Runner::call_raw`] for a call that does its work and then may never exit by itself:
    /// stopped once its stdout holds `done` ([`process::run_until`]).
    pub(crate) fn call_until(
        &self,
        args: &[&str],
        shown: &str,
        done: &str,
    ) -> Result<process::Output, ClientError> {
        self.call_inner(args, shown, Some(done))
    }

    fn call_inner(
        &self,
        args: &[&str],
        shown: &str,
        done: Option<&str>,
    ) -> Result<process::Output, ClientError> {
        let call = Call {
            program: &self.binary,
            args: args.iter().map(OsString::from).collect(),
            env: self.env.clone(),
            clear_env: self.clear_env,
            cwd: self.dir.as_deref().unwrap_or(self.cwd.path()),
            timeout: self.timeout,
            // Every client we drive changes its config only with `mcp add|add-json|remove`.
            holds_lock: args.first() == Some(&"mcp")
                && matches!(args.get(1), Some(&("add" | "add-json" | "remove"))),
        };
        let outcome = match done {
            Some(done) => process::run_until(&call, done),
            None => process::run(&call),
        };
        outcome.map_err(|e| match e {
            ProcessError::Interrupted => ClientError::Interrupted {
                step: shown.to_string(),
            },
            ProcessError::TimedOut { secs } => ClientError::TimedOut {
                step: shown.to_string(),
                secs,
            },
            ProcessError::Spawn { source, .. } => ClientError::Spawn {
                step: shown.to_string(),
                reason: source.to_string(),
            },
        })
    }

    /// Run the binary with `args`; `shown` is the step as it may be printed (no secret in it).
    /// Returns stdout of a call that exited 0.
    pub(crate) fn call(&self, args: &[&str], shown: String) -> Result<String, ClientError> {
        let out = self.call_raw(args, &shown)?;
        if !out.status.success() {
            return Err(failed(shown, &out));
        }
        Ok(out.stdout)
    }
}

/// A call that exited non-zero, named by its step, with the first lines of its stderr.
pub(crate) fn failed(step: String, out: &process::Output) -> ClientError {
    ClientError::Failed {
        step,
        status: out.status.to_string(),
        stderr: first_lines(&out.stderr),
    }
}

/// The first lines of a client's stderr, enough to say what went wrong. (The clients' errors
/// for these commands name the server, never the entry's values.)
pub(crate) fn first_lines(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).take(5).collect();
    if lines.is_empty() {
        return "no output on stderr".into();
    }
    lines.join(" | ")
}

/// Every string an entry holds outside `command`, `args`, `type` and `url` (env and header
/// values, and whatever else a client keeps): what a client error must not echo.
pub(crate) fn secret_strings(entries: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
    fn leaves(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| leaves(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for entry in entries.values() {
        match entry.as_object() {
            Some(o) => o
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "command" | "args" | "type" | "url"))
                .for_each(|(_, v)| leaves(v, &mut out)),
            None => leaves(entry, &mut out),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_strings_are_the_values_outside_the_transport() {
        let m = serde_json::json!({
            "a": {"command": "/x", "args": ["serve"], "env": {"T": "s1"}},
            "b": {"type": "http", "url": "u", "headers": {"H": "s2"}, "odd": ["s3"]},
            "c": "s4"
        });
        let got = secret_strings(m.as_object().unwrap());
        assert_eq!(got, ["s1", "s2", "s3", "s4"]);
    }
}
