//! The import direction of `src/`, as data, and a test that fails on an import against it.
//!
//! A Cargo workspace (a crate per concern, as rustup and uv have) would make a wrong import a
//! compile error, but only at its few crate boundaries: four crates (core, clients, vendored
//! SDK, the binary) would enforce three edges of a chain of nine steps, and every item used
//! across a boundary would turn from `pub(crate)` into `pub`. This test enforces every edge
//! of [`ALLOWED`], in the fast tier, naming the file, the line and the rule it breaks.
//! Comments and doc links are not imports; test code is held to the same rules.

use std::collections::BTreeSet;
use std::path::Path;

/// The leaves every module may use; among themselves only as [`ALLOWED`] lists.
const LEAVES: &[&str] = &[
    "state", "notice", "fsio", "dirs", "usage", "process", "exit", "version", "text", "format",
];

/// The domain chain, highest first: a module may use any module after it in the chain (skipping
/// steps is fine), never one before it.
const CHAIN: &[&str] = &[
    "policy",
    "promotion",
    "launch",
    "registration",
    "clients",
    "identity",
    "trust",
    "content",
    "deployment",
    "entry",
];

/// What each top-level module may import besides the leaves (`*`: every module) — the
/// diagram in `lib.rs` and docs/design.md, as data.
fn allowed(module: &str) -> Option<BTreeSet<&'static str>> {
    let domain = || CHAIN.iter().copied().chain(["vendored_sdk"]);
    let set: BTreeSet<&'static str> = match module {
        "cmd" => return Some(BTreeSet::from(["*"])),
        "output" | "error" => domain().chain(["exit"]).collect(),
        "cli" => ["clients", "deployment"].into(),
        "vendored_sdk" => ["content", "deployment", "entry"].into(),
        "state" | "notice" => ["fsio", "dirs"].into(),
        "fsio" => ["dirs"].into(),
        "dirs" | "usage" | "process" | "exit" | "version" | "text" | "format" => BTreeSet::new(),
        m => {
            let at = CHAIN.iter().position(|c| *c == m)?;
            CHAIN[at + 1..].iter().copied().collect()
        }
    };
    Some(set)
}

/// The top-level modules `text` names as `crate::<m>` outside comments, with their line
/// numbers; `use crate::{a, b::c}` names `a` and `b`, over several lines too.
fn imports(text: &str) -> Vec<(usize, String)> {
    // Comments out, line breaks kept, so that an offset still tells its line.
    let code: String = text
        .lines()
        .map(|line| match line.trim_start().starts_with("//") {
            true => "",
            false => line.split(" //").next().unwrap_or(line),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("crate::") {
        let at = from + found;
        from = at + "crate::".len();
        // `$crate::` and `some_crate::` are not ours.
        let before = code[..at].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[from..];
        let Some(group) = rest.strip_prefix('{') else {
            out.extend(first_segment(rest).map(|m| (line_of(at), m)));
            continue;
        };
        let (mut depth, mut item) = (0, String::new());
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(first_segment(&item).map(|m| (line_of(at), m)));
                    item.clear();
                    continue;
                }
                _ => {}
            }
            if depth == 0 {
                item.push(c);
            }
        }
        out.extend(first_segment(&item).map(|m| (line_of(at), m)));
    }
    out
}

fn first_segment(path: &str) -> Option<String> {
    let name: String = path
        .trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty() && name.chars().next().is_some_and(|c| c.is_lowercase())).then_some(name)
}

/// Every `.rs` file below `src`, in name order: its path, and its path from `src`.
fn rust_files(src: &Path) -> Vec<(std::path::PathBuf, std::path::PathBuf)> {
    walkdir::WalkDir::new(src)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.expect("src/ can be walked").into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            let rel = p.strip_prefix(src).expect("under src/").to_path_buf();
            (p, rel)
        })
        .collect()
}

/// Every import in `src/` that [`allowed`] does not allow: `file:line: a -> b`.
fn violations(src: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (path, rel) in rust_files(src) {
        let top = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|s| s.trim_end_matches(".rs").to_string())
            .unwrap_or_default();
        if matches!(top.as_str(), "lib" | "main" | "import_direction") {
            continue;
        }
        let Some(ok) = allowed(&top) else {
            out.push(format!(
                "{}: the module `{top}` is not in the import direction (src/import_direction.rs)",
                rel.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(path).expect("a source file is UTF-8");
        for (line, to) in imports(&text) {
            let fine = to == top
                || ok.contains("*")
                || ok.contains(to.as_str())
                || (LEAVES.contains(&to.as_str()) && !LEAVES.contains(&top.as_str()));
            if !fine {
                out.push(format!("{}:{line}: {top} -> {to}", rel.display()));
            }
        }
    }
    out
}

#[test]
fn every_import_follows_the_direction() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&src);
    assert!(
        bad.is_empty(),
        "imports against the direction in src/lib.rs (a domain module must not use one above \
         it; move the item down, or hand a callback in):\n{}",
        bad.join("\n")
    );
}

#[test]
fn a_reverse_import_is_found() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("entry")).unwrap();
    std::fs::write(
        dir.path().join("entry/mod.rs"),
        "// crate::cmd in a comment is fine\nuse crate::{\n    fsio,\n    registration::plan,\n};\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("fsio.rs"),
        "fn f() { crate::dirs::home(); }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("dirs.rs"), "fn g() { crate::fsio::x(); }\n").unwrap();
    assert_eq!(
        violations(dir.path()),
        [
            "dirs.rs:1: dirs -> fsio",
            "entry/mod.rs:2: entry -> registration"
        ]
    );
}

#[test]
fn a_module_outside_the_direction_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("gadget.rs"), "").unwrap();
    assert_eq!(violations(dir.path()).len(), 1);
}

/// Words outside `src/clients/` that are a client's name but name something else: MCP's
/// pagination `cursor` of `tools/list`.
const NOT_A_CLIENT: &[(&str, &str)] = &[("identity/handshake/mod.rs", "cursor")];

/// Every string literal naming a client (one of `names`) in the non-test code of `src/`
/// outside `clients/` (a file's `#[cfg(test)] mod tests` and its `tests.rs` are test code;
/// comments do not count): `file:line: "name"`. Outside its folder no code decides by a
/// client's name; it asks the client list.
fn client_names_outside_clients(src: &Path, names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, rel) in rust_files(src) {
        if rel.starts_with("clients")
            || rel
                .file_name()
                .is_some_and(|f| f == "tests.rs" || f == "import_direction.rs")
        {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("a source file is UTF-8");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let next = lines.get(i + 1).map_or("", |l| l.trim());
            if line.trim() == "#[cfg(test)]" && next.starts_with("mod tests") {
                break;
            }
            let code = line.split("//").next().unwrap_or_default();
            for name in names {
                let quoted = format!("\"{name}\"");
                let known = NOT_A_CLIENT.contains(&(rel.to_str().unwrap_or_default(), name));
                if code.contains(&quoted) && !known {
                    out.push(format!("{}:{}: {quoted}", rel.display(), i + 1));
                }
            }
        }
    }
    out
}

#[test]
fn no_code_outside_the_clients_names_a_client() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let names: Vec<&str> = crate::clients::CLIENTS
        .iter()
        .map(|k| k.about().name)
        .collect();
    assert_eq!(names.len(), 9, "{names:?}");
    let found = client_names_outside_clients(&src, &names);
    assert!(
        found.is_empty(),
        "a client named outside src/clients/ (ask the client list, or move the rule into the \
         client's folder):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_client_named_in_code_is_found_and_one_in_a_comment_or_a_test_is_not() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("cmd")).unwrap();
    std::fs::create_dir_all(dir.path().join("clients/codex")).unwrap();
    std::fs::write(
        dir.path().join("cmd/install.rs"),
        "// \"codex\" in a comment\nfn f(c: &str) -> bool {\n    c == \"codex\"\n}\n\
         #[cfg(test)]\nmod tests {\n    const C: &str = \"codex\";\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("clients/codex/mod.rs"),
        "const N: &str = \"codex\";\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("tests.rs"), "const N: &str = \"codex\";\n").unwrap();
    assert_eq!(
        client_names_outside_clients(dir.path(), &["codex"]),
        ["cmd/install.rs:3: \"codex\""]
    );
}
