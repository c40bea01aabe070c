//! Gemini CLI, through its CLI (`gemini mcp add|remove -s user`).
//!
//! - The user-scope entries live in `$GEMINI_CLI_HOME/.gemini/settings.json` (GEMINI_CLI_HOME
//!   defaults to HOME) under `mcpServers`, already in the claude shape (`command`/`args`/`env`,
//!   or `type`/`url`/`headers`; an older `httpUrl` means `type: http`). Gemini has no `get` and
//!   no JSON output, so `user_entries` and `observe` read that file (JSON with comments),
//!   never write it.
//! - `gemini mcp add` overwrites an existing entry (it only says so), and `remove` of a missing
//!   name exits 0: `add` refuses a registered name, `remove` a missing one, and both check the
//!   file after the call.
//! - Its argument parser changes what it is given: an env value is cut at its first `=` and an
//!   empty one dropped, header names and values are trimmed, and an argument that looks like a
//!   number is rewritten (`1.50` becomes `1.5`, `1e3` becomes `1000`) even after `--`. Such
//!   entries are refused before any call, naming the key (never the value); whatever slips
//!   through is caught by comparing the file after `add`.
//! - When it saves, it writes *every* user-scope server with `$VAR`/`${VAR}`/`${VAR:-x}`
//!   references expanded from its own environment, turning references into secrets on disk.
//!   So it runs with an empty environment plus the few variables of [`launch`] (PATH,
//!   its home as HOME and GEMINI_CLI_HOME, our system defaults), a mutating call is
//!   refused when an entry holds a reference it would still expand (to one of those, or one
//!   with a `:-default`), and every call checks that the other entries are as they were.
//! - Old versions differ in where they write and in what `mcp` needs: see [`launch`],
//!   which makes every supported version write this home's file, and proves it did.

mod launch;
pub(crate) mod layers;
pub(crate) mod policy;
mod scopes;

pub(crate) use scopes::scopes;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use std::sync::Mutex;

use super::cli_driven::{AddArgs, CliDriven, Dialect, Spelling};
use super::runner::Runner;
use super::{only_keys, string_map, ClientError, ClientOptions};
use crate::entry::{Entry, Transport};
use launch::{self as gemini_launch, Launch, Witness, PASSED};

/// What gemini does its own way ([`super::cli_driven`]): the launch it runs in and the
/// witness of where it wrote.
pub(crate) struct GeminiCli {
    /// Its system defaults file lives as long as the client.
    _launch: Launch,
    /// The other settings files an old version could write instead ([`launch`]).
    others: Vec<PathBuf>,
    /// Set once gemini wrote one of [`GeminiCli::others`]: from then on no entry is read
    /// from its config, which is no longer the witness of what gemini did.
    strayed: Mutex<Vec<PathBuf>>,
}

pub(crate) type Gemini = CliDriven<GeminiCli>;

pub(crate) fn open(
    row: &super::table::About,
    options: &ClientOptions,
) -> Result<Gemini, ClientError> {
    let home = resolve_home(
        options.home("gemini"),
        crate::dirs::var_raw("GEMINI_CLI_HOME"),
        crate::dirs::home(),
    );
    let launch = Launch::new(&home)?;
    let runner = Runner::of_client(row, options, launch.env.clone())?
        .clearing_env()
        .detect_version("gemini")?;
    let config = home.join(".gemini").join("settings.json");
    let others = gemini_launch::other_candidates(&config);
    Ok(CliDriven {
        runner,
        config,
        dialect: GeminiCli {
            _launch: launch,
            others,
            strayed: Mutex::new(Vec::new()),
        },
    })
}

impl GeminiCli {
    fn strayed(&self, config: &Path) -> Result<(), ClientError> {
        let strayed = self.strayed.lock().unwrap_or_else(|e| e.into_inner());
        if strayed.is_empty() {
            return Ok(());
        }
        Err(ClientError::WroteElsewhere {
            client: "gemini",
            expected: config.to_path_buf(),
            wrote: strayed.clone(),
        })
    }
}

/// What gemini says removing a name it does not have (it exits 0), as its fork qwen does.
pub(crate) const REMOVE_MISSING: Option<&str> = Some("not found in user settings");
/// The argv that removes a user-scope name, gemini's and its fork qwen's.
pub(crate) const REMOVE: &[&str] = &["mcp", "remove", "-s", "user"];

/// How a dry run shows the calls of gemini, or of its fork `bin` (qwen), at user scope.
macro_rules! user_scope_spelling {
    ($bin:literal) => {
        $crate::clients::cli_driven::Spelling {
            add: concat!($bin, " mcp add -s user {} <entry>"),
            remove: concat!($bin, " mcp remove -s user {}"),
            observe: concat!("read {} from the ", $bin, " settings"),
        }
    };
}
pub(crate) use user_scope_spelling;

/// The `guard` of gemini's dialect, or of its fork `bin` (qwen) passing the variables
/// `passed`: a mutating call that would make it rewrite a stored reference is refused
/// ([`refuse_expanding`]).
macro_rules! guard_refusing_expansion {
    ($bin:literal, $passed:expr) => {
        fn guard(
            &self,
            config: &std::path::Path,
            name: &str,
            entries: &serde_json::Map<String, serde_json::Value>,
        ) -> Result<(), $crate::clients::ClientError> {
            $crate::clients::gemini::refuse_expanding($bin, $passed, config, name, entries)
        }
    };
}
pub(crate) use guard_refusing_expansion;

impl Dialect for GeminiCli {
    const KIND: &'static dyn super::table::Kind = &GeminiKind;
    const REMOVE_MISSING: Option<&'static str> = REMOVE_MISSING;
    const REWRITES_OTHERS: bool = true;
    const SHOW: Spelling = user_scope_spelling!("gemini");
    const REMOVE: &'static [&'static str] = REMOVE;
    const ADD_ARGS: AddArgs = add_args;

    fn entries(&self, config: &Path) -> Result<Map<String, Value>, ClientError> {
        self.strayed(config)?;
        read_user_entries(config)
    }

    guard_refusing_expansion!("gemini", PASSED);

    /// The call, with a witness of the other settings files an old version could write:
    /// whatever the call's outcome, a write elsewhere is what counts.
    fn run(
        &self,
        runner: &Runner,
        config: &Path,
        args: &[&str],
        shown: &str,
    ) -> Result<crate::process::Output, ClientError> {
        self.strayed(config)?;
        let witness = Witness::before(&self.others);
        let out = runner.call_raw(args, shown);
        let wrote = witness.changed();
        if !wrote.is_empty() {
            *self.strayed.lock().unwrap_or_else(|e| e.into_inner()) = wrote;
            self.strayed(config)?;
        }
        out
    }
}

/// Where gemini keeps its user settings for this environment
/// (`$GEMINI_CLI_HOME/.gemini/settings.json`, else `~/.gemini/settings.json`), found without
/// the gemini binary, for a read-only look.
pub(crate) fn config_path() -> PathBuf {
    resolve_home(
        None,
        crate::dirs::var_raw("GEMINI_CLI_HOME"),
        crate::dirs::home(),
    )
    .join(".gemini")
    .join("settings.json")
}

/// Where a same-name entry shadows the user entry `name` of `config`, read-only (no gemini
/// binary needed): the rule of `Gemini::shadows`.
pub(crate) fn shadows_in(config: &Path, name: &str) -> Result<Vec<String>, ClientError> {
    let mut found = Vec::new();
    let mut candidates = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        let f = cwd.join(".gemini").join("settings.json");
        if f != *config {
            candidates.push(("workspace settings", f));
        }
    }
    let system = std::env::var_os("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"));
    candidates.push(("system settings", system));
    for (what, file) in candidates {
        let read = read_user_entries(&file);
        super::kit::shadows::note(&mut found, what, &file, read, name, "gemini");
    }
    Ok(found)
}

fn resolve_home(
    explicit: Option<&Path>,
    gemini_cli_home: Option<OsString>,
    home: PathBuf,
) -> PathBuf {
    if let Some(dir) = explicit {
        return dir.to_path_buf();
    }
    gemini_cli_home
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or(home)
}

/// The argv of `gemini mcp add` for `entry`, and the values to keep out of error messages; or
/// why gemini would store something else.
fn add_args(name: &str, entry: &Entry) -> Result<(Vec<String>, Vec<String>), ClientError> {
    add_args_for("gemini", true, name, entry)
}

/// [`add_args`] for `client`, a fork of gemini with the same `mcp add` parser (Qwen Code),
/// which may keep an env value's `=` (`cuts_at_eq` false).
pub(crate) fn add_args_for(
    client: &'static str,
    cuts_at_eq: bool,
    name: &str,
    entry: &Entry,
) -> Result<(Vec<String>, Vec<String>), ClientError> {
    let refuse = |reason: String| ClientError::Unrepresentable {
        client,
        name: name.to_string(),
        reason,
    };
    if name.starts_with('-') {
        return Err(refuse(
            "a name starting with \"-\" reads as an option".into(),
        ));
    }
    let mut args: Vec<String> = ["mcp", "add", "-s", "user"].map(String::from).to_vec();
    let mut secrets = Vec::new();
    match &entry.transport {
        Transport::Stdio { command, args: a } => {
            only_keys(&entry.raw, &["type", "command", "args", "env"])
                .map_err(|e| refuse(e.to_string()))?;
            if command.starts_with('-') {
                return Err(refuse(
                    "a command starting with \"-\" reads as an option".into(),
                ));
            }
            for (k, v) in string_map(&entry.raw, "env") {
                if !is_var_name(&k) {
                    return Err(refuse(format!(
                        "env key {k:?} is not a plain variable name, which `-e KEY=VALUE` needs"
                    )));
                }
                if v.is_empty() {
                    return Err(refuse(format!(
                        "env {k:?} has an empty value, which {client} drops"
                    )));
                }
                if cuts_at_eq && v.contains('=') {
                    return Err(refuse(format!(
                        "env {k:?} has a value containing \"=\", which {client} cuts at its \
                         first \"=\""
                    )));
                }
                args.push("-e".into());
                args.push(format!("{k}={v}"));
                secrets.push(v);
            }
            for (i, arg) in a.iter().enumerate() {
                if looks_numeric(arg) {
                    return Err(refuse(format!(
                        "argument {} ({arg:?}) looks like a number, and {client}'s argument \
                         parser would store it rewritten",
                        i + 1
                    )));
                }
            }
            args.push(name.to_string());
            args.push(command.clone());
            args.push("--".into());
            args.extend(a.iter().cloned());
        }
        Transport::Remote { kind, url } => {
            if kind != "http" && kind != "sse" {
                return Err(refuse(format!("{client} knows no transport {kind:?}")));
            }
            only_keys(&entry.raw, &["type", "url", "headers"])
                .map_err(|e| refuse(e.to_string()))?;
            args.push("-t".into());
            args.push(kind.clone());
            for (k, v) in string_map(&entry.raw, "headers") {
                if k.is_empty() || k.contains(':') || k.trim() != k {
                    return Err(refuse(format!(
                        "header name {k:?} would not survive {client}'s `-H \"Name: value\"`"
                    )));
                }
                if v.is_empty() || v.trim() != v {
                    return Err(refuse(format!(
                        "header {k:?} has an empty value or one with surrounding spaces, which \
                         {client} drops or trims"
                    )));
                }
                args.push("-H".into());
                args.push(format!("{k}: {v}"));
                secrets.push(v);
            }
            args.push(name.to_string());
            args.push(url.clone());
        }
    }
    Ok((args, secrets))
}

fn is_var_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether gemini's argument parser (yargs, which parses numbers even after `--`) may store
/// `arg` differently. Plain integers come back as given, and so does anything with a leading
/// zero; anything else number-like (`1.50`, `1e3`, `0x10`, `.5`, `-0`, `-007`) is refused,
/// even where yargs would keep it (`1e400`): the file is compared after `add` anyway.
fn looks_numeric(arg: &str) -> bool {
    let digits = arg.strip_prefix('-').unwrap_or(arg);
    let canonical_int = (digits == "0" && !arg.starts_with('-'))
        || (!digits.is_empty()
            && digits.len() <= 15
            && !digits.starts_with('0')
            && digits.bytes().all(|b| b.is_ascii_digit()));
    if canonical_int {
        return false;
    }
    let lower = arg.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        return !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    // yargs leaves a leading zero alone (`007`), but not after a sign (`-007`).
    if arg.len() > 1 && arg.starts_with('0') && !arg[1..].starts_with('.') {
        return false;
    }
    // `-?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?`
    let s = lower.strip_prefix('-').unwrap_or(&lower);
    let (mantissa, exp) = match s.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (s, None),
    };
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    });
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let all_digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = all_digits(int)
        && frac.is_none_or(all_digits)
        && (!int.is_empty() || frac.is_some_and(|f| !f.is_empty()));
    exp_ok && mantissa_ok
}

/// Refuse a mutating call of `client` (gemini, or qwen, its fork), which rewrites every
/// user-scope server of `config` when it saves, expanding the references of `entries` to the
/// variables it runs with (`passed`) and every `${VAR:-default}`.
pub(crate) fn refuse_expanding(
    client: &'static str,
    passed: &[&str],
    config: &Path,
    name: &str,
    entries: &Map<String, Value>,
) -> Result<(), ClientError> {
    let vars: BTreeSet<String> = passed.iter().map(|s| s.to_string()).collect();
    let hit: Vec<&str> = entries
        .iter()
        .filter(|(_, v)| would_expand(v, &vars))
        .map(|(k, _)| k.as_str())
        .collect();
    if hit.is_empty() {
        return Ok(());
    }
    Err(ClientError::Unrepresentable {
        client,
        name: name.to_string(),
        reason: format!(
            "{client} rewrites every user-scope server when it saves, expanding $VAR \
             references, and {} holds references it would expand (in {}: a variable it \
             runs with, {}, or a ${{VAR:-default}}); change those first",
            config.display(),
            hit.join(", "),
            passed.join(", ")
        ),
    })
}

/// Whether gemini's `$VAR` expansion (`$NAME`, `${NAME}`, `${NAME:-default}`) would change a
/// string anywhere in `v`, given the variables it can see.
pub(crate) fn would_expand(v: &Value, vars: &BTreeSet<String>) -> bool {
    match v {
        Value::String(s) => string_would_expand(s, vars),
        Value::Array(a) => a.iter().any(|x| would_expand(x, vars)),
        Value::Object(o) => o.values().any(|x| would_expand(x, vars)),
        _ => false,
    }
}

fn string_would_expand(s: &str, vars: &BTreeSet<String>) -> bool {
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        rest = &rest[i + 1..];
        if let Some(inner) = rest.strip_prefix('{') {
            let Some(end) = inner.find('}') else { continue };
            let body = &inner[..end];
            if body.is_empty() {
                continue;
            }
            match body.split_once(":-") {
                // Either the variable or the default replaces it.
                Some((name, _)) if !name.is_empty() => return true,
                Some(_) => {}
                None if vars.contains(body) => return true,
                None => {}
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && vars.contains(&name) {
                return true;
            }
        }
    }
    false
}

/// Read `mcpServers` of a gemini settings file (JSON with comments), each entry in the claude
/// shape. A missing file has no entries.
pub(crate) fn read_user_entries(path: &Path) -> Result<Map<String, Value>, ClientError> {
    read_servers(path, to_claude_shape)
}

/// Read `mcpServers` of a settings file in gemini's format (gemini's, and qwen's, its fork),
/// each entry through `shape` into the claude shape. A missing file has no entries.
pub(crate) fn read_servers(
    path: &Path,
    shape: fn(Map<String, Value>) -> Map<String, Value>,
) -> Result<Map<String, Value>, ClientError> {
    let Some(doc) = read_settings(path)? else {
        return Ok(Map::new());
    };
    let servers = match doc.get("mcpServers") {
        None => return Ok(Map::new()),
        Some(Value::Object(m)) => m,
        Some(_) => {
            return Err(ClientError::Config {
                path: path.to_path_buf(),
                reason: "\"mcpServers\" is not an object".into(),
            })
        }
    };
    Ok(servers
        .iter()
        .map(|(k, v)| {
            let shaped = match v {
                Value::Object(m) => Value::Object(shape(m.clone())),
                other => other.clone(),
            };
            (k.clone(), shaped)
        })
        .collect())
}

/// A gemini settings file (JSON with comments) as a JSON value; `None` when it is missing.
pub(crate) fn read_settings(path: &Path) -> Result<Option<Value>, ClientError> {
    let bad = |reason: String| ClientError::Config {
        path: path.to_path_buf(),
        reason,
    };
    let Some(text) = super::read_config_text(path)? else {
        return Ok(None);
    };
    // JSON with `//` and `/* */` comments, as gemini reads its settings (npm's
    // strip-json-comments): json_comments turns each comment into spaces, so line numbers in
    // serde's errors stay right. It refuses only what is not JSON anyway (an unclosed string
    // or comment, a `/` that starts none); no message quotes the text, which may hold a secret.
    use std::io::Read;
    let mut plain = String::with_capacity(text.len());
    json_comments::CommentSettings::c_style()
        .strip_comments(text.as_bytes())
        .read_to_string(&mut plain)
        .map_err(|_| {
            bad(
                "not valid JSON: a string or comment is not closed, or a `/` starts no comment"
                    .into(),
            )
        })?;
    serde_json::from_str(&plain)
        .map(Some)
        .map_err(|e| bad(format!("not valid JSON at line {}", e.line())))
}

/// `httpUrl` (gemini's older spelling of a streamable HTTP server) becomes `type: http`,
/// `url`; everything else is already in the claude shape and kept as it is.
fn to_claude_shape(mut m: Map<String, Value>) -> Map<String, Value> {
    if !m.contains_key("url") && !m.contains_key("type") {
        if let Some(url @ Value::String(_)) = m.remove("httpUrl") {
            let mut out = Map::new();
            out.insert("type".into(), "http".into());
            out.insert("url".into(), url);
            out.extend(m);
            return out;
        }
    }
    m
}

/// Gemini CLI, as the client list knows it ([`super::CLIENTS`]): everything mcp-deploy knows of
/// it, found in this folder.
pub(crate) struct GeminiKind;

static ABOUT: super::table::About =
    // 0.6.1 to 0.8.2 cannot remove an entry (docs/clients.md, Gemini versions).
    super::table::about!(cli gemini "Gemini CLI" MCP_DEPLOY_GEMINI,
    npm ["@google/gemini-cli"] (0, 10, 0) ..= (0, 61, 0));

super::table::folder_kind!(GeminiKind, about: ABOUT, layers: layers::read, opens: open,
    policy: policy::Policy, load_layers: layers::load);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::tests::{assert_refused, entry};
    use serde_json::json;

    #[test]
    fn home_is_explicit_then_gemini_cli_home_then_home() {
        let h = |e: Option<&str>, g: Option<&str>| {
            resolve_home(e.map(Path::new), g.map(Into::into), "/h".into())
        };
        assert_eq!(h(Some("/e"), Some("/g")), PathBuf::from("/e"));
        assert_eq!(h(None, Some("/g")), PathBuf::from("/g"));
        assert_eq!(h(None, Some("")), PathBuf::from("/h"));
    }

    #[test]
    fn numbers_yargs_would_rewrite_are_spotted() {
        for rewritten in [
            "1.50", "1e3", "0x10", ".5", "-0", "1.", "-007", "1E5", "-1.0", "0.50",
        ] {
            assert!(looks_numeric(rewritten), "{rewritten}");
        }
        for kept in [
            "0", "10", "-5", "serve", "--flag=1", "1_000", "1.2.3", "v1", "", "-", "e5", "x1e3",
            "00", "007",
        ] {
            assert!(!looks_numeric(kept), "{kept}");
        }
    }

    #[test]
    fn add_arguments_and_refusals() {
        let (args, secrets) = add_args(
            "ct",
            &entry(json!({"command":"/x","args":["a b","--scope","10"],"env":{"T":"${T}"}})),
        )
        .unwrap();
        assert_eq!(
            args,
            [
                "mcp", "add", "-s", "user", "-e", "T=${T}", "ct", "/x", "--", "a b", "--scope",
                "10"
            ]
        );
        assert_eq!(secrets, ["${T}"]);
        let (args, _) = add_args(
            "h",
            &entry(json!({"type":"http","url":"http://h/mcp","headers":{"X-K":"v: w"}})),
        )
        .unwrap();
        assert_eq!(
            args,
            [
                "mcp",
                "add",
                "-s",
                "user",
                "-t",
                "http",
                "-H",
                "X-K: v: w",
                "h",
                "http://h/mcp"
            ]
        );
        assert_refused(
            |e| add_args("n", e),
            [
                (
                    json!({"command":"/x","env":{"TOKEN":"hunter2=x"}}),
                    "env \"TOKEN\" has a value containing \"=\"",
                ),
                (json!({"command":"/x","env":{"TOKEN":""}}), "empty value"),
                (
                    json!({"command":"/x","env":{"A-B":"hunter2"}}),
                    "env key \"A-B\"",
                ),
                (
                    json!({"command":"/x","args":["1.50"]}),
                    "argument 1 (\"1.50\")",
                ),
                (json!({"command":"-x"}), "reads as an option"),
                (json!({"command":"/x","trust":true}), "key \"trust\""),
                (
                    json!({"type":"http","url":"u","headers":{"K":" hunter2"}}),
                    "header \"K\"",
                ),
            ],
        );
    }

    #[test]
    fn expansion_that_gemini_would_write_back_is_spotted() {
        let vars: BTreeSet<String> = ["PATH", "SECRET"].map(String::from).into();
        for hit in ["$PATH", "x${PATH}y", "${UNSET:-d}", "$SECRET/x", "a $PATH"] {
            assert!(string_would_expand(hit, &vars), "{hit}");
        }
        for miss in [
            "${TOKEN}", "$TOKEN", "$", "${}", "${PATH", "price $5", "$PATHX",
        ] {
            assert!(!string_would_expand(miss, &vars), "{miss}");
        }
        assert!(would_expand(&json!({"env":{"A":"${SECRET}"}}), &vars));
    }

    #[test]
    fn settings_are_read_with_comments_and_old_spellings() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        assert!(read_user_entries(&p).unwrap().is_empty());
        std::fs::write(
            &p,
            "{\n // a comment with \"quotes\"\n \"mcpServers\": { /* block\n */\n  \"s\": {\"command\": \"/x\", \"args\": [\"//not a comment\", \"a\\\"/*\"]},\n  \"h\": {\"httpUrl\": \"http://h/mcp\", \"headers\": {\"K\": \"v\"}}\n }\n}\n",
        )
        .unwrap();
        let m = read_user_entries(&p).unwrap();
        assert_eq!(
            m["s"],
            json!({"command":"/x","args":["//not a comment","a\"/*"]})
        );
        assert_eq!(
            m["h"],
            json!({"type":"http","url":"http://h/mcp","headers":{"K":"v"}})
        );
        std::fs::write(
            &p,
            "{\n\"mcpServers\": {\"s\": {\"env\": {\"T\": \"hunter2\"}}\n",
        )
        .unwrap();
        let err = read_user_entries(&p).unwrap_err().to_string();
        assert!(err.contains("not valid JSON at line"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        std::fs::write(&p, "{\"mcpServers\": {} /* hunter2 \n").unwrap();
        let err = read_user_entries(&p).unwrap_err().to_string();
        assert!(err.contains("not valid JSON"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
}
