//! Turning command-line options into validated work before any of it starts: which servers,
//! at which prefixes, under which registered names, expecting which commits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::deployment::declaration::{
    has_dot_components, validate_name, Declaration, DeclarationError, Layout, Server,
};
use crate::deployment::layout::Sha;
use crate::notice::{Notice, Notify};
use crate::usage::UsageError;

/// Why the servers a command names cannot be selected: the declaration, or what the command
/// line asked for.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SelectionError {
    #[error(transparent)]
    Declaration(#[from] DeclarationError),
    #[error(transparent)]
    Usage(#[from] UsageError),
}

/// One server to act on.
#[derive(Debug, Clone)]
pub(crate) struct Selected {
    pub(crate) server: Server,
    pub(crate) prefix: PathBuf,
    pub(crate) registered_name: String,
}

/// An absolute prefix without `.`/`..` (whose meaning would depend on symlinks).
pub(crate) fn absolute_prefix(prefix: &Path) -> Result<PathBuf, UsageError> {
    if has_dot_components(prefix) {
        return Err(UsageError::new(
            format!("--prefix {} holds . or .. components", prefix.display()),
            "give the prefix as a plain path, e.g. /opt/codetools",
        ));
    }
    std::path::absolute(prefix).map_err(|e| {
        UsageError::new(
            format!("--prefix {} cannot be made absolute: {e}", prefix.display()),
            "give an absolute --prefix",
        )
    })
}

/// `render-mcp`/`verify-identity`: the server named by `--server`, else by the prefix's last
/// component.
pub(crate) fn single<'a>(
    decl: &'a Declaration,
    prefix: &Path,
    server: Option<&str>,
) -> Result<(&'a Server, PathBuf), SelectionError> {
    let prefix = absolute_prefix(prefix)?;
    let name = match server {
        Some(s) => s.to_string(),
        None => {
            let last = prefix
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if !decl.names().contains(&last) {
                return Err(UsageError::new(
                    format!(
                        "--prefix {} does not end in a declared server's name (declared: {})",
                        prefix.display(),
                        decl.names().join(", ")
                    ),
                    "name the server with --server NAME",
                )
                .into());
            }
            last.to_string()
        }
    };
    Ok((decl.get(&name)?, prefix))
}

/// The servers an install, uninstall or status acts on, and the flat document it uses.
pub(crate) struct Selection {
    pub(crate) servers: Vec<Selected>,
    pub(crate) flat_document: PathBuf,
    /// Whether the servers were named (`--server`, or a server's own prefix given as
    /// `--prefix`): a named server whose deployment is absent is an error, not a skip.
    pub(crate) named: bool,
    /// The servers [`Selection::skip_absent`] dropped, with why.
    pub(crate) skipped: Vec<(String, String)>,
}

impl Selection {
    /// `config`: `--config` (else the embedded declaration); `root`, `servers`, `name_suffix`
    /// as [`many`] takes them; `flat_document`: the flat document.
    pub(crate) fn load(
        config: Option<&Path>,
        root: Option<&Path>,
        servers: &[String],
        name_suffix: &str,
        flat_document: PathBuf,
        notify: Notify,
    ) -> Result<Selection, SelectionError> {
        let decl = Declaration::load(config)?;
        let (servers, named) = many(&decl, root, servers, name_suffix, notify)?;
        Ok(Selection {
            servers,
            flat_document,
            named,
            skipped: Vec::new(),
        })
    }

    /// Drop the servers whose deployment is entirely absent (see [`absent`]), saying so to
    /// `notify`, unless they were named: then the caller's deployment check fails on them. A
    /// broken deployment is not absent and is kept, so that it fails before any registration.
    /// Refuses when nothing is left.
    pub(crate) fn skip_absent(
        &mut self,
        root: Option<&Path>,
        notify: Notify,
    ) -> Result<(), UsageError> {
        if self.named {
            return Ok(());
        }
        let mut skipped = Vec::new();
        self.servers.retain(|s| match absent(&s.server, &s.prefix) {
            Some(why) => {
                notify(Notice::SkippedNotDeployed {
                    server: s.server.name.clone(),
                    why: why.clone(),
                });
                skipped.push((s.server.name.clone(), why));
                false
            }
            None => true,
        });
        self.skipped = skipped;
        if self.servers.is_empty() {
            let help = match root {
                Some(r) => format!(
                    "deploy a server at ROOT/NAME under --prefix {}; for one server's own \
                     prefix P, pass `--prefix $(dirname P) --server NAME`",
                    r.display()
                ),
                None => "deploy a release first, or pass --prefix ROOT where servers are \
                         deployed as ROOT/NAME"
                    .into(),
            };
            let whys: Vec<&str> = self.skipped.iter().map(|(_, w)| w.as_str()).collect();
            return Err(UsageError::new(
                format!("no declared server is deployed: {}", whys.join("; ")),
                help,
            ));
        }
        Ok(())
    }
}

/// Why `server`'s deployment at `prefix` is entirely absent, or `None` when something of it is
/// there. Absent means nothing was ever deployed: no prefix at all, or for a release layout
/// no `current` yet (a first release not promoted). Anything else — a dangling or looping
/// `current`, one that leads outside `releases/`, a missing command — is a *broken*
/// deployment, which is never skipped.
pub(crate) fn absent(server: &Server, prefix: &Path) -> Option<String> {
    if prefix.symlink_metadata().is_err() {
        return Some(format!("{} does not exist", prefix.display()));
    }
    if server.layout == Layout::Release && prefix.join("current").symlink_metadata().is_err() {
        return Some(format!("{} has no current release yet", prefix.display()));
    }
    None
}

/// Whether `dir` holds `server`'s own deployment (rather than being a root holding
/// `dir/<server>`): a release layout's `current` or `releases/`, a prefix layout's `VERSION`
/// or `bin/`.
fn holds_deployment(server: &Server, dir: &Path) -> bool {
    let has = |p: &str| dir.join(p).symlink_metadata().is_ok();
    match server.layout {
        Layout::Release => has("current") || has("releases"),
        Layout::Prefix => has("VERSION") || has("bin"),
    }
}

/// `install`/`uninstall`/`status`: each selected server (all when none is named) at `ROOT/S`
/// or its declared prefix, registered as `S` + suffix; and whether servers were named.
///
/// `--prefix` here is a root, but a server's own prefix is a natural thing to pass
/// (`install --prefix /opt/codetools`). When the root's last component names a declared server,
/// the root holds that server's deployment and no `ROOT/<server>` exists, it is taken as that
/// server's prefix, saying so to `notify`; never as a root holding `…/codetools/codetools`.
pub(crate) fn many(
    decl: &Declaration,
    root: Option<&Path>,
    names: &[String],
    suffix: &str,
    notify: Notify,
) -> Result<(Vec<Selected>, bool), SelectionError> {
    let root = root.map(absolute_prefix).transpose()?;
    let mut chosen: Vec<&Server> = Vec::new();
    let mut own_prefix: Option<PathBuf> = None;
    let server_prefix = root.as_deref().and_then(|r| {
        let last = r.file_name()?.to_str()?;
        let s = decl.servers.iter().find(|s| s.name == last)?;
        (r.join(&s.name).symlink_metadata().is_err() && holds_deployment(s, r)).then_some(s)
    });
    if let (Some(s), Some(r)) = (server_prefix, root.as_deref()) {
        if names.iter().any(|n| *n != s.name) {
            return Err(UsageError::new(
                format!(
                    "--prefix {} is the deployment of {} itself, not a root holding ROOT/NAME \
                     for --server {}",
                    r.display(),
                    s.name,
                    names.join(", ")
                ),
                format!(
                    "pass the directory that holds the servers, e.g. --prefix {}",
                    r.parent().unwrap_or(Path::new("/")).display()
                ),
            )
            .into());
        }
        notify(Notice::OwnPrefix {
            prefix: r.to_path_buf(),
            server: s.name.clone(),
        });
        chosen.push(s);
        own_prefix = Some(r.to_path_buf());
    } else if names.is_empty() {
        chosen.extend(decl.servers.iter());
    } else {
        for n in names {
            let s = decl.get(n)?;
            if !chosen.iter().any(|c| c.name == s.name) {
                chosen.push(s);
            }
        }
    }
    let named = !names.is_empty() || own_prefix.is_some();
    let selected = chosen
        .into_iter()
        .map(|s| {
            let registered_name = format!("{}{suffix}", s.name);
            validate_name(&registered_name).map_err(|why| {
                UsageError::new(
                    format!("registered name {registered_name:?} is not valid: {why}"),
                    "choose a --name-suffix of letters, digits, '-' and '_'",
                )
            })?;
            Ok(Selected {
                server: s.clone(),
                prefix: match (&own_prefix, &root) {
                    (Some(p), _) => p.clone(),
                    (None, Some(r)) => r.join(&s.name),
                    (None, None) => s.prefix.clone(),
                },
                registered_name,
            })
        })
        .collect::<Result<Vec<_>, SelectionError>>()?;
    Ok((selected, named))
}

/// Parse a full expected commit given on the command line.
pub(crate) fn expect_commit(s: &str) -> Result<Sha, UsageError> {
    Sha::parse(s).map_err(|why| {
        UsageError::new(
            format!("--expect-commit {s:?} is not a full commit sha: {why}"),
            "pass the full sha, e.g. --expect-commit \"$(git rev-parse HEAD)\"",
        )
    })
}

/// `verify-identity --expect-commit`: a sha, or `NAME=SHA` as install takes it, where NAME must
/// be the server checked.
pub(crate) fn expect_commit_for(s: &str, server: &str) -> Result<Sha, UsageError> {
    match s.split_once('=') {
        None => expect_commit(s),
        Some((name, sha)) if name == server => expect_commit(sha),
        Some((name, _)) => Err(UsageError::new(
            format!("--expect-commit {s:?} names the server {name:?}, but this checks {server:?}"),
            format!("pass --expect-commit {server}=SHA, or the bare sha"),
        )),
    }
}

/// Parse `--expect-commit NAME=SHA` options; each NAME must be one of `selection`'s servers.
/// A commit expected of a server that was skipped as not deployed is refused: the caller
/// expected it to be there.
pub(crate) fn expect_commits(
    pairs: &[String],
    selection: &Selection,
) -> Result<BTreeMap<String, Sha>, UsageError> {
    let selected = &selection.servers;
    let mut out = BTreeMap::new();
    for pair in pairs {
        let Some((name, sha)) = pair.split_once('=') else {
            return Err(UsageError::new(
                format!("--expect-commit {pair:?} is not NAME=SHA"),
                "e.g. --expect-commit codetools=$(git rev-parse HEAD)",
            ));
        };
        if let Some((_, why)) = selection.skipped.iter().find(|(n, _)| n == name) {
            return Err(UsageError::new(
                format!("--expect-commit names {name:?}, which is not deployed: {why}"),
                format!("deploy {name} first, or drop its --expect-commit"),
            ));
        }
        if !selected.iter().any(|s| s.server.name == name) {
            return Err(UsageError::new(
                format!("--expect-commit names {name:?}, which is not being installed"),
                "name one of the servers being installed",
            ));
        }
        if out.insert(name.to_string(), expect_commit(sha)?).is_some() {
            return Err(UsageError::new(
                format!("--expect-commit is given twice for {name:?}"),
                "give one commit per server",
            ));
        }
    }
    Ok(out)
}
