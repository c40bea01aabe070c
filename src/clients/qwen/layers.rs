//! The layers qwen applies to a user-scope entry ([`crate::clients::layers`]), read from Qwen
//! Code 0.24.4's bundle (`packages/cli/src/config/settings.ts` `mergeSettings`, the schema's
//! `mcp.allowed` / `mcp.excluded`, `packages/core/src/config/config.ts`
//! `matchesServerPattern`):
//!
//! - **Settings files**: system defaults (`$QWEN_CODE_SYSTEM_DEFAULTS_PATH`, else
//!   `system-defaults.json` beside the system file), user, the working directory's
//!   `.qwen/settings.json` (not when it is the home directory), and system
//!   (`$QWEN_CODE_SYSTEM_SETTINGS_PATH`, else `/etc/qwen-code/settings.json`).
//! - **`mcp.excluded`** of every file, concatenated (the schema's `concat` merge): a pattern
//!   that matches the name blocks the server. **`mcp.allowed`**, concatenated: when any file
//!   has one, a name no pattern matches is blocked. A pattern with `*` or `?` is a glob,
//!   anything else matches the name exactly (case-sensitive).
//! - A settings file that is not JSON with comments, or not an object, makes qwen refuse to
//!   start (`Blocked`), but for the workspace's, which it resets to `{}` (pinned with 0.24.4).
//!   One that exists and cannot be read is `NotCompared`.
//!
//! Not read yet (docs/clients.md says so): the `.env` files qwen loads into the servers it
//! starts, and the folder trust that decides whether the workspace file counts (it is read
//! as if trusted, which fails rather than passes).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::clients::layers::{Context, Effect, Finding};

pub(crate) fn read(cx: &Context) -> Vec<Finding> {
    load(cx.user_config).findings_of(cx.name)
}

/// qwen's settings files of this host, read once for a run ([`Files`]).
pub(crate) fn load(user_config: &Path) -> Files {
    let home = user_config
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("/"));
    let cwd = std::env::current_dir().ok();
    let system = super::system_settings();
    let defaults = crate::dirs::var("QWEN_CODE_SYSTEM_DEFAULTS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            system
                .parent()
                .unwrap_or(Path::new("/"))
                .join("system-defaults.json")
        });
    let mut files = vec![
        ("system defaults", defaults),
        ("user settings", user_config.to_path_buf()),
    ];
    if let Some(cwd) = cwd.filter(|c| !same_dir(c, home)) {
        files.push((
            "workspace settings",
            cwd.join(".qwen").join("settings.json"),
        ));
    }
    files.push(("system settings", system));
    Files::read(&files)
}

/// qwen's settings files read once: what each does whatever the name, and its lists, from
/// which each name's findings come ([`Files::findings_of`]) — before, each name re-read and
/// re-parsed every file, quadratic in the servers (2 000 servers in settings.json: 2.5 s for
/// `--only-deployed`, measured).
pub(crate) struct Files {
    read: Vec<Read>,
}

/// One settings file as read.
enum Read {
    /// What it does to every server (refused, or not readable).
    Whole(Finding),
    /// Its `mcp.excluded` and `mcp.allowed`.
    Lists(Vec<List>),
}

/// One list of a file: its key, its source as a report names it, and its patterns (`Err`:
/// it is not a list).
struct List {
    key: &'static str,
    source: String,
    patterns: Result<Vec<String>, ()>,
}

impl Files {
    fn read(files: &[(&str, PathBuf)]) -> Files {
        let mut read = Vec::new();
        for (what, file) in files {
            let source = format!("{what} {}", file.display());
            match crate::clients::read_config_text(file) {
                Ok(None) => continue,
                Ok(Some(_)) => {}
                Err(e) => {
                    read.push(Read::Whole(Finding::new(
                        source,
                        Effect::not_compared(e.to_string()),
                    )));
                    continue;
                }
            }
            // Read, so what fails now is its content: qwen resets a workspace file it cannot
            // parse (to `{}`, keeping a `.corrupted` copy) and refuses to start with any other.
            let refused = |why: String| {
                Effect::Blocked(format!(
                    "qwen refuses to start with this file ({why}): it loads no server at all"
                ))
            };
            let doc = match crate::clients::gemini::read_settings(file) {
                Ok(None) => continue,
                Ok(Some(Value::Object(doc))) => doc,
                Err(_) | Ok(Some(_)) if *what == "workspace settings" => continue,
                Ok(Some(_)) => {
                    read.push(Read::Whole(Finding::new(
                        source,
                        refused("not a JSON object".into()),
                    )));
                    continue;
                }
                Err(e) => {
                    read.push(Read::Whole(Finding::new(source, refused(e.to_string()))));
                    continue;
                }
            };
            let mcp = doc.get("mcp");
            let mut lists = Vec::new();
            for key in ["excluded", "allowed"] {
                let Some(list) = mcp.and_then(|m| m.get(key)) else {
                    continue;
                };
                let source = format!("{} mcp.{key}", file.display());
                let patterns = match list {
                    Value::Array(items) => Ok(items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()),
                    _ => Err(()),
                };
                lists.push(List {
                    key,
                    source,
                    patterns,
                });
            }
            read.push(Read::Lists(lists));
        }
        Files { read }
    }

    /// Every file's finding for the name `name`.
    pub(crate) fn findings_of(&self, name: &str) -> Vec<Finding> {
        let mut found = Vec::new();
        let mut allowed: Vec<(String, String)> = Vec::new();
        for r in &self.read {
            let lists = match r {
                Read::Whole(f) => {
                    found.push(f.clone());
                    continue;
                }
                Read::Lists(lists) => lists,
            };
            for List {
                key,
                source,
                patterns,
            } in lists
            {
                let Ok(patterns) = patterns else {
                    found.push(Finding::new(
                        source,
                        Effect::not_compared("it is not a list"),
                    ));
                    continue;
                };
                if *key == "excluded" {
                    if let Some(p) = patterns.iter().find(|p| matches(name, p)) {
                        found.push(Finding::new(
                            source,
                            Effect::Blocked(format!(
                                "mcp.excluded holds {p:?}, which matches {name}"
                            )),
                        ));
                    }
                } else {
                    allowed.extend(patterns.iter().map(|p| (source.clone(), p.clone())));
                    if patterns.is_empty() {
                        allowed.push((source.clone(), String::new()));
                    }
                }
            }
        }
        if !allowed.is_empty() && !allowed.iter().any(|(_, p)| matches(name, p)) {
            let mut sources: Vec<&str> = allowed.iter().map(|(s, _)| s.as_str()).collect();
            sources.dedup();
            found.push(Finding::new(
                sources.join(", "),
                Effect::Blocked(format!("mcp.allowed has no pattern that matches {name}")),
            ));
        }
        found
    }
}

impl crate::clients::layers::Loaded for Files {
    fn findings(&self, cx: &Context) -> Vec<Finding> {
        self.findings_of(cx.name)
    }
}

/// `matchesServerPattern`: `*` and `?` wildcards when the pattern has either, else the exact
/// name.
fn matches(name: &str, pattern: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return name == pattern;
    }
    let n: Vec<char> = name.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    let (mut ni, mut pi, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            ni += 1;
            pi += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            pi += 1;
            mark = ni;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Whether `a` and `b` are the same directory (qwen compares resolved paths).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_files(name: &str, files: &[(&str, PathBuf)]) -> Vec<Finding> {
        Files::read(files).findings_of(name)
    }

    #[test]
    fn patterns_match_as_qwen_matches_them() {
        assert!(matches("ct", "ct"));
        assert!(!matches("ct", "CT"));
        assert!(matches("codetools-test", "code*"));
        assert!(matches("ct", "c?"));
        assert!(!matches("ct", "c?x"));
        assert!(!matches("ct", ""));
    }

    #[test]
    fn lists_of_every_file_count() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        std::fs::write(&a, r#"{"mcp": {"allowed": ["other"]}} "#).unwrap();
        std::fs::write(
            &b,
            "{ // comment\n \"mcp\": {\"allowed\": [\"c*\"], \"excluded\": []}}",
        )
        .unwrap();
        let files = [("a", a.clone()), ("b", b.clone())];
        assert!(read_files("ct", &files).is_empty());
        let blocked = read_files("x", &files);
        assert_eq!(blocked.len(), 1, "{blocked:?}");
        assert!(matches!(blocked[0].effect, Effect::Blocked(_)));
        std::fs::write(&b, r#"{"mcp": {"excluded": ["c?"]}}"#).unwrap();
        let f = read_files("ct", &[("b", b.clone())]);
        assert!(matches!(f[0].effect, Effect::Blocked(_)), "{f:?}");
        std::fs::write(&b, "{not json").unwrap();
        let f = read_files("ct", &[("user settings", b.clone())]);
        assert!(matches!(f[0].effect, Effect::Blocked(_)), "{f:?}");
        assert!(read_files("ct", &[("workspace settings", b.clone())]).is_empty());
        std::fs::remove_file(&b).unwrap();
        std::fs::create_dir(&b).unwrap();
        let f = read_files("ct", &[("user settings", b)]);
        assert!(matches!(f[0].effect, Effect::NotCompared(_)), "{f:?}");
    }
}
