//! Which release of a client CLI a run drives, and whether mcp-deploy supports it.
//!
//! - Each client's row of [`super::CLIENTS`] holds its supported range: per client the oldest release whose
//!   MCP commands mcp-deploy can drive (the reason is in docs/clients.md) and the newest
//!   tested. A newer minor or patch release of the newest tested major is accepted; another
//!   major is refused, since a client changes its commands and config shapes at a major.
//! - Detection is cheap and happens at most once per run per binary ([`detect`]):
//!   1. the package's own files: the binary's symlinks resolved (`node_modules/.bin/claude ->
//!      ../@anthropic-ai/claude-code/bin/claude.exe`), the `package.json` of the client's
//!      package beside it or above it; a native Claude install keeps the version in its
//!      path (`~/.local/share/claude/versions/<v>`);
//!   2. else a cache of earlier answers, keyed by the binary's canonical path, size and mtime
//!      (`$XDG_CACHE_HOME/mcp-deploy/client-versions.json`), written only when a binary is
//!      new or changed;
//!   3. else, on a run that calls the client anyway, `<bin> --version` once.
//!
//!   A run that calls no client (`status`) never starts one: without package files or a
//!   cached answer its version is unknown there.
//! - A version outside the range is refused when the client is opened, before any change.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// A release number: `major.minor.patch`, any pre-release or build suffix ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Version {
    pub(crate) major: u64,
    pub(crate) minor: u64,
    pub(crate) patch: u64,
}

impl Version {
    pub(crate) const fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// The first `N.N.N` (or `N.N`) token of `text`: `2.1.332`, `2.1.332 (Claude Code)`,
    /// `codex-cli 0.171.0`, `v1.18.33`, `0.61.0-preview.1`, `GitHub Copilot CLI 1.0.102.`.
    /// `None` when there is none.
    pub(crate) fn parse(text: &str) -> Option<Version> {
        text.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
            .find_map(|word| {
                let word = word.strip_prefix('v').unwrap_or(word);
                // A sentence's full stop (`GitHub Copilot CLI 1.0.102.`) is no part of it.
                let word = word.strip_suffix('.').unwrap_or(word);
                // A pre-release or build suffix (`-beta.1`, `+abc`) does not change the number.
                let core = word.split(['-', '+']).next()?;
                let mut parts = core.split('.');
                let num = |p: Option<&str>| -> Option<u64> {
                    let p = p?;
                    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || p.len() > 9 {
                        return None;
                    }
                    p.parse().ok()
                };
                let major = num(parts.next())?;
                let minor = num(parts.next())?;
                let patch = match parts.next() {
                    None => 0,
                    p => num(p)?,
                };
                if parts.next().is_some() {
                    return None;
                }
                Some(Version::new(major, minor, patch))
            })
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// One client's supported range.
#[derive(Debug)]
pub(crate) struct Supported {
    /// The client's name (`claude`, ...), as its module opens its runner with.
    pub(crate) client: &'static str,
    /// The npm packages whose `package.json` names the release (the first is the one to
    /// install).
    pub(crate) packages: &'static [&'static str],
    pub(crate) oldest: Version,
    pub(crate) newest_tested: Version,
    /// Whether `<bin> --version` prints the release. Grok's does not: 0.0.34 prints a fixed
    /// `1.0.1` (`.version("1.0.1")` in its dist/index.js), so only its package files count.
    pub(crate) version_flag: bool,
    /// The directory a native (not npm) install keeps its releases in, each as
    /// `<native>/versions/<release>` (claude's `~/.local/share/claude`): its name, when the
    /// client has such an install.
    pub(crate) native: Option<&'static str>,
}

/// The supported range of `client`, from its row of [`super::CLIENTS`] (Cursor, without a
/// binary, has none). The reason for each lower bound is in docs/clients.md ("Supported
/// versions").
pub(crate) fn supported(client: &str) -> Option<&'static Supported> {
    super::ClientKind::named(client).and_then(|d| d.row().supported.as_ref())
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum VersionError {
    #[error("{client} {found} is older than the oldest supported ({oldest}); it is {binary}")]
    TooOld {
        client: &'static str,
        found: Version,
        oldest: Version,
        binary: PathBuf,
    },
    #[error(
        "{client} {found} is a new major release: mcp-deploy supports {client} {oldest} to \
         {newest_major}.x (newest tested: {newest}); it is {binary}"
    )]
    TooNew {
        client: &'static str,
        found: Version,
        oldest: Version,
        newest: Version,
        newest_major: u64,
        binary: PathBuf,
    },
    #[error("the version of {client} ({binary}) cannot be read: `{shown}` printed {printed:?}")]
    Unreadable {
        client: &'static str,
        binary: PathBuf,
        shown: String,
        printed: String,
    },
}

impl VersionError {
    pub(crate) fn help(&self) -> String {
        let (client, oldest, newest) = match self {
            VersionError::TooOld { client, oldest, .. } => (*client, *oldest, None),
            VersionError::TooNew {
                client,
                oldest,
                newest,
                ..
            } => (*client, *oldest, Some(*newest)),
            VersionError::Unreadable { client, .. } => {
                return format!(
                    "check that it is {client}'s CLI (pass --{client} PATH to choose another); \
                     mcp-deploy changed nothing"
                )
            }
        };
        let s = supported(client).expect("only supported clients are checked");
        let tested = newest.unwrap_or(s.newest_tested);
        format!(
            "install a supported version (npm install -g {}@{tested}: {client} {oldest} or \
             newer, up to {}.x), or pass --{client} PATH to one; mcp-deploy changed nothing",
            s.packages[0], tested.major
        )
    }
}

/// Whether `found` is in the supported range of `s`.
pub(crate) fn check(
    s: &'static Supported,
    found: Version,
    binary: &Path,
) -> Result<(), VersionError> {
    if found < s.oldest {
        return Err(VersionError::TooOld {
            client: s.client,
            found,
            oldest: s.oldest,
            binary: binary.to_path_buf(),
        });
    }
    if found.major != s.newest_tested.major {
        return Err(VersionError::TooNew {
            client: s.client,
            found,
            oldest: s.oldest,
            newest: s.newest_tested,
            newest_major: s.newest_tested.major,
            binary: binary.to_path_buf(),
        });
    }
    Ok(())
}

/// What this run has learnt, by canonical binary: so that a client opened twice (OpenCode
/// opens its runner for each confirmation) is asked once.
static SEEN: Mutex<Option<HashMap<PathBuf, Option<Version>>>> = Mutex::new(None);

/// The release of `client`'s `binary`, found as the module header says. `run_flag` runs
/// `<bin> --version` and returns its stdout; it is `None` on a run that must start no client.
/// `Ok(None)`: unknown (no package files, no cached answer, and nothing run).
pub(crate) fn detect(
    client: &'static str,
    binary: &Path,
    run_flag: Option<&dyn Fn() -> Result<String, super::ClientError>>,
) -> Result<Option<Version>, super::ClientError> {
    let Some(s) = supported(client) else {
        return Ok(None);
    };
    let Ok(canonical) = std::fs::canonicalize(binary) else {
        return Ok(None);
    };
    if let Some(known) = SEEN
        .lock()
        .ok()
        .and_then(|m| m.as_ref().and_then(|m| m.get(&canonical).copied()))
    {
        if known.is_some() || run_flag.is_none() {
            if let Some(v) = known {
                check(s, v, binary)?;
            }
            return Ok(known);
        }
    }
    let found = match from_package(s, &canonical) {
        Some(v) => Some(v),
        None => match cache::lookup(&canonical) {
            Some(v) => Some(v),
            None => match run_flag.filter(|_| s.version_flag) {
                None => None,
                Some(run) => {
                    let out = run()?;
                    let v = Version::parse(&out).ok_or_else(|| VersionError::Unreadable {
                        client,
                        binary: binary.to_path_buf(),
                        shown: format!("{client} --version"),
                        printed: out.lines().next().unwrap_or("").chars().take(80).collect(),
                    })?;
                    cache::store(&canonical, v);
                    Some(v)
                }
            },
        },
    };
    if let Ok(mut m) = SEEN.lock() {
        m.get_or_insert_with(HashMap::new)
            .insert(canonical.clone(), found);
    }
    if let Some(v) = found {
        check(s, v, binary)?;
    }
    Ok(found)
}

/// The release of the `row` client that a run would call on this host (its variable, else its
/// name on `PATH`: [`super::oracle::binary_to_ask`]), learnt without starting it ([`detect`]
/// with no `--version` run), once per run. A reader whose rule differs between releases
/// follows this one (docs/clients.md, "Rules per release"); `Err` says why it is not known,
/// and such a reader takes the rule of the release that applies the least.
pub(crate) fn on_host(row: &super::table::About) -> Result<Version, String> {
    static FOUND: Mutex<Vec<(&'static str, Result<Version, String>)>> = Mutex::new(Vec::new());
    let mut found = FOUND.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, known)) = found.iter().find(|(name, _)| *name == row.name) {
        return known.clone();
    }
    let release = super::oracle::binary_to_ask(row, None)
        .map_err(|why| format!("its release is not known: {why}"))
        .and_then(|binary| match detect(row.name, &binary, None) {
            Ok(Some(v)) => Ok(v),
            Ok(None) => Err(format!(
                "the release of {} is not known without starting it",
                binary.display()
            )),
            Err(e) => Err(super::runner::first_lines(&e.to_string())),
        });
    found.push((row.name, release.clone()));
    release
}

/// The release named by the package files of the binary at `canonical` (its symlinks
/// resolved): the `package.json` of one of `s.packages` in the binary's directory or one of
/// the three above it (`bin/claude.exe`, `cli.js`, `bundle/gemini.js`, `dist/index.js`,
/// `bin/opencode`), or the version directory of a native Claude install
/// (`.../claude/versions/2.1.332`).
fn from_package(s: &Supported, canonical: &Path) -> Option<Version> {
    if let Some(native) = s.native {
        let mut up = canonical.ancestors().skip(1);
        if let (Some(versions), Some(dir)) = (up.next(), up.next()) {
            if versions.file_name().is_some_and(|n| n == "versions")
                && dir.file_name().is_some_and(|n| n == native)
            {
                let name = canonical.file_name()?.to_str()?;
                if let Some(v) = Version::parse(name) {
                    return Some(v);
                }
            }
        }
    }
    #[derive(Deserialize)]
    struct Package {
        name: Option<String>,
        version: Option<String>,
    }
    for dir in canonical.ancestors().skip(1).take(4) {
        let path = dir.join("package.json");
        let Ok(Some(text)) = crate::fsio::read_input_if_exists(
            &path,
            "package.json",
            crate::fsio::limits::PACKAGE_JSON,
        ) else {
            continue;
        };
        let Ok(p) = serde_json::from_str::<Package>(&text) else {
            continue;
        };
        if p.name.as_deref().is_some_and(|n| s.packages.contains(&n)) {
            return p.version.as_deref().and_then(Version::parse);
        }
    }
    None
}

/// The answers of `--version`, by binary: read bounded, written atomically, and only when a
/// binary is new or changed (a run whose binaries are all known writes nothing).
mod cache {
    use super::*;

    #[derive(Serialize, Deserialize, PartialEq, Clone)]
    struct Seen {
        size: u64,
        mtime_ns: i128,
        version: String,
    }

    pub(super) fn path() -> PathBuf {
        crate::dirs::var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| crate::dirs::home().join(".cache"))
            .join("mcp-deploy")
            .join("client-versions.json")
    }

    fn stamp(canonical: &Path) -> Option<(u64, i128)> {
        let m = std::fs::metadata(canonical).ok()?;
        Some((
            m.size(),
            i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        ))
    }

    fn read() -> BTreeMap<String, Seen> {
        crate::fsio::read_input_if_exists(&path(), "version cache", 1024 * 1024)
            .ok()
            .flatten()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    pub(super) fn lookup(canonical: &Path) -> Option<Version> {
        let (size, mtime_ns) = stamp(canonical)?;
        let seen = read().remove(canonical.to_str()?)?;
        (seen.size == size && seen.mtime_ns == mtime_ns)
            .then(|| Version::parse(&seen.version))
            .flatten()
    }

    /// Record `v` for the binary; a failure to write is no error (the cache only saves a
    /// call next time).
    pub(super) fn store(canonical: &Path, v: Version) {
        let (Some((size, mtime_ns)), Some(key)) = (stamp(canonical), canonical.to_str()) else {
            return;
        };
        let mut all = read();
        let seen = Seen {
            size,
            mtime_ns,
            version: v.to_string(),
        };
        if all.get(key) == Some(&seen) {
            return;
        }
        // Forget binaries that are gone, so that the file stays as small as the host's set.
        all.retain(|k, _| Path::new(k).exists());
        all.insert(key.to_string(), seen);
        let path = path();
        if let Some(dir) = path.parent() {
            if std::fs::create_dir_all(dir).is_err() {
                return;
            }
        }
        let text = serde_json::to_string_pretty(&all).expect("a map of strings serializes");
        let _ = crate::fsio::write_atomic(&path, text.as_bytes(), true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_each_client_prints() {
        for (text, want) in [
            ("2.1.332", Version::new(2, 1, 332)),
            ("2.1.332 (Claude Code)\n", Version::new(2, 1, 332)),
            ("1.0.128 (Claude Code)", Version::new(1, 0, 128)),
            ("codex-cli 0.171.0", Version::new(0, 171, 0)),
            ("0.61.0", Version::new(0, 61, 0)),
            ("0.22.0-preview.2", Version::new(0, 22, 0)),
            ("v1.18.33", Version::new(1, 18, 33)),
            ("opencode 1.2", Version::new(1, 2, 0)),
            (
                "GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.\n",
                Version::new(1, 0, 102),
            ),
        ] {
            assert_eq!(Version::parse(text), Some(want), "{text:?}");
        }
        for text in [
            "",
            "claude",
            "version x.y.z",
            "1",
            "1.2.3.4",
            "99999999999.0.0",
            "1..2",
        ] {
            assert_eq!(Version::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn versions_order_by_number_not_text() {
        assert!(Version::new(2, 1, 100) > Version::new(2, 1, 99));
        assert!(Version::new(2, 10, 0) > Version::new(2, 9, 332));
        assert_eq!(Version::new(0, 45, 0).to_string(), "0.45.0");
    }

    #[test]
    fn the_range_takes_newer_minors_and_refuses_another_major() {
        let claude = supported("claude").unwrap();
        let bin = Path::new("/x/claude");
        for ok in ["2.0.0", "2.1.100", "2.1.332", "2.1.999", "2.7.0"] {
            assert!(
                check(claude, Version::parse(ok).unwrap(), bin).is_ok(),
                "{ok}"
            );
        }
        let old = check(claude, Version::new(1, 0, 128), bin).unwrap_err();
        assert_eq!(
            old.to_string(),
            "claude 1.0.128 is older than the oldest supported (2.0.0); it is /x/claude"
        );
        assert!(old
            .help()
            .contains("npm install -g @anthropic-ai/claude-code@2.1.332"));
        let new = check(claude, Version::new(3, 0, 0), bin).unwrap_err();
        assert!(new.to_string().contains("new major release"), "{new}");
        let codex = supported("codex").unwrap();
        assert!(check(codex, Version::new(0, 44, 9), bin).is_err());
        assert!(check(codex, Version::new(0, 45, 0), bin).is_ok());
        assert!(check(codex, Version::new(0, 200, 0), bin).is_ok());
        assert!(check(codex, Version::new(1, 0, 0), bin).is_err());
        assert!(supported("cursor").is_none(), "cursor has no binary");
    }

    #[test]
    fn package_files_name_the_release() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("node_modules/@anthropic-ai/claude-code");
        std::fs::create_dir_all(pkg.join("bin")).unwrap();
        std::fs::write(
            pkg.join("package.json"),
            r#"{"name":"@anthropic-ai/claude-code","version":"2.1.100"}"#,
        )
        .unwrap();
        std::fs::write(pkg.join("bin/claude.exe"), "").unwrap();
        let claude = supported("claude").unwrap();
        assert_eq!(
            from_package(claude, &pkg.join("bin/claude.exe")),
            Some(Version::new(2, 1, 100))
        );
        // Another package's file is not this client's.
        assert_eq!(
            from_package(supported("codex").unwrap(), &pkg.join("bin/claude.exe")),
            None
        );
        let native = dir.path().join("share/claude/versions/2.0.77");
        assert_eq!(from_package(claude, &native), Some(Version::new(2, 0, 77)));
    }
}
