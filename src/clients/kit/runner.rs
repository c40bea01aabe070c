//! What every client CLI call shares: finding the binary and its release
//! ([`super::version`]), a working directory, a deadline, and turning a failed call into an
//! error that names the step (never its secrets).
//!
//! The working directory is the same for every run of a client ([`work_dir`]): clients key
//! what they keep on it (Claude Code before 2.1 writes a `projects.<cwd>` entry into its
//! config file on every call; every Claude Code keeps `~/.cache/claude-cli-nodejs/<cwd>/`),
//! so a fresh directory per call left a new entry, or a new cache directory, on every run,
//! a no-op included. It must hold nothing: a `.mcp.json` (Claude), `.codex/config.toml` or
//! `.gemini/settings.json` in it would be a project scope that shadows the user scope. So it
//! is ours (our uid, mode 0700, not a symlink) and empty, checked before each call.

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
    /// The stable, private, empty directory to run from ([`work_dir`]), so that no project or
    /// local scope of the caller's working directory applies.
    cwd: PathBuf,
    /// A private directory of this run, removed when the runner is dropped: where a client's
    /// caches go ([`Runner::scratch_for`]).
    scratch: tempfile::TempDir,
    /// The directory to run from instead, for a client whose config *is* chosen by the
    /// directory it runs in (grok).
    dir: Option<PathBuf>,
    /// The client's release, when known ([`Runner::detect_version`]).
    pub(crate) version: Option<super::version::Version>,
    /// Whether this run calls the client (else `--version` is not asked either).
    may_run: bool,
    /// Where each call is said as it ends ([`Runner::telling`]; `-v`).
    said: Option<fn(crate::notice::Notice)>,
}

/// The binary a client call runs: `explicit` (a path, or a name to look up on PATH), else
/// `default_name` on PATH; `help` says how to install it when it is not found. The one lookup,
/// for [`Runner::open`] and for `mcp-deploy clients` ([`super::listing`]).
pub(crate) fn locate(
    default_name: &str,
    explicit: Option<&Path>,
    help: String,
) -> Result<PathBuf, ClientError> {
    let missing = |binary: String, where_: &str| ClientError::Missing {
        binary,
        where_: where_.to_string(),
        help: help.clone(),
    };
    match explicit {
        Some(b) if b.components().count() > 1 => {
            if b.is_file() {
                Ok(b.to_path_buf())
            } else {
                Err(missing(b.display().to_string(), ""))
            }
        }
        Some(b) => which::which(b).map_err(|_| missing(b.display().to_string(), " on PATH")),
        None => {
            which::which(default_name).map_err(|_| missing(default_name.to_string(), " on PATH"))
        }
    }
}

impl Runner {
    /// The runner of the CLI-driven client `row` as `options` open it, with `env` set for each
    /// call: its binary (the one given, else its name on PATH), whether it is needed, the
    /// timeout, the install help and what it is told to say.
    pub(crate) fn of_client(
        row: &super::table::About,
        options: &super::ClientOptions,
        env: Vec<(&'static str, OsString)>,
    ) -> Result<Runner, ClientError> {
        Ok(Runner::open(
            row.name,
            options.binary(row.name),
            options.calls_binary,
            options.timeout,
            env,
            row.install_help(),
        )?
        .telling(options.said))
    }

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
        let binary = match locate(default_name, explicit, help) {
            Ok(b) => b,
            Err(_) if !required => PathBuf::from(default_name),
            Err(e) => return Err(e),
        };
        let cwd = work_dir(default_name);
        // One that is there already but not ours alone and empty is refused now, before any
        // change (a run that calls no client does not look).
        if required && std::fs::symlink_metadata(&cwd).is_ok() {
            check_work_dir(&cwd)?;
        }
        // Named with our pid, so that a later run can tell a killed run's directory from a
        // live one's and remove it ([`crate::state::sweep_client_tmp_dirs`]).
        crate::state::sweep_client_tmp_dirs();
        let scratch = tempfile::Builder::new()
            .prefix(&format!(
                "{}{}.",
                crate::state::CLIENT_TMP_PREFIX,
                std::process::id()
            ))
            .tempdir()
            .map_err(|e| ClientError::Spawn {
                step: "create a private scratch directory".into(),
                reason: e.to_string(),
            })?;
        Ok(Runner {
            binary,
            timeout,
            env,
            clear_env: false,
            cwd,
            scratch,
            dir: None,
            version: None,
            may_run: required,
            said: None,
        })
    }

    /// Say each call as it ends to `said` (`-v`), when given.
    pub(crate) fn telling(mut self, said: Option<fn(crate::notice::Notice)>) -> Runner {
        self.said = said;
        self
    }

    /// Learn the client's release ([`super::version::detect`]) and refuse one outside the
    /// supported range: called last when a client is opened, so that `--version` (asked only
    /// when the package files and the cache do not tell, and only on a run that calls the
    /// client anyway) runs with the environment and directory of the client's other calls.
    pub(crate) fn detect_version(mut self, client: &'static str) -> Result<Runner, ClientError> {
        if self.binary.is_file() {
            let run = || self.call(&["--version"], format!("{client} --version"));
            let run: &dyn Fn() -> Result<String, ClientError> = &run;
            let found = super::version::detect(client, &self.binary, self.may_run.then_some(run))?;
            self.version = found;
        }
        Ok(self)
    }

    /// Point each of `vars` at this run's scratch directory, removed when the run ends: for
    /// the variables that choose where a client keeps caches and logs it writes on every
    /// call (Claude Code's `XDG_CACHE_HOME` and `TMPDIR`), so that a call leaves nothing.
    pub(crate) fn scratch_for(mut self, vars: &[&'static str]) -> Runner {
        for var in vars {
            self.env
                .push((var, self.scratch.path().as_os_str().to_os_string()));
        }
        self
    }

    /// Run the client with only the variables passed to [`Runner::open`], not the caller's
    /// environment (for a client that expands `$VAR` references in what it saves).
    pub(crate) fn clearing_env(mut self) -> Runner {
        self.clear_env = true;
        self
    }

    /// Run the client from this run's scratch directory rather than from [`work_dir`]: for a
    /// client that writes into the directory it runs in (Claude Code with
    /// `CLAUDE_CONFIG_DIR=""` keeps its `backups/` there).
    pub(crate) fn in_scratch(mut self) -> Runner {
        self.dir = Some(self.scratch.path().to_path_buf());
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
        // Checked before each call. Should it have changed since the client was opened (a
        // client that wrote into it), the call runs from the run's own scratch directory
        // instead, private and fresh: a restoring call of a rollback is never blocked by it,
        // and never runs from a directory that may hold a project scope.
        let cwd = match &self.dir {
            Some(dir) => dir.as_path(),
            None if ensure_work_dir(&self.cwd).is_ok() => &self.cwd,
            None => self.scratch.path(),
        };
        let call = Call {
            program: &self.binary,
            args: args.iter().map(OsString::from).collect(),
            env: self.env.clone(),
            clear_env: self.clear_env,
            cwd,
            timeout: self.timeout,
            // Every client we drive changes its config only with `mcp add|add-json|remove`.
            holds_lock: args.first() == Some(&"mcp")
                && matches!(args.get(1), Some(&("add" | "add-json" | "remove"))),
        };
        let started = std::time::Instant::now();
        let outcome = match done {
            Some(done) => process::run_until(&call, done),
            None => process::run(&call),
        };
        // `-v` says every call as it ends; `shown` holds no secret.
        if let Some(said) = self.said {
            said(crate::notice::Notice::ClientCall {
                shown: shown.to_string(),
                ended: match &outcome {
                    Ok(out) => match out.status.code() {
                        Some(code) => format!("exit {code}"),
                        None => "killed by a signal".to_string(),
                    },
                    Err(ProcessError::TimedOut { timeout }) => {
                        format!("timed out after {}", humantime::format_duration(*timeout))
                    }
                    Err(ProcessError::Interrupted) => "interrupted".to_string(),
                    Err(ProcessError::Spawn { source, .. }) => format!("not started: {source}"),
                },
                took: started.elapsed(),
            });
        }
        outcome.map_err(|e| match e {
            ProcessError::Interrupted => ClientError::Interrupted {
                step: shown.to_string(),
            },
            ProcessError::TimedOut { timeout } => ClientError::TimedOut {
                step: shown.to_string(),
                timeout,
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

/// The working directory of every call to `client`: `$TMPDIR/mcp-deploy-cwd.<uid>.<client>`,
/// created 0700 before the first call that needs it, then checked before each
/// ([`ensure_work_dir`]). In the temp directory, as the per-call directories were, so that the
/// directories above it (which Claude Code searches for `.mcp.json`) are the same: the temp
/// directory and `/`. Sticky `/tmp` keeps other users from renaming or removing it; one that
/// is someone else's is refused.
pub(crate) fn work_dir(client: &str) -> PathBuf {
    let uid = rustix::process::geteuid().as_raw();
    std::env::temp_dir().join(format!("{WORK_DIR_PREFIX}{uid}.{client}"))
}

/// Create [`work_dir`] `dir` (0700) when it is missing, then [`check_work_dir`] it.
pub(crate) fn ensure_work_dir(dir: &Path) -> Result<(), ClientError> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(ClientError::WorkDir {
                path: dir.to_path_buf(),
                reason: format!("it cannot be created: {e}"),
            })
        }
    }
    check_work_dir(dir)
}

/// The prefix of [`work_dir`]'s name in the temp directory.
pub(crate) const WORK_DIR_PREFIX: &str = "mcp-deploy-cwd.";

/// Refuse a working directory that is not ours alone and empty: a symlink (it could lead
/// into a project), another user's, one others may write in, or one holding anything (a
/// planted `.mcp.json` is a project scope for the call).
pub(crate) fn check_work_dir(dir: &Path) -> Result<(), ClientError> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |reason: String| ClientError::WorkDir {
        path: dir.to_path_buf(),
        reason,
    };
    let meta = std::fs::symlink_metadata(dir).map_err(|e| refuse(e.to_string()))?;
    if !meta.file_type().is_dir() {
        return Err(refuse(
            "it is not a directory (a symlink, or a file)".into(),
        ));
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(refuse(format!(
            "it belongs to uid {}, not to us",
            meta.uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(refuse(format!(
            "its mode is {:o}: others may write in it (it must be 0700)",
            meta.mode() & 0o7777
        )));
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| refuse(e.to_string()))?;
    if let Some(entry) = entries.next() {
        let name = entry
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .unwrap_or_default();
        return Err(refuse(format!(
            "it is not empty (it holds {name:?}): a file there would be a project scope of \
             every client call"
        )));
    }
    Ok(())
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

/// `s` without terminal colour sequences (`ESC [ ... m`): a client's stderr as text.
pub(crate) fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
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
