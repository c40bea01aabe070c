//! Turning command-line options into validated work before any of it starts: which servers,
//! at which prefixes, under which registered names, expecting which commits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::cli::SelectionArgs;
use crate::declaration::{has_dot_components, validate_name, Declaration, Server};
use crate::error::Error;
use crate::layout::Sha;
use crate::registered;

/// One server to act on.
#[derive(Debug, Clone)]
pub struct Selected {
    pub server: Server,
    pub prefix: PathBuf,
    pub registered_name: String,
}

/// An absolute prefix without `.`/`..` (whose meaning would depend on symlinks).
pub fn absolute_prefix(prefix: &Path) -> Result<PathBuf, Error> {
    if has_dot_components(prefix) {
        return Err(Error::usage(
            format!("--prefix {} holds . or .. components", prefix.display()),
            "give the prefix as a plain path, e.g. /opt/codetools",
        ));
    }
    std::path::absolute(prefix).map_err(|e| {
        Error::usage(
            format!("--prefix {} cannot be made absolute: {e}", prefix.display()),
            "give an absolute --prefix",
        )
    })
}

/// `render-mcp`/`verify-identity`: the server named by `--server`, else by the prefix's last
/// component.
pub fn single<'a>(
    decl: &'a Declaration,
    prefix: &Path,
    server: Option<&str>,
) -> Result<(&'a Server, PathBuf), Error> {
    let prefix = absolute_prefix(prefix)?;
    let name = match server {
        Some(s) => s.to_string(),
        None => {
            let last = prefix
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if !decl.names().contains(&last) {
                return Err(Error::usage(
                    format!(
                        "--prefix {} does not end in a declared server's name (declared: {})",
                        prefix.display(),
                        decl.names().join(", ")
                    ),
                    "name the server with --server NAME",
                ));
            }
            last.to_string()
        }
    };
    Ok((decl.get(&name)?, prefix))
}

/// The servers an install, uninstall or status acts on, and the flat document it uses.
pub struct Selection {
    pub servers: Vec<Selected>,
    pub registered: PathBuf,
}

impl Selection {
    pub fn load(args: &SelectionArgs) -> Result<Selection, Error> {
        let decl = Declaration::load(args.declaration.config.as_deref())?;
        Ok(Selection {
            servers: many(
                &decl,
                args.prefix.as_deref(),
                &args.servers,
                &args.name_suffix,
            )?,
            registered: args
                .registered
                .clone()
                .unwrap_or_else(registered::default_path),
        })
    }

    /// The flat document; `None` when it does not exist yet. A malformed one is an error: it
    /// is never overwritten.
    pub fn read_registered(&self) -> Result<Option<registered::Flat>, Error> {
        match registered::Flat::read(&self.registered) {
            Ok(f) => Ok(Some(f)),
            Err(registered::RegisteredError::Missing { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

/// `install`/`uninstall`: each selected server (all when none is named) at `ROOT/S` or its
/// declared prefix, registered as `S` + suffix.
pub fn many(
    decl: &Declaration,
    root: Option<&Path>,
    names: &[String],
    suffix: &str,
) -> Result<Vec<Selected>, Error> {
    let root = root.map(absolute_prefix).transpose()?;
    let mut chosen: Vec<&Server> = Vec::new();
    if names.is_empty() {
        chosen.extend(decl.servers.iter());
    } else {
        for n in names {
            let s = decl.get(n)?;
            if !chosen.iter().any(|c| c.name == s.name) {
                chosen.push(s);
            }
        }
    }
    chosen
        .into_iter()
        .map(|s| {
            let registered_name = format!("{}{suffix}", s.name);
            validate_name(&registered_name).map_err(|why| {
                Error::usage(
                    format!("registered name {registered_name:?} is not valid: {why}"),
                    "choose a --name-suffix of letters, digits, '-' and '_'",
                )
            })?;
            Ok(Selected {
                server: s.clone(),
                prefix: match &root {
                    Some(r) => r.join(&s.name),
                    None => s.prefix.clone(),
                },
                registered_name,
            })
        })
        .collect()
}

/// Parse a full expected commit given on the command line.
pub fn expect_commit(s: &str) -> Result<Sha, Error> {
    Sha::parse(s).map_err(|why| {
        Error::usage(
            format!("--expect-commit {s:?} is not a full commit sha: {why}"),
            "pass the full sha, e.g. --expect-commit \"$(git rev-parse HEAD)\"",
        )
    })
}

/// Parse `--expect-commit NAME=SHA` options; each NAME must be one of `selected`.
pub fn expect_commits(
    pairs: &[String],
    selected: &[Selected],
) -> Result<BTreeMap<String, Sha>, Error> {
    let mut out = BTreeMap::new();
    for pair in pairs {
        let Some((name, sha)) = pair.split_once('=') else {
            return Err(Error::usage(
                format!("--expect-commit {pair:?} is not NAME=SHA"),
                "e.g. --expect-commit codetools=$(git rev-parse HEAD)",
            ));
        };
        if !selected.iter().any(|s| s.server.name == name) {
            return Err(Error::usage(
                format!("--expect-commit names {name:?}, which is not being installed"),
                "name one of the servers being installed",
            ));
        }
        if out.insert(name.to_string(), expect_commit(sha)?).is_some() {
            return Err(Error::usage(
                format!("--expect-commit is given twice for {name:?}"),
                "give one commit per server",
            ));
        }
    }
    Ok(out)
}
