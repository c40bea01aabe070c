//! The flat registration document: `{"mcpServers":{NAME:{"command","args"}|{"type","url"}}}`,
//! written from what the client itself reports, at `$CLAUDE_CONFIG_DIR/mcp-registered.json`
//! or `~/.claude/mcp-registered.json`. Entries for names mcp-deploy was not asked about are
//! kept as they are. Env and header values are never recorded.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::fsio;

#[derive(Debug, thiserror::Error)]
pub enum RegisteredError {
    #[error("the registration document {path} does not exist")]
    Missing { path: PathBuf },
    #[error("the registration document {path} is malformed: {reason}")]
    Malformed { path: PathBuf, reason: String },
    #[error(transparent)]
    Io(#[from] fsio::IoError),
}

impl RegisteredError {
    pub fn help(&self) -> Option<String> {
        match self {
            RegisteredError::Missing { .. } => {
                Some("run `mcp-deploy install` first, or pass the document that holds the registration".into())
            }
            RegisteredError::Malformed { .. } => Some(
                "it must be {\"mcpServers\":{...}}; move it aside (install writes a new one) or fix it"
                    .into(),
            ),
            RegisteredError::Io(_) => None,
        }
    }
}

/// The default location of the flat document.
pub fn default_path() -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("mcp-registered.json"),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/".into()))
            .join(".claude")
            .join("mcp-registered.json"),
    }
}

/// Read the `mcpServers` object of a document; a missing file is an error.
pub fn read(path: &Path) -> Result<Map<String, Value>, RegisteredError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(RegisteredError::Missing {
                path: path.to_path_buf(),
            })
        }
        Err(e) => return Err(fsio::IoError::new("cannot read", path, e).into()),
    };
    let malformed = |reason: String| RegisteredError::Malformed {
        path: path.to_path_buf(),
        reason,
    };
    let doc: Value = serde_json::from_str(&text).map_err(|e| malformed(e.to_string()))?;
    match doc.get("mcpServers") {
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => Err(malformed("\"mcpServers\" is not an object".into())),
        None => Err(malformed("it has no \"mcpServers\" object".into())),
    }
}

/// Read the document for updating: a missing file is an empty one.
pub fn read_or_empty(path: &Path) -> Result<Map<String, Value>, RegisteredError> {
    match read(path) {
        Err(RegisteredError::Missing { .. }) => Ok(Map::new()),
        other => other,
    }
}

/// Write the document atomically, mode 0600 (it says which programs an agent runs).
pub fn write(path: &Path, servers: &Map<String, Value>) -> Result<(), RegisteredError> {
    let doc = serde_json::json!({ "mcpServers": servers });
    let mut text = serde_json::to_string_pretty(&doc).expect("a Value serializes");
    text.push('\n');
    fsio::write_atomic(path, text.as_bytes(), true)?;
    Ok(())
}
