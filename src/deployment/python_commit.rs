//! The commit of a Python (wheel or venv) prefix without a VERSION file: pip's PEP 610
//! `direct_url.json` (`vcs_info.commit_id`) of the one installed distribution whose `RECORD`
//! lists the declared command. Read bounded, never hanging on a FIFO planted in the prefix.

use std::fs;
use std::path::{Path, PathBuf};

use crate::deployment::layout::{Evidence, Sha, ShaError};

/// Why a Python prefix's distribution metadata gives no usable commit: the files read, and
/// what they hold that is wrong.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PythonCommitError {
    #[error(
        "{} distributions claim {} in their RECORD ({}): which one was deployed is ambiguous; \
         write {} or reinstall so that one owns it",
        .dists.len(), .command.display(), joined(.dists), .outer.display()
    )]
    AmbiguousOwner {
        command: PathBuf,
        dists: Vec<PathBuf>,
        outer: PathBuf,
    },
    #[error("cannot read {}: {source}", .path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not valid JSON: {source}", .path.display())]
    NotJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{}: vcs_info.commit_id is not a string", .path.display())]
    CommitIdNotAString { path: PathBuf },
    #[error("{}: vcs_info.commit_id {commit:?}: {why}", .path.display())]
    BadCommitId {
        path: PathBuf,
        commit: String,
        why: ShaError,
    },
}

fn joined(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `<prefix>/lib/python3.*/site-packages/*.dist-info` whose RECORD lists `command`.
pub(crate) fn evidence(prefix: &Path, command: &Path) -> Result<Evidence, PythonCommitError> {
    let command = normalize(command);
    let mut owners: Vec<PathBuf> = Vec::new();
    let mut site_dirs = Vec::new();
    if let Ok(lib) = fs::read_dir(prefix.join("lib")) {
        for e in lib.flatten() {
            let name = e.file_name();
            if name.to_string_lossy().starts_with("python3") {
                let site = e.path().join("site-packages");
                if site.is_dir() {
                    site_dirs.push(site);
                }
            }
        }
    }
    site_dirs.sort();
    for site in &site_dirs {
        let Ok(entries) = fs::read_dir(site) else {
            continue;
        };
        let mut dists: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "dist-info"))
            .collect();
        dists.sort();
        for dist in dists {
            let Ok(record) = read_small(&dist.join("RECORD")) else {
                continue;
            };
            let owns = record.lines().any(|line| {
                // RECORD is CSV: path,hash,size. A path with a comma is quoted; ours never is.
                let path = line.split(',').next().unwrap_or_default();
                !path.is_empty() && normalize(&site.join(path)) == command
            });
            if owns {
                owners.push(dist);
            }
        }
    }
    let outer = prefix.join("VERSION");
    match owners.as_slice() {
        [] => Ok(Evidence::Nothing(format!(
            "{} does not exist and no installed Python distribution's RECORD lists {}{}",
            outer.display(),
            command.display(),
            if site_dirs.is_empty() {
                format!(" (no {}/lib/python3*/site-packages)", prefix.display())
            } else {
                String::new()
            }
        ))),
        [dist] => direct_url_commit(dist, &command),
        many => Err(PythonCommitError::AmbiguousOwner {
            command,
            dists: many.to_vec(),
            outer,
        }),
    }
}

fn direct_url_commit(dist: &Path, command: &Path) -> Result<Evidence, PythonCommitError> {
    let path = dist.join("direct_url.json");
    let dist_name = dist
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = match read_small(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Evidence::Nothing(format!(
                "{dist_name}, which owns {}, has no direct_url.json: it was not installed from \
                 a VCS URL, and there is no VERSION",
                command.display()
            )))
        }
        Err(source) => return Err(PythonCommitError::Unreadable { path, source }),
    };
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| PythonCommitError::NotJson {
            path: path.clone(),
            source,
        })?;
    let Some(commit) = doc.pointer("/vcs_info/commit_id") else {
        let url = doc.get("url").and_then(|u| u.as_str()).unwrap_or("?");
        return Ok(Evidence::Nothing(format!(
            "{} records no vcs_info.commit_id (installed from {url}, not from a VCS)",
            path.display()
        )));
    };
    let commit = commit
        .as_str()
        .ok_or_else(|| PythonCommitError::CommitIdNotAString { path: path.clone() })?;
    let sha = Sha::parse(commit).map_err(|why| PythonCommitError::BadCommitId {
        path: path.clone(),
        commit: commit.to_string(),
        why,
    })?;
    Ok(Evidence::Commit(
        sha.clone(),
        format!(
            "{} holds vcs_info.commit_id {sha} (PEP 610) for {dist_name}, which installed {}",
            path.display(),
            command.display()
        ),
    ))
}

/// A file of metadata, read whole but never more than 16 MiB, and only if it is a regular
/// file ([`fsio::read_input`]): a FIFO or `/dev/zero` planted in a prefix must not hang us.
fn read_small(path: &Path) -> std::io::Result<String> {
    crate::fsio::read_input_string(path, "Python distribution metadata file", 16 << 20)
        .map_err(|e| e.source)
}

/// `a/b/../c` -> `a/c`, lexically (RECORD paths climb out of site-packages with `..`).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::declaration::Layout;

    fn commit_evidence(
        prefix: &std::path::Path,
        layout: Layout,
        command: Option<&std::path::Path>,
    ) -> Result<Evidence, crate::deployment::layout::LayoutError> {
        crate::deployment::release::Release::resolve(prefix, layout).commit_evidence(command)
    }

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn venv_with(dists: &[(&str, &str, Option<&str>)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("lib/python3.11/site-packages");
        for (name, record, direct_url) in dists {
            let d = site.join(format!("{name}.dist-info"));
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("RECORD"), record).unwrap();
            if let Some(j) = direct_url {
                fs::write(d.join("direct_url.json"), j).unwrap();
            }
        }
        dir
    }

    #[test]
    fn python_prefix_commit_comes_from_the_owning_distribution() {
        let url =
            format!(r#"{{"url":"git+file:///r","vcs_info":{{"vcs":"git","commit_id":"{SHA}"}}}}"#);
        let dir = venv_with(&[
            (
                "other-1.0",
                "../../../bin/other,,\n",
                Some(r#"{"url":"file:///x","dir_info":{}}"#),
            ),
            (
                "tool-1.0",
                "tool/__init__.py,,\n../../../bin/tool,sha256=x,1\n",
                Some(&url),
            ),
        ]);
        let cmd = dir.path().join("bin/tool");
        match commit_evidence(dir.path(), Layout::Prefix, Some(&cmd)).unwrap() {
            Evidence::Commit(sha, ev) => {
                assert_eq!(sha.as_str(), SHA);
                assert!(ev.contains("tool-1.0.dist-info"), "{ev}");
            }
            other => panic!("{other:?}"),
        }
        // VERSION, when present, wins.
        let other = "a".repeat(40);
        fs::write(dir.path().join("VERSION"), format!("{other}\n")).unwrap();
        match commit_evidence(dir.path(), Layout::Prefix, Some(&cmd)).unwrap() {
            Evidence::Commit(sha, _) => assert_eq!(sha.as_str(), other),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn python_prefix_without_evidence_or_with_two_owners() {
        let dir = venv_with(&[("other-1.0", "../../../bin/other,,\n", None)]);
        let cmd = dir.path().join("bin/tool");
        let e = commit_evidence(dir.path(), Layout::Prefix, Some(&cmd)).unwrap();
        assert!(
            matches!(&e, Evidence::Nothing(why) if why.contains("no installed Python distribution")),
            "{e:?}"
        );
        let dir = venv_with(&[
            ("a-1", "../../../bin/tool,,\n", None),
            ("b-1", "../../../bin/tool,,\n", None),
        ]);
        let cmd = dir.path().join("bin/tool");
        let err = commit_evidence(dir.path(), Layout::Prefix, Some(&cmd))
            .unwrap_err()
            .to_string();
        assert!(err.contains("ambiguous"), "{err}");
        let dir = venv_with(&[(
            "a-1",
            "../../../bin/tool,,\n",
            Some(r#"{"url":"file:///src","dir_info":{}}"#),
        )]);
        let cmd = dir.path().join("bin/tool");
        let e = commit_evidence(dir.path(), Layout::Prefix, Some(&cmd)).unwrap();
        assert!(
            matches!(&e, Evidence::Nothing(why) if why.contains("not from a VCS")),
            "{e:?}"
        );
    }
}
