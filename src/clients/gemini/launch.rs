//! How gemini is started so that every version from the oldest supported on writes the
//! settings file mcp-deploy reads, without any secret; and the proof, after each mutating
//! call, that it wrote there and nowhere else.
//!
//! 1. **Its home.** From 0.25.0 gemini-cli-core's `homedir()` (utils/paths.js) is
//!    `$GEMINI_CLI_HOME`, else `os.homedir()`; up to 0.24 its `Storage` (config/storage.js)
//!    takes `os.homedir()` directly, which is `$HOME`, or without `HOME` the account's home
//!    from the password database. Newer versions still call `os.homedir()` in places (the
//!    extension storage, the MCP token storage). So gemini gets `HOME` *and* `GEMINI_CLI_HOME`
//!    set to the home this run was given: every version writes under it.
//! 2. **No auth for `mcp`.** 0.27 to 0.35 run `mcp add|remove|list` as a deferred command,
//!    after `validateNonInteractiveAuth` (gemini.js), which exits 41 without an auth method
//!    (`GEMINI_API_KEY`, `GOOGLE_GENAI_USE_VERTEXAI`, `GOOGLE_GENAI_USE_GCA` or
//!    `security.auth.selectedType`); 0.36 skips that block for commands (`!argv.isCommand`).
//!    The setting `security.auth.useExternal: true` skips the same block in every version, and
//!    it is no secret: gemini gets it through a system-defaults file of our own
//!    (`GEMINI_CLI_SYSTEM_DEFAULTS_PATH`, the lowest-precedence layer), which carries the host's
//!    own system defaults (`/etc/gemini-cli/system-defaults.json`) with it, so that gemini
//!    sees every other setting as it would. No API key, nor any other variable of the caller,
//!    is passed.
//! 3. **The witness.** Every other settings file a version could take for its user settings
//!    (under the account's passwd home, the caller's `HOME` and `GEMINI_CLI_HOME`) is stamped
//!    before each mutating call and compared after it. A change there is an error, and from
//!    then on the client refuses to read its entries, so that no removal and no rollback is
//!    reported from a file that gemini did not write.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::clients::ClientError;

/// The variables gemini runs with (and may expand in what it saves).
pub(crate) const PASSED: &[&str] = &[
    "PATH",
    "HOME",
    "GEMINI_CLI_HOME",
    "GEMINI_CLI_NO_RELAUNCH",
    "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
];

/// The host's system defaults when `GEMINI_CLI_SYSTEM_SETTINGS_PATH` is not set, as it is not
/// for gemini (config/settings.js `getSystemDefaultsPath`).
const HOST_SYSTEM_DEFAULTS: &str = "/etc/gemini-cli/system-defaults.json";

/// What a gemini call needs besides its arguments: the environment, and the directory holding
/// our system-defaults file (removed with it).
pub(crate) struct Launch {
    pub(crate) env: Vec<(&'static str, OsString)>,
    _dir: tempfile::TempDir,
}

impl Launch {
    pub(crate) fn new(home: &Path) -> Result<Launch, ClientError> {
        Launch::with_defaults(home, Path::new(HOST_SYSTEM_DEFAULTS))
    }

    fn with_defaults(home: &Path, host_defaults: &Path) -> Result<Launch, ClientError> {
        let mut defaults = match crate::clients::gemini::read_settings(host_defaults)? {
            None => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => {
                return Err(ClientError::Config {
                    path: host_defaults.to_path_buf(),
                    reason: "it is not a JSON object".into(),
                })
            }
        };
        set_use_external(&mut defaults);
        let spawn = |e: std::io::Error| ClientError::Spawn {
            step: "write gemini's system defaults".into(),
            reason: e.to_string(),
        };
        let dir = tempfile::Builder::new()
            // Named as a client call's directory is, so that a killed run's is swept too.
            .prefix(&format!(
                "{}{}.",
                crate::state::CLIENT_TMP_PREFIX,
                std::process::id()
            ))
            .tempdir()
            .map_err(spawn)?;
        let file = dir.path().join("system-defaults.json");
        let text = serde_json::to_string_pretty(&Value::Object(defaults)).expect("JSON");
        crate::fsio::write_atomic(&file, text.as_bytes(), true).map_err(|e| spawn(e.source))?;
        let mut env: Vec<(&'static str, OsString)> = vec![
            ("HOME", home.as_os_str().to_owned()),
            ("GEMINI_CLI_HOME", home.as_os_str().to_owned()),
            // It otherwise starts itself a second time, only to raise its heap limit: 0.5 s.
            ("GEMINI_CLI_NO_RELAUNCH", "true".into()),
            ("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", file.into_os_string()),
        ];
        // Its launcher is a node script that finds node on PATH.
        if let Some(path) = std::env::var_os("PATH") {
            env.push(("PATH", path));
        }
        Ok(Launch { env, _dir: dir })
    }
}

/// `security.auth.useExternal = true`, keeping whatever else `security.auth` holds.
fn set_use_external(defaults: &mut Map<String, Value>) {
    let security = defaults
        .entry("security")
        .or_insert_with(|| Value::Object(Map::new()));
    if !security.is_object() {
        *security = Value::Object(Map::new());
    }
    let auth = security
        .as_object_mut()
        .expect("an object")
        .entry("auth")
        .or_insert_with(|| Value::Object(Map::new()));
    if !auth.is_object() {
        *auth = Value::Object(Map::new());
    }
    auth.as_object_mut()
        .expect("an object")
        .insert("useExternal".into(), Value::Bool(true));
}

/// The settings files other than `config` that some gemini version could take for its user
/// settings in this environment.
pub(crate) fn other_candidates(config: &Path) -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = Vec::new();
    homes.extend(crate::dirs::account_home());
    homes.extend(crate::dirs::home_if_set());
    homes.extend(crate::dirs::var("GEMINI_CLI_HOME").map(PathBuf::from));
    let mine = resolved(config);
    let mut out: Vec<PathBuf> = Vec::new();
    for home in homes {
        let file = home.join(".gemini").join("settings.json");
        let r = resolved(&file);
        if r != mine && !out.iter().any(|o| resolved(o) == r) {
            out.push(file);
        }
    }
    out
}

/// `path` with its nearest existing ancestor resolved (symlinks followed), the rest as given:
/// two spellings of one file compare equal, component by component.
fn resolved(path: &Path) -> PathBuf {
    let mut tail = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            let mut out = real;
            out.extend(tail.iter().rev());
            return out;
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_owned());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// What a file is at one moment: absent, or its size, modification time, inode and digest.
#[derive(PartialEq, Debug)]
enum Stamp {
    Absent,
    Present {
        len: u64,
        mtime: (i64, i64),
        ino: u64,
        digest: Option<[u8; 32]>,
    },
}

fn stamp(path: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Stamp::Absent;
    };
    let digest = crate::fsio::read_input(path, "client config", crate::fsio::limits::CLIENT_CONFIG)
        .ok()
        .map(|b| Sha256::digest(&b).into());
    Stamp::Present {
        len: meta.len(),
        mtime: (meta.mtime(), meta.mtime_nsec()),
        ino: meta.ino(),
        digest,
    }
}

/// The other candidates, stamped before a mutating call.
pub(crate) struct Witness {
    files: Vec<(PathBuf, Stamp)>,
}

impl Witness {
    pub(crate) fn before(candidates: &[PathBuf]) -> Witness {
        Witness {
            files: candidates.iter().map(|p| (p.clone(), stamp(p))).collect(),
        }
    }

    /// The candidates that changed since [`Witness::before`].
    pub(crate) fn changed(&self) -> Vec<PathBuf> {
        self.files
            .iter()
            .filter(|(p, s)| stamp(p) != *s)
            .map(|(p, _)| p.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn system_defaults_keep_the_hosts_and_add_use_external() {
        let dir = tempfile::tempdir().unwrap();
        let host = dir.path().join("system-defaults.json");
        std::fs::write(
            &host,
            "{ // the host's\n \"security\": {\"auth\": {\"enforcedType\": \"x\"}}, \"ui\": {\"theme\": \"t\"}}",
        )
        .unwrap();
        let launch = Launch::with_defaults(Path::new("/h"), &host).unwrap();
        let file = &launch
            .env
            .iter()
            .find(|(k, _)| *k == "GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
            .unwrap()
            .1;
        let got: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        assert_eq!(
            got,
            json!({"security": {"auth": {"enforcedType": "x", "useExternal": true}},
                   "ui": {"theme": "t"}})
        );
        for (k, v) in [("HOME", "/h"), ("GEMINI_CLI_HOME", "/h")] {
            assert!(launch.env.iter().any(|(a, b)| *a == k && b == v), "{k}");
        }
        // Every variable it is given is one the expansion guard knows.
        assert!(launch.env.iter().all(|(k, _)| PASSED.contains(k)));
        let missing = Launch::with_defaults(Path::new("/h"), &dir.path().join("none")).unwrap();
        assert!(missing
            .env
            .iter()
            .any(|(k, _)| *k == "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"));
    }

    #[test]
    fn a_witness_sees_a_file_appear_change_or_go() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        std::fs::write(&b, "{}").unwrap();
        let w = Witness::before(&[a.clone(), b.clone()]);
        assert!(w.changed().is_empty());
        std::fs::write(&a, "{}").unwrap();
        std::fs::write(&b, "{ }").unwrap();
        assert_eq!(w.changed(), [a, b]);
    }

    #[test]
    fn the_configured_file_is_no_other_candidate() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
        assert_eq!(
            resolved(&dir.path().join("link/.gemini/settings.json")),
            resolved(&dir.path().join("real/.gemini/settings.json"))
        );
    }
}
