//! Human output made to fit a terminal of 100 columns (issue 36, item 10): commit shas and
//! digests shortened, long lines wrapped under their own detail. Only the human form of the
//! reports goes through here; JSON, JUnit, GitHub and Prometheus keep every sha in full, as do
//! the documents and commands a user copies (render-mcp's output, a `help:` line).

/// The width human reports fit in.
pub(crate) const COLUMNS: usize = 100;

/// The fewest hex digits a shortened sha keeps, as `docker` does: 48 bits.
pub(crate) const SHORT: usize = 12;

/// How a dry run's client call starts (`  run   claude mcp add-json …`): a command to copy,
/// kept as it is, neither shortened nor wrapped.
pub(crate) const RUN: &str = "  run   ";

/// `text` as a human reads it: [`short_shas`], then [`wrap`] at [`COLUMNS`]; the [`RUN`] lines
/// kept as they are.
pub(crate) fn for_humans(text: &str) -> String {
    let keep = digits(text);
    text.split_inclusive('\n')
        .map(|line| match line.starts_with(RUN) {
            true => line.to_string(),
            false => wrap(&cut(line, keep), COLUMNS),
        })
        .collect()
}

/// Every 40- or 64-digit lowercase hex word of `text` (a commit sha, a sha256 digest) cut to
/// its first [`SHORT`] digits, or more: as many as tell apart every distinct one in `text`, so
/// that two shas that differ are never shown alike (a release named to share the expected
/// commit's first 12 digits shows both in as many digits as differ).
#[cfg(test)]
pub(crate) fn short_shas(text: &str) -> String {
    cut(text, digits(text))
}

/// The digits that tell apart every distinct sha of `text`: [`SHORT`] at least.
fn digits(text: &str) -> usize {
    let mut distinct: Vec<&str> = hex_words(text).iter().map(|&(a, b)| &text[a..b]).collect();
    distinct.sort_unstable();
    distinct.dedup();
    distinct
        .windows(2)
        .map(|w| common_prefix(w[0], w[1]) + 1)
        .fold(SHORT, usize::max)
}

/// Every sha of `text` cut to `keep` digits.
fn cut(text: &str, keep: usize) -> String {
    let words = hex_words(text);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (a, b) in words {
        out.push_str(&text[at..a]);
        out.push_str(&text[a..b.min(a + keep)]);
        at = b;
    }
    out.push_str(&text[at..]);
    out
}

/// The byte ranges of the sha-shaped words of `text`: a run of ASCII letters and digits that
/// is all lowercase hex, 40 or 64 long.
fn hex_words(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let word = &bytes[start..i];
        if matches!(word.len(), 40 | 64)
            && word
                .iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        {
            words.push((start, i));
        }
    }
    words
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

/// Each line of `text` longer than `width` columns broken at spaces, its continuation lines
/// indented to where its detail starts: after the last run of two or more spaces within its
/// first 40 columns (`  ok   commit            <detail>`, `keep   <detail>`), else four
/// columns in. A word longer than the room left (a long path) is never broken: it takes a line
/// of its own. Colour escapes take no column.
pub(crate) fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if columns(body) <= width {
            out.push_str(line);
            continue;
        }
        let (head, rest, hang) = split_at_detail(body);
        let indent = " ".repeat(hang);
        let mut current = head.to_string();
        let mut used = columns(head);
        let mut first_word = true;
        for word in words(rest) {
            let w = columns(&word);
            if !first_word && used + 1 + w > width {
                out.push_str(&current);
                out.push('\n');
                current = format!("{indent}{word}");
                used = hang + w;
            } else {
                if !first_word {
                    current.push(' ');
                    used += 1;
                }
                current.push_str(&word);
                used += w;
            }
            first_word = false;
        }
        out.push_str(&current);
        out.push_str(end);
    }
    out
}

/// The words of `text` between single spaces, each with the spaces beyond one before it kept
/// in front of it: joined by single spaces they are `text` again, so that wrapping never
/// changes evidence (a path `/opt/a  b` is not shown as `/opt/a b`).
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut extra = 0;
    for part in text.split(' ') {
        if part.is_empty() {
            extra += 1;
        } else {
            words.push(format!("{}{part}", " ".repeat(extra)));
            extra = 0;
        }
    }
    words
}

/// `line` split where its detail starts (see [`wrap`]): the head kept as it is, the rest, and
/// the column the rest starts at.
fn split_at_detail(line: &str) -> (&str, &str, usize) {
    let mut col = 0;
    let mut spaces = 0;
    let mut split = None;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\u{1b}' {
            // An SGR escape: `ESC [ ... m`, no column.
            for (_, e) in chars.by_ref() {
                if e.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        if col >= 40 {
            break;
        }
        if c == ' ' {
            spaces += 1;
        } else {
            if spaces >= 2 && col > spaces {
                split = Some((i, col));
            }
            spaces = 0;
        }
        col += 1;
    }
    match split {
        Some((i, col)) => (&line[..i], &line[i..], col),
        None => {
            let indent = line.len() - line.trim_start_matches(' ').len();
            ("", line, indent + 4)
        }
    }
}

/// The columns `s` takes on a terminal: its characters, colour escapes left out.
fn columns(s: &str) -> usize {
    let mut n = 0;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for e in chars.by_ref() {
                if e.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    const CT: &str = "c0de7001c0de7001c0de7001c0de7001c0de7001";

    #[test]
    fn a_sha_is_cut_to_twelve_digits_where_it_is_a_word_of_its_own() {
        let text = format!(
            "releases/{CT}/VERSION holds {CT}; not {CT}x nor {}",
            &CT[..39]
        );
        assert_eq!(
            short_shas(&text),
            format!(
                "releases/c0de7001c0de/VERSION holds c0de7001c0de; not {CT}x nor {}",
                &CT[..39]
            )
        );
        let digest = "ab".repeat(32);
        assert_eq!(short_shas(&digest), "abababababab");
        // Uppercase hex is no sha of ours: kept.
        assert_eq!(short_shas(&CT.to_uppercase()), CT.to_uppercase());
    }

    /// Two shas that share their first 12 digits (a release named to look like the expected
    /// commit) are shown in as many digits as tell them apart, never alike.
    #[test]
    fn shas_that_share_their_first_digits_are_shown_apart() {
        let evil = format!("{}ffff", &CT[..36]);
        let shown = short_shas(&format!("the deployed commit is {evil}, expected {CT}"));
        assert_eq!(
            shown,
            format!(
                "the deployed commit is {}, expected {}",
                &evil[..37],
                &CT[..37]
            )
        );
    }

    #[test]
    fn a_long_row_wraps_under_its_detail_and_a_short_one_is_kept() {
        let row = format!(
            "  ok   target            /opt/codetools/bin/codetools -> \
             /opt/codetools/releases/{}/bin/codetools inside /opt/codetools/releases/{}\n",
            &CT[..12],
            &CT[..12]
        );
        let wrapped = wrap(&row, 100);
        assert_eq!(
            wrapped,
            "  ok   target            /opt/codetools/bin/codetools ->\n                         \
             /opt/codetools/releases/c0de7001c0de/bin/codetools inside\n                         \
             /opt/codetools/releases/c0de7001c0de\n"
        );
        assert!(wrapped.lines().all(|l| columns(l) <= 100), "{wrapped}");
        assert_eq!(wrap("short line\n", 100), "short line\n");
    }

    #[test]
    fn colour_takes_no_column_and_a_long_word_takes_a_line_of_its_own() {
        let row = format!(
            "  \u{1b}[32mok\u{1b}[0m   commit            {} {}\n",
            "a".repeat(60),
            "b".repeat(90)
        );
        let wrapped = wrap(&row, 100);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert_eq!(lines.len(), 2, "{wrapped}");
        assert_eq!(lines[1], format!("{}{}", " ".repeat(25), "b".repeat(90)));
        assert_eq!(columns(lines[0]), 25 + 60);
    }

    /// Spaces inside a detail are evidence (a path may hold two in a row): wrapping keeps
    /// every one of them.
    #[test]
    fn wrapping_keeps_every_space_of_the_detail() {
        let detail = format!("{}  /opt/a  b/{}", "x".repeat(70), "y".repeat(30));
        let row = format!("  FAIL commit            {detail}\n");
        let wrapped = wrap(&row, 100);
        assert_ne!(wrapped, row, "not wrapped");
        let rejoined: Vec<&str> = wrapped.lines().map(|l| l.trim_start()).collect();
        assert_eq!(
            rejoined[1..].join(" "),
            "/opt/a  b/".to_string() + &"y".repeat(30),
            "{wrapped}"
        );
    }

    #[test]
    fn a_line_without_columns_hangs_four_in() {
        let line = format!("codetools: {}\n", "word ".repeat(30).trim_end());
        let wrapped = wrap(&line, 40);
        assert!(
            wrapped.lines().skip(1).all(|l| l.starts_with("    word")),
            "{wrapped}"
        );
        assert!(wrapped.lines().all(|l| columns(l) <= 40), "{wrapped}");
    }
}
