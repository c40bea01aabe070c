//! The confirmation of each write: the real OpenCode, run on a scratch copy of its config
//! files, must resolve the entry to what mcp-deploy wrote.

use std::path::Path;

use serde_json::{Map, Value};

use super::{substituted, Opencode, USER_FILES};
use crate::clients::file_backed;
use crate::clients::file_written::FileWritten;
use crate::clients::runner::{self, Runner};
use crate::clients::{Client, ClientError};

/// The variables of ours the confirming `opencode debug config` runs with; its HOME and XDG
/// directories are a scratch copy (see [`confirm`]).
const PASSED: &[&str] = &["PATH"];

/// Ask the real OpenCode what it resolves `name` to (`opencode debug config`, which starts
/// no server) and compare with what was written, `{env:NAME}` substituted as OpenCode
/// does in the environment it ran with. Its output holds substituted environment values:
/// it is never shown, and a difference names keys only.
///
/// Any opencode command edits files: it inserts `"$schema"` into a config file without
/// one, writes a `.gitignore` into the config directory, keeps a database and logs in its
/// data and state directories. So it runs on a scratch copy of the three user files
/// (`XDG_CONFIG_HOME`, and the data, state and cache directories, in a temporary
/// directory), and with a scratch HOME holding a copy of `~/.opencode/opencode.json(c)`
/// (the managed directory still applies): what it resolves is what these bytes mean, and
/// the user's files are not touched.
///
/// OpenCode loads (executes) every plugin it finds while it reads its config: the files of
/// `~/.opencode/plugin(s)/` and the packages or `file://` URLs a config's `plugin` key
/// names (it even installs packages into `~/.opencode`). A confirmation must run no code
/// of the config's, so the scratch HOME has no plugin directory and each copy is made
/// without its top-level `plugin` key (and without a key OpenCode's `{env:...}`/`{file:...}`
/// substitution could turn into it). What a plugin could change is reported as shadowing
/// instead ([`shadows_in`]).
pub(super) fn confirm(
    client: &FileWritten<Opencode>,
    name: &str,
    written: &Value,
) -> Result<(), ClientError> {
    let Some((binary, timeout)) = client.binary() else {
        return Ok(());
    };
    let step = "opencode debug config".to_string();
    let real_dir = client.file.path.parent().unwrap_or(Path::new("."));
    let run = on_a_copy(real_dir, binary, timeout, client.said)?;
    let (out, copy, seen) = (&run.out, &run.copy, &run.seen);
    if !out.status.success() {
        // Its config errors quote the offending entry, values included: only the first
        // line (which names the file) is kept, with known values redacted.
        let first = runner::strip_ansi(
            out.stderr
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or(""),
        );
        let first = first
            .split(" ↳")
            .next()
            .unwrap_or("")
            .trim()
            .replace(&*copy.to_string_lossy(), &real_dir.to_string_lossy());
        let mut held = client
            .user_entries()
            .map(|m| runner::secret_strings(&m))
            .unwrap_or_default();
        let mut one = Map::new();
        one.insert(name.to_string(), written.clone());
        held.extend(runner::secret_strings(&one));
        return Err(ClientError::Failed {
            step,
            status: out.status.to_string(),
            stderr: if first.is_empty() {
                "no output on stderr".into()
            } else {
                crate::entry::secrets::redact(&first, &held)
            },
        });
    }
    let start = out.stdout.find('{').unwrap_or(0);
    let resolved: Value =
        serde_json::from_str(&out.stdout[start..]).map_err(|_| ClientError::Garbage {
            step: step.clone(),
            reason: "not the JSON of a config".into(),
        })?;
    let got = resolved.get("mcp").and_then(|m| m.get(name));
    let want = substitute(written, seen);
    let differs = match (got, &want) {
        (None, _) => vec!["the whole entry (OpenCode does not list it)".to_string()],
        (Some(Value::Object(g)), Value::Object(w)) => {
            let keys: std::collections::BTreeSet<&String> = g
                .keys()
                .chain(w.keys())
                .filter(|k| !same_resolved(k, g.get(*k), w.get(*k)))
                .collect();
            keys.into_iter().cloned().collect()
        }
        _ => vec!["the whole entry".to_string()],
    };
    if differs.is_empty() {
        return Ok(());
    }
    Err(ClientError::Disagrees {
        name: name.to_string(),
        reason: format!(
            "OpenCode resolves it to something else than mcp-deploy wrote to {} ({} \
                 differ: a same-name entry in another of its config files is merged into it)",
            client.file.path.display(),
            differs.join(", ")
        ),
    })
}

/// A run of `opencode debug config` on a scratch copy ([`on_a_copy`]): its output, where the
/// copy of the config directory is, and the variables it ran with. The copy is removed when
/// this is dropped.
pub(super) struct OnACopy {
    pub(super) out: crate::process::Output,
    copy: std::path::PathBuf,
    seen: Vec<(String, String)>,
    _scratch: tempfile::TempDir,
}

/// Run `opencode debug config` (`binary`) on a scratch copy of the user files of
/// `real_dir` (its config directory) and of `~/.opencode/opencode.json(c)`, without plugins
/// (see [`confirm`]): what OpenCode makes of these bytes, the user's files untouched.
pub(super) fn on_a_copy(
    real_dir: &Path,
    binary: &Path,
    timeout: std::time::Duration,
    said: Option<fn(crate::notice::Notice)>,
) -> Result<OnACopy, ClientError> {
    let step = "opencode debug config".to_string();
    let io = |e: std::io::Error| ClientError::Spawn {
        step: step.clone(),
        reason: format!("cannot prepare its scratch copy: {e}"),
    };
    let scratch = tempfile::Builder::new()
        .prefix("mcp-deploy-opencode.")
        .tempdir()
        .map_err(io)?;
    let copy = scratch.path().join("config").join("opencode");
    std::fs::create_dir_all(&copy).map_err(io)?;
    let home_copy = scratch.path().join("home").join(".opencode");
    std::fs::create_dir_all(&home_copy).map_err(io)?;
    // Its TMPDIR must exist: 1.x unpacks a native library there before anything else.
    std::fs::create_dir_all(scratch.path().join("tmp")).map_err(io)?;
    let home_dir = crate::dirs::home().join(".opencode");
    let files = USER_FILES
        .iter()
        .map(|f| (real_dir.join(f), copy.join(f)))
        .chain(
            ["opencode.json", "opencode.jsonc"]
                .iter()
                .map(|f| (home_dir.join(f), home_copy.join(f))),
        );
    for (from, to) in files {
        let text = crate::fsio::read_input_if_exists(
            &from,
            "client config",
            crate::fsio::limits::CLIENT_JSONC,
        )
        .map_err(|e| ClientError::File {
            path: from.clone(),
            reason: e.source.to_string(),
        })?;
        if let Some(text) = text {
            let dir = from.parent().unwrap_or(Path::new("/"));
            let text = absolute_file_refs(&text, dir, &crate::dirs::home());
            // Text mcp-deploy cannot parse is copied as it is: OpenCode refuses it too,
            // before it loads any plugin.
            let text = file_backed::without_top_keys(&text, |k| k == "plugin" || substituted(k))
                .unwrap_or(text);
            std::fs::write(to, text).map_err(io)?;
        }
    }
    let mut env: Vec<(&'static str, std::ffi::OsString)> = PASSED
        .iter()
        .filter_map(|k| std::env::var_os(k).map(|v| (*k, v)))
        .collect();
    for (var, sub) in [
        ("HOME", "home"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
        // It makes `os.tmpdir()/opencode` at every start (its Global paths): without
        // TMPDIR that is the host's /tmp/opencode, outside every home it was given.
        ("TMPDIR", "tmp"),
    ] {
        env.push((var, scratch.path().join(sub).into_os_string()));
    }
    env.push(("OPENCODE_DISABLE_AUTOUPDATE", "1".into()));
    env.push(("OPENCODE_DISABLE_MODELS_FETCH", "1".into()));
    // At every start OpenCode installs its default plugins (auth helpers) from npm with its
    // bundled bun and loads them: the confirmation would download and run code, and 1.0.x
    // fails outright where that bun cannot reach or trust the registry. They change no
    // server (a plugin the user configures is refused before this: see above).
    env.push(("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()));
    // The user-level view: no project file of wherever the call runs.
    env.push(("OPENCODE_DISABLE_PROJECT_CONFIG", "1".into()));
    let seen: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string_lossy().into_owned()))
        .collect();
    let runner = Runner::open("opencode", Some(binary), true, timeout, env, String::new())?
        .clearing_env()
        .telling(said);
    let out = runner.call_raw(&["debug", "config"], &step)?;
    Ok(OnACopy {
        out,
        copy,
        seen,
        _scratch: scratch,
    })
}

/// `text` with each `{file:path}` that OpenCode would resolve against the file's directory
/// (a relative path) or the home directory (`~/...`) made absolute, so that the scratch copy
/// reads the same files as the original: a legitimate `"apiKey": "{file:./key}"` must not
/// fail the confirmation. OpenCode takes the path from the raw text; a directory whose name
/// would need escaping in JSON is left alone (the confirmation then fails, safely).
pub(super) fn absolute_file_refs(text: &str, dir: &Path, home: &Path) -> String {
    let plain = |p: &Path| {
        let s = p.to_string_lossy().into_owned();
        (!s.contains(['"', '\\', '}']) && !s.chars().any(char::is_control)).then_some(s)
    };
    let (Some(dir), Some(home)) = (plain(dir), plain(home)) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("{file:") {
        let after = &rest[i + 6..];
        out.push_str(&rest[..i + 6]);
        let Some(end) = after.find('}') else {
            rest = after;
            continue;
        };
        let path = &after[..end];
        if let Some(under) = path.strip_prefix("~/") {
            out.push_str(&format!("{home}/{under}"));
        } else if path.starts_with('/') || path.starts_with('{') || path.is_empty() {
            out.push_str(path);
        } else {
            out.push_str(&format!("{dir}/{path}"));
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Whether the resolved value `g` of key `k` is the written `w`. `debug config` prints
/// `***` for a string it deems secret (header values, a variable named like a token, a URL
/// with credentials): such a string matches any written string (the file read-back has
/// compared it already).
pub(super) fn same_resolved(_k: &str, g: Option<&Value>, w: Option<&Value>) -> bool {
    match (g, w) {
        (Some(g), Some(w)) => masked_eq(g, w),
        (None, None) => true,
        _ => false,
    }
}

pub(super) fn masked_eq(g: &Value, w: &Value) -> bool {
    match (g, w) {
        (Value::String(m), Value::String(_)) if m == "***" => true,
        (Value::Array(g), Value::Array(w)) => {
            g.len() == w.len() && g.iter().zip(w).all(|(g, w)| masked_eq(g, w))
        }
        (Value::Object(g), Value::Object(w)) => {
            g.len() == w.len()
                && g.iter()
                    .all(|(k, x)| w.get(k).is_some_and(|y| masked_eq(x, y)))
        }
        _ => g == w,
    }
}

/// `v` with every `{env:NAME}` replaced by NAME's value in `env`, else the empty string (as
/// OpenCode does).
pub(super) fn substitute(v: &Value, env: &[(String, String)]) -> Value {
    match v {
        Value::String(s) => {
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(i) = rest.find("{env:") {
                let after = &rest[i + 5..];
                let Some(end) = after.find('}') else { break };
                out.push_str(&rest[..i]);
                let name = &after[..end];
                if let Some((_, val)) = env.iter().find(|(k, _)| k == name) {
                    out.push_str(val);
                }
                rest = &after[end + 1..];
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, env)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), substitute(x, env)))
                .collect(),
        ),
        other => other.clone(),
    }
}
