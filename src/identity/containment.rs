//! Containment: a registered command is absolute, normalized, an executable file, reached
//! through no `/proc` or `/dev/fd` magic link at any step, and resolves (each symlink followed
//! by us, one component at a time) inside the release, compared by path components; in a
//! release layout its stable path leads to the release's own file of that name.

use std::collections::VecDeque;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::deployment::declaration::{has_dot_components, Layout};

/// Why a registered command is not vouched for: the command as registered, and where its
/// resolution went (`real`) and the root it had to stay inside.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ContainmentError {
    #[error("command {} is relative; a registration needs an absolute path", .command.display())]
    Relative { command: PathBuf },
    #[error(
        "command {} holds . or .. components; register the normalized path",
        .command.display()
    )]
    DotComponents { command: PathBuf },
    /// A step of the resolution is, passes through, or links to (`how`) the magic path `at`.
    #[error(
        "command {} {how} {}: a path under /proc or /dev/fd means something different to each \
         process, so the verifier cannot vouch for what the agent would run",
        .command.display(), .at.display()
    )]
    Magic {
        command: PathBuf,
        how: MagicStep,
        at: PathBuf,
    },
    #[error("command {} cannot be resolved: {}: {source}", .command.display(), .at.display())]
    Unresolvable {
        command: PathBuf,
        at: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "command {} cannot be resolved: more than {MAX_LINKS} symlinks (a loop?)",
        .command.display()
    )]
    TooManyLinks { command: PathBuf },
    #[error("command {}: {source}", .command.display())]
    Unreadable {
        command: PathBuf,
        source: std::io::Error,
    },
    #[error("command {} resolves to {}, not a file", .command.display(), .real.display())]
    NotAFile { command: PathBuf, real: PathBuf },
    #[error("command {} ({}) is not executable", .command.display(), .real.display())]
    NotExecutable { command: PathBuf, real: PathBuf },
    #[error(
        "command {} resolves to {}, outside {}",
        .command.display(), .real.display(), .root.display()
    )]
    Outside {
        command: PathBuf,
        real: PathBuf,
        root: PathBuf,
    },
    /// Release layouts: the stable path leads to another file of the release than its own.
    #[error(
        "command {} resolves to {}, not to the release's own {}",
        .command.display(), .real.display(), .own.display()
    )]
    NotItsOwn {
        command: PathBuf,
        real: PathBuf,
        own: PathBuf,
    },
}

/// What a failed containment check was checked against: the release's root, the prefix, and
/// the declared command (`None`: a remote server).
pub(crate) struct Against<'a> {
    pub(crate) root: &'a Path,
    pub(crate) prefix: &'a Path,
    pub(crate) declared: Option<&'a Path>,
}

impl ContainmentError {
    /// The cause a user can act on and the next step, in one wording for every command that
    /// reports it (status's `target`, verify-identity's and install's `mcp-registration`):
    /// a file missing from the release is not a bad link, and a registration edited to point
    /// elsewhere is not a release that went away.
    pub(crate) fn next_step(&self, against: &Against) -> String {
        let Against {
            root,
            prefix,
            declared,
        } = against;
        let releases = prefix.join("releases");
        let is_release = root.starts_with(&releases);
        let redeploy = if is_release {
            format!(
                "deploy that release again, or roll back to the one before (mcp-deploy rollback \
                 --prefix {})",
                prefix.display()
            )
        } else {
            format!("deploy {} again", prefix.display())
        };
        let command = self.command();
        if declared.is_some_and(|d| d != command) {
            let declared = declared.expect("checked just above");
            return if command.starts_with(&releases) {
                format!(
                    "the registration points into a release that is gone or was replaced, not at \
                     the declared {}; install would re-register it",
                    declared.display()
                )
            } else {
                format!(
                    "the registered command is not the declared {} (edited by hand, or an older \
                     declaration); install would re-register it",
                    declared.display()
                )
            };
        }
        match self {
            ContainmentError::Unresolvable { at, .. } if at.starts_with(root) => format!(
                "that file is missing from the release (incomplete, or deleted from it), and the \
                 link to it is as deployed: {redeploy}"
            ),
            ContainmentError::NotAFile { real, .. }
            | ContainmentError::NotExecutable { real, .. }
                if real.starts_with(root) =>
            {
                format!(
                    "{} is the release's own file, and it is not an executable file: {redeploy}",
                    real.display()
                )
            }
            ContainmentError::Unresolvable { .. }
            | ContainmentError::NotAFile { .. }
            | ContainmentError::NotExecutable { .. }
            | ContainmentError::Outside { .. }
            | ContainmentError::NotItsOwn { .. }
            | ContainmentError::TooManyLinks { .. }
                if is_release =>
            {
                let exe = command
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "<exe>".into());
                format!(
                    "the deployment's link {} does not lead into the current release: fix it \
                     (ln -sfn ../current/bin/{exe} {}); install cannot",
                    command.display(),
                    command.display()
                )
            }
            ContainmentError::Relative { .. } | ContainmentError::DotComponents { .. } => {
                "change the server's declaration to an absolute, normalized command path, then \
                 install"
                    .into()
            }
            // A magic or unreadable step, or a resolution that went wrong outside a release
            // layout.
            _ => format!(
                "the deployed {} must resolve to an executable file inside {}: fix the \
                 deployment ({redeploy})",
                command.display(),
                root.display()
            ),
        }
    }

    /// The command as registered.
    fn command(&self) -> &Path {
        match self {
            ContainmentError::Relative { command }
            | ContainmentError::DotComponents { command }
            | ContainmentError::Magic { command, .. }
            | ContainmentError::Unresolvable { command, .. }
            | ContainmentError::TooManyLinks { command }
            | ContainmentError::Unreadable { command, .. }
            | ContainmentError::NotAFile { command, .. }
            | ContainmentError::NotExecutable { command, .. }
            | ContainmentError::Outside { command, .. }
            | ContainmentError::NotItsOwn { command, .. } => command,
        }
    }
}

/// How a resolution step met a magic path.
#[derive(Debug)]
pub(crate) enum MagicStep {
    /// The command itself is one.
    Is,
    /// A prefix of the path, as resolved so far, is one.
    Through,
    /// The symlink `link` points to one.
    LinksTo { link: PathBuf },
}

impl std::fmt::Display for MagicStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MagicStep::Is => f.write_str("is"),
            MagicStep::Through => f.write_str("resolves through"),
            MagicStep::LinksTo { link } => write!(f, "links ({}) to", link.display()),
        }
    }
}

/// Release layouts: the stable path `<prefix>/P` must lead to the release's own `P`
/// (`bin/codetools -> ../current/bin/codetools`), not to another file of the release: a
/// re-pointed `bin/codetools -> ../current/bin/helper` stays inside the release, but it is
/// not the declared program.
/// Also `status`'s `target` check and install's gate, so that none of them passes what the
/// others fail.
pub(crate) fn check_stable_path_via(
    layout: Layout,
    prefix: &Path,
    command: &Path,
    root: &Path,
    via: Option<&(PathBuf, PathBuf)>,
) -> Result<(), ContainmentError> {
    if layout != Layout::Release {
        return Ok(());
    }
    let Ok(rel) = command.strip_prefix(prefix) else {
        return Ok(());
    };
    let (Ok(real), Ok(own)) = (
        resolve_command_via(command, via),
        fs::canonicalize(root.join(rel)),
    ) else {
        // Unresolvable: check_command_inside_via has said why.
        return Ok(());
    };
    if real != own {
        return Err(ContainmentError::NotItsOwn {
            command: command.to_path_buf(),
            real,
            own,
        });
    }
    Ok(())
}

/// The registered command must be absolute, free of `.`/`..`, reached through no magic link
/// ([`resolve_command`]), an executable regular file, and resolve (every symlink followed) to
/// a path inside `root` (already canonical). `via`: `current` taken as a link to the release
/// the run resolved ([`crate::deployment::release::Release::via`]).
pub(crate) fn check_command_inside_via(
    command: &Path,
    root: &Path,
    via: Option<&(PathBuf, PathBuf)>,
) -> Result<String, ContainmentError> {
    let shown = command.display();
    let cmd = || command.to_path_buf();
    if !command.is_absolute() {
        return Err(ContainmentError::Relative { command: cmd() });
    }
    if has_dot_components(command) {
        return Err(ContainmentError::DotComponents { command: cmd() });
    }
    let real = resolve_command_via(command, via)?;
    let meta = fs::metadata(&real).map_err(|source| ContainmentError::Unreadable {
        command: cmd(),
        source,
    })?;
    if !meta.is_file() {
        return Err(ContainmentError::NotAFile {
            command: cmd(),
            real,
        });
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(ContainmentError::NotExecutable {
            command: cmd(),
            real,
        });
    }
    // Path::starts_with compares whole components: /opt/ct-evil does not start with /opt/ct.
    if !real.starts_with(root) {
        return Err(ContainmentError::Outside {
            command: cmd(),
            real,
            root: root.to_path_buf(),
        });
    }
    Ok(format!(
        "{shown} -> {} inside {}",
        real.display(),
        root.display()
    ))
}

/// The most symlinks followed while resolving a command (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Resolve `command` one component at a time, following each symlink ourselves, and refuse
/// any step that is, or leads into, a path whose meaning depends on the process that opens it
/// ([`is_magic`]): `/proc/self/root/opt/x` or a link to `/dev/fd/3` may resolve inside the
/// release for the verifier and to anything at all for the agent. Returns the resolved path,
/// which agrees with `realpath` when nothing magic is on the way.
#[cfg(test)]
pub(crate) fn resolve_command(command: &Path) -> Result<PathBuf, ContainmentError> {
    resolve_command_via(command, None)
}

/// [`resolve_command`], where `via = (link, dir)` makes the path `link` (canonical) resolve
/// as a symlink to `dir` whatever it is on disk: promote's preflight follows the stable path
/// through `current` as it will be after the switch.
pub(crate) fn resolve_command_via(
    command: &Path,
    via: Option<&(PathBuf, PathBuf)>,
) -> Result<PathBuf, ContainmentError> {
    let magic = |at: &Path, how: MagicStep| ContainmentError::Magic {
        command: command.to_path_buf(),
        how,
        at: at.to_path_buf(),
    };
    let unresolvable = |at: &Path, source| ContainmentError::Unresolvable {
        command: command.to_path_buf(),
        at: at.to_path_buf(),
        source,
    };
    if is_magic(command) {
        return Err(magic(command, MagicStep::Is));
    }
    let mut resolved = PathBuf::from("/");
    let mut queue: VecDeque<PathBuf> = command
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(PathBuf::from(n)),
            _ => None,
        })
        .collect();
    let mut links = 0;
    while let Some(part) = queue.pop_front() {
        if part.as_os_str() == ".." {
            resolved.pop();
            continue;
        }
        if part.as_os_str() == "." {
            continue;
        }
        let next = resolved.join(&part);
        if is_magic(&next) {
            return Err(magic(&next, MagicStep::Through));
        }
        if let Some((_, dir)) = via.filter(|(link, _)| *link == next) {
            // Counted as the link it stands for: a view whose release lies under its own
            // `current` must end, as the kernel's resolution of that link would.
            links += 1;
            if links > MAX_LINKS {
                return Err(ContainmentError::TooManyLinks {
                    command: command.to_path_buf(),
                });
            }
            resolved = PathBuf::from("/");
            for c in dir.components().rev() {
                if let Component::Normal(n) = c {
                    queue.push_front(PathBuf::from(n));
                }
            }
            continue;
        }
        let meta = fs::symlink_metadata(&next).map_err(|e| unresolvable(&next, e))?;
        if !meta.file_type().is_symlink() {
            resolved = next;
            continue;
        }
        links += 1;
        if links > MAX_LINKS {
            return Err(ContainmentError::TooManyLinks {
                command: command.to_path_buf(),
            });
        }
        let target = fs::read_link(&next).map_err(|e| unresolvable(&next, e))?;
        if target.is_absolute() {
            if is_magic(&target) {
                return Err(magic(&target, MagicStep::LinksTo { link: next }));
            }
            resolved = PathBuf::from("/");
        }
        for c in target.components().rev() {
            match c {
                Component::Normal(n) => queue.push_front(PathBuf::from(n)),
                Component::ParentDir => queue.push_front(PathBuf::from("..")),
                _ => {}
            }
        }
    }
    Ok(resolved)
}

/// `/proc` and everything under it, `/dev/fd` and under it, and `/dev/stdin`, `/dev/stdout`,
/// `/dev/stderr` (links into `/proc/self/fd`).
fn is_magic(path: &Path) -> bool {
    path.starts_with("/proc")
        || path.starts_with("/dev/fd")
        || ["/dev/stdin", "/dev/stdout", "/dev/stderr"]
            .iter()
            .any(|p| path.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_paths_are_refused_at_any_step() {
        assert!(resolve_command(Path::new("/proc/self/root/bin/sh")).is_err());
        assert!(resolve_command(Path::new("/dev/fd/0")).is_err());
        assert!(resolve_command(Path::new("/dev/stdin")).is_err());
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("via-proc");
        std::os::unix::fs::symlink("/proc/self/root/bin/sh", &link).unwrap();
        let err = resolve_command(&link).unwrap_err().to_string();
        assert!(err.contains("/proc/self/root/bin/sh"), "{err}");
        // A relative link that climbs into /proc is found too.
        let depth = dir.path().components().count() - 1;
        let rel = format!("{}proc/self/exe", "../".repeat(depth));
        let link2 = dir.path().join("rel-proc");
        std::os::unix::fs::symlink(&rel, &link2).unwrap();
        assert!(resolve_command(&link2)
            .unwrap_err()
            .to_string()
            .contains("/proc"));
        // An ordinary chain resolves like realpath.
        let real = dir.path().join("real");
        std::fs::write(&real, "").unwrap();
        let l = dir.path().join("l");
        std::os::unix::fs::symlink("real", &l).unwrap();
        assert_eq!(
            resolve_command(&l).unwrap(),
            std::fs::canonicalize(&real).unwrap()
        );
    }

    /// A view whose release is its own `current` (a plain directory read as one) once
    /// substituted `current` for itself forever: `verify-identity` spun at full CPU.
    #[test]
    fn a_view_that_leads_back_into_itself_ends_as_too_many_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let current = root.join("current");
        std::fs::create_dir_all(current.join("bin")).unwrap();
        let via = (current.clone(), current.clone());
        let err = resolve_command_via(&current.join("bin/x"), Some(&via)).unwrap_err();
        assert!(
            matches!(err, ContainmentError::TooManyLinks { .. }),
            "{err}"
        );
    }
}
