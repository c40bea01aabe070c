//! The release layout on disk: where a server's deployed release is, which commit it is, and
//! the directory a registered command must stay inside (its containment root).
//!
//! ```text
//! <prefix>/releases/<sha>/VERSION     the full commit sha, one line
//! <prefix>/current -> releases/<sha>  switched atomically on promote
//! <prefix>/bin/<exe> -> ../current/bin/<exe>
//! <prefix>/VERSION                    optional; must agree with current/VERSION
//! ```
//! A `prefix` layout (a venv-style install) is its own root. Its commit evidence is
//! `<prefix>/VERSION` when present, else the PEP 610 `direct_url.json` of the installed Python
//! distribution that owns the declared command. Which release is deployed, and its commit, is
//! resolved once per run by [`crate::deployment::release::Release`].
//! Every path comparison here is made on canonical paths, by components.

use std::fs;
use std::path::{Path, PathBuf};

use crate::deployment::python_commit::PythonCommitError;
use crate::fsio::IoError;

/// Why a string is not a full commit sha.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ShaError {
    #[error("it is empty")]
    Empty,
    #[error("{0:?} is not a hex digit")]
    NotHex(char),
    #[error("it has {0} hex digits: an abbreviated sha (a full one has 40, or 64)")]
    Abbreviated(usize),
    #[error("it has {0} hex digits; a full sha has 40, or 64")]
    TooLong(usize),
}

/// What is wrong with the text of a VERSION file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VersionFault {
    #[error("it is not UTF-8")]
    NotUtf8,
    #[error("it ends in CRLF; write it with a plain \\n")]
    Crlf,
    #[error("it holds more than one line")]
    Lines,
    #[error("spaces or tabs around the sha")]
    Spaces,
    #[error(transparent)]
    Sha(#[from] ShaError),
}

/// Why the layout on disk does not say which release is deployed, or says it wrongly: each
/// variant carries the paths it is about and what was found there (a file's content only as
/// [`read_version`] shows it, never what may be a secret).
#[derive(Debug, thiserror::Error)]
pub(crate) enum LayoutError {
    #[error(transparent)]
    Read(#[from] IoError),
    /// `shown`: what the file holds, quoted when it is made of hex digits and line ends, else
    /// only its length.
    #[error("{} holds {shown}: {fault}", .path.display())]
    BadVersion {
        path: PathBuf,
        shown: String,
        fault: VersionFault,
    },
    #[error("{} does not exist", .path.display())]
    Missing { path: PathBuf },
    #[error("{}{} is a symlink loop", .path.display(), arrow(.link))]
    Loop {
        path: PathBuf,
        link: Option<PathBuf>,
    },
    #[error("{}{} is dangling: {source}", .path.display(), arrow(.link))]
    Dangling {
        path: PathBuf,
        link: Option<PathBuf>,
        source: std::io::Error,
    },
    #[error("cannot resolve {}: {source}", .path.display())]
    Unresolvable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot resolve prefix {}: {source}", .path.display())]
    UnresolvablePrefix {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} resolves to {}, which is not a directory", .path.display(), .target.display())]
    NotADirectory { path: PathBuf, target: PathBuf },
    #[error(
        "{} is a plain directory, not a symlink to releases/<sha>; promote switches a symlink",
        .path.display()
    )]
    PlainDirectory { path: PathBuf },
    #[error(
        "{} resolves to {}, which is not directly inside {}",
        .path.display(), .target.display(), .releases.display()
    )]
    NotInReleases {
        path: PathBuf,
        target: PathBuf,
        releases: PathBuf,
    },
    #[error("{} cannot be read: {source}", .path.display())]
    CannotRead {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{}{} is a symlink; a release is a directory inside releases/, never a link to one",
        .path.display(), arrow(.link)
    )]
    ReleaseIsALink {
        path: PathBuf,
        link: Option<PathBuf>,
    },
    #[error("{} is not a directory", .path.display())]
    ReleaseNotADirectory { path: PathBuf },
    /// `<prefix>/VERSION` and the release's VERSION name different commits; `after_switch`:
    /// promote's preflight, where they would disagree once `current` names the candidate.
    #[error(
        "{} holds {outer_sha} but {} holds {sha}{}",
        .outer.display(), .version.display(),
        if *.after_switch { ": they would disagree after the switch" } else { "" }
    )]
    VersionsDisagree {
        outer: PathBuf,
        outer_sha: Sha,
        version: PathBuf,
        sha: Sha,
        after_switch: bool,
    },
    #[error(transparent)]
    Python(#[from] PythonCommitError),
    /// What a [`crate::deployment::release::Release`] could not resolve, once, for every check
    /// that needs it.
    #[error(transparent)]
    Resolved(std::sync::Arc<LayoutError>),
}

/// ` -> <target>` of a symlink, when it could be read.
fn arrow(link: &Option<PathBuf>) -> String {
    link.as_ref()
        .map(|t| format!(" -> {}", t.display()))
        .unwrap_or_default()
}

/// A full commit id: 40 (SHA-1) or 64 (SHA-256) hex digits, kept lowercase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sha(String);

impl Sha {
    /// Parse a full sha. Uppercase hex names the same commit and is accepted.
    pub(crate) fn parse(s: &str) -> Result<Sha, ShaError> {
        if s.is_empty() {
            return Err(ShaError::Empty);
        }
        if let Some(c) = s.chars().find(|c| !c.is_ascii_hexdigit()) {
            return Err(ShaError::NotHex(c));
        }
        match s.len() {
            40 | 64 => Ok(Sha(s.to_ascii_lowercase())),
            n if n < 40 => Err(ShaError::Abbreviated(n)),
            n => Err(ShaError::TooLong(n)),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
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
pub(crate) fn read_version(path: &Path) -> Result<Sha, LayoutError> {
    read_version_at(path, path)
}

/// [`read_version`] of the file `real`, named `path` in what it says (`<prefix>/VERSION` read
/// through the release a run resolved, [`crate::deployment::release::Release`]).
pub(crate) fn read_version_at(path: &Path, real: &Path) -> Result<Sha, LayoutError> {
    let bytes = crate::fsio::read_input(real, "VERSION file", crate::fsio::limits::VERSION)?;
    // What it holds is shown only when it is made of what a sha and its line end are made
    // of: VERSION may be a link to any file the verifier can read (`-> ~/.npmrc`), and what
    // is not a sha may be a secret.
    let shown = if bytes
        .iter()
        .all(|b| b.is_ascii_hexdigit() || b" \t\r\n".contains(b))
    {
        format!(
            "{:?}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(80)])
        )
    } else {
        format!("{} bytes that are not a sha (not shown)", bytes.len())
    };
    let bad = |fault: VersionFault| LayoutError::BadVersion {
        path: path.to_path_buf(),
        shown: shown.clone(),
        fault,
    };
    let text = std::str::from_utf8(&bytes).map_err(|_| bad(VersionFault::NotUtf8))?;
    let line = text.strip_suffix('\n').unwrap_or(text);
    if line.ends_with('\r') {
        return Err(bad(VersionFault::Crlf));
    }
    if line.contains('\n') {
        return Err(bad(VersionFault::Lines));
    }
    if line.trim() != line {
        return Err(bad(VersionFault::Spaces));
    }
    Sha::parse(line).map_err(|why| bad(why.into()))
}

/// promote's `release` check of the release about to be made live, `dir` =
/// `<prefix>/releases/<sha>`: a directory itself (never a symlink, which could lead anywhere),
/// directly inside the real `releases/`.
pub(crate) fn check_candidate(prefix: &Path, dir: &Path) -> Result<String, LayoutError> {
    let meta = dir
        .symlink_metadata()
        .map_err(|source| LayoutError::CannotRead {
            path: dir.to_path_buf(),
            source,
        })?;
    if meta.file_type().is_symlink() {
        return Err(LayoutError::ReleaseIsALink {
            path: dir.to_path_buf(),
            link: fs::read_link(dir).ok(),
        });
    }
    if !meta.is_dir() {
        return Err(LayoutError::ReleaseNotADirectory {
            path: dir.to_path_buf(),
        });
    }
    let releases_real = real_releases(prefix)?;
    let real = canonical(dir)?;
    if real.parent() != Some(releases_real.as_path()) {
        return Err(LayoutError::NotInReleases {
            path: dir.to_path_buf(),
            target: real,
            releases: releases_real,
        });
    }
    Ok(format!(
        "{} is a release directory inside {}",
        real.display(),
        releases_real.display()
    ))
}

/// `fs::canonicalize`, the error naming the path.
pub(crate) fn canonical(path: &Path) -> Result<PathBuf, LayoutError> {
    fs::canonicalize(path).map_err(|source| LayoutError::Unresolvable {
        path: path.to_path_buf(),
        source,
    })
}

/// The canonical `<prefix>/releases`.
fn real_releases(prefix: &Path) -> Result<PathBuf, LayoutError> {
    canonical(&prefix.join("releases"))
}

/// What a deployment says about its commit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Evidence {
    /// The commit, and where it was read.
    Commit(Sha, String),
    /// There is no evidence at all, and why: not an error unless a commit is expected.
    Nothing(String),
}

/// The journal of an interrupted promote of the release layout at `prefix`, if there is one
/// (promote's own, [`crate::promotion::prefix::JOURNAL`]). Only looks: creates nothing
/// (install and status call it on prefixes they only read).
pub(crate) fn interrupted_promote(prefix: &Path) -> Option<PathBuf> {
    let path = prefix.join(crate::state::DIR).join("promote.journal.json");
    path.symlink_metadata().is_ok().then_some(path)
}

/// Say, before anything changes, which selected release layouts hold the journal of an
/// interrupted promote (install goes on: it registers the stable path, whichever release
/// `current` names; promote or rollback undoes the switch).
pub(crate) fn warn_interrupted(
    selected: &[crate::deployment::selection::Selected],
    notify: crate::notice::Notify,
) {
    for s in selected {
        if s.server.layout != crate::deployment::declaration::Layout::Release {
            continue;
        }
        if let Some(journal) = interrupted_promote(&s.prefix) {
            notify(crate::notice::Notice::InterruptedPromote {
                server: s.server.name.clone(),
                journal,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn version(bytes: &[u8]) -> Result<Sha, LayoutError> {
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
            let err = version(bytes.as_bytes()).unwrap_err().to_string();
            assert!(err.contains(why), "{bytes:?}: {err}");
        }
    }
    #[test]
    fn sha_parse_refuses_abbreviations() {
        assert!(Sha::parse(&SHA[..7])
            .unwrap_err()
            .to_string()
            .contains("abbreviated"));
        assert!(Sha::parse("g".repeat(40).as_str()).is_err());
        assert!(Sha::parse("").is_err());
    }
}
