//! The layers grok applies to a user-scope entry ([`super`]), read from grok 0.0.34
//! (`dist/index.js`, `dist/mcp/transports.js`, `dist/utils/settings-manager.js`):
//!
//! - **`.env` of the working directory.** `dotenv.config()` loads `.env` of the directory
//!   grok starts in into its own process (a variable already set wins), and a stdio server
//!   gets `{...process.env, ...entry.env}`, then `MCP_REMOTE_QUIET`, `MCP_REMOTE_SILENT`,
//!   `DEBUG` and `NODE_ENV` over it. The registrations mcp-deploy makes are those of grok
//!   started in the home directory (docs/clients.md), so `~/.env` is the file: each variable
//!   it defines that the declaration does not set (and grok does not set over it) is
//!   `Changed`. (With `DOTENV_KEY` in the agent's environment dotenv decrypts `.env.vault`
//!   instead: that variable is the agent's, not a file on the host.)
//! - `~/.grok/user-settings.json` holds the API key, base URL and models, no server and no
//!   environment: nothing to read. The servers themselves are `~/.grok/settings.json`, the
//!   user config, compared by the entry check.

use std::path::Path;

use crate::clients::layers::{env_not_declared, Context, Effect, Finding};
use crate::fsio;

/// What grok sets over every stdio server's environment itself.
const SET_BY_GROK: &[&str] = &["MCP_REMOTE_QUIET", "MCP_REMOTE_SILENT", "DEBUG", "NODE_ENV"];

pub(crate) fn read(cx: &Context) -> Vec<Finding> {
    // `~/.grok/settings.json`: the home directory is two levels up.
    env_file(cx, &cx.config_home().join(".env"))
        .into_iter()
        .collect()
}

fn env_file(cx: &Context, file: &Path) -> Option<Finding> {
    let text = match crate::clients::layers::read_layer(
        file,
        "grok loads it into every server it starts",
        fsio::limits::DOCUMENT,
    ) {
        Ok(t) => t?,
        Err(unread) => return Some(unread),
    };
    let names = crate::clients::kit::dotenv::names(&text);
    let keys = env_not_declared(
        cx.declared,
        names
            .iter()
            .map(String::as_str)
            .filter(|k| !SET_BY_GROK.contains(k)),
    );
    (!keys.is_empty()).then(|| Finding::new(file.display(), Effect::Changed(keys)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Entry;
    use serde_json::json;

    #[test]
    fn home_env_variables_the_declaration_does_not_set() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join(".grok/settings.json");
        let declared = Entry::from_value(&json!({"command": "/x", "env": {"T": "1"}})).unwrap();
        let cx = Context {
            name: "ct",
            declared: &declared,
            user_config: &config,
        };
        assert!(read(&cx).is_empty());
        std::fs::write(
            dir.path().join(".env"),
            "T=2\nNODE_ENV=dev\nNODE_OPTIONS=--x\n",
        )
        .unwrap();
        assert_eq!(
            read(&cx),
            [Finding::new(
                dir.path().join(".env").display(),
                Effect::Changed(vec!["env.NODE_OPTIONS".into()])
            )]
        );
    }
}
