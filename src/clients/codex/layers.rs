//! The layers codex applies to a user-scope entry ([`super`]), as codex 0.171.0 loads them
//! (`codex-rs/config/src/loader/mod.rs` `load_config_layers_state`, confirmed with
//! `codex mcp get --json` in tests/it/attacks/layers_codex.rs):
//!
//! 1. Config layers, lowest first: the system `/etc/codex/config.toml`, the user
//!    `$CODEX_HOME/config.toml`, a profile `$CODEX_HOME/NAME.config.toml` when codex runs
//!    with `--profile NAME`, project `.codex/config.toml` files (shadows, read by
//!    `clients::codex::shadows_in`), and on top the legacy managed
//!    `/etc/codex/managed_config.toml`. They are merged as TOML (`merge_toml_values`): a table
//!    key by key, anything else replaced. So a `[mcp_servers.NAME]` in the system file adds
//!    every key the user entry lacks (`env`, `env_vars`, `cwd`, timeouts...), and one in the
//!    managed file overrides every key it sets, `command` and `enabled` included.
//! 2. The merged config is deserialized before anything runs: a wrong type anywhere refuses
//!    the whole load ([`schema`]), and the agent gets no server at all.
//! 3. `/etc/codex/requirements.toml`: an `[mcp_servers]` table there is an allowlist; a server
//!    it does not name, or whose `identity` (`command`, or `url`) differs, is disabled.
//!
//! Environment: codex gives a stdio server only a fixed set of its own variables (`HOME`,
//! `PATH`, `LANG`...; `rmcp-client` `create_env_for_mcp_server`), the ones the entry names in
//! `env_vars`, and the entry's `env`; `shell_environment_policy` is for shell tools, not
//! servers. So the environment a layer can give our server is the entry's `env` and
//! `env_vars`, each reported as `env.NAME`.

// Parts of this are unused outside tests, as when it sat in layers/ (whose module allowed it).
#![allow(dead_code)]

mod schema;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::clients::layers::{Context, Effect, Finding};
use crate::clients::version::Version;
use crate::identity::layer::Doubt;

/// Where codex reads its system layers on Linux (fixed paths in its code).
const ETC: &str = "/etc/codex";

/// Profile files looked at in `$CODEX_HOME`, at most (each is read whole).
const MAX_PROFILES: usize = 256;

/// Depth to which tables are merged and compared: `mcp_servers.NAME.env.VAR` is four deep;
/// below that a value is compared whole (the TOML reader refuses nesting past ~128 anyway).
const MERGE_DEPTH: usize = 6;

pub(crate) fn read(cx: &Context) -> Vec<Finding> {
    read_with(cx, Path::new(ETC))
}

/// One config file codex merges, and what it is.
struct Layer {
    path: PathBuf,
    /// How a report names it (`/etc/codex/config.toml`, `.../p.config.toml (codex --profile p)`).
    label: String,
    doc: Table,
}

/// The layer files of this host read once for a run ([`Files`]).
pub(crate) fn load_files(user_config: &Path) -> Files {
    Files::load(user_config, Path::new(ETC))
}

pub(crate) fn read_with(cx: &Context, etc: &Path) -> Vec<Finding> {
    Files::load(cx.user_config, etc).findings_of(cx.name)
}

/// codex's layer files of one run, read, merged and checked once ([`Files::load`]): a run
/// over many servers asks each name's findings of it ([`Files::findings_of`]) without reading
/// or merging again — before, each name re-read and re-merged every file and re-checked the
/// merged config, quadratic in the servers (2 000 servers in config.toml: 8 s for
/// `--only-deployed`, measured).
pub(crate) struct Files {
    /// What reading the files found, whatever the name (unreadable or refused files).
    read: Vec<Finding>,
    /// The user config, missing or refused: `None` (its own check reports it).
    user: Option<Layer>,
    /// The plain stack (system, user, managed), merged and checked.
    base: Option<Merged>,
    /// Each profile's stack, merged and checked, with its label.
    profiles: Vec<(String, Merged)>,
    /// `/etc/codex/requirements.toml`.
    requirements: Option<Layer>,
}

/// A stack of layers merged once: the merged table, which layer sets each top-level key and
/// each server's keys, and what the whole config's check found (whatever the name).
struct Merged {
    /// The labels and documents of the stack, lowest first.
    stack: Vec<(String, Table)>,
    merged: Table,
    /// The refusal or the doubts of the whole merged config.
    whole: Vec<Finding>,
    /// Whether codex refuses it (then no server has an effective entry).
    refused: bool,
}

impl Files {
    pub(crate) fn load(user_config: &Path, etc: &Path) -> Files {
        let mut read = Vec::new();
        let system = load(&etc.join("config.toml"), None, &mut read);
        let managed = load(&etc.join("managed_config.toml"), None, &mut read);
        let user = load(user_config, None, &mut read);
        let Some(u) = user.as_ref() else {
            // Missing, or refused above: the registration check reports the user file itself.
            return Files {
                read,
                user: None,
                base: None,
                profiles: Vec::new(),
                requirements: None,
            };
        };
        let stack: Vec<&Layer> = [system.as_ref(), Some(u), managed.as_ref()]
            .into_iter()
            .flatten()
            .collect();
        let base = Merged::of(&stack, u);
        let mut profiles = Vec::new();
        for profile in profiles_of(user_config, &mut read) {
            let stack: Vec<&Layer> = [system.as_ref(), Some(u), Some(&profile), managed.as_ref()]
                .into_iter()
                .flatten()
                .collect();
            profiles.push((profile.label.clone(), Merged::of(&stack, u)));
        }
        let requirements = load(&etc.join("requirements.toml"), None, &mut read);
        Files {
            read,
            base: Some(base),
            profiles,
            requirements,
            user,
        }
    }

    /// Every layer's finding for the user entry `name`.
    pub(crate) fn findings_of(&self, name: &str) -> Vec<Finding> {
        let mut out = self.read.clone();
        let (Some(user), Some(base)) = (&self.user, &self.base) else {
            return out;
        };
        if let Some(effective) = base.entry(user, name, &mut out) {
            if let Some(req) = &self.requirements {
                requirements_of(req, name, &effective, &mut out);
            }
        }
        // Each profile: what runs when the agent is started with `--profile NAME`.
        for (label, merged) in &self.profiles {
            let mut found = Vec::new();
            merged.entry(user, name, &mut found);
            // Only what this profile adds: the rest is reported for the plain stack above. Its
            // doubts are not put to codex: the call that answers loads no profile.
            out.extend(
                found
                    .into_iter()
                    .filter(|f| f.source.starts_with(label.as_str()))
                    .map(|mut f| {
                        if let Effect::NotCompared(doubt) = &mut f.effect {
                            doubt.ask = None;
                        }
                        f
                    }),
            );
        }
        out
    }
}

impl crate::clients::layers::Loaded for Files {
    fn findings(&self, cx: &Context) -> Vec<Finding> {
        self.findings_of(cx.name)
    }
}

/// A layer file: absent is `None`; one codex cannot read or parse is a finding (it refuses
/// the whole load on TOML it cannot parse).
fn load(path: &Path, label: Option<String>, out: &mut Vec<Finding>) -> Option<Layer> {
    let label = label.unwrap_or_else(|| path.display().to_string());
    let read = crate::clients::layers::read_layer(
        path,
        "codex merges it into every server's entry",
        crate::fsio::limits::CLIENT_CONFIG,
    );
    let text = match read {
        Ok(t) => t?,
        Err(mut unread) => {
            unread.source = label;
            out.push(unread);
            return None;
        }
    };
    match toml::from_str::<Table>(&text) {
        Ok(doc) => Some(Layer {
            path: path.to_path_buf(),
            label,
            doc,
        }),
        Err(e) => {
            // Never the message: it quotes the offending line, which may hold a secret.
            let at = e
                .span()
                .map(|s| format!(" at line {}", text[..s.start].lines().count().max(1)))
                .unwrap_or_default();
            out.push(Finding::new(
                &label,
                Effect::Blocked(format!(
                    "codex refuses the whole configuration (\"failed to load \
                     configuration\"): not valid TOML{at}"
                )),
            ));
            None
        }
    }
}

impl Merged {
    /// Merge `stack` (lowest first) the codex way and check that codex accepts the result.
    fn of(stack: &[&Layer], user: &Layer) -> Merged {
        let mut merged = Table::new();
        for layer in stack {
            merge(&mut merged, &layer.doc, MERGE_DEPTH);
        }
        let mut m = Merged {
            stack: stack
                .iter()
                .map(|l| (l.label.clone(), l.doc.clone()))
                .collect(),
            merged,
            whole: Vec::new(),
            refused: false,
        };
        match schema::check(&m.merged) {
            Err(refusal) => {
                let path: Vec<&str> = refusal.path.iter().map(String::as_str).collect();
                let label = m.owner(&path).unwrap_or(&user.label).to_string();
                m.whole.push(Finding::new(
                    format!("{label} key {}", refusal.key()),
                    Effect::Blocked(format!(
                        "codex refuses the whole configuration (\"failed to load \
                         configuration\"): {} is {}",
                        refusal.key(),
                        refusal.why
                    )),
                ));
                m.refused = true;
            }
            Ok(unchecked) => {
                let mut by_layer: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for key in unchecked {
                    let top = key.split(['.', ' ']).next().unwrap_or_default().to_string();
                    let label = m.owner(&[top.as_str()]).unwrap_or(&user.label).to_string();
                    by_layer.entry(label).or_default().push(key);
                }
                for (label, keys) in by_layer {
                    m.whole.push(Finding::new(
                        label,
                        Effect::NotCompared(Doubt::loads_config(format!(
                            "codex refuses the whole configuration when one of these has a \
                             wrong type, and mcp-deploy does not check them: {}",
                            keys.join("; ")
                        ))),
                    ));
                }
            }
        }
        m
    }

    /// The label of the highest layer that sets `path`: the one whose value codex uses.
    fn owner(&self, path: &[&str]) -> Option<&str> {
        self.stack
            .iter()
            .rev()
            .find(|(_, doc)| lookup(doc, path).is_some())
            .map(|(label, _)| label.as_str())
    }

    /// The whole config's findings, then the user entry `name` compared with its effective
    /// one, into `out`. Returns the effective entry when codex loads it.
    fn entry(&self, user: &Layer, name: &str, out: &mut Vec<Finding>) -> Option<Table> {
        out.extend(self.whole.iter().cloned());
        if self.refused {
            return None;
        }
        let own = lookup(&user.doc, &["mcp_servers", name]).and_then(Value::as_table)?;
        let effective = lookup(&self.merged, &["mcp_servers", name])
            .and_then(Value::as_table)
            .cloned()?;
        let section = format!("[mcp_servers.{name}]");
        if !effective.contains_key("command") && !effective.contains_key("url") {
            // Unreachable while the user entry has its transport; kept for a layer that
            // removes nothing but might in a later codex.
            return None;
        }
        let mut changed: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (key, path) in differences(own, &effective) {
            let mut full = vec!["mcp_servers", name];
            full.extend(path.iter().map(String::as_str));
            let label = self.owner(&full).unwrap_or(&user.label);
            if key == "enabled" && effective.get("enabled") == Some(&Value::Boolean(false)) {
                out.push(Finding::new(
                    format!("{label} {section} enabled"),
                    Effect::Blocked("`enabled = false` there disables it".into()),
                ));
                continue;
            }
            changed.entry(label.to_string()).or_default().push(key);
        }
        for (label, mut keys) in changed {
            keys.sort();
            keys.dedup();
            out.push(Finding::new(
                format!("{label} {section}"),
                Effect::Changed(keys),
            ));
        }
        Some(effective)
    }
}

/// The keys in which `effective` differs from `own`, each with the TOML path (under the
/// entry) of the value that decides it. Tables are compared key by key (`env.VAR`), other
/// values whole; a variable `env_vars` passes through is `env.VAR`.
fn differences(own: &Table, effective: &Table) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for (key, value) in effective {
        let mine = own.get(key);
        if key == "env_vars" {
            let names = |v: Option<&Value>| -> Vec<String> {
                v.and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| {
                                x.as_str()
                                    .or_else(|| x.get("name").and_then(Value::as_str))
                                    .map(str::to_string)
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let before = names(mine);
            for n in names(Some(value)) {
                if !before.contains(&n) {
                    out.push((format!("env.{n}"), vec![key.clone()]));
                }
            }
            if mine.is_some_and(|m| m != value)
                && names(mine).iter().any(|n| !names(Some(value)).contains(n))
            {
                out.push((key.clone(), vec![key.clone()]));
            }
            continue;
        }
        match (value, mine) {
            (Value::Table(t), Some(Value::Table(m))) => {
                for (k, v) in t {
                    if m.get(k) != Some(v) {
                        out.push((format!("{key}.{k}"), vec![key.clone(), k.clone()]));
                    }
                }
            }
            (Value::Table(t), None) => {
                for k in t.keys() {
                    out.push((format!("{key}.{k}"), vec![key.clone(), k.clone()]));
                }
            }
            _ if mine != Some(value) => out.push((key.clone(), vec![key.clone()])),
            _ => {}
        }
    }
    out
}

/// codex's `merge_toml_values`: a table into a table key by key, anything else replaces.
fn merge(base: &mut Table, overlay: &Table, depth: usize) {
    for (k, v) in overlay {
        match (base.get_mut(k), v) {
            (Some(Value::Table(b)), Value::Table(o)) if depth > 0 => merge(b, o, depth - 1),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

fn lookup<'t>(doc: &'t Table, path: &[&str]) -> Option<&'t Value> {
    let (first, rest) = path.split_first()?;
    let mut v = doc.get(*first)?;
    for k in rest {
        v = v.as_table()?.get(*k)?;
    }
    Some(v)
}

/// The first release that obeys `enabled = false` (0.45.0 lists and starts such a server,
/// even when `/etc/codex/managed_config.toml` sets it; 0.47.0, the next on npm, disables it).
pub(crate) const ENABLED_OBEYED_SINCE: Version = Version::new(0, 47, 0);
/// The first release that applies `/etc/codex/requirements.toml`'s `[mcp_servers]` allowlist
/// (0.80.0 starts a server it does not name; 0.87.0, the next on npm, disables it).
pub(crate) const REQUIREMENTS_SINCE: Version = Version::new(0, 87, 0);
/// The release whose config schema mcp-deploy carries ([`schema`]): an older one may not know
/// a key, and then neither refuses its type nor obeys it.
pub(crate) const SCHEMA_OF: Version = Version::new(0, 171, 0);

/// Whether the codex on this host certainly applies the keep-out evidence `finding`
/// (`--only-deployed`; issue 35, item 9): an `enabled = false` from [`ENABLED_OBEYED_SINCE`],
/// the requirements allowlist from [`REQUIREMENTS_SINCE`], a refused configuration only under
/// the release whose schema is carried ([`SCHEMA_OF`]) or newer.
pub(crate) fn keeps_out_here(finding: &Finding) -> Result<(), String> {
    let refusal = matches!(&finding.effect, Effect::Blocked(w) if w.starts_with("codex refuses"));
    let (since, rule) = if refusal {
        (
            SCHEMA_OF,
            "refuse a configuration over it, by the schema mcp-deploy carries",
        )
    } else if finding.source.ends_with(" enabled") {
        (ENABLED_OBEYED_SINCE, "obey `enabled = false`")
    } else if finding.source.contains("requirements.toml") {
        (REQUIREMENTS_SINCE, "apply requirements.toml's allowlist")
    } else {
        (SCHEMA_OF, "apply it")
    };
    match crate::clients::version::on_host(&super::ABOUT)? {
        v if v >= since => Ok(()),
        v => Err(format!(
            "codex {v} may not apply it: the first release known to {rule} is {since}"
        )),
    }
}

/// The requirements allowlist alone, for the server `name` of any scope whose entry (in the
/// claude shape) is `entry`: what `verify-identity --only-deployed` asks of a registration
/// that is not a user-scope one, and of a server added later.
pub(crate) fn requirements_for(
    name: &str,
    entry: &serde_json::Map<String, serde_json::Value>,
) -> Vec<Finding> {
    let mut effective = Table::new();
    for key in ["command", "url"] {
        if let Some(v) = entry.get(key).and_then(serde_json::Value::as_str) {
            effective.insert(key.into(), Value::String(v.into()));
        }
    }
    // Read once per run: only-deployed asks it of every registration.
    static LOADED: std::sync::OnceLock<(Option<Layer>, Vec<Finding>)> = std::sync::OnceLock::new();
    let (layer, read) = LOADED.get_or_init(|| {
        let mut read = Vec::new();
        let layer = load(&Path::new(ETC).join("requirements.toml"), None, &mut read);
        (layer, read)
    });
    let mut out = read.clone();
    if let Some(layer) = layer {
        requirements_of(layer, name, &effective, &mut out);
    }
    out
}

/// `/etc/codex/requirements.toml`'s allowlist: with an `[mcp_servers]` table there, codex
/// disables every server it does not name, and every one whose `identity` (a `command`, or a
/// `url`) is not the effective entry's (`config/src/mcp_requirements.rs`).
fn requirements_of(layer: &Layer, name: &str, effective: &Table, out: &mut Vec<Finding>) {
    let label = &layer.label;
    let refuse = |key: String, why: &str| {
        Finding::new(
            format!("{label} key {key}"),
            Effect::Blocked(format!(
                "codex refuses the whole configuration (\"failed to load bootstrap \
                 configuration\"): {key} is {why}"
            )),
        )
    };
    let others: Vec<&str> = layer
        .doc
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "mcp_servers")
        .collect();
    if !others.is_empty() {
        out.push(Finding::new(
            label,
            Effect::NotCompared(Doubt::loads_config(format!(
                "codex refuses the whole configuration when one of these has a wrong type, and \
                 mcp-deploy does not check them: {}",
                others.join(", ")
            ))),
        ));
    }
    let Some(allow) = layer.doc.get("mcp_servers") else {
        return;
    };
    let Some(allow) = allow.as_table() else {
        out.push(refuse("mcp_servers".into(), "not a table"));
        return;
    };
    let mut wanted = None;
    for (server, req) in allow {
        let identity = req.get("identity").and_then(Value::as_table);
        let id = identity.and_then(|t| {
            t.get("command")
                .and_then(Value::as_str)
                .map(|c| ("command", c))
                .or_else(|| t.get("url").and_then(Value::as_str).map(|u| ("url", u)))
        });
        let Some(id) = id else {
            out.push(refuse(
                format!("mcp_servers.{server}.identity"),
                "not a table with a `command` or a `url` string",
            ));
            return;
        };
        if server == name {
            wanted = Some(id);
        }
    }
    let blocked =
        |why: String| Finding::new(format!("{label} [mcp_servers]"), Effect::Blocked(why));
    match wanted {
        None => out.push(blocked(format!(
            "the requirements allowlist does not name {name}, so codex disables it"
        ))),
        Some((kind, want)) => {
            let got = effective.get(kind).and_then(Value::as_str);
            if got != Some(want) {
                out.push(blocked(format!(
                    "the requirements allowlist wants mcp_servers.{name}.identity.{kind} other \
                     than the entry's {kind}, so codex disables it"
                )));
            }
        }
    }
}

/// The profile files of `$CODEX_HOME` (`NAME.config.toml`, layered on the user config when
/// codex runs with `--profile NAME`).
fn profiles_of(user_config: &Path, out: &mut Vec<Finding>) -> Vec<Layer> {
    let Some(home) = user_config.parent() else {
        return Vec::new();
    };
    let Ok(dir) = std::fs::read_dir(home) else {
        return Vec::new();
    };
    let mut names: Vec<(String, PathBuf)> = Vec::new();
    for entry in dir.flatten() {
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        let Some(profile) = file.strip_suffix(".config.toml") else {
            continue;
        };
        if profile.is_empty() {
            continue;
        }
        if names.len() == MAX_PROFILES {
            out.push(Finding::new(
                home.display(),
                Effect::not_compared(format!(
                    "more than {MAX_PROFILES} profile files (NAME.config.toml): the rest are \
                     not read"
                )),
            ));
            break;
        }
        names.push((profile.to_string(), entry.path()));
    }
    names.sort();
    names
        .into_iter()
        .filter_map(|(profile, path)| {
            let label = format!("{} (codex --profile {profile})", path.display());
            load(&path, Some(label), out)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Entry;

    struct Setup {
        dir: tempfile::TempDir,
    }

    impl Setup {
        fn new(user: &str) -> Setup {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("home")).unwrap();
            std::fs::create_dir_all(dir.path().join("etc")).unwrap();
            std::fs::write(dir.path().join("home/config.toml"), user).unwrap();
            Setup { dir }
        }
        fn write(&self, rel: &str, text: &str) -> &Self {
            std::fs::write(self.dir.path().join(rel), text).unwrap();
            self
        }
        fn read(&self) -> Vec<Finding> {
            let declared = Entry::from_value(&serde_json::json!({"command":"/x"})).unwrap();
            let user = self.dir.path().join("home/config.toml");
            read_with(
                &Context {
                    name: "ct",
                    declared: &declared,
                    user_config: &user,
                },
                &self.dir.path().join("etc"),
            )
        }
    }

    const USER: &str = "[mcp_servers.ct]\ncommand = \"/x\"\nargs = [\"a\"]\n";

    /// The files read, merged and checked once answer each name as a read of its own did
    /// (the quadratic reading this replaced: 2 000 servers, 8 s for `--only-deployed`).
    #[test]
    fn files_read_once_answer_every_name_as_its_own_read() {
        let s = Setup::new(
            "[mcp_servers.ct]\ncommand = \"/x\"\n[mcp_servers.other]\ncommand = \"/y\"\n\
             [tui]\nnotifications = true\n",
        );
        s.write(
            "etc/config.toml",
            "[mcp_servers.ct.env]\nA = \"1\"\n[mcp_servers.other]\nenabled = false\n",
        )
        .write(
            "etc/requirements.toml",
            "[mcp_servers.ct.identity]\ncommand = \"/x\"\n",
        )
        .write(
            "home/p.config.toml",
            "[mcp_servers.other]\nargs = [\"z\"]\n",
        );
        let files = Files::load(
            &s.dir.path().join("home/config.toml"),
            &s.dir.path().join("etc"),
        );
        let declared = Entry::from_value(&serde_json::json!({"command":"/x"})).unwrap();
        let user = s.dir.path().join("home/config.toml");
        for name in ["ct", "other", "absent"] {
            let own = read_with(
                &Context {
                    name,
                    declared: &declared,
                    user_config: &user,
                },
                &s.dir.path().join("etc"),
            );
            assert_eq!(files.findings_of(name), own, "{name}");
        }
        // And what they say: ct's env changed, other disabled and left out by the
        // requirements, the profile's args, the doubt of [tui] for every name.
        let ct = files.findings_of("ct");
        assert!(
            ct.iter()
                .any(|f| f.effect == Effect::Changed(vec!["env.A".into()])),
            "{ct:?}"
        );
        let other = files.findings_of("other");
        assert!(
            other
                .iter()
                .any(|f| f.source.ends_with("[mcp_servers.other] enabled")),
            "{other:?}"
        );
        assert!(
            other
                .iter()
                .any(|f| f.source.ends_with("requirements.toml [mcp_servers]")),
            "{other:?}"
        );
        assert!(
            other
                .iter()
                .any(|f| f.source.contains("(codex --profile p)")),
            "{other:?}"
        );
        for f in [&ct, &other] {
            assert!(f
                .iter()
                .any(|f| matches!(&f.effect, Effect::NotCompared(d) if d.why.contains("tui"))));
        }
    }

    #[test]
    fn nothing_beyond_the_user_file_finds_nothing() {
        assert_eq!(Setup::new(USER).read(), []);
    }

    #[test]
    fn a_system_layer_adds_the_keys_the_user_entry_lacks() {
        let s = Setup::new(USER);
        s.write(
            "etc/config.toml",
            "[mcp_servers.ct]\nargs = [\"b\"]\ncwd = \"/tmp\"\nenv_vars = [\"S\", { name = \"T\" }]\n[mcp_servers.ct.env]\nNODE_OPTIONS = \"x\"\n",
        );
        let f = s.read();
        assert_eq!(f.len(), 1, "{f:?}");
        // args: the user's own wins over the system's.
        assert_eq!(
            f[0].effect,
            Effect::Changed(vec![
                "cwd".into(),
                "env.NODE_OPTIONS".into(),
                "env.S".into(),
                "env.T".into()
            ])
        );
        assert!(f[0].source.contains("etc/config.toml [mcp_servers.ct]"));
    }

    #[test]
    fn a_managed_layer_overrides_and_disables() {
        let s = Setup::new(USER);
        s.write(
            "etc/managed_config.toml",
            "[mcp_servers.ct]\ncommand = \"/evil\"\nenabled = false\n",
        );
        let f = s.read();
        assert!(
            f.iter()
                .any(|x| matches!(&x.effect, Effect::Blocked(w) if w.contains("enabled = false"))),
            "{f:?}"
        );
        assert!(
            f.iter()
                .any(|x| x.effect == Effect::Changed(vec!["command".into()])),
            "{f:?}"
        );
    }

    #[test]
    fn a_refused_key_in_any_layer_blocks_naming_it() {
        let s = Setup::new(&format!("model = 3\n{USER}"));
        let f = s.read();
        assert!(
            matches!(&f[..], [x] if x.source.ends_with("config.toml key model") && matches!(x.effect, Effect::Blocked(_))),
            "{f:?}"
        );
        let s = Setup::new(USER);
        s.write("etc/config.toml", "sandbox_mode = \"bogus\"\n");
        let f = s.read();
        assert!(
            f[0].source.contains("etc/config.toml key sandbox_mode"),
            "{f:?}"
        );
        // A higher layer's valid value wins over a lower one's wrong one.
        let s = Setup::new(&format!("model = \"o3\"\n{USER}"));
        s.write("etc/config.toml", "model = 3\n");
        assert_eq!(s.read(), []);
        let s = Setup::new(USER);
        s.write("etc/managed_config.toml", "[mcp_servers.ct\n");
        assert!(
            matches!(&s.read()[0].effect, Effect::Blocked(w) if w.contains("not valid TOML at line 1"))
        );
    }

    #[test]
    fn the_requirements_allowlist_blocks_an_unnamed_or_other_identity() {
        let s = Setup::new(USER);
        s.write(
            "etc/requirements.toml",
            "[mcp_servers.other.identity]\ncommand = \"/x\"\n",
        );
        assert!(
            matches!(&s.read()[..], [x] if matches!(&x.effect, Effect::Blocked(w) if w.contains("does not name ct")))
        );
        s.write(
            "etc/requirements.toml",
            "[mcp_servers.ct.identity]\ncommand = \"/y\"\n",
        );
        assert!(
            matches!(&s.read()[..], [x] if matches!(&x.effect, Effect::Blocked(w) if w.contains("identity.command")))
        );
        s.write(
            "etc/requirements.toml",
            "[mcp_servers.ct.identity]\ncommand = \"/x\"\n",
        );
        assert_eq!(s.read(), []);
        s.write("etc/requirements.toml", "[mcp_servers]\n");
        assert!(matches!(&s.read()[0].effect, Effect::Blocked(_)));
    }

    #[test]
    fn a_profile_file_counts_for_codex_with_that_profile() {
        let s = Setup::new(USER);
        s.write("home/p.config.toml", "[mcp_servers.ct]\nargs = [\"P\"]\n");
        let f = s.read();
        assert!(
            matches!(&f[..], [x] if x.source.contains("codex --profile p") && x.effect == Effect::Changed(vec!["args".into()])),
            "{f:?}"
        );
    }

    #[test]
    fn an_unreadable_layer_is_not_compared_never_absent() {
        let s = Setup::new(USER);
        std::fs::create_dir(s.dir.path().join("etc/config.toml")).unwrap();
        assert!(matches!(&s.read()[..], [x] if matches!(x.effect, Effect::NotCompared(_))));
    }
}
