//! The release layout on disk: where a server's deployed release is, which commit it is, and
//! the directory a registered command must stay inside (its containment root).
//!
//! ```text
//! <prefix>/releases/<sha>/VERSION     the full commit sha, one line
//! <prefix>/current -> releases/<sha>  switched atomically on promote
//! <prefix>/bin/<exe> -> ../current/bin/<exe>
//! <prefix>/VERSION                    optional; must agree with current/VERSION
//! ```
//! A `prefix` layout (a venv-style install) is its own root and has `<prefix>/VERSION`.
//! Every path comparison here is made on canonical paths, by components.

use std::fs;
use std::path::{Path, PathBuf};

use crate::declaration::Layout;

/// A full commit id: 40 (SHA-1) or 64 (SHA-256) hex digits, kept lowercase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sha(String);

impl Sha {
    /// Parse a full sha. Uppercase hex names the same commit and is accepted.
    pub fn parse(s: &str) -> Result<Sha, String> {
        if s.is_empty() {
            return Err("it is empty".into());
        }
        if let Some(c) = s.chars().find(|c| !c.is_ascii_hexdigit()) {
            return Err(format!("{c:?} is not a hex digit"));
        }
        match s.len() {
            40 | 64 => Ok(Sha(s.to_ascii_lowercase())),
            n if n < 40 => Err(format!(
                "it has {n} hex digits: an abbreviated sha (a full one has 40, or 64)"
            )),
            n => Err(format!("it has {n} hex digits; a full sha has 40, or 64")),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Sha {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Read a VERSION file: exactly one full sha, optionally followed by one `\n`. Anything else
/// (CR, spaces, a second line) is refused rather than guessed at: this file is the evidence
/// of which commit is deployed, and a tool that wrote it wrongly should be found out.
pub fn read_version(path: &Path) -> Result<Sha, String> {
    let bytes = crate::fsio::read_input(path, "VERSION file", crate::fsio::limits::VERSION)
        .map_err(|e| e.to_string())?;
    let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
    let bad = |why: &str| format!("{} holds {shown:?}: {why}", path.display());
    let text = std::str::from_utf8(&bytes).map_err(|_| bad("it is not UTF-8"))?;
    let line = text.strip_suffix('\n').unwrap_or(text);
    if line.ends_with('\r') {
        return Err(bad("it ends in CRLF; write it with a plain \\n"));
    }
    if line.contains('\n') {
        return Err(bad("it holds more than one line"));
    }
    if line.trim() != line {
        return Err(bad("spaces or tabs around the sha"));
    }
    Sha::parse(line).map_err(|why| bad(&why))
}

/// Canonical path of what `<prefix>/current` points to, which must be a directory.
pub fn current_target(prefix: &Path) -> Result<PathBuf, String> {
    let current = prefix.join("current");
    let meta = current
        .symlink_metadata()
        .map_err(|_| format!("{} does not exist", current.display()))?;
    let target = fs::canonicalize(&current).map_err(|e| {
        let link = fs::read_link(&current)
            .map(|t| format!(" -> {}", t.display()))
            .unwrap_or_default();
        if e.raw_os_error() == Some(libc::ELOOP) {
            format!("{}{link} is a symlink loop", current.display())
        } else if meta.file_type().is_symlink() {
            format!("{}{link} is dangling: {e}", current.display())
        } else {
            format!("cannot resolve {}: {e}", current.display())
        }
    })?;
    if !target.is_dir() {
        return Err(format!(
            "{} resolves to {}, which is not a directory",
            current.display(),
            target.display()
        ));
    }
    Ok(target)
}

/// The `release` check: `current` is a symlink to a directory directly inside `releases/`.
/// Returns the evidence on success too.
pub fn check_release(prefix: &Path) -> Result<String, String> {
    let current = prefix.join("current");
    let target = current_target(prefix)?;
    let is_link = current
        .symlink_metadata()
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false);
    if !is_link {
        return Err(format!(
            "{} is a plain directory, not a symlink to releases/<sha>; promote switches a symlink",
            current.display()
        ));
    }
    let releases = prefix.join("releases");
    let releases_real = fs::canonicalize(&releases)
        .map_err(|e| format!("cannot resolve {}: {e}", releases.display()))?;
    if target.parent() != Some(releases_real.as_path()) {
        return Err(format!(
            "{} resolves to {}, which is not directly inside {}",
            current.display(),
            target.display(),
            releases_real.display()
        ));
    }
    Ok(format!("{} -> {}", current.display(), target.display()))
}

/// The directory whose VERSION names the deployed commit.
pub fn release_dir(prefix: &Path, layout: Layout) -> Result<PathBuf, String> {
    match layout {
        Layout::Release => current_target(prefix),
        Layout::Prefix => Ok(prefix.to_path_buf()),
    }
}

/// Canonical containment root: the resolved release, or the prefix itself.
pub fn containment_root(prefix: &Path, layout: Layout) -> Result<PathBuf, String> {
    match layout {
        Layout::Release => current_target(prefix),
        Layout::Prefix => fs::canonicalize(prefix)
            .map_err(|e| format!("cannot resolve prefix {}: {e}", prefix.display())),
    }
}

/// The commit the deployment says it is: the release's VERSION, cross-checked with
/// `<prefix>/VERSION` when a release layout also has one.
pub fn deployed_commit(prefix: &Path, layout: Layout) -> Result<(Sha, String), String> {
    let dir = release_dir(prefix, layout)?;
    let version = dir.join("VERSION");
    let sha = read_version(&version)?;
    let mut evidence = format!("{} holds {sha}", version.display());
    let outer = prefix.join("VERSION");
    if layout == Layout::Release && outer.symlink_metadata().is_ok() {
        let outer_sha = read_version(&outer)?;
        if outer_sha != sha {
            return Err(format!(
                "{} holds {outer_sha} but {} holds {sha}",
                outer.display(),
                version.display()
            ));
        }
        evidence.push_str(&format!("; {} agrees", outer.display()));
    }
    Ok((sha, evidence))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn version(bytes: &[u8]) -> Result<Sha, String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("VERSION");
        fs::write(&p, bytes).unwrap();
        read_version(&p)
    }

    #[test]
    fn version_file_forms() {
        assert_eq!(
            version(format!("{SHA}\n").as_bytes()).unwrap().as_str(),
            SHA
        );
        assert_eq!(version(SHA.as_bytes()).unwrap().as_str(), SHA);
        let upper = SHA.to_ascii_uppercase();
        assert_eq!(version(upper.as_bytes()).unwrap().as_str(), SHA);
        let long = "a".repeat(64);
        assert_eq!(version(long.as_bytes()).unwrap().as_str(), long);
        for (bytes, why) in [
            (String::new(), "it is empty"),
            (format!("{SHA}\r\n"), "CRLF"),
            (format!("{SHA}  \n"), "spaces or tabs"),
            (format!("{SHA}\n{SHA}\n"), "more than one line"),
            (SHA[..12].to_string(), "abbreviated"),
            (format!("{}zz", &SHA[..38]), "not a hex digit"),
            ("a".repeat(50), "50 hex digits"),
        ] {
            let err = version(bytes.as_bytes()).unwrap_err();
            assert!(err.contains(why), "{bytes:?}: {err}");
        }
    }

    #[test]
    fn sha_parse_refuses_abbreviations() {
        assert!(Sha::parse(&SHA[..7]).unwrap_err().contains("abbreviated"));
        assert!(Sha::parse("g".repeat(40).as_str()).is_err());
        assert!(Sha::parse("").is_err());
    }
}
