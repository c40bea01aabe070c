//! Layers: every source beyond the user-scope entry that changes *whether* and *how* a client
//! runs a registered name — environment merged into the server's process (settings `env`,
//! `.env` files), allow/deny lists, disables and trust gates, enterprise, managed and system
//! files, profiles, and whether the client accepts its config at all.
//!
//! A pass of `mcp-registration` states what the agent on this host will load for that name,
//! so every layer the client obeys is read here, the client's way (each rule found in the
//! client's own code and pinned by a test against the real CLI), and each one that changes the
//! entry is a [`Finding`]. A source that exists but cannot be compared is a finding too
//! ([`Effect::NotCompared`]): named in the report, never read as absent.
//!
//! Readers never need the client's binary and never fail: whatever they cannot read becomes
//! `NotCompared`. One module per client (`<name>/layers.rs`, or a function of its `mod.rs`),
//! each `read` named by its client's row of [`super::CLIENTS`].

// The readers land one client at a time; until each has, parts of this are unused.
#![allow(dead_code)]

use std::path::Path;

use crate::entry::Entry;

// What a finding is belongs to the identity checks, which judge it; what each client obeys
// is read here.
pub(crate) use crate::identity::layer::{Effect, Finding};

/// What a layer reader needs to know.
pub(crate) struct Context<'a> {
    /// The registered name.
    pub(crate) name: &'a str,
    /// The declared entry, rendered for this deployment: what the layers are compared with
    /// (a variable the declaration sets itself wins over one merged in from a layer).
    pub(crate) declared: &'a Entry,
    /// The client's user config file (the one its user-scope entries are read from).
    pub(crate) user_config: &'a Path,
}

impl Context<'_> {
    /// The directory two levels above the user config: the home of a client that keeps it as
    /// `<home>/.<client>/<file>` (grok's, qwen's); `/` when there is none.
    pub(crate) fn config_home(&self) -> &Path {
        self.user_config
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("/"))
    }
}

/// A client's layer files as one run read them, answering for each registered name: a run over
/// many servers reads the files once, not once per server.
pub(crate) trait Loaded {
    fn findings(&self, cx: &Context) -> Vec<Finding>;
}

/// Read a layer's file bounded (FIFO-safe): `Ok(None)` when it does not exist, the
/// `NotCompared` finding naming it when it exists and cannot be read — a layer that cannot be
/// read is never taken as absent. `what` says what the client does with it ("gemini loads it
/// into every server it starts").
pub(crate) fn read_layer(path: &Path, what: &str, max: u64) -> Result<Option<String>, Finding> {
    crate::fsio::read_input_if_exists(path, "client config layer", max).map_err(|e| {
        Finding::new(
            path.display(),
            Effect::not_compared(format!(
                "{what}, and mcp-deploy cannot read it: {}",
                e.source
            )),
        )
    })
}

/// The variables of `env` (a layer's environment, merged into the server's process) that the
/// declared entry does not set itself, as `env.NAME` keys, sorted: the declaration's own
/// value wins over a merged one in every client that merges, so only the others change
/// what runs.
pub(crate) fn env_not_declared<'k>(
    declared: &Entry,
    env: impl IntoIterator<Item = &'k str>,
) -> Vec<String> {
    let own = declared
        .raw
        .get("env")
        .and_then(serde_json::Value::as_object);
    let mut keys: Vec<String> = env
        .into_iter()
        .filter(|k| !own.is_some_and(|o| o.contains_key(*k)))
        .map(|k| format!("env.{k}"))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// `*`-only wildcard match, linear in the inputs' product at worst (no backtracking blowup).
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] != '*' && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declared_variable_wins_over_a_merged_one() {
        let declared = Entry::from_value(&serde_json::json!({
            "command": "/x", "env": {"TOKEN": "${TOKEN}"}
        }))
        .unwrap();
        assert_eq!(
            env_not_declared(&declared, ["TOKEN", "NODE_OPTIONS", "PATH", "PATH"]),
            ["env.NODE_OPTIONS", "env.PATH"]
        );
    }

    #[test]
    fn doubt_fails_with_or_without_strict_and_only_the_clients_answer_passes() {
        let nc = Finding::new("/etc/x", Effect::not_compared("unreadable"));
        assert!(nc.fails(), "a doubt never passes");
        let answered = Finding::new("/h/config.toml", Effect::Answered("it exits 0".into()));
        assert!(!answered.fails());
        let b = Finding::new("/etc/x deniedMcpServers", Effect::Blocked("denied".into()));
        assert!(b.fails());
        assert!(b.describe("ct").contains("does not load ct"));
    }
}
