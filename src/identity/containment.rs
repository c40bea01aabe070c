//! Containment: a registered command is absolute, normalized, an executable file, reached
//! through no `/proc` or `/dev/fd` magic link at any step, and resolves (each symlink followed
//! by us, one component at a time) inside the release, compared by path components; in a
//! release layout its stable path leads to the release's own file of that name.

use std::collections::VecDeque;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::deployment::declaration::{has_dot_components, Layout};

/// Release layouts: the stable path `<prefix>/P` must lead to the release's own `P`
/// (`bin/codetools -> ../current/bin/codetools`), not to another file of the release: a
/// re-pointed `bin/codetools -> ../current/bin/helper` stays inside the release, but it is
/// not the declared program.
/// Also `status`'s `target` check and install's gate, so that none of them passes what the
/// others fail.
pub fn check_stable_path(
    layout: Layout,
    prefix: &Path,
    command: &Path,
    root: &Path,
) -> Result<(), String> {
    check_stable_path_via(layout, prefix, command, root, None)
}

pub(crate) fn check_stable_path_via(
    layout: Layout,
    prefix: &Path,
    command: &Path,
    root: &Path,
    via: Option<&(PathBuf, PathBuf)>,
) -> Result<(), String> {
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
        // Unresolvable: check_command_inside has said why.
        return Ok(());
    };
    if real != own {
        return Err(format!(
            "command {} resolves to {}, not to the release's own {}",
            command.display(),
            real.display(),
            own.display()
        ));
    }
    Ok(())
}

/// The registered command must be absolute, free of `.`/`..`, reached through no magic link
/// ([`resolve_command`]), an executable regular file, and resolve (every symlink followed) to
/// a path inside `root` (already canonical).
pub(crate) fn check_command_inside(command: &Path, root: &Path) -> Result<String, String> {
    check_command_inside_via(command, root, None)
}

/// [`check_command_inside`], resolving through `via` (see [`resolve_command_via`]).
pub(crate) fn check_command_inside_via(
    command: &Path,
    root: &Path,
    via: Option<&(PathBuf, PathBuf)>,
) -> Result<String, String> {
    let shown = command.display();
    if !command.is_absolute() {
        return Err(format!(
            "command {shown} is relative; a registration needs an absolute path"
        ));
    }
    if has_dot_components(command) {
        return Err(format!(
            "command {shown} holds . or .. components; register the normalized path"
        ));
    }
    let real = resolve_command_via(command, via)?;
    let meta = fs::metadata(&real).map_err(|e| format!("command {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "command {shown} resolves to {}, not a file",
            real.display()
        ));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(format!(
            "command {shown} ({}) is not executable",
            real.display()
        ));
    }
    // Path::starts_with compares whole components: /opt/ct-evil does not start with /opt/ct.
    if !real.starts_with(root) {
        return Err(format!(
            "command {shown} resolves to {}, outside {}",
            real.display(),
            root.display()
        ));
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
pub(crate) fn resolve_command(command: &Path) -> Result<PathBuf, String> {
    resolve_command_via(command, None)
}

/// [`resolve_command`], where `via = (link, dir)` makes the path `link` (canonical) resolve
/// as a symlink to `dir` whatever it is on disk: promote's preflight follows the stable path
/// through `current` as it will be after the switch.
pub(crate) fn resolve_command_via(
    command: &Path,
    via: Option<&(PathBuf, PathBuf)>,
) -> Result<PathBuf, String> {
    let shown = command.display();
    let magic = |at: &Path, how: String| {
        format!(
            "command {shown} {how} {}: a path under /proc or /dev/fd means something different \
             to each process, so the verifier cannot vouch for what the agent would run",
            at.display()
        )
    };
    if is_magic(command) {
        return Err(magic(command, "is".into()));
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
            return Err(magic(&next, "resolves through".into()));
        }
        if let Some((_, dir)) = via.filter(|(link, _)| *link == next) {
            links += 1;
            resolved = PathBuf::from("/");
            for c in dir.components().rev() {
                if let Component::Normal(n) = c {
                    queue.push_front(PathBuf::from(n));
                }
            }
            continue;
        }
        let meta = fs::symlink_metadata(&next).map_err(|e| {
            format!(
                "command {shown} cannot be resolved: {}: {e}",
                next.display()
            )
        })?;
        if !meta.file_type().is_symlink() {
            resolved = next;
            continue;
        }
        links += 1;
        if links > MAX_LINKS {
            return Err(format!(
                "command {shown} cannot be resolved: more than {MAX_LINKS} symlinks (a loop?)"
            ));
        }
        let target = fs::read_link(&next).map_err(|e| {
            format!(
                "command {shown} cannot be resolved: {}: {e}",
                next.display()
            )
        })?;
        if target.is_absolute() {
            if is_magic(&target) {
                return Err(magic(&target, format!("links ({}) to", next.display())));
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
        let err = resolve_command(&link).unwrap_err();
        assert!(err.contains("/proc/self/root/bin/sh"), "{err}");
        // A relative link that climbs into /proc is found too.
        let depth = dir.path().components().count() - 1;
        let rel = format!("{}proc/self/exe", "../".repeat(depth));
        let link2 = dir.path().join("rel-proc");
        std::os::unix::fs::symlink(&rel, &link2).unwrap();
        assert!(resolve_command(&link2).unwrap_err().contains("/proc"));
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
}
