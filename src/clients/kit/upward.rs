//! The files a client finds by looking from a directory up to `/` (claude's `.mcp.json`),
//! for many starting directories at once, in time and memory linear in what names them.
//!
//! The starts come from another program's file (the keys of `.claude.json`'s `projects`), so
//! a start may be a path of 100 000 components. Walking each start's `ancestors()` builds every
//! prefix whole: a start of `n` components costs `n²/2` bytes, and remembering the prefixes
//! already seen hashes them all again (a 20 KB key made `verify-identity` allocate 210 MB and
//! run 13 s; 100 KB, gigabytes and minutes). Here each start is walked from `/` down, once per
//! component:
//!
//! 1. A directory is known by its parent and its last component (a trie), so a prefix that
//!    two starts share is looked at once, and no prefix is ever hashed or copied whole.
//! 2. The walk down a start stops at the first prefix that is not a directory: nothing can be
//!    found below one that is not there (the kernel resolves a path component by component, so
//!    `/missing/../etc` fails as `/missing` does), nor below one whose file path would reach
//!    `PATH_MAX` (the client's own `open` of it fails with `ENAMETOOLONG`, as ours would).
//!    So each system call is of a path under `PATH_MAX`, and a walk goes no deeper than the
//!    directories that exist.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Linux's `PATH_MAX`, counting the terminating NUL: a longer path is refused by every call.
const PATH_MAX: usize = 4096;

/// `<dir>/<name>` for every directory `dir` from each absolute start up to `/` where it exists
/// (`symlink_metadata` succeeds: a dangling link or a FIFO is found, for the caller to refuse),
/// each directory once: each start's, nearest first, then the next start's that were not
/// already looked at. Relative starts are skipped.
pub(crate) fn files_above<'a>(
    starts: impl IntoIterator<Item = &'a Path>,
    name: &str,
) -> Vec<PathBuf> {
    // (parent's id, component) -> (id, whether that prefix is a directory); 0 is no parent.
    let mut seen: HashMap<(usize, OsString), (usize, bool)> = HashMap::new();
    let mut out = Vec::new();
    for start in starts {
        if !start.is_absolute() {
            continue;
        }
        let mut found = Vec::new();
        let mut dir = PathBuf::new();
        let mut parent = 0;
        for component in start.components() {
            dir.push(component);
            // `<dir>/<name>` and its NUL must fit in PATH_MAX.
            if dir.as_os_str().len() + 1 + name.len() >= PATH_MAX {
                break;
            }
            let next = seen.len() + 1;
            let key = (parent, component.as_os_str().to_os_string());
            let (id, is_dir) = match seen.get(&key) {
                Some(&known) => known,
                None => {
                    let file = dir.join(name);
                    if std::fs::symlink_metadata(&file).is_ok() {
                        found.push(file);
                    }
                    let is_dir = std::fs::metadata(&dir).is_ok_and(|m| m.is_dir());
                    seen.insert(key, (next, is_dir));
                    (next, is_dir)
                }
            };
            if !is_dir {
                break;
            }
            parent = id;
        }
        out.extend(found.into_iter().rev());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_file_once_nearest_first_and_stops_below_what_is_not_there() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for dir in ["a/b/c", "a/x"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for f in ["a/.mcp.json", "a/b/c/.mcp.json", "a/x/.mcp.json"] {
            std::fs::write(root.join(f), "{}").unwrap();
        }
        let c = root.join("a/b/c");
        let x = root.join("a/x/missing/deeper");
        let found = files_above([c.as_path(), x.as_path(), Path::new("rel")], ".mcp.json");
        // Whatever lies above the temp dir on this host comes after a/.mcp.json, before x's.
        let ours: Vec<_> = found.iter().filter(|f| f.starts_with(&root)).collect();
        assert_eq!(
            ours,
            [
                root.join("a/b/c/.mcp.json"),
                root.join("a/.mcp.json"),
                root.join("a/x/.mcp.json")
            ]
            .iter()
            .collect::<Vec<_>>()
        );
        assert_eq!(
            found.len(),
            found.iter().collect::<std::collections::HashSet<_>>().len()
        );
    }

    /// Issue 35: the ancestors of a project key of 50 000 components were built whole and
    /// hashed (quadratic). Here the walk stops at the first missing directory.
    #[test]
    fn a_start_of_many_components_is_walked_only_as_deep_as_directories_exist() {
        let d = tempfile::tempdir().unwrap();
        let deep = format!("{}{}", d.path().display(), "/a".repeat(50_000));
        std::fs::write(d.path().join(".mcp.json"), "{}").unwrap();
        let found = files_above([Path::new(&deep)], ".mcp.json");
        assert!(found.contains(&d.path().join(".mcp.json")), "{found:?}");
    }
}
