//! Text that came from outside, as it may be shown on a terminal: a leaf every folder may use
//! (a report from another host in `output/`, a server's stderr in `identity/`, a principal
//! of a trust policy in `trust/`).

/// Text that came from outside (a report from another host, a server's stderr, a principal
/// in a policy) as it may be shown on a terminal: control characters escaped (`\u{1b}`, `\n`:
/// a terminal escape must not recolour or clear the screen, a newline must not forge a line of
/// our own), and so are the invisible formatting characters — bidirectional overrides and
/// isolates, zero-width ones, a byte-order mark — with which one name could read as another.
pub(crate) fn printable(text: &str) -> String {
    let invisible = |c: char| matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}');
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || invisible(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn controls_and_invisible_formatting_are_escaped_and_the_rest_kept() {
        assert_eq!(
            printable("web-1\u{1b}[2J\nok\u{202e}\u{200b}\u{feff}"),
            "web-1\\u{1b}[2J\\nok\\u{202e}\\u{200b}\\u{feff}"
        );
        assert_eq!(printable("café — 東京 ✔"), "café — 東京 ✔");
    }
}
