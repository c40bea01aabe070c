//! `mcp-deploy policy`: the allowlist a client enforces, derived from what was deployed, so
//! that the agent can run the declared servers and nothing else.
//!
//! 1. Each selected server is rendered ([`crate::deployment::render`]): its entry's command
//!    is the stable `<prefix>/bin/...` path the registration names.
//! 2. That path must stay valid across a promote ([`stable_command`]): a command named under
//!    `<prefix>/releases/`, or reached through a link into `releases/` that does not pass
//!    `current`, would pin one release and break at the next promote; it is refused.
//! 3. Per client, an allowlist entry per server: the exact command line for a stdio server,
//!    the URL for an http one ([`claude::entry`]). Whether the client's policy pins the
//!    command or only names the server is said with it ([`Allowlist::pins_command`]).
//! 4. Printed, or written into the client's policy file ([`claude::write`]).
//!
//! Only Claude Code is supported so far; codex's `requirements.toml` and gemini's
//! `mcp.allowed` come next.

pub(crate) mod claude;
pub(crate) mod write;

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

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

/// One server's line in a client's allowlist.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Allowed {
    /// The registered name (what a name-only policy lists).
    pub(crate) name: String,
    /// The entry in the client's own shape, e.g. `{"serverCommand": [...]}`.
    pub(crate) entry: Value,
}

/// One client's allowlist.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Allowlist {
    pub(crate) client: &'static str,
    /// The file `--write` puts it into.
    pub(crate) file: PathBuf,
    /// Whether the client's policy pins each server's command (or URL); `false`: it can only
    /// name servers, which proves less (any command under an allowed name runs).
    pub(crate) pins_command: bool,
    pub(crate) servers: Vec<Allowed>,
}

/// The clients `policy` supports so far.
pub(crate) const SUPPORTED: &[&str] = &["claude"];

/// Refuse a client `policy` cannot write for yet, naming those it can.
pub(crate) fn check_clients(clients: &[&'static str]) -> Result<(), UsageError> {
    match clients.iter().find(|c| !SUPPORTED.contains(c)) {
        None => Ok(()),
        Some(c) => Err(UsageError::new(
            format!("policy cannot derive {c}'s allowlist yet"),
            format!(
                "policy supports --client {} so far; the other clients come next",
                SUPPORTED.join(",")
            ),
        )),
    }
}

/// `client`'s allowlist for the selected servers (steps 1 to 3).
pub(crate) fn derive(client: &'static str, servers: &[Selected]) -> Result<Allowlist, PolicyError> {
    check_clients(&[client])?;
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
            entry: claude::entry(&s.server.name, &rendered.entry)?,
        });
    }
    Ok(Allowlist {
        client,
        file: claude::managed_settings(),
        pins_command: true,
        servers: out,
    })
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
    fn another_client_is_refused_naming_claude() {
        let e = check_clients(&["claude", "codex"]).unwrap_err();
        assert!(e.message.contains("codex"), "{e}");
        assert!(e.help.contains("--client claude"), "{}", e.help);
        check_clients(&["claude"]).unwrap();
    }
}
