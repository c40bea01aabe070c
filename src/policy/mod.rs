//! `mcp-deploy policy`: the allowlist a client enforces, derived from what was deployed, so
//! that the agent can run the declared servers and nothing else.
//!
//! 1. Each selected server is rendered ([`crate::deployment::render`]): its entry's command
//!    is the stable `<prefix>/bin/...` path the registration names.
//! 2. That path must stay valid across a promote ([`stable_command`]): a command named under
//!    `<prefix>/releases/`, or reached through a link into `releases/` that does not pass
//!    `current`, would pin one release and break at the next promote; it is refused.
//! 3. Per client, an allowlist entry per server, in the client's own shape: claude the exact
//!    command line, codex the command path, the URL for an http server in both; gemini only
//!    the name. What each pins is said with it ([`Pins`]): a policy that pins less proves
//!    less. Each is its client's policy writer (`clients/<name>/policy.rs`), the optional
//!    capability of its kind ([`crate::clients::PolicyWriter`]).
//! 4. Printed, or written into the client's policy file ([`write::write`] with the client's
//!    own edit, [`edit`]).

pub(crate) mod apply;
pub(crate) mod write;

pub(crate) use crate::clients::policy::{Allowed, Pins};

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::clients::PolicyWriter;
use crate::deployment::declaration::Layout;
use crate::deployment::selection::Selected;
use crate::usage::UsageError;

/// Why a policy could not be derived or written (every one exit 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PolicyError {
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error(transparent)]
    Lock(#[from] crate::registration::lock::LockError),
    #[error(transparent)]
    Render(#[from] crate::deployment::render::RenderError),
}

/// One client's allowlist.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Allowlist {
    pub(crate) client: &'static str,
    /// The file `--write` puts it into.
    pub(crate) file: PathBuf,
    /// Where in the file (`allowedMcpServers`, `mcp.allowed`...).
    pub(crate) key: &'static str,
    pub(crate) pins: Pins,
    pub(crate) servers: Vec<Allowed>,
}

/// The clients `policy` supports: those whose kind has a policy writer, in the list's order.
pub(crate) fn supported() -> Vec<&'static str> {
    crate::clients::ClientKind::all()
        .iter()
        .filter(|k| k.kind().policy().is_some())
        .map(|k| k.name())
        .collect()
}

/// The policy writer of the client `client`, or why `policy` cannot write for it.
/// Refuse a policy file `list`'s client would not count ([`PolicyWriter::check_counted`]).
pub(crate) fn check_counted(list: &Allowlist) -> Result<(), UsageError> {
    writer(list.client)?.check_counted(&list.file)
}

fn writer(client: &str) -> Result<&'static dyn PolicyWriter, UsageError> {
    crate::clients::ClientKind::named(client)
        .and_then(|k| k.kind().policy())
        .ok_or_else(|| unsupported(client))
}

/// Why `policy` cannot write for `client`, naming those it can.
fn unsupported(client: &str) -> UsageError {
    UsageError::new(
        format!("policy cannot derive {client}'s allowlist yet"),
        format!(
            "policy supports --client {}; for another client, write its allowlist by hand",
            supported().join(",")
        ),
    )
}

/// Refuse a client `policy` cannot write for yet, naming those it can.
pub(crate) fn check_clients(clients: &[&'static str]) -> Result<(), UsageError> {
    for c in clients {
        writer(c)?;
    }
    Ok(())
}

/// `client`'s allowlist for the selected servers (steps 1 to 3).
pub(crate) fn derive(client: &'static str, servers: &[Selected]) -> Result<Allowlist, PolicyError> {
    let writer = writer(client)?;
    let mut out = Vec::new();
    for s in servers {
        let rendered = crate::deployment::render::render(&s.server, &s.prefix)?;
        if let crate::entry::Transport::Stdio { command, .. } = &rendered.entry.transport {
            stable_command(
                &s.server.name,
                s.server.layout,
                &s.prefix,
                Path::new(command),
            )?;
        }
        out.push(Allowed {
            name: s.registered_name.clone(),
            entry: writer.entry(&s.server.name, &s.registered_name, &rendered.entry)?,
        });
    }
    Ok(Allowlist {
        client,
        file: writer.file(),
        key: writer.key(),
        pins: writer.pins(),
        servers: out,
    })
}

/// `list`'s client's edit of its policy file: the new text for the old (see [`write::Edit`]).
pub(crate) fn edit(
    list: &Allowlist,
    path: &Path,
    old: Option<&str>,
) -> Result<(Option<String>, write::Change), UsageError> {
    writer(list.client)?.edit(path, old, &list.servers)
}

/// `--format file`: the fragment of the client's own file, as text in its format.
pub(crate) fn fragment(list: &Allowlist) -> String {
    writer(list.client)
        .expect("an allowlist is derived only for a client with a policy writer")
        .fragment(&list.servers)
}

/// Step 2: `command` names no path under `<prefix>/releases/`, and, in a release layout,
/// following its links reaches `<prefix>/current` before any `<prefix>/releases/<sha>`.
pub(crate) fn stable_command(
    server: &str,
    layout: Layout,
    prefix: &Path,
    command: &Path,
) -> Result<(), UsageError> {
    let releases = prefix.join("releases");
    let refuse = |via: &Path| {
        UsageError::new(
            format!(
                "{server}'s command {} resolves through the release path {}: a promote \
                 would leave a policy naming it behind",
                command.display(),
                via.display()
            ),
            format!(
                "declare the stable path ({}/bin/<exe>, a link through current) as the \
                 server's command",
                prefix.display()
            ),
        )
    };
    if lexical(command).starts_with(&releases) {
        return Err(refuse(command));
    }
    if layout != Layout::Release {
        return Ok(());
    }
    let current = prefix.join("current");
    let mut at = command.to_path_buf();
    // Each hop of the link chain, as written (no resolution of the hop's own directories:
    // a directory link into releases/ is caught by the lexical test of the hop).
    for _ in 0..40 {
        let hop = lexical(&at);
        if hop.starts_with(&current) {
            return Ok(());
        }
        if hop.starts_with(&releases) {
            return Err(refuse(&hop));
        }
        match std::fs::read_link(&at) {
            Ok(target) => at = at.parent().unwrap_or(Path::new("/")).join(target),
            Err(_) => break,
        }
    }
    // Not a link into the prefix's releases: a path the promote does not change.
    match std::fs::canonicalize(command) {
        Ok(real) => match std::fs::canonicalize(&releases) {
            Ok(r) if real.starts_with(&r) => {
                // It reaches a release, and not through `current`: through a linked
                // directory of its path.
                Err(refuse(&real))
            }
            _ => Ok(()),
        },
        Err(_) => Ok(()),
    }
}

/// `path` with `.` dropped and `..` taken lexically.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn release_layout() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("codetools");
        std::fs::create_dir_all(p.join("releases/aaa/bin")).unwrap();
        std::fs::write(p.join("releases/aaa/bin/codetools"), "").unwrap();
        symlink("releases/aaa", p.join("current")).unwrap();
        std::fs::create_dir_all(p.join("bin")).unwrap();
        symlink("../current/bin/codetools", p.join("bin/codetools")).unwrap();
        (d, p)
    }

    #[test]
    fn the_stable_bin_path_through_current_is_accepted() {
        let (_d, p) = release_layout();
        stable_command("codetools", Layout::Release, &p, &p.join("bin/codetools")).unwrap();
    }

    #[test]
    fn a_command_under_releases_is_refused_naming_the_stable_path() {
        let (_d, p) = release_layout();
        let e = stable_command(
            "codetools",
            Layout::Release,
            &p,
            &p.join("releases/aaa/bin/codetools"),
        )
        .unwrap_err();
        assert!(e.message.contains("release path"), "{e}");
        assert!(e.help.contains("/bin/<exe>"), "{}", e.help);
        let dotted = p.join("bin/../releases/aaa/bin/codetools");
        assert!(stable_command("codetools", Layout::Release, &p, &dotted).is_err());
    }

    #[test]
    fn a_link_straight_into_a_release_is_refused() {
        let (_d, p) = release_layout();
        symlink("../releases/aaa/bin/codetools", p.join("bin/pinned")).unwrap();
        let e = stable_command("codetools", Layout::Release, &p, &p.join("bin/pinned"));
        assert!(e.is_err());
        // A directory link into a release: the path's own directory pins it.
        symlink("releases/aaa/bin", p.join("pinned-bin")).unwrap();
        let e = stable_command(
            "codetools",
            Layout::Release,
            &p,
            &p.join("pinned-bin/codetools"),
        );
        assert!(e.is_err());
    }

    #[test]
    fn another_client_is_refused_naming_the_supported_ones() {
        let e = check_clients(&["claude", "cursor"]).unwrap_err();
        assert!(e.message.contains("cursor"), "{e}");
        assert!(
            e.help.contains("--client claude,codex,gemini"),
            "{}",
            e.help
        );
        check_clients(&["claude", "codex", "gemini"]).unwrap();
    }
}
