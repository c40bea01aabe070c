//! OpenCode (npm `opencode-ai`), a locally managed one. mcp-deploy edits its user config file
//! itself ([`super::file_backed`]): `opencode mcp add` is interactive before 1.17, and from
//! then, with its arguments, it writes a numeric-looking argument as a number (OpenCode then
//! refuses the config), takes env values on its command line, rewrites bytes of the file
//! outside the entry, writes in place, and has no `remove` (docs/clients.md, "Why not
//! `opencode mcp add`"; pinned in tests/it/opencode_mcp_add.rs). One file a concept:
//! which files it reads ([`discovery`]), what else takes a name from ours ([`shadows`]), its
//! entry shape and ours ([`shape`]), and the confirmation of each write by the real binary
//! ([`confirm`]).
//!
//! What OpenCode 1.18.33 reads (from its bundled source and checked with the real binary):
//! - The user config directory is `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`. In
//!   it `config.json`, `opencode.json` and `opencode.jsonc` are *all* read and deep-merged, in
//!   that order (a later file wins key by key). The file OpenCode itself writes is the first
//!   that exists of `opencode.jsonc`, `opencode.json`, `config.json`, else a new
//!   `opencode.jsonc`: mcp-deploy writes the same one, and reports a same-name server in the
//!   other two as shadowing (its keys are merged into ours).
//! - Deep-merged after the user config, so winning over it: the file `$OPENCODE_CONFIG`,
//!   project `opencode.json(c)` from the working directory up to the git root,
//!   `.opencode/opencode.json(c)` there and in `~`, `$OPENCODE_CONFIG_DIR/opencode.json(c)`,
//!   `$OPENCODE_CONFIG_CONTENT`, and the managed `/etc/opencode/opencode.json(c)`. Merged
//!   before it (so adding keys to our entry): remote organisation defaults,
//!   `<url>/.well-known/opencode` of every `wellknown` login in `auth.json`, which cannot be
//!   read offline and so count whenever such a login exists. Each is reported as shadowing.
//! - Entries: `{"type":"local","command":[cmd, ...args],"environment":{...},"enabled":true}`
//!   and `{"type":"remote","url":...,"headers":{...}}`. OpenCode substitutes `{env:NAME}`
//!   (an unset one becomes the empty string) and `{file:path}` anywhere in the file's text,
//!   and leaves `${NAME}` alone: claude's `${NAME}` is written as `{env:NAME}` and read back;
//!   a `${NAME:-default}` (OpenCode has no default) and a literal `{env:` or `{file:` are
//!   refused; an entry holding a literal `${` is read in OpenCode's own shape, which no
//!   check accepts.
//! - A remote server is tried as streamable HTTP, then SSE: claude's `http` maps to
//!   `remote`; `sse` cannot be pinned and is refused.
//! - An OpenCode server started elsewhere (`opencode serve`, reached with `--attach URL` and
//!   `OPENCODE_SERVER_PASSWORD`) reads its own config, once: it is not supported, and a run
//!   whose environment points at one (`OPENCODE_SERVER_PASSWORD`/`_USERNAME` set) is refused.

mod confirm;
mod discovery;
pub(crate) mod layers;
mod shadows;
mod shape;
#[cfg(test)]
mod tests;

use std::path::Path;

use serde_json::{Map, Value};

use super::file_written::{FileWritten, Format};
use super::ClientError;
use crate::entry::Entry;
pub(crate) use discovery::{config_dir, config_path, project_dirs, USER_FILES};
pub(crate) use shadows::shadows_in;
pub(crate) use shape::{to_claude, to_opencode};

/// What OpenCode writes into a config file it creates.
const NEW_FILE: &str = "{\n  \"$schema\": \"https://opencode.ai/config.json\"\n}\n";

/// OpenCode's format ([`super::file_written`]).
pub(crate) struct Opencode;

impl Format for Opencode {
    const KIND: &'static dyn super::table::Kind = &OpencodeKind;
    const KEY: &'static str = "mcp";
    const NEW_FILE: &'static str = NEW_FILE;
    const TO_CLAUDE: fn(&Value) -> Value = to_claude;
    const TO_CLIENT: fn(&str, &Entry) -> Result<Value, ClientError> = to_opencode;

    /// An OpenCode server started elsewhere reads its own config, once.
    fn refuse_open() -> Result<(), ClientError> {
        let Some(var) = ["OPENCODE_SERVER_PASSWORD", "OPENCODE_SERVER_USERNAME"]
            .into_iter()
            .find(|v| crate::dirs::var(v).is_some())
        else {
            return Ok(());
        };
        Err(ClientError::NotSupported {
            client: "opencode",
            reason: format!(
                "{var} is set, so the OpenCode in use is a server started elsewhere \
                 (`opencode serve`, reached with --attach): an externally managed OpenCode"
            ),
            help: "mcp-deploy registers servers with a locally managed OpenCode only (its \
                   user config on this host); register them on the host that runs the \
                   server, or unset the variable if no server is involved"
                .into(),
        })
    }

    fn confirm(c: &FileWritten<Opencode>, name: &str, written: &Value) -> Result<(), ClientError> {
        confirm::confirm(c, name, written)
    }
}

/// Whether OpenCode would substitute part of `s` (`{env:NAME}`, `{file:path}`) before it
/// parses the file's text: a property name holding one means what OpenCode reads as that
/// name cannot be known from the file.
pub(crate) fn substituted(s: &str) -> bool {
    s.contains("{env:") || s.contains("{file:")
}

/// The user entries of `path` in the claude shape.
pub(crate) fn read_user_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    super::file_written::read_user_entries::<Opencode>(path)
}

/// Every registration opencode reads, for prune ([`super::scopes`]): its user config.
pub(crate) fn scopes(found: &mut super::scopes::Found, _cwd: Option<&std::path::Path>) {
    let user = config_path();
    found.add("opencode", &user, "user", read_user_entries(&user));
}

/// OpenCode, as the client list knows it ([`super::CLIENTS`]): everything mcp-deploy knows of
/// it, found in this folder.
pub(crate) struct OpencodeKind;

pub(crate) static ABOUT: super::table::About =
    // 1.0.0's bundled bun fails its default-plugin install here (docs/clients.md).
    super::table::about!(file opencode "OpenCode" MCP_DEPLOY_OPENCODE,
    npm ["opencode-ai", "opencode-linux-x64", "opencode-linux-arm64"] (1, 0, 61) ..= (1, 18, 33));

super::table::folder_kind!(OpencodeKind, about: ABOUT, layers: layers::read, writes: Opencode,
    loads_config: loads_config);

/// `opencode debug config` decodes every file it merges as each start does, and exits 1 with
/// "Configuration is invalid at FILE" when one is refused (1.18.33). It runs on the plugin-free
/// scratch copy of the user files that confirms a write ([`confirm::on_a_copy`]): run on the
/// real ones it would execute their plugins and write into the config directory. So it
/// answers for the files copied ([`layers::ANSWERED`]), and a config whose `plugin` key the
/// copy drops is not asked ([`layers`]).
fn loads_config(binary: Option<&Path>) -> super::oracle::Answer {
    let binary = match super::oracle::binary_to_ask(&ABOUT, binary) {
        Ok(b) => b,
        Err(why) => return super::oracle::Answer::Unasked(why),
    };
    let dir = config_dir();
    match confirm::on_a_copy(&dir, &binary, super::oracle::TIMEOUT, None) {
        Ok(run) => super::oracle::Answer::of_exit(
            "opencode debug config",
            &format!(
                "{}, on a copy of its user files without plugins",
                binary.display()
            ),
            run.out.status,
        ),
        Err(e) => super::oracle::Answer::Unasked(format!(
            "`opencode debug config` gave no answer: {}",
            super::runner::first_lines(&e.to_string())
        )),
    }
}
