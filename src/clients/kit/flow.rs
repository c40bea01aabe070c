//! The flow every client whose CLI prints no exact form shares (codex, gemini, grok): refuse what
//! the CLI cannot represent, call it, re-read its config file, and compare. Written once here;
//! a client says only how to read its file, how to call its CLI, what it refuses and whether
//! its CLI rewrites the other entries when it saves. (Claude prints an exact form through
//! `claude mcp get`, which its module compares instead.)

use std::path::Path;

use serde_json::{Map, Value};

use super::ClientError;
use crate::entry::Entry;

/// A client changed through its CLI and checked through its config file.
pub(crate) trait CliBacked {
    /// The client's name, in messages.
    fn client(&self) -> &'static str;
    /// The file its user-scope entries live in.
    fn config(&self) -> &Path;
    /// Its user-scope entries, read from [`CliBacked::config`].
    fn entries(&self) -> Result<Map<String, Value>, ClientError>;
    /// Run the CLI with `args` (shown as `shown`, never with a value); `secrets` are kept out
    /// of any error. Its stdout.
    fn call(&self, args: &[&str], shown: String, secrets: &[&str]) -> Result<String, ClientError>;
    /// Refuse a mutating call after which the config would hold `after` (gemini: a stored
    /// reference the CLI would expand when it saves).
    fn guard(&self, _name: &str, _after: &Map<String, Value>) -> Result<(), ClientError> {
        Ok(())
    }
    /// Whether saving rewrites every entry, so that the others must be checked afterwards.
    fn rewrites_others(&self) -> bool {
        false
    }
}

/// Add `name` as `entry` with the call `args` (shown as `shown`).
pub(crate) fn add(
    c: &impl CliBacked,
    name: &str,
    entry: &Entry,
    args: &[String],
    secrets: &[String],
    shown: String,
) -> Result<(), ClientError> {
    let before = c.entries()?;
    if before.contains_key(name) {
        return Err(ClientError::AlreadyRegistered {
            client: c.client(),
            name: name.to_string(),
            path: c.config().to_path_buf(),
        });
    }
    let mut all = before.clone();
    all.insert(name.to_string(), Value::Object(entry.raw.clone()));
    c.guard(name, &all)?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    c.call(&args, shown, &secrets)?;
    let after = c.entries()?;
    match after.get(name).map(Entry::from_value) {
        Some(Ok(e)) if e.same_registration(entry) => {}
        _ => {
            return Err(ClientError::Disagrees {
                name: name.to_string(),
                reason: format!(
                    "after `{} mcp add`, {} does not hold the entry that was added ({})",
                    c.client(),
                    c.config().display(),
                    entry.describe()
                ),
            })
        }
    }
    others_unchanged(c, name, &before, &after)
}

/// Remove `name` with the call `args` (shown as `shown`). `missing` is what the CLI prints,
/// exiting 0, for a name it does not have (`None`: it prints the same as for one it has).
pub(crate) fn remove(
    c: &impl CliBacked,
    name: &str,
    args: &[&str],
    shown: String,
    missing: Option<&str>,
) -> Result<(), ClientError> {
    let not_registered = || ClientError::NotRegistered {
        name: name.to_string(),
        path: c.config().to_path_buf(),
    };
    let before = c.entries()?;
    if !before.contains_key(name) {
        return Err(not_registered());
    }
    let mut others = before.clone();
    others.remove(name);
    c.guard(name, &others)?;
    let out = c.call(args, shown.clone(), &[])?;
    if missing.is_some_and(|m| out.contains(m)) {
        return Err(not_registered());
    }
    let after = c.entries()?;
    if after.contains_key(name) {
        return Err(ClientError::Disagrees {
            name: name.to_string(),
            reason: format!(
                "`{shown}` succeeded but {} still holds it",
                c.config().display()
            ),
        });
    }
    others_unchanged(c, name, &before, &after)
}

/// After a mutating call of a client that rewrites every entry: the others are as they were.
fn others_unchanged(
    c: &impl CliBacked,
    name: &str,
    before: &Map<String, Value>,
    after: &Map<String, Value>,
) -> Result<(), ClientError> {
    if !c.rewrites_others() {
        return Ok(());
    }
    let changed: Vec<&str> = before
        .iter()
        .filter(|(k, v)| k.as_str() != name && after.get(k.as_str()) != Some(v))
        .map(|(k, _)| k.as_str())
        .chain(
            after
                .keys()
                .filter(|k| k.as_str() != name && !before.contains_key(k.as_str()))
                .map(String::as_str),
        )
        .collect();
    if changed.is_empty() {
        return Ok(());
    }
    Err(ClientError::Disagrees {
        name: name.to_string(),
        reason: format!(
            "{} also changed {} in {} while saving; check them",
            c.client(),
            changed.join(", "),
            c.config().display()
        ),
    })
}
