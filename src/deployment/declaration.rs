//! The server declaration: which MCP servers exist, where each is deployed, how its release
//! is laid out, and the template its registration is rendered from.
//!
//! Servers are data. The built-in declaration (`templates/servers.json`, embedded with its
//! templates) names `codetools` and `orchestrata`; `--config FILE` replaces it with any other
//! set, whose `template` paths are read relative to the file. A declaration file is JSON:
//!
//! ```json
//! {"servers": [{"name": "codetools", "prefix": "/opt/codetools", "layout": "release",
//!               "template": "codetools.mcp.json"}]}
//! ```
//! A server may give its entry inline instead of a template file:
//! `"entry": {"command": "{{prefix}}/bin/tool", "args": []}`.
//! `"trusted_signers": "builders.allowed_signers"` names the server's trust policy (an OpenSSH
//! `allowed_signers` file, read relative to the declaration file like a template): its
//! releases must then be signed by a builder it allows (the `signature` check).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::fsio;

const BUILTIN_DECLARATION: &str = include_str!("../../templates/servers.json");
const BUILTIN_TEMPLATES: &[(&str, &str)] = &[
    (
        "codetools.mcp.json",
        include_str!("../../templates/codetools.mcp.json"),
    ),
    (
        "orchestrata.mcp.json",
        include_str!("../../templates/orchestrata.mcp.json"),
    ),
];

/// How a deployed server is laid out, which decides its containment root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Layout {
    /// `releases/<sha>/`, `current -> releases/<sha>`; the containment root is `current`.
    Release,
    /// A wheel/venv-style prefix with its own `VERSION`; the containment root is the prefix.
    Prefix,
}

/// How a client starts a declared server (`launch`): the declared command itself, or
/// `mcp-deploy exec`, which checks the release at every start (docs/commands.md#exec).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Launch {
    /// The declared command, by its stable path inside the release.
    #[default]
    Direct,
    /// `mcp-deploy exec`, which checks the pinned release, hashes the file it starts and
    /// pins the environment at every start.
    Checked,
}

/// One declared server.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    pub(crate) name: String,
    /// The declared prefix, used when neither `--prefix` is given.
    pub(crate) prefix: PathBuf,
    pub(crate) layout: Layout,
    /// The template document, parsed; placeholders are still in it.
    pub(crate) template: Value,
    /// The server's own trust policy (`trusted_signers`), resolved against the declaration
    /// file's directory.
    pub(crate) trusted_signers: Option<PathBuf>,
    /// The server's own builder trust policy (`trusted_builder`, TOML) and the Sigstore
    /// trusted root its provenance must chain to (`trusted_root`), resolved likewise.
    pub(crate) trusted_builder: Option<PathBuf>,
    pub(crate) trusted_root: Option<PathBuf>,
    /// The inherited variables a checked launch passes on besides its allowlist
    /// (`inherit_env`; [`crate::launch::env`]).
    pub(crate) inherit_env: Vec<String>,
    /// How a client starts it.
    pub(crate) launch: Launch,
    /// The declaration file it came from (absolute), `None` for the built-in one: a checked
    /// launch names it, so that `exec` reads the same declaration.
    pub(crate) declared_in: Option<PathBuf>,
    /// The template file its entry was read from, resolved against the declaration file's
    /// directory; `None` for an inline `entry` or the built-in declaration.
    pub(crate) template_file: Option<PathBuf>,
}

impl Server {
    /// The files this server's declaration was read from — the declaration file, its
    /// template, its trust policy — each one whoever can rewrite decides what a checked launch
    /// starts: each must be replaceable only by one of `owners` (root, the deploying user),
    /// along its whole path. `Err`: the first that is not, and why.
    pub(crate) fn sources_guarded(&self, owners: &[u32]) -> Result<(), String> {
        let files = [
            &self.declared_in,
            &self.template_file,
            &self.trusted_signers,
            &self.trusted_builder,
            &self.trusted_root,
        ];
        for file in files.into_iter().flatten() {
            fsio::only_owners_can_replace(file, owners)?;
        }
        Ok(())
    }
}

/// Where a declaration comes from, and what the command line sets over it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Source<'a> {
    /// `--config FILE`; `None`: the built-in declaration.
    pub(crate) file: Option<&'a Path>,
    /// `--launch`: every server's launch, over the declaration's `launch` keys.
    pub(crate) launch: Option<Launch>,
}

impl<'a> Source<'a> {
    /// The declaration in `file` (else the built-in one), as declared.
    pub(crate) fn file(file: Option<&'a Path>) -> Source<'a> {
        Source { file, launch: None }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Declaration {
    pub(crate) servers: Vec<Server>,
    /// Where it came from, for messages: `built-in` or the file's path.
    pub(crate) source: String,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum DeclarationError {
    #[error(transparent)]
    Io(#[from] fsio::IoError),
    #[error("{source_name} is not a valid server declaration: {reason}")]
    Malformed { source_name: String, reason: String },
    #[error("template {template} of server {server} is not valid JSON: {reason}")]
    BadTemplate {
        server: String,
        template: String,
        reason: String,
    },
    #[error("no server named {name:?} is declared in {source_name} (declared: {declared})")]
    UnknownServer {
        name: String,
        source_name: String,
        declared: String,
    },
}

/// Why a name is not one every client accepts.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum NameError {
    #[error("a name has 1 to 64 characters")]
    Length,
    #[error("a name may not start with '-'")]
    LeadingDash,
    #[error("{0:?} is not allowed: use letters, digits, '-' and '_'")]
    Character(char),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDeclaration {
    servers: Vec<RawServer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    name: String,
    prefix: PathBuf,
    layout: Layout,
    template: Option<PathBuf>,
    entry: Option<Value>,
    trusted_signers: Option<PathBuf>,
    trusted_builder: Option<PathBuf>,
    trusted_root: Option<PathBuf>,
    #[serde(default)]
    inherit_env: Vec<String>,
    #[serde(default)]
    launch: Launch,
}

impl Declaration {
    /// The embedded declaration of `codetools` and `orchestrata`.
    pub(crate) fn builtin() -> Declaration {
        let mut decl = Self::parse(BUILTIN_DECLARATION, "built-in declaration", |name| {
            BUILTIN_TEMPLATES
                .iter()
                .find(|(n, _)| Path::new(n) == name)
                .map(|(_, text)| text.to_string())
                .ok_or_else(|| fsio::IoError {
                    action: "read the built-in template",
                    path: name.to_path_buf(),
                    source: std::io::ErrorKind::NotFound.into(),
                })
        })
        .expect("the built-in declaration is valid (tested)");
        // Its templates are in the binary, not files.
        for s in &mut decl.servers {
            s.template_file = None;
        }
        decl
    }

    /// The built-in declaration, or the one in the source's file when given; with the
    /// source's `--launch` for every server when given.
    pub(crate) fn load(source: Source) -> Result<Declaration, DeclarationError> {
        let mut decl = Self::load_file(source.file)?;
        if let Some(launch) = source.launch {
            for s in &mut decl.servers {
                s.launch = launch;
            }
        }
        Ok(decl)
    }

    fn load_file(file: Option<&Path>) -> Result<Declaration, DeclarationError> {
        let Some(file) = file else {
            return Ok(Self::builtin());
        };
        let text = fsio::read_input_string(file, "declaration", fsio::limits::DOCUMENT)?;
        let base = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        let mut decl = Self::parse(&text, &file.display().to_string(), |name| {
            let path = base.join(name);
            fsio::read_input_string(&path, "template", fsio::limits::DOCUMENT)
        })?;
        // Like a template, a relative trust policy is the declaration's neighbour, wherever
        // the command runs from.
        let declared_in = std::fs::canonicalize(file).ok();
        for s in &mut decl.servers {
            for p in [
                &mut s.trusted_signers,
                &mut s.trusted_builder,
                &mut s.trusted_root,
            ]
            .into_iter()
            .flatten()
            {
                *p = base.join(&*p);
            }
            if let Some(p) = &mut s.template_file {
                *p = base.join(&*p);
            }
            s.declared_in.clone_from(&declared_in);
        }
        Ok(decl)
    }

    fn parse(
        text: &str,
        source_name: &str,
        read_template: impl Fn(&Path) -> Result<String, fsio::IoError>,
    ) -> Result<Declaration, DeclarationError> {
        let malformed = |reason: String| DeclarationError::Malformed {
            source_name: source_name.to_string(),
            reason,
        };
        let raw: RawDeclaration =
            serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
        if raw.servers.is_empty() {
            return Err(malformed("it declares no server".into()));
        }
        let mut seen = BTreeSet::new();
        let mut servers = Vec::new();
        for s in raw.servers {
            validate_name(&s.name).map_err(|r| malformed(format!("server {:?}: {r}", s.name)))?;
            if !seen.insert(s.name.clone()) {
                return Err(malformed(format!("server {:?} is declared twice", s.name)));
            }
            if !s.prefix.is_absolute() || has_dot_components(&s.prefix) {
                return Err(malformed(format!(
                    "server {:?}: prefix {} must be absolute, without . or ..",
                    s.name,
                    s.prefix.display()
                )));
            }
            let template_file = s.template.clone();
            let template = match (s.template, s.entry) {
                (Some(t), None) => {
                    let text = read_template(&t).map_err(|e| malformed(e.to_string()))?;
                    serde_json::from_str(&text).map_err(|e| DeclarationError::BadTemplate {
                        server: s.name.clone(),
                        template: t.display().to_string(),
                        reason: e.to_string(),
                    })?
                }
                (None, Some(entry)) => {
                    serde_json::json!({ "mcpServers": { "{{name}}": entry } })
                }
                _ => {
                    return Err(malformed(format!(
                        "server {:?} needs exactly one of \"template\" or \"entry\"",
                        s.name
                    )))
                }
            };
            for (key, path) in [
                ("trusted_signers", &s.trusted_signers),
                ("trusted_builder", &s.trusted_builder),
                ("trusted_root", &s.trusted_root),
            ] {
                if path.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
                    return Err(malformed(format!(
                        "server {:?}: {key} is an empty path",
                        s.name
                    )));
                }
            }
            if s.trusted_root.is_some() && s.trusted_builder.is_none() {
                return Err(malformed(format!(
                    "server {:?}: trusted_root without trusted_builder (a trusted root verifies \
                     provenance, which only a builder policy asks for)",
                    s.name
                )));
            }
            if let Some(bad) = s
                .inherit_env
                .iter()
                .find(|n| n.is_empty() || n.contains('=') || n.contains('\0'))
            {
                return Err(malformed(format!(
                    "server {:?}: inherit_env holds {bad:?}, not a variable name",
                    s.name
                )));
            }
            servers.push(Server {
                name: s.name,
                prefix: s.prefix,
                layout: s.layout,
                template,
                trusted_signers: s.trusted_signers,
                trusted_builder: s.trusted_builder,
                trusted_root: s.trusted_root,
                inherit_env: s.inherit_env,
                launch: s.launch,
                declared_in: None,
                template_file,
            });
        }
        Ok(Declaration {
            servers,
            source: source_name.to_string(),
        })
    }

    pub(crate) fn get(&self, name: &str) -> Result<&Server, DeclarationError> {
        self.servers.iter().find(|s| s.name == name).ok_or_else(|| {
            DeclarationError::UnknownServer {
                name: name.to_string(),
                source_name: self.source.clone(),
                declared: self.names().join(", "),
            }
        })
    }

    pub(crate) fn names(&self) -> Vec<&str> {
        self.servers.iter().map(|s| s.name.as_str()).collect()
    }
}

/// A server or registered name: what the clients accept (letters, digits, `-`, `_`), so that
/// a name is never an option, a path or a shell word.
pub(crate) fn validate_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() || name.len() > 64 {
        return Err(NameError::Length);
    }
    if name.starts_with('-') {
        return Err(NameError::LeadingDash);
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        Some(c) => Err(NameError::Character(c)),
        None => Ok(()),
    }
}

/// Whether a path holds `.` or `..` components, which make its meaning depend on symlinks.
pub(crate) fn has_dot_components(path: &Path) -> bool {
    path.components()
        .any(|c| matches!(c, Component::CurDir | Component::ParentDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_declares_codetools_and_orchestrata() {
        let d = Declaration::builtin();
        assert_eq!(d.names(), vec!["codetools", "orchestrata"]);
        let ct = d.get("codetools").unwrap();
        assert_eq!(ct.layout, Layout::Release);
        assert_eq!(ct.prefix, Path::new("/opt/codetools"));
        assert_eq!(d.get("orchestrata").unwrap().layout, Layout::Prefix);
        let err = d.get("nope").unwrap_err().to_string();
        assert!(err.contains("codetools, orchestrata"), "{err}");
    }

    #[test]
    fn config_file_with_inline_entry_and_relative_template() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("t.json"),
            r#"{"mcpServers":{"{{name}}":{"command":"{{prefix}}/x","args":[]}}}"#,
        )
        .unwrap();
        let file = dir.path().join("servers.json");
        std::fs::write(
            &file,
            r#"{"servers":[
                {"name":"a","prefix":"/srv/a","layout":"prefix","template":"t.json"},
                {"name":"b","prefix":"/srv/b","layout":"release","entry":{"command":"{{prefix}}/b"}}]}"#,
        )
        .unwrap();
        let d = Declaration::load(Source::file(Some(&file))).unwrap();
        assert_eq!(d.names(), vec!["a", "b"]);
        assert_eq!(
            d.get("b").unwrap().template["mcpServers"]["{{name}}"]["command"],
            "{{prefix}}/b"
        );
    }

    #[test]
    fn malformed_declarations_are_refused_with_the_reason() {
        let cases = [
            (r#"{"servers":[]}"#, "declares no server"),
            (
                r#"{"servers":[{"name":"a b","prefix":"/x","layout":"prefix","entry":{}}]}"#,
                "not allowed",
            ),
            (
                r#"{"servers":[{"name":"a","prefix":"x","layout":"prefix","entry":{}}]}"#,
                "must be absolute",
            ),
            (
                r#"{"servers":[{"name":"a","prefix":"/x/../y","layout":"prefix","entry":{}}]}"#,
                "must be absolute",
            ),
            (
                r#"{"servers":[{"name":"a","prefix":"/x","layout":"prefix"}]}"#,
                "exactly one of",
            ),
            (
                r#"{"servers":[{"name":"a","prefix":"/x","layout":"weird","entry":{}}]}"#,
                "unknown variant",
            ),
            (
                r#"{"servers":[{"name":"a","prefix":"/x","layout":"prefix","entry":{}},{"name":"a","prefix":"/y","layout":"prefix","entry":{}}]}"#,
                "declared twice",
            ),
        ];
        for (text, want) in cases {
            let err = Declaration::parse(text, "test.json", |p| {
                Err(fsio::IoError {
                    action: "read",
                    path: p.to_path_buf(),
                    source: std::io::ErrorKind::NotFound.into(),
                })
            })
            .unwrap_err()
            .to_string();
            assert!(
                err.contains(want) && err.contains("test.json"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn names_are_client_safe() {
        assert!(validate_name("codetools-test").is_ok());
        assert!(validate_name("a_b9").is_ok());
        for bad in ["", "-x", "a b", "a/b", "a;b", "ä", &"x".repeat(65)] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
    }
}
