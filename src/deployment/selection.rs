//! Turning command-line options into validated work before any of it starts: which servers,
//! at which prefixes, under which registered names, expecting which commits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::deployment::declaration::{
    has_dot_components, validate_name, Declaration, DeclarationError, Layout, Server, Source,
};
use crate::deployment::layout::Sha;
use crate::notice::{Notice, Notify};
use crate::usage::{CommandLine, UsageError};

/// Why the servers a command names cannot be selected: the declaration, or what the command
/// line asked for.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SelectionError {
    #[error(transparent)]
    Declaration(#[from] DeclarationError),
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error(transparent)]
    DirectoryKind(#[from] DirectoryKindError),
}

/// A directory of the other kind than the flag means: `--prefix DIR` is one deployment,
/// `--root ROOT` a directory of deployments (`ROOT/<server>`). Each carries the user's own
/// command line rewritten into the one that would work.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DirectoryKindError {
    /// `--prefix` of render-mcp, verify-identity, promote, rollback or prune given a directory
    /// that holds deployments.
    #[error(
        "{flag} {} is a directory of deployments (ROOT/<server>), not one deployment",
        dir.display()
    )]
    DeploymentsForOne {
        /// How the directory was given: `--prefix`, or `-p` (one deployment in every command).
        flag: &'static str,
        dir: PathBuf,
        /// The declared servers deployed at `dir/<server>`.
        held: Vec<String>,
        /// The command with `--prefix dir/<server>` for the server the command line points at.
        works: CommandLine,
        /// Whether the command also takes `--root` (verify-identity).
        takes_root: bool,
    },
    /// `--root` of install, uninstall or status given one server's own deployment.
    #[error(
        "--root {} is the deployment of {server} itself, not a directory of deployments \
         (ROOT/<server>)",
        dir.display()
    )]
    OneForDeployments {
        dir: PathBuf,
        server: String,
        /// The command with `--root <parent> --server <server>`.
        works: CommandLine,
    },
}

impl DirectoryKindError {
    pub(crate) fn help(&self) -> Option<String> {
        Some(match self {
            DirectoryKindError::DeploymentsForOne {
                dir,
                held,
                works,
                takes_root,
                ..
            } => {
                let noun = if held.len() == 1 {
                    "the deployment"
                } else {
                    "the deployments"
                };
                let mut help = format!(
                    "{} holds {noun} {}: {works}",
                    dir.display(),
                    held.join(", ")
                );
                if *takes_root {
                    help.push_str(&format!(
                        " (or every one of them in one call: --root {} with --expect-commit \
                         NAME=SHA for each)",
                        dir.display()
                    ));
                }
                help
            }
            DirectoryKindError::OneForDeployments { works, .. } => works.to_string(),
        })
    }
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
    absolute_dir("--prefix", prefix)
}

/// `dir`, given as `flag`, absolute and without `.`/`..` (whose meaning would depend on
/// symlinks).
pub(crate) fn absolute_dir(flag: &str, dir: &Path) -> Result<PathBuf, UsageError> {
    if has_dot_components(dir) {
        return Err(UsageError::new(
            format!("{flag} {} holds . or .. components", dir.display()),
            "give the directory as a plain path, e.g. /opt/codetools",
        ));
    }
    std::path::absolute(dir).map_err(|e| {
        UsageError::new(
            format!("{flag} {} cannot be made absolute: {e}", dir.display()),
            format!("give an absolute {flag}"),
        )
    })
}

/// What else on the command line points at one server, for the `help:` line of a
/// [`DirectoryKindError`]: `--server`, the registered `--name`, the NAMEs of `--expect-commit
/// NAME=SHA`, in that order of preference; and whether the command takes `--root`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Hints<'a> {
    pub(crate) names: Vec<&'a str>,
    pub(crate) takes_root: bool,
}

/// The declared servers deployed as `dir/<server>`: `dir` is a directory of deployments.
fn held_deployments<'a>(decl: &'a Declaration, dir: &Path) -> Vec<&'a Server> {
    decl.servers
        .iter()
        .filter(|s| holds_deployment(s, &dir.join(&s.name)))
        .collect()
}

/// Refuse `prefix` (given as `--prefix`, meant as one deployment of `wanted` when known)
/// when it is a directory of deployments and not `wanted`'s own: the error carries the user's
/// command line with the `--prefix` of the server it points at.
pub(crate) fn refuse_directory_of_deployments(
    decl: &Declaration,
    prefix: &Path,
    wanted: Option<&Server>,
    hints: &Hints,
) -> Result<(), DirectoryKindError> {
    let held = held_deployments(decl, prefix);
    if held.is_empty() {
        return Ok(());
    }
    let own = match wanted {
        Some(s) => holds_deployment(s, prefix),
        // Without a declared server to ask, a release layout's markers say it is one.
        None => ["current", "releases", "VERSION"]
            .iter()
            .any(|m| prefix.join(m).symlink_metadata().is_ok()),
    };
    if own {
        return Ok(());
    }
    // The server the command line points at: a hint equal to a held server's name, or
    // starting with it (a registered name `codetools-test`), the longest match; else the first.
    let pick = hints
        .names
        .iter()
        .find_map(|n| {
            held.iter()
                .filter(|s| n.starts_with(s.name.as_str()))
                .max_by_key(|s| s.name.len())
        })
        .unwrap_or(&held[0]);
    let dir = prefix.join(&pick.name);
    let mut names = vec![pick.name.clone()];
    names.extend(
        held.iter()
            .filter(|s| s.name != pick.name)
            .map(|s| s.name.clone()),
    );
    Err(DirectoryKindError::DeploymentsForOne {
        dir: prefix.to_path_buf(),
        held: names,
        works: CommandLine::current().replace(
            &["--prefix", "-p"],
            "--prefix",
            &dir.to_string_lossy(),
        ),
        takes_root: hints.takes_root,
        flag: "--prefix",
    })
}

/// `render-mcp`/`verify-identity`/`promote`/`rollback`: the server named by `--server`, else
/// by the prefix's last component. A directory of deployments given as `--prefix` is refused
/// with the command that would work (see [`refuse_directory_of_deployments`]).
pub(crate) fn single<'a>(
    decl: &'a Declaration,
    prefix: &Path,
    server: Option<&str>,
    hints: &Hints,
) -> Result<(&'a Server, PathBuf), SelectionError> {
    let prefix = absolute_prefix(prefix)?;
    let mut hints = hints.clone();
    if let Some(s) = server {
        hints.names.insert(0, s);
    }
    let name = match server {
        Some(s) => s.to_string(),
        None => {
            let last = prefix
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if !decl.names().contains(&last) {
                refuse_directory_of_deployments(decl, &prefix, None, &hints)?;
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
    let server = decl.get(&name)?;
    refuse_directory_of_deployments(decl, &prefix, Some(server), &hints)?;
    Ok((server, prefix))
}

/// Where install, uninstall and status find the servers: `ROOT/<server>`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Root<'a> {
    /// `--root ROOT`: a directory of deployments, and only that.
    Deployments(&'a Path),
    /// `--prefix ROOT`, the spelling from before `--root`: a directory of deployments, or a
    /// server's own deployment (`install --prefix /opt/codetools`), as it always was.
    Prefix(&'a Path),
    /// `-p DIR`: one server's own deployment, and only that, as `-p` is in every command.
    OneDeployment(&'a Path),
}

impl<'a> Root<'a> {
    /// `--root`, else `--prefix`, else `-p` (clap lets only one of them through): where the
    /// servers are; `None` for each server's declared prefix.
    pub(crate) fn from_flags(
        root: Option<&'a Path>,
        prefix: Option<&'a Path>,
        deployment: Option<&'a Path>,
    ) -> Option<Self> {
        match (root, prefix, deployment) {
            (Some(r), _, _) => Some(Root::Deployments(r)),
            (None, Some(p), _) => Some(Root::Prefix(p)),
            (None, None, Some(d)) => Some(Root::OneDeployment(d)),
            (None, None, None) => None,
        }
    }

    pub(crate) fn path(&self) -> &'a Path {
        match self {
            Root::Deployments(p) | Root::Prefix(p) | Root::OneDeployment(p) => p,
        }
    }

    pub(crate) fn flag(&self) -> &'static str {
        match self {
            Root::Deployments(_) => "--root",
            Root::Prefix(_) => "--prefix",
            Root::OneDeployment(_) => "-p",
        }
    }
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
    /// Every declared server's name, for the messages about a name that is not selected.
    pub(crate) declared: Vec<String>,
}

impl Selection {
    /// `source`: `--config` (else the embedded declaration) and `--launch`; `root`,
    /// `servers`, `name_suffix` as [`many`] takes them; `flat_document`: the flat document.
    pub(crate) fn load(
        source: Source,
        root: Option<Root>,
        servers: &[String],
        name_suffix: &str,
        flat_document: PathBuf,
        notify: Notify,
    ) -> Result<Selection, SelectionError> {
        let decl = Declaration::load(source)?;
        let (servers, named) = many(&decl, root, servers, name_suffix, notify)?;
        Ok(Selection {
            servers,
            flat_document,
            named,
            skipped: Vec::new(),
            declared: decl.names().iter().map(|n| n.to_string()).collect(),
        })
    }

    /// Drop the servers whose deployment is entirely absent (see [`absent`]), saying so to
    /// `notify`, unless they were named: then the caller's deployment check fails on them. A
    /// broken deployment is not absent and is kept, so that it fails before any registration.
    /// Refuses when nothing is left.
    pub(crate) fn skip_absent(
        &mut self,
        root: Option<Root>,
        notify: Notify,
    ) -> Result<(), UsageError> {
        if self.named {
            return Ok(());
        }
        // The root itself missing is the one thing to say, not that each server under it is.
        if let Some(r) = root.filter(|r| r.path().symlink_metadata().is_err()) {
            return Err(UsageError::new(
                format!("{} {} does not exist", r.flag(), r.path().display()),
                format!(
                    "give the directory that holds the deployments (ROOT/<server>), e.g. {} \
                     /opt",
                    r.flag()
                ),
            ));
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
                    "deploy a server at ROOT/NAME under {} {}; for one server's own \
                     deployment P, pass `--root $(dirname P) --server NAME`",
                    r.flag(),
                    r.path().display()
                ),
                None => "deploy a release first, or pass --root ROOT where servers are \
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

/// Where `verify-identity` looks: one deployment (`--prefix`) or a directory of them
/// (`--root`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum VerifyAt<'a> {
    Prefix(&'a Path),
    Root(&'a Path),
}

/// What `verify-identity` was asked to check.
pub(crate) struct VerifyWanted<'a> {
    pub(crate) at: VerifyAt<'a>,
    /// `--server` (repeatable with `--root`).
    pub(crate) servers: &'a [String],
    /// `--name`: the one server's registered name.
    pub(crate) name: Option<&'a str>,
    pub(crate) name_suffix: &'a str,
    pub(crate) flat_document: PathBuf,
}

/// `verify-identity`'s servers: `--prefix`'s one, or `--root`'s (every declared server
/// deployed there, or those of `--server`), each under its registered name (`--name`, or
/// NAME+`--name-suffix`). `given` (the `--expect-commit`s) names the server a directory of
/// deployments given as `--prefix` most likely meant, for the help line.
pub(crate) fn for_verify(
    decl: &Declaration,
    wanted: VerifyWanted,
    given: &[ExpectCommit],
    notify: Notify,
) -> Result<Selection, SelectionError> {
    let declared = decl.names().iter().map(|n| n.to_string()).collect();
    let mut selection = match wanted.at {
        VerifyAt::Root(root) => {
            let root = Root::Deployments(root);
            let (servers, named) =
                many(decl, Some(root), wanted.servers, wanted.name_suffix, notify)?;
            let mut selection = Selection {
                servers,
                flat_document: wanted.flat_document,
                named,
                skipped: Vec::new(),
                declared,
            };
            selection.skip_absent(Some(root), notify)?;
            selection
        }
        VerifyAt::Prefix(prefix) => {
            if wanted.servers.len() > 1 {
                return Err(UsageError::new(
                    format!(
                        "--prefix {} is one deployment, but --server is given {} times",
                        prefix.display(),
                        wanted.servers.len()
                    ),
                    format!(
                        "check several servers with --root (the directory holding them), e.g. \
                         --root {}",
                        prefix.parent().unwrap_or(prefix).display()
                    ),
                )
                .into());
            }
            let mut hints = Hints {
                names: Vec::new(),
                takes_root: true,
            };
            hints.names.extend(wanted.name);
            hints.names.extend(given.iter().filter_map(|e| match e {
                ExpectCommit::Named(n, _) => Some(n.as_str()),
                ExpectCommit::Bare(_) => None,
            }));
            let (server, prefix) = single(
                decl,
                prefix,
                wanted.servers.first().map(String::as_str),
                &hints,
            )?;
            Selection {
                servers: vec![Selected {
                    server: server.clone(),
                    registered_name: format!("{}{}", server.name, wanted.name_suffix),
                    prefix,
                }],
                flat_document: wanted.flat_document,
                named: true,
                skipped: Vec::new(),
                declared,
            }
        }
    };
    if let Some(name) = wanted.name {
        match selection.servers.as_mut_slice() {
            [one] => one.registered_name = name.to_string(),
            several => {
                return Err(UsageError::new(
                    format!(
                        "--name {name} names one registration, but {} servers are checked",
                        several.len()
                    ),
                    "give --name-suffix SUFFIX for the registered names, or check one server \
                     with --server NAME",
                )
                .into())
            }
        }
    }
    Ok(selection)
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
/// `--prefix` here is a root (the spelling from before `--root`), but a server's own prefix is
/// a natural thing to pass (`install --prefix /opt/codetools`). When the root's last component
/// names a declared server, the root holds that server's deployment and no `ROOT/<server>`
/// exists, it is taken as that server's prefix, saying so to `notify`; never as a root holding
/// `…/codetools/codetools`. `--root` means a directory of deployments only: given one
/// server's own deployment, it is refused with the command that would work.
pub(crate) fn many(
    decl: &Declaration,
    root: Option<Root>,
    names: &[String],
    suffix: &str,
    notify: Notify,
) -> Result<(Vec<Selected>, bool), SelectionError> {
    if let Some(Root::OneDeployment(dir)) = root {
        let (server, prefix) = one_deployment(decl, dir, names)?;
        return Ok((vec![selected(server, prefix, suffix)?], true));
    }
    let strict = matches!(root, Some(Root::Deployments(_)));
    let flag = root.map_or("--root", |r| r.flag());
    let root = root.map(|r| absolute_dir(flag, r.path())).transpose()?;
    let mut chosen: Vec<&Server> = Vec::new();
    let mut own_prefix: Option<PathBuf> = None;
    let server_prefix = root.as_deref().and_then(|r| {
        let last = r.file_name()?.to_str()?;
        let s = decl.servers.iter().find(|s| s.name == last)?;
        (r.join(&s.name).symlink_metadata().is_err() && holds_deployment(s, r)).then_some(s)
    });
    if let (Some(s), Some(r), true) = (server_prefix, root.as_deref(), strict) {
        let parent = r.parent().unwrap_or(Path::new("/"));
        return Err(DirectoryKindError::OneForDeployments {
            dir: r.to_path_buf(),
            server: s.name.clone(),
            works: CommandLine::current()
                .replace(&["--root", "-r"], "--root", &parent.to_string_lossy())
                .ensure("--server", &s.name),
        }
        .into());
    }
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
                    "pass the directory that holds the servers, e.g. --root {}",
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
            let prefix = match (&own_prefix, &root) {
                (Some(p), _) => p.clone(),
                (None, Some(r)) => r.join(&s.name),
                (None, None) => s.prefix.clone(),
            };
            selected(s, prefix, suffix)
        })
        .collect::<Result<Vec<_>, UsageError>>()?;
    Ok((selected, named))
}

/// `server` at `prefix`, registered as its name and `suffix`.
fn selected(server: &Server, prefix: PathBuf, suffix: &str) -> Result<Selected, UsageError> {
    let registered_name = format!("{}{suffix}", server.name);
    validate_name(&registered_name).map_err(|why| {
        UsageError::new(
            format!("registered name {registered_name:?} is not valid: {why}"),
            "choose a --name-suffix of letters, digits, '-' and '_'",
        )
    })?;
    Ok(Selected {
        server: server.clone(),
        prefix,
        registered_name,
    })
}

/// `-p DIR` of install, uninstall, status or policy: one server's own deployment, as `-p` is
/// in every command (issue 36: `-p` was a directory of deployments there and one deployment
/// in promote). The server is `--server`'s, else the directory's last component; a directory
/// of deployments is refused with the `--root` command that takes it.
fn one_deployment<'a>(
    decl: &'a Declaration,
    dir: &Path,
    names: &[String],
) -> Result<(&'a Server, PathBuf), SelectionError> {
    if names.len() > 1 {
        return Err(UsageError::new(
            format!(
                "-p {} is one deployment, and --server names {} servers ({})",
                dir.display(),
                names.len(),
                names.join(", ")
            ),
            format!(
                "for several servers give the directory that holds them: -r {}",
                dir.parent().unwrap_or(Path::new("/")).display()
            ),
        )
        .into());
    }
    let hints = Hints {
        names: names.iter().map(String::as_str).collect(),
        takes_root: false,
    };
    single(decl, dir, names.first().map(String::as_str), &hints).map_err(|e| match e {
        SelectionError::DirectoryKind(DirectoryKindError::DeploymentsForOne {
            dir, held, ..
        }) => {
            let works = CommandLine::current().replace(&["-p"], "--root", &dir.to_string_lossy());
            DirectoryKindError::DeploymentsForOne {
                flag: "-p",
                dir,
                held,
                works,
                takes_root: false,
            }
            .into()
        }
        e => e,
    })
}

/// Parse a full expected commit given on the command line.
pub(crate) fn expect_commit(s: &str) -> Result<Sha, UsageError> {
    Sha::parse(s).map_err(|why| {
        UsageError::new(
            format!("--expect-commit {s:?} is not a full commit sha: {why}"),
            "pass the full sha, or NAME=SHA, e.g. --expect-commit \"$(git rev-parse HEAD)\"",
        )
    })
}

/// One `--expect-commit`: `SHA`, the commit of the one selected server, or `NAME=SHA`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExpectCommit {
    Bare(Sha),
    Named(String, Sha),
}

/// Parse every `--expect-commit` the same way on every command: `SHA` or `NAME=SHA`, the sha
/// full (40 or 64 hex).
pub(crate) fn parse_expect_commits(given: &[String]) -> Result<Vec<ExpectCommit>, UsageError> {
    given
        .iter()
        .map(|g| match g.split_once('=') {
            None => Ok(ExpectCommit::Bare(expect_commit(g)?)),
            Some((name, sha)) if !name.is_empty() => {
                Ok(ExpectCommit::Named(name.to_string(), expect_commit(sha)?))
            }
            Some(_) => Err(UsageError::new(
                format!("--expect-commit {g:?} has no server name before the ="),
                "pass NAME=SHA, e.g. --expect-commit codetools=$(git rev-parse HEAD), or the bare sha",
            )),
        })
        .collect()
}

/// Which server each of `given` is the expected commit of, among `selection`'s servers. A
/// bare sha needs exactly one selected server; a NAME must be selected (a server skipped as
/// not deployed is refused: the caller expected it to be there); one commit per server.
pub(crate) fn expect_commits(
    given: &[ExpectCommit],
    selection: &Selection,
) -> Result<BTreeMap<String, Sha>, UsageError> {
    let selected: Vec<&str> = selection
        .servers
        .iter()
        .map(|s| s.server.name.as_str())
        .collect();
    let mut out = BTreeMap::new();
    for e in given {
        let (name, sha) = match e {
            ExpectCommit::Named(name, sha) => (name.as_str(), sha),
            ExpectCommit::Bare(sha) => match selected.as_slice() {
                [one] => (*one, sha),
                _ => {
                    return Err(UsageError::new(
                        format!(
                            "--expect-commit {sha} is a bare sha, but {} servers are selected \
                             ({})",
                            selected.len(),
                            selected.join(", ")
                        ),
                        format!(
                            "name the server of each commit, e.g. {}; or select one server \
                             with --server NAME",
                            selected
                                .iter()
                                .map(|n| format!("--expect-commit {n}=SHA"))
                                .collect::<Vec<_>>()
                                .join(" ")
                        ),
                    ))
                }
            },
        };
        if let Some((_, why)) = selection.skipped.iter().find(|(n, _)| n == name) {
            return Err(UsageError::new(
                format!("--expect-commit names {name:?}, which is not deployed: {why}"),
                format!("deploy {name} first, or drop its --expect-commit"),
            ));
        }
        if !selection.declared.iter().any(|d| d == name) {
            return Err(UsageError::new(
                format!(
                    "--expect-commit names {name:?}, which is not a declared server (declared: \
                     {})",
                    selection.declared.join(", ")
                ),
                format!(
                    "name a declared server ({}), or declare {name} in a --config FILE",
                    selection.declared.join(", ")
                ),
            ));
        }
        if !selected.contains(&name) {
            return Err(UsageError::new(
                format!(
                    "--expect-commit names {name:?}, which is not selected (selected: {})",
                    selected.join(", ")
                ),
                match selected.as_slice() {
                    [one] => format!(
                        "pass --expect-commit {one}=SHA (or the bare sha), or with --root \
                         select {name} too: --server {name}"
                    ),
                    _ => format!("select it too with --server {name}, or drop its --expect-commit"),
                },
            ));
        }
        if out.insert(name.to_string(), sha.clone()).is_some() {
            return Err(UsageError::new(
                format!("--expect-commit is given twice for {name:?}"),
                "give one commit per server",
            ));
        }
    }
    Ok(out)
}

/// verify-identity's rule on top of [`expect_commits`]: every selected server has one.
pub(crate) fn require_every_commit(
    expected: &BTreeMap<String, Sha>,
    selection: &Selection,
) -> Result<(), UsageError> {
    let missing: Vec<&str> = selection
        .servers
        .iter()
        .map(|s| s.server.name.as_str())
        .filter(|n| !expected.contains_key(*n))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(UsageError::new(
        format!(
            "no --expect-commit for {}, which {} selected",
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" }
        ),
        format!(
            "give {}, or narrow the check with --server NAME",
            missing
                .iter()
                .map(|n| format!("--expect-commit {n}=SHA"))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CT: &str = "c0de7001c0de7001c0de7001c0de7001c0de7001";
    const OR: &str = "0c4e57a7a0c4e57a7a0c4e57a7a0c4e57a7a0c4e";

    /// The built-in declaration's servers, `names` of them selected.
    fn selection(names: &[&str]) -> Selection {
        let decl = Declaration::load(Default::default()).unwrap();
        Selection {
            servers: names
                .iter()
                .map(|n| Selected {
                    server: decl.get(n).unwrap().clone(),
                    prefix: PathBuf::from("/opt").join(n),
                    registered_name: n.to_string(),
                })
                .collect(),
            flat_document: PathBuf::from("/dev/null"),
            named: true,
            skipped: Vec::new(),
            declared: decl.names().iter().map(|n| n.to_string()).collect(),
        }
    }

    fn given(args: &[&str]) -> Vec<ExpectCommit> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        parse_expect_commits(&args).unwrap()
    }

    fn resolved(args: &[&str], names: &[&str]) -> Result<Vec<(String, String)>, UsageError> {
        expect_commits(&given(args), &selection(names))
            .map(|m| m.into_iter().map(|(k, v)| (k, v.to_string())).collect())
    }

    #[test]
    fn a_bare_sha_is_the_commit_of_the_one_selected_server() {
        assert_eq!(
            resolved(&[CT], &["codetools"]).unwrap(),
            vec![("codetools".to_string(), CT.to_string())]
        );
    }

    #[test]
    fn a_bare_sha_with_several_servers_selected_is_refused() {
        let e = resolved(&[CT], &["codetools", "orchestrata"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("bare sha, but 2 servers are selected"), "{e}");
    }

    #[test]
    fn name_equals_sha_is_the_commit_of_that_server() {
        let ct = format!("codetools={CT}");
        let or = format!("orchestrata={OR}");
        assert_eq!(
            resolved(&[&ct, &or], &["codetools", "orchestrata"]).unwrap(),
            vec![
                ("codetools".to_string(), CT.to_string()),
                ("orchestrata".to_string(), OR.to_string())
            ]
        );
    }

    #[test]
    fn a_name_not_selected_or_not_declared_and_a_name_given_twice_are_refused() {
        let or = format!("orchestrata={OR}");
        let e = resolved(&[&or], &["codetools"]).unwrap_err().to_string();
        assert!(
            e.contains("which is not selected (selected: codetools)"),
            "{e}"
        );
        let nope = format!("nope={OR}");
        let e = resolved(&[&nope], &["codetools"]).unwrap_err().to_string();
        assert!(e.contains("which is not a declared server"), "{e}");
        let ct = format!("codetools={CT}");
        let e = resolved(&[&ct, CT], &["codetools"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("given twice"), "{e}");
    }

    #[test]
    fn parse_refuses_an_abbreviated_sha_and_an_empty_name() {
        for bad in ["c0de7001", "codetools=c0de7001", "=c0de7001"] {
            assert!(parse_expect_commits(&[bad.to_string()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_selected_server_needs_a_commit_where_it_is_required() {
        let sel = selection(&["codetools", "orchestrata"]);
        let ct = format!("codetools={CT}");
        let expected = expect_commits(&given(&[&ct]), &sel).unwrap();
        let e = require_every_commit(&expected, &sel).unwrap_err();
        assert!(
            e.to_string().contains("no --expect-commit for orchestrata"),
            "{e}"
        );
    }
}
