//! Every registration gemini reads, in every scope, for prune ([`crate::clients::scopes`]):
//! user settings, the working directory's `.gemini/settings.json`, the system settings
//! (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`, else `/etc/gemini-cli/settings.json`), and the
//! `mcpServers` of each installed extension (`~/.gemini/extensions/*/gemini-extension.json`).

use std::path::{Path, PathBuf};

use crate::clients::scopes::{entries_of, Found};

pub(crate) fn scopes(found: &mut Found, cwd: Option<&Path>) {
    let n = "gemini";
    let user = super::config_path();
    found.add(n, &user, "user", super::read_user_entries(&user));
    if let Some(c) = cwd {
        let f = c.join(".gemini/settings.json");
        if f != user {
            found.add(n, &f, "workspace", super::read_user_entries(&f));
        }
    }
    let system = std::env::var_os("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"));
    found.add(n, &system, "system", super::read_user_entries(&system));
    for (name, dir) in entries_of(&user.with_file_name("extensions")) {
        let f = dir.join("gemini-extension.json");
        found.add(
            n,
            &f,
            &format!("extension {name}"),
            super::read_user_entries(&f),
        );
    }
}
