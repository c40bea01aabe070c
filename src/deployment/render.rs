//! Rendering a server's registration document from its template.
//!
//! Placeholders (`{{prefix}}`, `{{name}}`) are substituted inside the *parsed* template's
//! strings (keys and values), never by splicing text, so a prefix holding quotes, spaces,
//! backslashes or non-ASCII still yields valid JSON that says exactly that prefix. The result
//! must be `{"mcpServers":{"<name>":ENTRY}}` with one entry, a stdio entry (`command`, `args`)
//! or an http one (`type: http`, `url`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::deployment::declaration::{Launch, Layout, Server};
use crate::entry::{Entry, Transport};
use crate::fsio;

#[derive(Debug, thiserror::Error)]
pub(crate) enum RenderError {
    #[error("prefix {0} is not valid UTF-8, so it cannot be written into JSON")]
    NonUtf8Prefix(PathBuf),
    #[error("template of server {server} uses unknown placeholder {placeholder:?} (known: {{{{prefix}}}}, {{{{name}}}})")]
    UnknownPlaceholder { server: String, placeholder: String },
    #[error("template of server {server} does not render to {{\"mcpServers\":{{\"{server}\":{{...}}}}}}: {reason}")]
    Shape { server: String, reason: String },
    #[error("{prefix} holds no deployed {server}: {missing}")]
    NotDeployed {
        server: String,
        prefix: PathBuf,
        missing: String,
    },
    #[error("the template of server {server} puts a literal secret in {places}")]
    LiteralSecret { server: String, places: String },
    #[error(transparent)]
    Io(#[from] fsio::IoError),
}

impl RenderError {
    pub(crate) fn help(&self) -> Option<String> {
        match self {
            RenderError::NotDeployed { .. } => Some(
                "deploy a release there first, or pass the --prefix where the server is deployed"
                    .into(),
            ),
            RenderError::LiteralSecret { .. } => Some(
                "reference it instead, e.g. \"API_TOKEN\": \"${API_TOKEN}\" — the client fills it in \
                 from its environment when it starts the server"
                    .into(),
            ),
            RenderError::UnknownPlaceholder { .. } | RenderError::Shape { .. } => {
                Some("fix the template named in the server declaration".into())
            }
            // Every variant listed: a new one must decide on its help here.
            RenderError::NonUtf8Prefix(_) | RenderError::Io(_) => None,
        }
    }
}

/// A rendered registration: the whole document and its one entry.
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    pub(crate) server: String,
    pub(crate) document: Value,
    pub(crate) entry: Entry,
}

/// Where `render-mcp` writes a server's document: `<prefix>/mcp/<name>.mcp.json`.
pub(crate) fn rendered_path(prefix: &Path, server: &str) -> PathBuf {
    prefix.join("mcp").join(format!("{server}.mcp.json"))
}

/// Render `server`'s registration for `prefix`: its template, and under a checked launch
/// ([`Launch::Checked`]) the entry that starts it through `mcp-deploy exec` ([`checked`]).
pub(crate) fn render(server: &Server, prefix: &Path) -> Result<Rendered, RenderError> {
    let direct = render_direct(server, prefix)?;
    match (server.launch, &direct.entry.transport) {
        (Launch::Checked, Transport::Stdio { args, .. }) => {
            let entry = checked(server, prefix, args, &direct.entry)?;
            let mut document = direct.document.clone();
            document["mcpServers"][&server.name] = Value::Object(entry.raw.clone());
            Ok(Rendered {
                server: direct.server,
                document,
                entry,
            })
        }
        _ => Ok(direct),
    }
}

/// The launcher a checked launch registers: this binary, as the kernel names it (its links
/// resolved). A release binary installed by the Debian package is `/usr/bin/mcp-deploy`.
pub(crate) fn launcher() -> Result<PathBuf, RenderError> {
    std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| {
            RenderError::Io(crate::fsio::IoError::new(
                "cannot find",
                Path::new("/proc/self/exe"),
                e,
            ))
        })
}

/// How an entry with these arguments starts its server: a checked launch's arguments begin
/// `exec --prefix` ([`checked`]'s form).
pub(crate) fn launched_as(args: &[String]) -> Launch {
    match args {
        [exec, prefix, ..] if exec == "exec" && prefix == "--prefix" => Launch::Checked,
        _ => Launch::Direct,
    }
}

/// The entry of a checked launch of `server` at `prefix`: `LAUNCHER exec --prefix PREFIX
/// --server NAME [--config FILE] -- ARGS...`, the declared entry's other keys (its `env`)
/// kept.
fn checked(
    server: &Server,
    prefix: &Path,
    args: &[String],
    direct: &Entry,
) -> Result<Entry, RenderError> {
    let launcher = launcher()?;
    let text = |p: &Path| {
        p.to_str()
            .map(str::to_string)
            .ok_or_else(|| RenderError::NonUtf8Prefix(p.to_path_buf()))
    };
    let mut argv = vec![
        "exec".to_string(),
        "--prefix".into(),
        text(prefix)?,
        "--server".into(),
        server.name.clone(),
    ];
    if let Some(file) = &server.declared_in {
        argv.push("--config".into());
        argv.push(text(file)?);
    }
    argv.push("--".into());
    argv.extend(args.iter().cloned());
    let mut raw = direct.raw.clone();
    raw.insert("command".into(), Value::String(text(&launcher)?));
    raw.insert("args".into(), serde_json::json!(argv));
    Entry::from_value(&Value::Object(raw)).map_err(|r| RenderError::Shape {
        server: server.name.clone(),
        reason: r.to_string(),
    })
}

/// Render `server`'s template for `prefix`, as declared: the entry that starts the server
/// itself (what a checked launch checks and executes).
pub(crate) fn render_direct(server: &Server, prefix: &Path) -> Result<Rendered, RenderError> {
    let prefix_str = prefix
        .to_str()
        .ok_or_else(|| RenderError::NonUtf8Prefix(prefix.to_path_buf()))?;
    // `{{prefix}}/bin/x` must not become `//bin/x` when the prefix is `/` or ends in `/`.
    let prefix_str = match prefix_str.trim_end_matches('/') {
        "" => "/",
        p => p,
    };
    let document = substitute(&server.template, &|s| {
        fill(s, prefix_str, &server.name, &server.name)
    })?;
    let shape = |reason: &str| RenderError::Shape {
        server: server.name.clone(),
        reason: reason.to_string(),
    };
    let servers = document
        .get("mcpServers")
        .and_then(Value::as_object)
        .ok_or_else(|| shape("no \"mcpServers\" object"))?;
    if document.as_object().map(Map::len) != Some(1) || servers.len() != 1 {
        return Err(shape("it must hold exactly one server and nothing else"));
    }
    let raw = servers
        .get(&server.name)
        .ok_or_else(|| shape("the server key is not the server's name"))?;
    let entry = Entry::from_value(raw).map_err(|r| shape(&r.to_string()))?;
    let secrets = crate::entry::secrets::literal_secrets(&entry);
    if !secrets.is_empty() {
        return Err(RenderError::LiteralSecret {
            server: server.name.clone(),
            places: secrets.join(", "),
        });
    }
    Ok(Rendered {
        server: server.name.clone(),
        document,
        entry,
    })
}

/// What `render-mcp` did.
pub(crate) enum RenderedMcp {
    /// A release layout whose `current` dangles or points outside releases/: no deployment to
    /// write a registration document for; refused as install's gate refuses it, nothing
    /// written.
    Refused { detail: String },
    /// The document, written (or left as it was, holding the same bytes) at `path`.
    Written { path: PathBuf, document: Value },
}

/// `mcp-deploy render-mcp`: `server`'s document at `prefix` rendered, its release checked,
/// then written to `<prefix>/mcp/<name>.mcp.json` ([`write_rendered`]).
pub(crate) fn render_mcp(server: &Server, prefix: &Path) -> Result<RenderedMcp, RenderError> {
    check_deployed(server, prefix)?;
    let rendered = render(server, prefix)?;
    if server.layout == Layout::Release {
        let release = crate::deployment::release::Release::resolve(prefix, server.layout);
        if let Err(detail) = release.check() {
            return Ok(RenderedMcp::Refused {
                detail: detail.to_string(),
            });
        }
    }
    let path = write_rendered(&rendered, prefix)?;
    Ok(RenderedMcp::Written {
        path,
        document: rendered.document,
    })
}

/// Refuse a prefix that holds no deployed server, naming what is missing.
pub(crate) fn check_deployed(server: &Server, prefix: &Path) -> Result<(), RenderError> {
    let missing = |what: String| RenderError::NotDeployed {
        server: server.name.clone(),
        prefix: prefix.to_path_buf(),
        missing: what,
    };
    match prefix.metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(missing(format!("{} does not exist", prefix.display())))
        }
        Ok(m) if m.is_dir() => {}
        _ => return Err(missing(format!("{} is not a directory", prefix.display()))),
    }
    if server.layout == Layout::Release {
        let current = prefix.join("current");
        if current.symlink_metadata().is_err() {
            return Err(missing(format!(
                "{} does not exist (a release layout needs current -> releases/<sha>)",
                current.display()
            )));
        }
    }
    Ok(())
}

/// Render and write `<prefix>/mcp/<name>.mcp.json` atomically. Returns the path written.
pub(crate) fn write_rendered(rendered: &Rendered, prefix: &Path) -> Result<PathBuf, RenderError> {
    let path = rendered_path(prefix, &rendered.server);
    let text = rendered_text(rendered);
    // A re-run with nothing changed leaves the file (and its mtime) alone.
    if !would_write(rendered, prefix) {
        return Ok(path);
    }
    fsio::write_atomic(&path, text.as_bytes(), false)?;
    Ok(path)
}

/// The bytes [`write_rendered`] writes.
fn rendered_text(rendered: &Rendered) -> String {
    let mut text = serde_json::to_string(&rendered.document).expect("a Value serializes");
    text.push('\n');
    text
}

/// Whether [`write_rendered`] would write the file (it leaves one that holds the same bytes).
/// Bounded and non-blocking: a FIFO or a huge file there is simply replaced.
pub(crate) fn would_write(rendered: &Rendered, prefix: &Path) -> bool {
    let path = rendered_path(prefix, &rendered.server);
    !fsio::read_input(&path, "rendered document", fsio::limits::DOCUMENT)
        .is_ok_and(|old| old == rendered_text(rendered).as_bytes())
}

fn fill(s: &str, prefix: &str, name: &str, server: &str) -> Result<String, RenderError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let end = after.find("}}").map(|e| e + 2).unwrap_or(after.len());
        match &after[..end] {
            "{{prefix}}" => out.push_str(prefix),
            "{{name}}" => out.push_str(name),
            other => {
                return Err(RenderError::UnknownPlaceholder {
                    server: server.to_string(),
                    placeholder: other.to_string(),
                })
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    Ok(out)
}

fn substitute(
    v: &Value,
    f: &dyn Fn(&str) -> Result<String, RenderError>,
) -> Result<Value, RenderError> {
    Ok(match v {
        Value::String(s) => Value::String(f(s)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| substitute(i, f))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                out.insert(f(k)?, substitute(v, f)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::declaration::Declaration;

    fn render_text(server: &str, prefix: &str) -> String {
        let d = Declaration::builtin();
        let r = render(d.get(server).unwrap(), Path::new(prefix)).unwrap();
        serde_json::to_string(&r.document).unwrap()
    }

    #[test]
    fn codetools_renders_exactly() {
        assert_eq!(
            render_text("codetools", "/opt/codetools"),
            r#"{"mcpServers":{"codetools":{"command":"/opt/codetools/bin/codetools","args":["mcp","serve"]}}}"#
        );
        assert_eq!(
            render_text("orchestrata", "/opt/orchestrata/"),
            r#"{"mcpServers":{"orchestrata":{"command":"/opt/orchestrata/bin/orchestrata-mcp","args":[]}}}"#
        );
    }

    #[test]
    fn hostile_prefix_still_gives_valid_json_naming_it() {
        let prefix = r#"/tmp/a "quoted" dir\ with spaces/ünï/{{x"#;
        // An unknown-looking brace sequence inside the *prefix* is data, not a placeholder.
        let text = render_text("codetools", prefix);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["mcpServers"]["codetools"]["command"],
            format!("{prefix}/bin/codetools")
        );
    }

    #[test]
    fn unknown_placeholder_is_refused() {
        let mut d = Declaration::builtin();
        d.servers[0].template =
            serde_json::json!({"mcpServers":{"{{name}}":{"command":"{{prefx}}/x"}}});
        let err = render(&d.servers[0], Path::new("/p")).unwrap_err();
        assert!(err.to_string().contains("{{prefx}}"), "{err}");
    }

    #[test]
    fn a_literal_secret_in_a_template_is_refused_without_its_value() {
        let mut d = Declaration::builtin();
        d.servers[0].template = serde_json::json!({"mcpServers":{"{{name}}":{
            "command":"{{prefix}}/x","env":{"API_TOKEN":"hunter2-value"}}}});
        let err = render(&d.servers[0], Path::new("/p")).unwrap_err();
        assert!(matches!(err, RenderError::LiteralSecret { .. }));
        assert!(err.to_string().contains("env API_TOKEN"), "{err}");
        assert!(!err.to_string().contains("hunter2"), "{err}");
        d.servers[0].template = serde_json::json!({"mcpServers":{"{{name}}":{
            "command":"{{prefix}}/x","env":{"API_TOKEN":"${API_TOKEN}"}}}});
        assert!(render(&d.servers[0], Path::new("/p")).is_ok());
        // A default is used as is when the variable is unset: a secret one is a literal.
        d.servers[0].template = serde_json::json!({"mcpServers":{"{{name}}":{
            "command":"{{prefix}}/x","env":{"API_TOKEN":"${API_TOKEN:-hunter2-value}"}}}});
        let err = render(&d.servers[0], Path::new("/p")).unwrap_err();
        assert!(matches!(err, RenderError::LiteralSecret { .. }), "{err}");
        assert!(!err.to_string().contains("hunter2"), "{err}");
        d.servers[0].template = serde_json::json!({"mcpServers":{"{{name}}":{
            "command":"{{prefix}}/x","env":{"API_TOKEN":"${API_TOKEN:-}","LOG":"${LOG:-info}"}}}});
        assert!(render(&d.servers[0], Path::new("/p")).is_ok());
    }

    #[test]
    fn wrong_shapes_are_refused() {
        let mut d = Declaration::builtin();
        for bad in [
            serde_json::json!({"servers":{}}),
            serde_json::json!({"mcpServers":{"other":{"command":"/x"}}}),
            serde_json::json!({"mcpServers":{"{{name}}":{"command":"/x"},"b":{"command":"/y"}}}),
            serde_json::json!({"mcpServers":{"{{name}}":{"args":[]}}}),
            serde_json::json!({"mcpServers":{"{{name}}":{"command":"/x","args":"a b"}}}),
        ] {
            d.servers[0].template = bad.clone();
            assert!(
                matches!(
                    render(&d.servers[0], Path::new("/p")),
                    Err(RenderError::Shape { .. })
                ),
                "{bad}"
            );
        }
    }
}
