//! Issue 23, items 7 and 8: a dry run tells the truth. It lists exactly what the real run
//! writes and the mutating client calls it makes, it needs no client binary when it calls no
//! client, and `prune --dry-run` writes nothing at all.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::harness::*;

/// Every path under `dir` with what identifies its state: type, mode, size, mtime and, for a
/// file, its bytes.
pub fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let m = fs::symlink_metadata(&p).unwrap();
            let what = if m.is_dir() {
                stack.push(p.clone());
                "dir".to_string()
            } else if m.file_type().is_symlink() {
                format!("link {}", fs::read_link(&p).unwrap().display())
            } else {
                format!("file {:?}", fs::read(&p).unwrap_or_default())
            };
            out.insert(
                p,
                format!(
                    "{what} mode {:o} size {} mtime {}.{}",
                    m.mode(),
                    m.len(),
                    m.mtime(),
                    m.mtime_nsec()
                ),
            );
        }
    }
    out
}

/// The paths whose state differs between two [`tree`]s (added, removed or changed).
pub fn changed(
    before: &BTreeMap<PathBuf, String>,
    after: &BTreeMap<PathBuf, String>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = after
        .iter()
        .filter(|(p, v)| before.get(*p) != Some(v))
        .map(|(p, _)| p.clone())
        .collect();
    out.extend(before.keys().filter(|p| !after.contains_key(*p)).cloned());
    out.sort();
    out
}

fn prune_dry_run<'a>(w: &'a World, prefix: &Path) -> Cmd<'a> {
    w.cmd()
        .args(["prune", "--prefix"])
        .arg(prefix)
        .args(["--keep", "0", "--dry-run"])
}

/// Item 8: `prune --dry-run` created `<prefix>/.mcp-deploy/` and its lock file. It writes
/// nothing: the whole prefix (and the world around it) is the same before and after.
#[test]
fn prune_dry_run_writes_nothing_not_even_a_lock() {
    let w = World::new();
    w.sample();
    let prefix = w.opt().join("codetools");
    assert!(!prefix.join(".mcp-deploy").exists());
    let before = tree(w.root());
    prune_dry_run(&w, &prefix)
        .run()
        .code(0)
        .stdout_has("dry run: nothing is removed");
    let after = tree(w.root());
    assert_eq!(changed(&before, &after), Vec::<PathBuf>::new());
}

/// Item 8: and so it works on a prefix its user may not write (a read-only bind mount, in a
/// private mount namespace: read-only even for root), where it failed creating the lock.
#[test]
fn prune_dry_run_works_on_a_prefix_it_cannot_write() {
    let w = World::new();
    w.sample();
    let prefix = w.opt().join("codetools");
    let before = tree(w.root());
    prune_dry_run(&w, &prefix)
        .read_only(&prefix)
        .run()
        .code(0)
        .stdout_has("dry run: nothing is removed");
    assert_eq!(changed(&before, &tree(w.root())), Vec::<PathBuf>::new());
    // The real run there says it cannot take the lock (exit 2), as before.
    w.cmd()
        .args(["prune", "--prefix"])
        .arg(&prefix)
        .args(["--keep", "0"])
        .read_only(&prefix)
        .run()
        .code(2)
        .stderr_has("help: ");
}
