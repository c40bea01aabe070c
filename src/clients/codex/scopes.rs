//! Every registration codex reads, in every scope, for prune ([`crate::clients::scopes`]):
//! `mcp_servers` of its `config.toml`, of `.codex/config.toml` in the working directory and
//! above and in every project its config names (`projects`), of `/etc/codex/config.toml` and
//! `/etc/codex/managed_config.toml`, and of each profile file `$CODEX_HOME/NAME.config.toml`
//! (layered on when codex runs with `--profile NAME`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::clients::scopes::{entries_of, Found};

pub(crate) fn scopes(found: &mut Found, cwd: Option<&Path>) {
    let n = "codex";
    let user = super::config_path();
    found.add(n, &user, "user", super::read_user_entries(&user));
    let mut dirs: Vec<PathBuf> = cwd
        .iter()
        .flat_map(|c| c.ancestors().map(Path::to_path_buf))
        .collect();
    // The projects codex's config names (trust levels): their `.codex/config.toml` applies
    // where codex runs in them.
    if let Ok(Some(text)) = crate::fsio::read_input_if_exists(
        &user,
        "client config",
        crate::fsio::limits::CLIENT_CONFIG,
    ) {
        if let Ok(doc) = text.parse::<toml::Table>() {
            if let Some(p) = doc.get("projects").and_then(toml::Value::as_table) {
                dirs.extend(p.keys().map(PathBuf::from).filter(|p| p.is_absolute()));
            }
        }
    }
    let mut seen = BTreeSet::new();
    for dir in dirs {
        let f = dir.join(".codex/config.toml");
        if f == user || !seen.insert(f.clone()) {
            continue;
        }
        found.add(n, &f, "project", super::read_user_entries(&f));
    }
    if let Some(home) = user.parent() {
        for (file, path) in entries_of(home) {
            if let Some(profile) = file.strip_suffix(".config.toml").filter(|p| !p.is_empty()) {
                let scope = format!("profile {profile} (codex --profile {profile})");
                found.add(n, &path, &scope, super::read_user_entries(&path));
            }
        }
    }
    for (f, scope) in [
        ("/etc/codex/config.toml", "system"),
        ("/etc/codex/managed_config.toml", "managed"),
    ] {
        let f = PathBuf::from(f);
        found.add(n, &f, scope, super::read_user_entries(&f));
    }
}
