//! The clients with no CLI that can register a server (OpenCode, Cursor): mcp-deploy edits
//! their JSON-with-comments config file itself. One implementation for all of them:
//!
//! 1. The caller holds the client's registration lock (`<client home>/.mcp-deploy/`, taken by
//!    the registration session before any change), so the read, edit and write below are
//!    never interleaved with another mcp-deploy.
//! 2. The file is read bounded ([`crate::fsio::read_input`]: a FIFO, device, directory or a
//!    file over the client-config bound is refused before anything is written).
//! 3. Its concrete syntax tree is edited (`jsonc-parser`'s `cst`): one property is appended to
//!    or removed from the servers object, and every other byte — keys, comments, trailing
//!    commas, indentation — stays as it was. A missing file is created with minimal content.
//! 4. The edited text is parsed again and must equal the old document with exactly that one
//!    change, before anything is written.
//! 5. The file is read once more, and when another program (the client) saved it since step
//!    2, nothing is written (its change would be lost). Then it is written atomically
//!    (temporary file in the target's directory, fsync, rename, directory fsync), through a
//!    symlinked file to its target, keeping the file's mode.
//! 6. It is read back from disk and compared again: the entry is the one written and every
//!    other entry is unchanged.
//!
//! `add` refuses a name that is present and `remove` one that is absent, as the CLI-driven
//! clients do; the transaction relies on that to notice a concurrent change.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstInputValue, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::{Map, Value};

use super::{ClientError, Op};

const BOM: char = '\u{feff}';

/// One client's config file and where its servers live in it.
#[derive(Debug, Clone)]
pub(crate) struct JsoncFile {
    /// The file the client reads (a symlink is followed when writing).
    pub(crate) path: PathBuf,
    /// The top-level key holding the servers (`mcp`, `mcpServers`).
    pub(crate) key: &'static str,
    /// What a missing file is created with, before the server is added.
    pub(crate) new_file: &'static str,
    /// The mode of a file this creates: 0600 under a home (it says which programs an agent
    /// runs), 0644 for a file every user's client must read (claude's managed-mcp.json).
    pub(crate) new_mode: u32,
}

/// What the client parses: JSON with comments and trailing commas, nothing looser (OpenCode
/// and Cursor use Microsoft's `jsonc-parser` with `allowTrailingComma`), so that what
/// mcp-deploy accepts is what the client accepts.
fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        ..super::policy::strict()
    }
}

impl JsoncFile {
    fn bad(&self, reason: impl Into<String>) -> ClientError {
        ClientError::File {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    /// The file's text, `None` when it does not exist. Refuses what is not a regular file.
    fn read_text(&self) -> Result<Option<String>, ClientError> {
        crate::fsio::read_input_if_exists(
            &self.path,
            "client config",
            crate::fsio::limits::CLIENT_JSONC,
        )
        .map_err(|e| self.bad(e.source.to_string()))
    }

    /// Parse `text`; the error names the line and what is wrong, never the text (it may hold
    /// a secret).
    fn parse(&self, text: &str) -> Result<(CstRootNode, Value), ClientError> {
        // OpenCode (checked) and editors read past a UTF-8 byte order mark; the parser does
        // not. It is put back by `edit`.
        let text = text.strip_prefix(BOM).unwrap_or(text);
        let root = CstRootNode::parse(text, &options()).map_err(|e| {
            self.bad(format!(
                "not valid JSON with comments at line {} column {}: {}",
                e.line_display(),
                e.column_display(),
                e.kind()
            ))
        })?;
        let doc = match root.to_serde_value() {
            None => Value::Object(Map::new()),
            Some(v @ Value::Object(_)) => v,
            Some(_) => return Err(self.bad("the top level is not an object")),
        };
        Ok((root, doc))
    }

    /// The servers as the file holds them (in the client's own shape). A missing file, or one
    /// without the key, has none.
    pub(crate) fn entries(&self) -> Result<Map<String, Value>, ClientError> {
        let Some(text) = self.read_text()? else {
            return Ok(Map::new());
        };
        let (root, doc) = self.parse(&text)?;
        self.no_duplicate_names(&root)?;
        servers_of(&doc, self.key).map_err(|r| self.bad(r.to_string()))
    }

    /// A name given twice: JSON.parse keeps the last, a CST edit would touch the first. The
    /// client's view and ours would differ, so such a file is refused.
    fn no_duplicate_names(&self, root: &CstRootNode) -> Result<(), ClientError> {
        let tops = root
            .object_value()
            .map(|o| o.properties())
            .unwrap_or_default();
        if tops
            .iter()
            .filter(|p| p.decoded_name().as_deref() == Some(self.key))
            .count()
            > 1
        {
            return Err(self.bad(format!(
                "the key \"{}\" is given twice; remove one",
                self.key
            )));
        }
        let Some(servers) = root
            .object_value()
            .and_then(|o| o.get(self.key))
            .and_then(|p| p.object_value())
        else {
            return Ok(());
        };
        let mut seen = std::collections::HashSet::new();
        for p in servers.properties() {
            if let Some(n) = p.decoded_name() {
                if !seen.insert(n.clone()) {
                    return Err(self.bad(format!(
                        "\"{}\" names the server {n:?} twice; remove one",
                        self.key
                    )));
                }
            }
        }
        Ok(())
    }

    /// Add `value` (in the client's shape) under `name`, which must not be present.
    pub(crate) fn add(
        &self,
        client: &'static str,
        name: &str,
        value: &Value,
    ) -> Result<(), ClientError> {
        self.edit(name, Some((client, value)))
    }

    /// The step `op` on `name`, as a dry run and an error show it.
    pub(crate) fn show(&self, op: Op, name: &str) -> String {
        match op {
            Op::Add => format!("add {name} to {}", self.path.display()),
            Op::Remove => format!("remove {name} from {}", self.path.display()),
            Op::Observe => format!("read {name} from {}", self.path.display()),
        }
    }

    /// Remove `name`, which must be present.
    pub(crate) fn remove(&self, name: &str) -> Result<(), ClientError> {
        self.edit(name, None)
    }

    fn edit(&self, name: &str, add: Option<(&'static str, &Value)>) -> Result<(), ClientError> {
        let old = self.read_text()?;
        let text = old.clone().unwrap_or_else(|| self.new_file.to_string());
        let (root, doc) = self.parse(&text)?;
        self.no_duplicate_names(&root)?;
        let mut expected = doc.clone();
        let top = root
            .object_value()
            .unwrap_or_else(|| root.object_value_or_set());
        match add {
            Some((client, value)) => {
                let servers = top
                    .object_value_or_create(self.key)
                    .ok_or_else(|| self.bad(format!("\"{}\" is not an object", self.key)))?;
                if servers.get(name).is_some() {
                    return Err(ClientError::AlreadyRegistered {
                        client,
                        name: name.to_string(),
                        path: self.path.clone(),
                    });
                }
                servers.append(name, to_input(value));
                expected
                    .as_object_mut()
                    .expect("checked to be an object")
                    .entry(self.key)
                    .or_insert_with(|| Value::Object(Map::new()))
                    .as_object_mut()
                    .expect("checked to be an object")
                    .insert(name.to_string(), value.clone());
            }
            None => {
                let prop = top
                    .object_value(self.key)
                    .and_then(|s| s.get(name))
                    .ok_or_else(|| ClientError::NotRegistered {
                        name: name.to_string(),
                        path: self.path.clone(),
                    })?;
                prop.remove();
                if let Some(Value::Object(m)) = expected.get_mut(self.key) {
                    m.remove(name);
                }
            }
        }
        let new_text = match text.starts_with(BOM) {
            true => format!("{BOM}{root}"),
            false => root.to_string(),
        };
        // The edit is proved on the text before the text is written.
        let (_, edited) = self
            .parse(&new_text)
            .map_err(|e| self.bad(format!("the edited text does not parse again ({e})")))?;
        if edited != expected {
            return Err(self.bad(
                "the edit changed more than the one entry (mcp-deploy's bug); nothing was written",
            ));
        }
        // Another program (the client itself) may have saved the file since it was read: its
        // change would be lost under ours. Looked at once more just before the write; the
        // window that stays is the write itself.
        if self.read_text()? != old {
            return Err(ClientError::Disagrees {
                name: name.to_string(),
                reason: format!(
                    "{} changed while mcp-deploy was editing it; nothing was written, run again",
                    self.path.display()
                ),
            });
        }
        self.write(&new_text, old.is_some())?;
        // Read back what is on disk: the entry is the one written, the others as they were.
        let back = self
            .read_text()?
            .ok_or_else(|| self.bad("it is gone right after it was written"))?;
        let (_, on_disk) = self.parse(&back)?;
        if on_disk != expected {
            return Err(ClientError::Disagrees {
                name: name.to_string(),
                reason: format!(
                    "{} does not hold what was just written to it",
                    self.path.display()
                ),
            });
        }
        Ok(())
    }

    /// Replace the file atomically: through a symlink to its target, keeping its mode (a new
    /// file: `new_mode`).
    fn write(&self, text: &str, existed: bool) -> Result<(), ClientError> {
        let io_bad = |e: crate::fsio::IoError| self.bad(e.to_string());
        let target = if existed {
            std::fs::canonicalize(&self.path)
                .map_err(|e| io_bad(crate::fsio::IoError::new("cannot follow", &self.path, e)))?
        } else {
            if std::fs::symlink_metadata(&self.path).is_ok() {
                // A dangling symlink: the file it names is not ours to create.
                return Err(self.bad("it is a symlink to a file that does not exist"));
            }
            self.path.clone()
        };
        let mode = match std::fs::metadata(&target) {
            // The rename below would replace a read-only file as easily as any other (only
            // the directory's mode matters to it): its owner made it read-only so that it
            // is not changed, and the client itself could not write it either.
            Ok(m) if m.is_file() && m.permissions().mode() & 0o200 == 0 => {
                return Err(self.bad(format!(
                    "it is read-only (mode {:o}); nothing was written: make it writable to \
                     let mcp-deploy change it",
                    m.permissions().mode() & 0o7777
                )))
            }
            Ok(m) if m.is_file() => m.permissions().mode() & 0o7777,
            Ok(_) => {
                return Err(io_bad(crate::fsio::IoError::new(
                    "refused",
                    &target,
                    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"),
                )))
            }
            Err(_) => self.new_mode,
        };
        crate::fsio::write_atomic_mode(&target, text.as_bytes(), mode).map_err(io_bad)
    }
}

/// A servers key that holds something else than an object.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("\"{key}\" is not an object")]
pub(crate) struct NotAnObject {
    pub(crate) key: String,
}

/// The servers object of `doc` under `key`.
pub(crate) fn servers_of(doc: &Value, key: &str) -> Result<Map<String, Value>, NotAnObject> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => Err(NotAnObject {
            key: key.to_string(),
        }),
    }
}

/// Read the servers of a JSON-with-comments file without any lock, for a shadow look (a file
/// that is not there has none).
pub(crate) fn read_servers(
    path: &Path,
    key: &'static str,
) -> Result<Map<String, Value>, ClientError> {
    JsoncFile {
        path: path.to_path_buf(),
        key,
        new_file: "{}",
        new_mode: 0o600,
    }
    .entries()
}

/// `text` without the top-level properties whose name `drop` picks, every other byte kept;
/// `None` when it is not valid JSON with comments.
pub(crate) fn without_top_keys(text: &str, drop: impl Fn(&str) -> bool) -> Option<String> {
    let bom = if text.starts_with(BOM) {
        "\u{feff}"
    } else {
        ""
    };
    let root = CstRootNode::parse(text.strip_prefix(BOM).unwrap_or(text), &options()).ok()?;
    if let Some(top) = root.object_value() {
        for p in top.properties() {
            if p.decoded_name().is_some_and(|n| drop(&n)) {
                p.remove();
            }
        }
    }
    Some(format!("{bom}{root}"))
}

/// The whole document of a JSON-with-comments file, bounded and symlink-safe as [`read_servers`]
/// reads it: `None` when there is no file.
pub(crate) fn read_document(path: &Path) -> Result<Option<Value>, ClientError> {
    Ok(read_document_marked(path)?.map(|(doc, _)| doc))
}

/// [`read_document`], and whether the file begins with a byte order mark (which some client
/// releases refuse: OpenCode 1.3.2 to 1.15.13).
pub(crate) fn read_document_marked(path: &Path) -> Result<Option<(Value, bool)>, ClientError> {
    let f = JsoncFile {
        path: path.to_path_buf(),
        key: "",
        new_file: "{}",
        new_mode: 0o600,
    };
    let Some(text) = f.read_text()? else {
        return Ok(None);
    };
    f.parse(&text)
        .map(|(_, doc)| Some((doc, text.starts_with(BOM))))
}

/// `text` parsed as the clients parse it, `None` when it is not valid.
pub(crate) fn parse_value(text: &str) -> Option<Value> {
    CstRootNode::parse(text.strip_prefix(BOM).unwrap_or(text), &options())
        .ok()?
        .to_serde_value()
}

pub(crate) fn to_input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(to_input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), to_input(v))).collect())
        }
    }
}

/// A `${...}` that is not a plain `${NAME}` reference; the message names its form (a
/// `:-default`, or anything else), never its text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("a reference ${{{form}}} that is not a plain ${{NAME}}")]
pub(crate) struct NotPlainRef {
    /// `NAME:-default` or `...`.
    pub(crate) form: &'static str,
}

/// Replace each `${NAME}` (the claude shape's reference) in `s` by `make(NAME)`; `Err` names
/// what cannot be carried: a `${...}` that is not a plain reference (a `:-default`).
pub(crate) fn map_refs(s: &str, make: impl Fn(&str) -> String) -> Result<String, NotPlainRef> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[i..]);
            return Ok(out);
        };
        let body = &after[..end];
        if !is_var_name(body) {
            return Err(NotPlainRef {
                form: if body.contains(":-") {
                    "NAME:-default"
                } else {
                    "..."
                },
            });
        }
        out.push_str(&make(body));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A stdio `entry`'s `command` and `args` (when it has the key) into `out`, each string through
/// `map` as [`map_env_and_headers`] takes it (Cursor's and VS Code's entries).
pub(crate) fn map_command(
    entry: &crate::entry::Entry,
    command: &str,
    args: &[String],
    out: &mut Map<String, Value>,
    map: &impl Fn(String, &str) -> Result<String, ClientError>,
) -> Result<(), ClientError> {
    out.insert("command".into(), map("the command".into(), command)?.into());
    let mapped = args
        .iter()
        .enumerate()
        .map(|(i, a)| map(format!("argument {}", i + 1), a).map(Value::String))
        .collect::<Result<Vec<_>, _>>()?;
    if entry.raw.contains_key("args") {
        out.insert("args".into(), Value::Array(mapped));
    }
    Ok(())
}

/// Each key of `entry` beyond the `known` ones of its transport, in order, to `keep` when the
/// client holds it too (`extra_ok`); otherwise `product` has no key for it, and `refuse` says so.
pub(crate) fn extra_keys(
    entry: &crate::entry::Entry,
    (known, extra_ok): (&[&str], &[&str]),
    product: &str,
    refuse: &impl Fn(String) -> ClientError,
    mut keep: impl FnMut(&String, &Value) -> Result<(), ClientError>,
) -> Result<(), ClientError> {
    for (k, v) in &entry.raw {
        if known.contains(&k.as_str()) {
            continue;
        }
        if !extra_ok.contains(&k.as_str()) {
            return Err(refuse(format!("{product} has no key {k:?} for it")));
        }
        keep(k, v)?;
    }
    Ok(())
}

/// `entry`'s `env` and `headers` objects into `out`, each value through `map` (given what it is,
/// for the message: the client's spelling of claude's `${NAME}`); `refuse` says why a value
/// cannot be held (Cursor's and VS Code's entries).
pub(crate) fn map_env_and_headers(
    entry: &crate::entry::Entry,
    out: &mut Map<String, Value>,
    map: &impl Fn(String, &str) -> Result<String, ClientError>,
    refuse: &impl Fn(String) -> ClientError,
) -> Result<(), ClientError> {
    for key in ["env", "headers"] {
        if let Some(v) = entry.raw.get(key) {
            let Some(o) = v.as_object() else {
                return Err(refuse(format!("{key} is not an object of strings")));
            };
            let mut m = Map::new();
            for (k, x) in o {
                let x = x
                    .as_str()
                    .ok_or_else(|| refuse(format!("{key} {k:?} is not a string")))?;
                m.insert(k.clone(), map(format!("{key} {k:?}"), x)?.into());
            }
            out.insert(key.into(), Value::Object(m));
        }
    }
    Ok(())
}

/// The other way round from [`map_refs`]: each `${<prefix>NAME}` of a client's string back to
/// claude's `${NAME}` (Cursor's and VS Code's `${env:NAME}`); `None` when `s` holds any other
/// `${...}` (one the client resolves some other way), which the caller marks.
pub(crate) fn unmap_refs(s: &str, prefix: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = after.find('}')?;
        let name = after[..end].strip_prefix(prefix)?;
        if !is_var_name(name) {
            return None;
        }
        out.push_str("${");
        out.push_str(name);
        out.push('}');
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// [`unmap_refs`] on every string of `x`; `other` is set when one holds another `${...}` (and
/// that string is kept as it is).
pub(crate) fn unmap_value(x: &Value, prefix: &str, other: &mut bool) -> Value {
    match x {
        Value::String(s) => match unmap_refs(s, prefix) {
            Some(s) => Value::String(s),
            None => {
                *other = true;
                x.clone()
            }
        },
        Value::Array(a) => Value::Array(a.iter().map(|x| unmap_value(x, prefix, other)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), unmap_value(x, prefix, other)))
                .collect(),
        ),
        _ => x.clone(),
    }
}

pub(crate) fn is_var_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const COMMENTED: &str = r#"// my opencode settings
{
    "$schema": "https://opencode.ai/config.json",
    /* the theme I like */
    "theme": "tokyonight",
    "mcp": {
        // my own server, keep it
        "mine": {"type": "local", "command": ["/usr/bin/mine"], "enabled": true,},
    },
    "model": "anthropic/claude", // trailing comment
}
"#;

    fn file(dir: &Path, text: Option<&str>) -> JsoncFile {
        let path = dir.join("opencode.jsonc");
        if let Some(t) = text {
            std::fs::write(&path, t).unwrap();
        }
        JsoncFile {
            path,
            key: "mcp",
            new_file: "{\n  \"$schema\": \"https://opencode.ai/config.json\"\n}\n",
            new_mode: 0o600,
        }
    }

    #[test]
    fn attack_bom_crlf_and_comments_in_the_servers_object_survive_add_and_remove() {
        // A file saved by a Windows editor (CRLF, a byte order mark), block comments inside
        // the servers object, a trailing comma: install then uninstall gives the same bytes.
        for text in [
            COMMENTED.replace('\n', "\r\n"),
            format!("\u{feff}{COMMENTED}"),
            "{\n  \"mcp\": {\n    /* a */ \"mine\": {\"type\": \"local\", \"command\": [\"/m\"]}, /* b */\n  },\n}\n"
                .to_string(),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let f = file(dir.path(), Some(&text));
            let entry = json!({"type":"local","command":["/ct"],"enabled":true});
            match f.add("opencode", "ct", &entry) {
                Ok(()) => {
                    assert_eq!(f.entries().unwrap()["ct"], entry);
                    f.remove("ct").unwrap();
                    assert_eq!(std::fs::read_to_string(&f.path).unwrap(), text, "{text:?}");
                }
                Err(e) => panic!("{text:?}: {e}"),
            }
        }
        // On one line (known, documented: laid out one property per line), the comments and
        // every value are kept all the same.
        let one = "{\"mcp\": {/* a */ \"mine\": {\"command\": [\"/m\"]}, /* b */},}\n";
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path(), Some(one));
        f.add("opencode", "ct", &json!({"command": ["/ct"]}))
            .unwrap();
        f.remove("ct").unwrap();
        let back = std::fs::read_to_string(&f.path).unwrap();
        assert!(
            back.contains("/* a */") && back.contains("/* b */"),
            "{back}"
        );
        assert_eq!(parse_value(&back), parse_value(one));
    }

    #[test]
    fn attack_a_servers_key_that_is_not_an_object_is_refused_without_a_panic() {
        for v in ["null", "[]", "\"x\"", "1", "true"] {
            let dir = tempfile::tempdir().unwrap();
            let text = format!("{{\"mcp\": {v}}}\n");
            let f = file(dir.path(), Some(&text));
            let err = f
                .add("opencode", "ct", &json!({"command": ["/ct"]}))
                .unwrap_err();
            assert!(
                err.to_string().contains("\"mcp\" is not an object"),
                "{v}: {err}"
            );
            assert_eq!(std::fs::read_to_string(&f.path).unwrap(), text);
        }
    }

    #[test]
    fn attack_a_name_given_twice_through_an_escape_is_refused() {
        // `"ct"` and `"c\u0074"` are one name to JSON.parse (which keeps the last).
        for text in [
            "{\"mcp\": {\"ct\": {\"command\": [\"/a\"]}, \"c\\u0074\": {\"command\": [\"/b\"]}}}",
            "{\"mcp\": {}, \"m\\u0063p\": {\"ct\": {\"command\": [\"/b\"]}}}",
        ] {
            let dir = tempfile::tempdir().unwrap();
            let f = file(dir.path(), Some(text));
            let err = f.entries().unwrap_err().to_string();
            assert!(err.contains("twice"), "{text}: {err}");
        }
    }

    #[test]
    fn attack_a_huge_valid_file_is_refused_before_it_is_parsed() {
        // Valid JSON of 5 MiB (under the client-config bound): parsing it into a syntax tree
        // would take about 45 times that; a file at that bound took the memory of the host.
        let dir = tempfile::tempdir().unwrap();
        let text = format!("{{\"mcp\": {{}}{}}}", " ".repeat(5 << 20));
        let f = file(dir.path(), Some(&text));
        let err = f.entries().unwrap_err().to_string();
        assert!(err.contains("larger than"), "{err}");
        let err = f.add("opencode", "ct", &json!({})).unwrap_err().to_string();
        assert!(err.contains("larger than"), "{err}");
    }

    #[test]
    fn attack_deep_nesting_is_refused_without_overflowing_the_stack() {
        // 100 000 nested arrays fit in the size bound; a recursive parser would overflow the
        // stack (an abort, not an error).
        let dir = tempfile::tempdir().unwrap();
        let n = 100_000;
        let text = format!(
            "{{\"x\": {}{}, \"mcp\": {{}}}}",
            "[".repeat(n),
            "]".repeat(n)
        );
        let f = file(dir.path(), Some(&text));
        let err = f.entries().unwrap_err().to_string();
        assert!(err.contains("nesting depth"), "{err}");
    }

    #[test]
    fn add_then_remove_keeps_every_other_byte() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path(), Some(COMMENTED));
        let entry = json!({"type":"local","command":["/opt/ct/bin/ct","mcp"],"enabled":true});
        f.add("opencode", "ct", &entry).unwrap();
        let added = std::fs::read_to_string(&f.path).unwrap();
        assert!(added.contains("// my own server, keep it"), "{added}");
        assert!(added.contains("/* the theme I like */"), "{added}");
        assert!(added.contains("\"model\": \"anthropic/claude\", // trailing comment"));
        assert_eq!(f.entries().unwrap()["ct"], entry);
        // Only the servers object grew: the text before and after it is untouched.
        let head = COMMENTED.split("\"mine\"").next().unwrap();
        assert!(added.starts_with(head), "{added}");
        let tail = &COMMENTED[COMMENTED.find("\"model\"").unwrap()..];
        assert!(added.ends_with(tail), "{added}");
        f.remove("ct").unwrap();
        assert_eq!(std::fs::read_to_string(&f.path).unwrap(), COMMENTED);
    }

    #[test]
    fn add_to_an_empty_servers_object_and_back() {
        let dir = tempfile::tempdir().unwrap();
        for text in [
            "{\n  \"mcpServers\": {}\n}\n",
            "{\n\t\"other\": [1, 2,],\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"/a\"}\n\t}\n}",
            "{}",
        ] {
            let path = dir.path().join("mcp.json");
            std::fs::write(&path, text).unwrap();
            let f = JsoncFile {
                path: path.clone(),
                key: "mcpServers",
                new_file: "{}",
            new_mode: 0o600,
            };
            f.add("cursor", "ct", &json!({"command": "/x", "args": ["a b"]}))
                .unwrap();
            assert_eq!(
                f.entries().unwrap()["ct"],
                json!({"command": "/x", "args": ["a b"]})
            );
            f.remove("ct").unwrap();
            let back = std::fs::read_to_string(&path).unwrap();
            if text != "{}" {
                assert_eq!(back, text);
            } else {
                // The key it had to create stays, empty.
                assert_eq!(read_servers(&path, "mcpServers").unwrap().len(), 0);
            }
        }
    }

    #[test]
    fn missing_file_is_created_private_and_mode_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path(), None);
        f.add("opencode", "ct", &json!({"type":"local","command":["/x"]}))
            .unwrap();
        let text = std::fs::read_to_string(&f.path).unwrap();
        assert!(text.contains("\"$schema\": \"https://opencode.ai/config.json\""));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&f.path), 0o600);
        std::fs::set_permissions(&f.path, std::fs::Permissions::from_mode(0o640)).unwrap();
        f.remove("ct").unwrap();
        assert_eq!(mode(&f.path), 0o640);
    }

    #[test]
    fn present_and_absent_names_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path(), Some(COMMENTED));
        let err = f.add("opencode", "mine", &json!({})).unwrap_err();
        assert!(
            matches!(err, ClientError::AlreadyRegistered { .. }),
            "{err}"
        );
        let err = f.remove("nope").unwrap_err();
        assert!(matches!(err, ClientError::NotRegistered { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&f.path).unwrap(), COMMENTED);
    }

    #[test]
    fn a_symlinked_file_is_written_through_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/opencode.jsonc");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, COMMENTED).unwrap();
        let f = file(dir.path(), None);
        std::os::unix::fs::symlink(&real, &f.path).unwrap();
        f.add("opencode", "ct", &json!({"type":"local","command":["/x"]}))
            .unwrap();
        assert!(std::fs::symlink_metadata(&f.path)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(std::fs::read_to_string(&real).unwrap().contains("\"ct\""));
    }

    #[test]
    fn invalid_text_duplicates_and_non_files_are_refused_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        for (text, want) in [
            (
                "{\"mcp\": {\"a\": {\"environment\": {\"T\": \"hunter2\"}}",
                "line 1",
            ),
            ("{'mcp': {}}", "not valid JSON with comments"),
            ("[1]", "the top level is not an object"),
            ("{\"mcp\": [\"hunter2\"]}", "\"mcp\" is not an object"),
            (
                "{\"mcp\": {\"a\": {}, \"a\": {\"x\": \"hunter2\"}}}",
                "names the server \"a\" twice",
            ),
            (
                "{\"mcp\": {}, \"mcp\": {\"a\": {\"x\": \"hunter2\"}}}",
                "the key \"mcp\" is given twice",
            ),
        ] {
            let f = file(dir.path(), Some(text));
            let err = f.add("opencode", "ct", &json!({})).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
            assert!(!err.contains("hunter2"), "{err}");
            assert_eq!(std::fs::read_to_string(&f.path).unwrap(), text);
        }
        let f = file(dir.path(), None);
        std::fs::remove_file(&f.path).unwrap();
        std::fs::create_dir(&f.path).unwrap();
        let err = f.add("opencode", "ct", &json!({})).unwrap_err().to_string();
        assert!(err.contains("a directory"), "{err}");
    }

    #[test]
    fn references_map_and_defaults_are_refused() {
        let oc = |s: &str| map_refs(s, |n| format!("{{env:{n}}}"));
        assert_eq!(oc("Bearer ${TOKEN}").unwrap(), "Bearer {env:TOKEN}");
        assert_eq!(oc("${A}${B_2}/x").unwrap(), "{env:A}{env:B_2}/x");
        assert_eq!(
            oc("$HOME and ${ unclosed").unwrap(),
            "$HOME and ${ unclosed"
        );
        assert!(oc("${T:-x}")
            .unwrap_err()
            .to_string()
            .contains("NAME:-default"));
        assert!(oc("${env:T}").is_err());
    }
}
