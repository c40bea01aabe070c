//! A file a client reads beside its user config, judged for a same-name entry: what each
//! client's `shadows_in` asks of the files it lists.

use std::path::Path;

use serde_json::{Map, Value};

use super::ClientError;

/// Note in `found` the file `file` (`what` it is to the client, e.g. "workspace settings")
/// when `read` (its entries as `client` reads them) holds `name`; and when it cannot be read,
/// unless it is not there: the client may read what mcp-deploy cannot (Node takes a lone
/// surrogate escape serde_json refuses), so such a file counts. Only a file that does not
/// exist (a dangling link, a path through a file: the client finds nothing there either)
/// holds nothing; a
/// file whose presence cannot even be looked at (a directory above it not searchable) counts
/// too, since doubt never passes.
pub(crate) fn note(
    found: &mut Vec<String>,
    what: &str,
    file: &Path,
    read: Result<Map<String, Value>, ClientError>,
    name: &str,
    client: &str,
) {
    match read {
        Ok(m) if m.contains_key(name) => found.push(format!("{what} {}", file.display())),
        Ok(_) => {}
        Err(_) if absent(file) => {}
        Err(e) => found.push(format!(
            "{what} {} (mcp-deploy cannot read it: {e}; {client} may, so it counts)",
            file.display()
        )),
    }
}

/// `file` is not there for a client that opens it: it, or the target of its link, does not
/// exist, or a component above it is not a directory.
pub(crate) fn absent(file: &Path) -> bool {
    use std::io::ErrorKind::{NotADirectory, NotFound};
    matches!(std::fs::metadata(file), Err(e) if matches!(e.kind(), NotFound | NotADirectory))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreadable() -> Result<Map<String, Value>, ClientError> {
        Err(ClientError::Config {
            path: "/x".into(),
            reason: "not JSON".into(),
        })
    }

    #[test]
    fn a_file_that_cannot_be_read_counts_unless_it_is_not_there() {
        let dir = tempfile::tempdir().unwrap();
        let there = dir.path().join("there.json");
        std::fs::write(&there, "{").unwrap();
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink(dir.path().join("nothing"), &dangling).unwrap();
        let mut found = Vec::new();
        for file in [&there, &dangling, &dir.path().join("no")] {
            note(
                &mut found,
                "workspace settings",
                file,
                unreadable(),
                "ct",
                "gemini",
            );
        }
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains("there.json (mcp-deploy cannot read it: "),
            "{found:?}"
        );
        assert!(found[0].ends_with("gemini may, so it counts)"), "{found:?}");
    }

    /// Before, gemini's and qwen's shadow readers took a file that cannot be read as absent
    /// whenever looking at it failed for any reason (a directory above it not searchable, a
    /// loop of links), and the shadow passed; only a missing file is absent now.
    #[test]
    fn only_a_missing_file_is_absent() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "").unwrap();
        assert!(!absent(&a), "a loop of links");
        assert!(absent(&plain.join("settings.json")), "below a file");
        assert!(absent(&dir.path().join("missing.json")));
        assert!(absent(&dir.path().join("missing").join("settings.json")));
    }

    #[test]
    fn an_entry_of_the_name_is_noted_by_its_file() {
        let mut found = Vec::new();
        let mut m = Map::new();
        m.insert("ct".into(), Value::Null);
        note(
            &mut found,
            "system settings",
            Path::new("/etc/x.json"),
            Ok(m.clone()),
            "ct",
            "q",
        );
        note(
            &mut found,
            "system settings",
            Path::new("/etc/y.json"),
            Ok(m),
            "other",
            "q",
        );
        assert_eq!(found, ["system settings /etc/x.json"]);
    }
}
