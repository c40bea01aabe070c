//! Checksum files in the format `sha256sum` writes and `sha256sum -c` reads.
//!
//! Accepted, as GNU coreutils 9.1 accepts them:
//! - `<hex>  <name>` (text) and `<hex> *<name>` (binary); the digest may be upper case;
//! - the BSD form `SHA256 (<name>) = <hex>` (what `sha256sum --tag` writes);
//! - a line starting with `\`, whose name is escaped: `\\`, `\n` and `\r`;
//! - CRLF line ends, leading blanks, a last line without a newline.
//!
//! Refused, loudly, with the file and line number: a wrong digest length, a non-hex digest,
//! a NUL byte, an empty file, an unknown escape. Refused where GNU is lax, because a checksum
//! file is security evidence and a line must never be skipped or reinterpreted in silence:
//! blank and `#` comment lines (GNU skips them), a single space or a tab between digest and
//! name (GNU guesses a "reversed BSD" layout from the first line), NUL (GNU truncates the
//! name there), an absolute name, a `..` component, and a name listed twice.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::content::digest::Algorithm;

/// One checked line: a digest and the relative path it is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Lowercase hex.
    pub(crate) digest: String,
    /// Relative, made only of normal components (`./` dropped).
    pub(crate) path: PathBuf,
    /// The line was in binary mode (` *`). On POSIX this changes nothing about the digest.
    pub(crate) binary: bool,
    /// 1-based line number in the checksum file.
    pub(crate) line: usize,
}

/// Why a checksum file was refused. Every variant names the file, and every per-line variant
/// the line number and the offending text (escaped, shortened).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SumFileError {
    #[error("{file}: empty checksum file: it lists no files")]
    Empty { file: PathBuf },
    #[error("{file}:{line}: {reason}: {text}")]
    Malformed {
        file: PathBuf,
        line: usize,
        reason: &'static str,
        text: String,
    },
    #[error(
        "{file}:{line}: {algorithm} digest must be {expected} hex digits, found {actual}: {text}"
    )]
    DigestLength {
        file: PathBuf,
        line: usize,
        algorithm: &'static str,
        expected: usize,
        actual: usize,
        text: String,
    },
    #[error("{file}:{line}: digest is not hexadecimal: {text}")]
    NotHex {
        file: PathBuf,
        line: usize,
        text: String,
    },
    #[error("{file}:{line}: line contains a NUL byte: {text}")]
    Nul {
        file: PathBuf,
        line: usize,
        text: String,
    },
    #[error("{file}:{line}: unknown escape in name (only \\\\, \\n and \\r are defined): {text}")]
    BadEscape {
        file: PathBuf,
        line: usize,
        text: String,
    },
    #[error(
        "{file}:{line}: absolute name {name}: names must be relative to the checked directory"
    )]
    AbsoluteName {
        file: PathBuf,
        line: usize,
        name: String,
    },
    #[error("{file}:{line}: name {name} has a `..` component")]
    ParentComponent {
        file: PathBuf,
        line: usize,
        name: String,
    },
    #[error("{file}:{line}: {name} is listed twice (first on line {first_line})")]
    Duplicate {
        file: PathBuf,
        line: usize,
        name: String,
        first_line: usize,
    },
}

impl SumFileError {
    /// What the user can do about it.
    pub(crate) fn help(&self) -> Option<String> {
        Some(match self {
            SumFileError::Empty { .. } => {
                "regenerate it; an empty list would prove nothing".to_string()
            }
            SumFileError::Malformed { .. } => {
                "each line must be `<hex>  <name>`, `<hex> *<name>` or `SHA256 (<name>) = <hex>`, \
                 as `sha256sum` writes; remove blank and comment lines"
                    .to_string()
            }
            SumFileError::DigestLength { .. } | SumFileError::NotHex { .. } => {
                "the file may be truncated or for another algorithm; regenerate it".to_string()
            }
            SumFileError::Nul { .. } => "the file is corrupt; regenerate it".to_string(),
            SumFileError::BadEscape { .. } => {
                "write the name as `sha256sum` does, or drop the leading `\\` if the name is literal"
                    .to_string()
            }
            SumFileError::AbsoluteName { .. } | SumFileError::ParentComponent { .. } => {
                "list files by their path relative to the directory being checked".to_string()
            }
            SumFileError::Duplicate { .. } => {
                "remove one of the two lines; a file has one digest".to_string()
            }
        })
    }
}

/// Parse a whole checksum file. `file` names it in errors.
pub(crate) fn parse(
    algorithm: Algorithm,
    file: &Path,
    bytes: &[u8],
) -> Result<Vec<Entry>, SumFileError> {
    if bytes.is_empty() {
        return Err(SumFileError::Empty {
            file: file.to_path_buf(),
        });
    }
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let mut entries = Vec::new();
    let mut seen: HashMap<PathBuf, usize> = HashMap::new();
    for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
        let entry = parse_line(algorithm, file, i + 1, raw)?;
        if let Some(&first_line) = seen.get(&entry.path) {
            return Err(SumFileError::Duplicate {
                file: file.to_path_buf(),
                line: entry.line,
                name: show(entry.path.as_os_str().as_bytes()),
                first_line,
            });
        }
        seen.insert(entry.path.clone(), entry.line);
        entries.push(entry);
    }
    Ok(entries)
}

/// Parse one line (without its `\n`). `line` is 1-based.
pub(crate) fn parse_line(
    algorithm: Algorithm,
    file: &Path,
    line: usize,
    raw: &[u8],
) -> Result<Entry, SumFileError> {
    let text = || show(raw);
    let malformed = |reason| SumFileError::Malformed {
        file: file.to_path_buf(),
        line,
        reason,
        text: text(),
    };
    let s = raw.strip_suffix(b"\r").unwrap_or(raw);
    if s.contains(&0) {
        return Err(SumFileError::Nul {
            file: file.to_path_buf(),
            line,
            text: text(),
        });
    }
    let s = trim_leading_blanks(s);
    if s.is_empty() {
        return Err(malformed("blank line"));
    }
    if s[0] == b'#' {
        return Err(malformed("comment line"));
    }
    let (escaped, s) = match s.strip_prefix(b"\\") {
        Some(rest) => (true, rest),
        None => (false, s),
    };

    let (hex, name, binary) = if let Some(rest) = strip_tag(s, algorithm.tag()) {
        // BSD form. The digest holds no `)`, so the last `) = ` ends the name even when the
        // name itself contains one.
        let at = rfind(rest, b") = ").ok_or_else(|| malformed("BSD line without `) = `"))?;
        (&rest[at + 4..], &rest[..at], false)
    } else if looks_like_other_tag(s) {
        return Err(malformed("BSD line for another algorithm"));
    } else {
        let end = s
            .iter()
            .position(|&b| b == b' ' || b == b'\t')
            .unwrap_or(s.len());
        let (hex, rest) = s.split_at(end);
        check_hex(algorithm, file, line, hex, raw)?;
        let (binary, name) = match rest {
            [b' ', b' ', name @ ..] => (false, name),
            [b' ', b'*', name @ ..] => (true, name),
            [] => return Err(malformed("digest without a name")),
            _ => {
                return Err(malformed(
                    "digest and name must be separated by two spaces (text) or ` *` (binary)",
                ))
            }
        };
        (hex, name, binary)
    };
    check_hex(algorithm, file, line, hex, raw)?;

    let name = if escaped {
        unescape(name).ok_or_else(|| SumFileError::BadEscape {
            file: file.to_path_buf(),
            line,
            text: text(),
        })?
    } else {
        name.to_vec()
    };
    if name.is_empty() {
        return Err(malformed("empty name"));
    }
    let path = Path::new(OsStr::from_bytes(&name));
    let mut clean = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(SumFileError::ParentComponent {
                    file: file.to_path_buf(),
                    line,
                    name: show(&name),
                })
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(SumFileError::AbsoluteName {
                    file: file.to_path_buf(),
                    line,
                    name: show(&name),
                })
            }
        }
    }
    if clean.as_os_str().is_empty() {
        return Err(malformed("name names no file"));
    }
    Ok(Entry {
        digest: String::from_utf8_lossy(hex).to_ascii_lowercase(),
        path: clean,
        binary,
        line,
    })
}

/// One line as `sha256sum` writes it in text mode, newline included. A name holding `\`, LF
/// or CR is escaped and the line starts with `\`, exactly as GNU coreutils 9.1 does.
pub(crate) fn format_line(hex: &str, name: &Path) -> Vec<u8> {
    let bytes = name.as_os_str().as_bytes();
    let mut out = Vec::with_capacity(hex.len() + bytes.len() + 4);
    let escape = needs_escape(bytes);
    if escape {
        out.push(b'\\');
    }
    out.extend_from_slice(hex.as_bytes());
    out.extend_from_slice(b"  ");
    if escape {
        out.extend_from_slice(&escape_name(bytes));
    } else {
        out.extend_from_slice(bytes);
    }
    out.push(b'\n');
    out
}

fn needs_escape(name: &[u8]) -> bool {
    name.iter().any(|&b| matches!(b, b'\\' | b'\n' | b'\r'))
}

/// GNU's escaping of a name: `\` → `\\`, LF → `\n`, CR → `\r`.
pub(crate) fn escape_name(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 2);
    for &b in name {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
    out
}

/// A path for a human: its bytes, GNU-escaped, lossily decoded (so one name is one line).
pub(crate) fn display_path(path: &Path) -> String {
    String::from_utf8_lossy(&escape_name(path.as_os_str().as_bytes())).into_owned()
}

fn unescape(name: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(name.len());
    let mut it = name.iter();
    while let Some(&b) = it.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match it.next() {
            Some(b'\\') => out.push(b'\\'),
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            _ => return None,
        }
    }
    Some(out)
}

fn check_hex(
    algorithm: Algorithm,
    file: &Path,
    line: usize,
    hex: &[u8],
    raw: &[u8],
) -> Result<(), SumFileError> {
    if !hex.iter().all(u8::is_ascii_hexdigit) || hex.is_empty() {
        return Err(SumFileError::NotHex {
            file: file.to_path_buf(),
            line,
            text: show(raw),
        });
    }
    if hex.len() != algorithm.hex_len() {
        return Err(SumFileError::DigestLength {
            file: file.to_path_buf(),
            line,
            algorithm: algorithm.tag(),
            expected: algorithm.hex_len(),
            actual: hex.len(),
            text: show(raw),
        });
    }
    Ok(())
}

fn trim_leading_blanks(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(s.len());
    &s[start..]
}

fn strip_tag<'a>(s: &'a [u8], tag: &str) -> Option<&'a [u8]> {
    s.strip_prefix(tag.as_bytes())?.strip_prefix(b" (")
}

/// `MD5 (x) = …`, `SHA512 (x) = …`, `BLAKE2b (x) = …`: a tag of letters, digits and `-`.
fn looks_like_other_tag(s: &[u8]) -> bool {
    let Some(sp) = s.iter().position(|&b| b == b' ') else {
        return false;
    };
    let tag = &s[..sp];
    !tag.is_empty()
        && tag.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        && !tag.iter().all(u8::is_ascii_hexdigit)
        && s[sp..].starts_with(b" (")
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// Offending text for a message: escaped so that control bytes cannot forge output, and
/// shortened so that one bad line cannot flood the terminal.
fn show(bytes: &[u8]) -> String {
    const MAX: usize = 160;
    let s = String::from_utf8_lossy(bytes);
    let mut out: String = s.escape_debug().collect();
    if out.chars().count() > MAX {
        out = out.chars().take(MAX).collect::<String>() + "…";
    }
    format!("\"{out}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4";

    fn parse256(input: &[u8]) -> Result<Vec<Entry>, SumFileError> {
        parse(Algorithm::Sha256, Path::new("SUMS"), input)
    }

    fn one(input: &str) -> Entry {
        let mut v = parse256(input.as_bytes()).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(v.len(), 1);
        v.remove(0)
    }

    fn refused(input: &[u8]) -> SumFileError {
        match parse256(input) {
            Ok(v) => panic!("{:?} was accepted: {v:?}", String::from_utf8_lossy(input)),
            Err(e) => e,
        }
    }

    #[test]
    fn text_mode_two_spaces() {
        let e = one(&format!("{H}  a b\n"));
        assert_eq!(
            (e.digest.as_str(), e.path.to_str(), e.binary, e.line),
            (H, Some("a b"), false, 1)
        );
    }

    #[test]
    fn binary_mode_space_star() {
        let e = one(&format!("{H} *bin/x\n"));
        assert_eq!(e.path, Path::new("bin/x"));
        assert!(e.binary);
    }

    #[test]
    fn bsd_tag_form_even_with_parenthesis_in_name() {
        let e = one(&format!("SHA256 (a) = b) = {H}\n"));
        assert_eq!(e.path, Path::new("a) = b"));
        assert_eq!(e.digest, H);
    }

    #[test]
    fn bsd_tag_form_escaped() {
        let e = one(&format!("\\SHA256 (x\\\\y) = {H}\n"));
        assert_eq!(e.path, Path::new("x\\y"));
    }

    #[test]
    fn crlf_line_ends() {
        let v = parse256(format!("{H}  a\r\n{H}  b\r\n").as_bytes()).unwrap();
        let names: Vec<_> = v.iter().map(|e| e.path.to_str().unwrap()).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn escaped_names() {
        assert_eq!(one(&format!("\\{H}  a\\\\b\n")).path, Path::new("a\\b"));
        assert_eq!(
            one(&format!("\\{H}  new\\nline\n")).path,
            Path::new("new\nline")
        );
        assert_eq!(one(&format!("\\{H}  c\\rr\n")).path, Path::new("c\rr"));
    }

    #[test]
    fn backslash_without_leading_escape_is_literal() {
        // GNU looks for `a\\b` literally when the line does not start with `\`.
        assert_eq!(one(&format!("{H}  a\\\\b\n")).path, Path::new("a\\\\b"));
    }

    #[test]
    fn uppercase_hex_is_lowercased() {
        assert_eq!(one(&format!("{}  x\n", H.to_uppercase())).digest, H);
    }

    #[test]
    fn last_line_without_newline_and_leading_blanks() {
        assert_eq!(one(&format!(" \t{H}  x")).path, Path::new("x"));
    }

    #[test]
    fn dot_slash_is_dropped() {
        assert_eq!(one(&format!("{H}  ./a//b\n")).path, Path::new("a/b"));
    }

    #[test]
    fn line_numbers_count_from_one() {
        let v = parse256(format!("{H}  a\n{H}  b\n").as_bytes()).unwrap();
        assert_eq!(v[1].line, 2);
    }

    #[test]
    fn refuses_empty_file() {
        assert!(matches!(refused(b""), SumFileError::Empty { .. }));
    }

    #[test]
    fn refuses_short_and_long_digests() {
        let e = refused(format!("{H}  a\n{}  b\n", &H[..63]).as_bytes());
        assert!(
            matches!(
                e,
                SumFileError::DigestLength {
                    line: 2,
                    actual: 63,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().starts_with("SUMS:2: "), "{e}");
        let e = refused(format!("{H}0  a\n").as_bytes());
        assert!(
            matches!(e, SumFileError::DigestLength { actual: 65, .. }),
            "{e}"
        );
        // A sha512 line in a sha256 file.
        let e = refused(format!("{H}{H}  a\n").as_bytes());
        assert!(
            matches!(e, SumFileError::DigestLength { actual: 128, .. }),
            "{e}"
        );
    }

    #[test]
    fn refuses_non_hex() {
        let bad = format!("{}g  a\n", &H[..63]);
        let e = refused(bad.as_bytes());
        assert!(matches!(e, SumFileError::NotHex { line: 1, .. }), "{e}");
        assert!(
            e.to_string().contains("07beg  a"),
            "offending text missing: {e}"
        );
        let e = refused(format!("SHA256 (a) = {}z\n", &H[..63]).as_bytes());
        assert!(matches!(e, SumFileError::NotHex { .. }), "{e}");
    }

    #[test]
    fn refuses_nul() {
        let e = refused(format!("{H}  x\0y\n").as_bytes());
        assert!(matches!(e, SumFileError::Nul { line: 1, .. }), "{e}");
        assert!(e.to_string().contains("\\0"), "{e}");
    }

    #[test]
    fn refuses_blank_and_comment_lines_that_gnu_skips() {
        let e = refused(format!("{H}  a\n\n{H}  b\n").as_bytes());
        assert!(
            matches!(
                e,
                SumFileError::Malformed {
                    line: 2,
                    reason: "blank line",
                    ..
                }
            ),
            "{e}"
        );
        let e = refused(format!("# made by hand\n{H}  a\n").as_bytes());
        assert!(
            matches!(
                e,
                SumFileError::Malformed {
                    line: 1,
                    reason: "comment line",
                    ..
                }
            ),
            "{e}"
        );
        // A file that is only a newline is one blank line, not an empty file.
        let e = refused(b"\n");
        assert!(matches!(e, SumFileError::Malformed { line: 1, .. }), "{e}");
    }

    #[test]
    fn refuses_single_space_and_tab_separators() {
        for sep in [" ", "\t", " \t"] {
            let e = refused(format!("{H}{sep}a\n").as_bytes());
            assert!(
                matches!(e, SumFileError::Malformed { line: 1, .. }),
                "{sep:?}: {e}"
            );
        }
    }

    #[test]
    fn refuses_digest_without_name() {
        for line in [format!("{H}\n"), format!("{H}  \n"), format!("{H}  ./\n")] {
            let e = refused(line.as_bytes());
            assert!(matches!(e, SumFileError::Malformed { .. }), "{line:?}: {e}");
        }
    }

    #[test]
    fn refuses_unknown_or_dangling_escape() {
        for line in [format!("\\{H}  a\\tb\n"), format!("\\{H}  a\\\n")] {
            let e = refused(line.as_bytes());
            assert!(
                matches!(e, SumFileError::BadEscape { line: 1, .. }),
                "{line:?}: {e}"
            );
        }
    }

    #[test]
    fn refuses_absolute_names() {
        let e = refused(format!("{H}  /etc/passwd\n").as_bytes());
        assert!(
            matches!(e, SumFileError::AbsoluteName { line: 1, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("/etc/passwd"), "{e}");
    }

    #[test]
    fn refuses_parent_components() {
        for name in ["../x", "a/../b", "a/.."] {
            let e = refused(format!("{H}  {name}\n").as_bytes());
            assert!(
                matches!(e, SumFileError::ParentComponent { .. }),
                "{name}: {e}"
            );
        }
        let e = refused(format!("\\SHA256 (a\\n/../b) = {H}\n").as_bytes());
        assert!(matches!(e, SumFileError::ParentComponent { .. }), "{e}");
    }

    #[test]
    fn refuses_a_name_listed_twice_even_spelled_differently() {
        let e = refused(format!("{H}  a/b\n{H}  c\n{H} *./a/b\n").as_bytes());
        match e {
            SumFileError::Duplicate {
                line, first_line, ..
            } => assert_eq!((line, first_line), (3, 1)),
            e => panic!("{e}"),
        }
    }

    #[test]
    fn refuses_bsd_lines_of_another_algorithm_or_shape() {
        let e = refused(format!("SHA512 (a) = {H}\n").as_bytes());
        assert!(
            matches!(
                e,
                SumFileError::Malformed {
                    reason: "BSD line for another algorithm",
                    ..
                }
            ),
            "{e}"
        );
        let e = refused(format!("SHA256 (a) {H}\n").as_bytes());
        assert!(matches!(e, SumFileError::Malformed { .. }), "{e}");
    }

    #[test]
    fn garbage_is_refused_with_its_text() {
        let e = refused(b"garbage\n");
        assert!(
            e.to_string().contains("SUMS:1") && e.to_string().contains("garbage"),
            "{e}"
        );
        assert!(e.help().is_some());
    }

    #[test]
    fn format_line_matches_gnu_and_round_trips() {
        assert_eq!(
            format_line(H, Path::new("a b")),
            format!("{H}  a b\n").into_bytes()
        );
        assert_eq!(
            format_line(H, Path::new("back\\slash")),
            format!("\\{H}  back\\\\slash\n").into_bytes()
        );
        for name in ["plain", "sp ace", "new\nline", "c\rr", "x\\y", "dir/ü"] {
            let line = format_line(H, Path::new(name));
            let e = parse_line(
                Algorithm::Sha256,
                Path::new("S"),
                1,
                &line[..line.len() - 1],
            )
            .unwrap();
            assert_eq!(e.path, Path::new(name));
        }
    }

    #[test]
    fn sha512_lines_parse_with_sha512() {
        let h512 = format!("{H}{H}");
        let v = parse(
            Algorithm::Sha512,
            Path::new("S"),
            format!("SHA512 (t.tgz) = {h512}\n").as_bytes(),
        )
        .unwrap();
        assert_eq!(v[0].digest, h512);
        let e = parse(
            Algorithm::Sha512,
            Path::new("S"),
            format!("{H}  t.tgz\n").as_bytes(),
        )
        .unwrap_err();
        assert!(
            matches!(e, SumFileError::DigestLength { expected: 128, .. }),
            "{e}"
        );
    }
}
