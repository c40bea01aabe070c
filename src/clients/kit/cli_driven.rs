//! The client changed through its CLI and checked through its config file (codex, gemini,
//! grok), written once: [`CliDriven`] over a [`Dialect`], which says only what differs — how
//! to spell `add`, `remove` and the dry-run lines, how to read the config file and where a
//! same-name entry shadows, and what its CLI does differently around a call (gemini's
//! witness of other settings files, grok's add that never exits, codex's noisy stderr, an
//! exact `get`). The flow around each call is [`super::flow`]'s.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::flow::{self, CliBacked};
use super::runner::{self, Runner};
use super::{Client, ClientError, Op};
use crate::entry::Entry;
use crate::process;

/// The argv of an `add`, and the values to keep out of error messages.
pub(crate) type AddArgs = fn(&str, &Entry) -> Result<(Vec<String>, Vec<String>), ClientError>;

/// How a dry run shows a client's calls: `{}` is the name.
pub(crate) struct Spelling {
    pub(crate) add: &'static str,
    pub(crate) remove: &'static str,
    pub(crate) observe: &'static str,
}

impl Spelling {
    pub(crate) fn show(&self, op: Op, name: &str) -> String {
        let template = match op {
            Op::Add => self.add,
            Op::Remove => self.remove,
            Op::Observe => self.observe,
        };
        template.replacen("{}", name, 1)
    }
}

/// What one CLI-driven client does its own way.
pub(crate) trait Dialect: Sync + Sized {
    /// The client this is the dialect of: its name, its entries and its shadows are the
    /// kind's ([`super::table::Kind`]), registered once.
    const KIND: &'static dyn super::table::Kind;
    /// What its CLI prints, exiting 0, for `remove` of a name it does not have (`None`: the
    /// same as for one it has, so only the file read before tells).
    const REMOVE_MISSING: Option<&'static str>;
    /// Whether saving rewrites every entry, so that the others are checked afterwards.
    const REWRITES_OTHERS: bool;

    /// Its calls as a dry run prints them, `{}` standing for the name (never a value).
    const SHOW: Spelling;
    /// The argv that removes a name, before the name.
    const REMOVE: &'static [&'static str];
    /// The argv that adds `entry` as `name`, and the values to keep out of error messages;
    /// or why the client would store something else.
    const ADD_ARGS: AddArgs;

    /// Its entries now (gemini refuses once it has written elsewhere).
    fn entries(&self, config: &Path) -> Result<Map<String, Value>, ClientError> {
        Self::KIND.read_entries(config)
    }
    /// Refuse a mutating call after which the config would hold `after`.
    fn guard(
        &self,
        _config: &Path,
        _name: &str,
        _after: &Map<String, Value>,
    ) -> Result<(), ClientError> {
        Ok(())
    }
    /// Run the CLI with `args` (its config file is `config`).
    fn run(
        &self,
        runner: &Runner,
        _config: &Path,
        args: &[&str],
        shown: &str,
    ) -> Result<process::Output, ClientError> {
        runner.call_raw(args, shown)
    }
    /// Whether the call `args` did what it was asked (its output `out`).
    fn succeeded(&self, _args: &[&str], out: &process::Output) -> bool {
        out.status.success()
    }
    /// The part of a failed call's stderr worth showing (before secrets are redacted).
    fn stderr(stderr: &str) -> String {
        runner::first_lines(stderr)
    }
    /// What the client itself reports for `name` at user scope, cross-checked against its
    /// file. Default: a client without an exact `get`, whose file is its one witness.
    fn observe(c: &CliDriven<Self>, name: &str) -> Result<Option<Entry>, ClientError> {
        super::entry_in(&c.entries()?, name, &c.config)
    }
}

/// A CLI-driven client: its runner, its config file, and what it does its own way.
pub(crate) struct CliDriven<D> {
    pub(crate) runner: Runner,
    pub(crate) config: PathBuf,
    pub(crate) dialect: D,
}

impl<D: Dialect> CliDriven<D> {
    pub(crate) fn entries(&self) -> Result<Map<String, Value>, ClientError> {
        self.dialect.entries(&self.config)
    }

    /// A failed call. A client may quote what its config holds (codex quotes the values it
    /// cannot load), so every value its entries hold, besides `secrets`, is scrubbed.
    pub(crate) fn failed(
        &self,
        step: String,
        out: &process::Output,
        secrets: &[&str],
    ) -> ClientError {
        let held = self
            .entries()
            .map(|m| runner::secret_strings(&m))
            .unwrap_or_default();
        let mut all: Vec<&str> = secrets.to_vec();
        all.extend(held.iter().map(String::as_str));
        ClientError::Failed {
            step,
            status: out.status.to_string(),
            stderr: crate::entry::secrets::redact(&D::stderr(&out.stderr), &all),
        }
    }
}

/// What an exact `get` (codex's, copilot's) printed for a name the client has: its stdout,
/// never to be echoed (it holds env and header values), and the config file's entries read
/// just before the call.
pub(crate) struct Got {
    pub(crate) stdout: String,
    pub(crate) config: Map<String, Value>,
}

impl<D: Dialect> CliDriven<D> {
    /// The first half of an exact `get`: the config file read first (a malformed one is
    /// reported by mcp-deploy, without quoting it, before the client can quote it), then `args`
    /// run as `step`. `Ok(None)`: the client has no such name (its stderr holds `missing`) and
    /// neither does the file.
    pub(crate) fn exact_get(
        &self,
        name: &str,
        args: &[&str],
        step: &str,
        missing: &str,
    ) -> Result<Option<Got>, ClientError> {
        let config = self.entries()?;
        let out = self.runner.call_raw(args, step)?;
        if !out.status.success() {
            if !out.stderr.contains(missing) {
                return Err(self.failed(step.to_string(), &out, &[]));
            }
            if config.contains_key(name) {
                return Err(disagrees(
                    name,
                    format!(
                        "`{step}` does not find it, but {} holds it",
                        self.config.display()
                    ),
                ));
            }
            return Ok(None);
        }
        Ok(Some(Got {
            stdout: out.stdout,
            config,
        }))
    }

    /// The second half: the entry `name` of the file, once the client's own report agrees with
    /// it (`agrees`, given the entry as the file holds it).
    pub(crate) fn agreed(
        &self,
        name: &str,
        step: &str,
        config: &Map<String, Value>,
        agrees: impl FnOnce(&Entry) -> bool,
    ) -> Result<Entry, ClientError> {
        let raw = config.get(name).ok_or_else(|| {
            disagrees(
                name,
                format!(
                    "{} reports it, but {} has no entry for it",
                    D::KIND.about().name,
                    self.config.display()
                ),
            )
        })?;
        let entry = Entry::from_value(raw).map_err(|e| {
            disagrees(
                name,
                format!("its entry in {} is malformed: {e}", self.config.display()),
            )
        })?;
        if !agrees(&entry) {
            return Err(disagrees(
                name,
                format!(
                    "`{step}` does not show what {} holds ({})",
                    self.config.display(),
                    entry.describe()
                ),
            ));
        }
        Ok(entry)
    }
}

/// The client and its file disagree about `name`.
pub(crate) fn disagrees(name: &str, reason: String) -> ClientError {
    ClientError::Disagrees {
        name: name.to_string(),
        reason,
    }
}

impl<D: Dialect> CliBacked for CliDriven<D> {
    fn client(&self) -> &'static str {
        D::KIND.about().name
    }

    fn config(&self) -> &Path {
        &self.config
    }

    fn entries(&self) -> Result<Map<String, Value>, ClientError> {
        CliDriven::entries(self)
    }

    fn call(&self, args: &[&str], shown: String, secrets: &[&str]) -> Result<String, ClientError> {
        let out = self.dialect.run(&self.runner, &self.config, args, &shown)?;
        if !self.dialect.succeeded(args, &out) {
            return Err(self.failed(shown, &out, secrets));
        }
        Ok(out.stdout)
    }

    fn guard(&self, name: &str, after: &Map<String, Value>) -> Result<(), ClientError> {
        self.dialect.guard(&self.config, name, after)
    }

    fn rewrites_others(&self) -> bool {
        D::REWRITES_OTHERS
    }
}

impl<D: Dialect> Client for CliDriven<D> {
    fn name(&self) -> &'static str {
        D::KIND.about().name
    }

    fn config_path(&self) -> &Path {
        &self.config
    }

    fn shadows(&self, name: &str) -> Result<Vec<crate::clients::Shadow>, ClientError> {
        D::KIND.shadows_in(&self.config, name)
    }

    fn user_entries(&self) -> Result<Map<String, Value>, ClientError> {
        self.entries()
    }

    fn add(&self, name: &str, entry: &Entry) -> Result<(), ClientError> {
        let (args, secrets) = (D::ADD_ARGS)(name, entry)?;
        flow::add(
            self,
            name,
            entry,
            &args,
            &secrets,
            D::SHOW.show(Op::Add, name),
        )
    }

    fn remove(&self, name: &str) -> Result<(), ClientError> {
        let mut args = D::REMOVE.to_vec();
        args.push(name);
        flow::remove(
            self,
            name,
            &args,
            D::SHOW.show(Op::Remove, name),
            D::REMOVE_MISSING,
        )
    }

    fn observe(&self, name: &str) -> Result<Option<Entry>, ClientError> {
        D::observe(self, name)
    }

    fn show(&self, op: Op, name: &str) -> String {
        D::SHOW.show(op, name)
    }

    fn version(&self) -> Option<super::version::Version> {
        self.runner.version
    }

    fn binary(&self) -> Option<&Path> {
        Some(self.runner.binary.as_path()).filter(|b| b.is_file())
    }
}
