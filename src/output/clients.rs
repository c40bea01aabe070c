//! What `clients` prints: a block per client, its label column aligned and every line within
//! 100 columns (a path longer than that stays whole); or, with `--format json`, the one
//! envelope with `"clients"`, an object per client keyed as [`Listed`] is, `name` first.

use serde::Serialize;

use super::{emit, emit_json_pretty, Format, Style};
use crate::clients::listing::{Listed, State};
use crate::exit::Exit;
use crate::text::printable;

/// The width the human form fits in.
const WIDTH: usize = 100;
/// The indent of a value: two spaces, the longest label (`supported`), one space.
const VALUE_AT: usize = 2 + 9 + 2;

#[derive(Serialize)]
struct Out<'a> {
    ok: bool,
    clients: &'a [Listed],
}

pub(crate) fn print(listed: &[Listed], style: &Style) {
    match style.format {
        Format::Json => emit_json_pretty(
            style,
            &Out {
                ok: true,
                clients: listed,
            },
            Exit::Success,
        ),
        // `clients` takes human and json only.
        _ => emit(style, &human(listed)),
    }
}

/// The human form: a block per client, a blank line between them.
pub(crate) fn human(listed: &[Listed]) -> String {
    let blocks: Vec<String> = listed.iter().map(block).collect();
    blocks.join("\n")
}

fn block(c: &Listed) -> String {
    let mut out = format!("{}\n", c.name);
    let mut line = |label: &str, value: String| out.push_str(&wrapped(label, &value));
    match (c.binary, c.env) {
        (Some(b), Some(env)) => line("binary", format!("{b} (--{b} PATH, or {env})")),
        _ => line("binary", "none".into()),
    }
    if let Some(p) = c.package {
        let others: Vec<&str> = c.packages.iter().copied().filter(|o| *o != p).collect();
        match others.is_empty() {
            true => line("package", p.to_string()),
            false => line("package", format!("{p} (also {})", others.join(", "))),
        }
    }
    if let (Some(range), Some(newest)) = (&c.supported, &c.newest_tested) {
        line("supported", format!("{range} (newest tested {newest})"));
    }
    line("writes", c.writes.to_string());
    let exists = match c.config_exists {
        true => "",
        false => " (not there yet)",
    };
    line(
        "config",
        format!("{}{exists}", printable(&c.config.display().to_string())),
    );
    if c.state != State::NoBinary {
        let found = c
            .found
            .as_ref()
            .map(|p| printable(&p.display().to_string()));
        line("found", found.unwrap_or_else(|| "-".into()));
        line("version", c.version.clone().unwrap_or_else(|| "-".into()));
    }
    let state = match c.detail.is_empty() {
        true => c.state.word().to_string(),
        false => format!("{}: {}", c.state.word(), printable(&c.detail)),
    };
    line("state", state);
    out
}

/// `  label    value`, the value's words wrapped under itself within [`WIDTH`].
fn wrapped(label: &str, value: &str) -> String {
    let mut out = format!("  {label:<width$}", width = VALUE_AT - 2);
    let mut col = VALUE_AT;
    let mut first = true;
    for word in value.split(' ') {
        if !first && col + 1 + word.chars().count() > WIDTH {
            out.push('\n');
            out.push_str(&" ".repeat(VALUE_AT));
            col = VALUE_AT;
            first = true;
        }
        if !first {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += word.chars().count();
        first = false;
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::wrapped;

    #[test]
    fn a_long_value_wraps_under_itself_within_100_columns() {
        let text = wrapped("state", &"word ".repeat(40));
        for l in text.lines() {
            assert!(l.chars().count() <= super::WIDTH, "{l:?}");
        }
        assert!(text.lines().count() > 1);
        assert!(text.lines().skip(1).all(|l| l.starts_with(&" ".repeat(13))));
        // A word longer than the line stays whole.
        let long = format!("/{}", "p".repeat(120));
        assert_eq!(wrapped("found", &long), format!("  found      {long}\n"));
    }
}
