//! The variables a `.env` file defines, as npm's `dotenv` (16 and 17, which gemini 0.61.0
//! bundles and grok 0.0.34 depends on) reads them: names only, never values.
//!
//! dotenv turns `\r\n` and `\r` into `\n`, then takes every match of one multi-line pattern
//! (`lib/main.js`, `LINE`): an optional `export`, a name of `[\w.-]`, `=` or `: `, and a value
//! that is quoted (`'`, `"` or `` ` ``, which may span lines) or runs to the end of the line.
//! A quoted value that spans lines hides whatever looks like a definition inside it, so the
//! pattern is applied whole, not line by line. The regex crate gives the same leftmost-first
//! matches as JavaScript's engine for this pattern (no backreference, no lookaround), in time
//! linear in the file. Differences left: JavaScript's `$` also ends a line at U+2028/U+2029
//! and its `\s` includes U+FEFF; a name next to one of those may be missed or seen twice.

use std::sync::LazyLock;

use regex::Regex;

static LINE: LazyLock<Regex> = LazyLock::new(|| {
    // dotenv's: (?:^|^)\s*(?:export\s+)?([\w.-]+)(?:\s*=\s*?|:\s+?)(\s*'(?:\\'|[^'])*'|
    // \s*"(?:\\"|[^"])*"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?\s*(?:#.*)?(?:$|$)  (flags mg)
    // `\w` in JavaScript is ASCII; `.` excludes line terminators.
    Regex::new(concat!(
        r#"(?m)^\s*(?:export\s+)?([A-Za-z0-9_.-]+)(?:\s*=\s*?|:\s+?)"#,
        r#"(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?"#,
        r#"\s*(?:#[^\n\r\u{2028}\u{2029}]*)?$"#,
    ))
    .expect("dotenv's pattern compiles")
});

/// The names `text` defines, in file order, each once (a later definition of a name wins in
/// dotenv, which changes its value, not whether it is set).
pub(crate) fn names(text: &str) -> Vec<String> {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut seen = std::collections::BTreeSet::new();
    // Find each definition with the DFA (fast), then take its name from that span alone: the
    // same leftmost-first match, since the span ends where the whole-text match did.
    LINE.find_iter(&text)
        .filter_map(|m| LINE.captures(m.as_str()).map(|c| c[1].to_string()))
        .filter(|n| seen.insert(n.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn names_as_dotenv_reads_them() {
        let text = "# a comment\nA=1\nexport B = two words # trailing\nC: colon\n\n  D='x'\n\
                    E=\"multi\nF=hidden inside E\n\"\nG=`tick`\nnot a definition\nH.I-J=ok\n\
                    K=\r\nL=last";
        assert_eq!(
            names(text),
            ["A", "B", "C", "D", "E", "G", "H.I-J", "K", "L"]
        );
        // An unclosed quote runs to the end of its line only.
        assert_eq!(names("A=\"open\nB=1\n"), ["A", "B"]);
        // `KEY:value` without a space is no definition; `=` may have none.
        assert_eq!(names("A:b\nC=d"), ["C"]);
        assert_eq!(names("A=1\nA=2"), ["A"]);
    }

    #[test]
    fn a_large_file_is_read_in_linear_time() {
        // An unclosed quote and many definitions: time grows with the size, no more.
        let time = |n: usize| {
            let big = format!("A=\"{}\n{}", "x".repeat(n), "B=1\n".repeat(n / 4));
            let start = std::time::Instant::now();
            assert_eq!(names(&big), ["A", "B"]);
            start.elapsed()
        };
        let (small, large) = (time(1 << 16), time(1 << 19));
        eprintln!("{small:?} {large:?}");
        assert!(
            large < small * 32,
            "{small:?} then {large:?} for 8 times the input"
        );
    }
}
