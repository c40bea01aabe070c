//! What `policy` prints: each client's allowlist, and what `--write` changed (or, with
//! `--dry-run`, would change) in its policy file.

use serde::Serialize;
use serde_json::Value;

use super::{emit, emit_json_line, Format, Style};
use crate::exit::Exit;
use crate::policy::write::Change;
use crate::policy::Allowlist;

/// `--format file`: the fragment of the client's own file, ready to merge (one client: the
/// fragment itself, JSON or codex's TOML; several: a JSON object per client name, codex's
/// TOML as a string).
pub(crate) fn file(lists: &[Allowlist], style: &Style) {
    let text = match lists {
        [one] => crate::policy::fragment(one),
        many => {
            let doc: serde_json::Map<String, Value> = many
                .iter()
                .map(|l| {
                    let text = crate::policy::fragment(l);
                    let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
                    (l.client.to_string(), v)
                })
                .collect();
            format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).expect("JSON serialises")
            )
        }
    };
    emit(style, &text);
}

#[derive(Serialize)]
struct Client<'a> {
    #[serde(flatten)]
    list: &'a Allowlist,
    #[serde(skip_serializing_if = "Option::is_none")]
    change: Option<ChangeOut<'a>>,
}

#[derive(Serialize)]
struct ChangeOut<'a> {
    #[serde(flatten)]
    change: &'a Change,
    /// The file changed (or, with `--dry-run`, would): what configuration management reports.
    changed: bool,
    written: bool,
}

#[derive(Serialize)]
struct Out<'a> {
    ok: bool,
    dry_run: bool,
    clients: Vec<Client<'a>>,
}

pub(crate) fn print(lists: &[Allowlist], changes: &[(Change, bool)], dry_run: bool, style: &Style) {
    if style.format == Format::Json {
        let out = Out {
            ok: true,
            dry_run,
            clients: lists
                .iter()
                .enumerate()
                .map(|(i, list)| Client {
                    list,
                    change: changes.get(i).map(|(change, written)| ChangeOut {
                        change,
                        changed: !change.is_empty(),
                        written: *written,
                    }),
                })
                .collect(),
        };
        return emit_json_line(style, &out, Exit::Success);
    }
    let mut text = String::new();
    if dry_run {
        text.push_str("dry run: nothing is written\n");
    }
    for (i, list) in lists.iter().enumerate() {
        text.push_str(&format!(
            "{}: {} {} ({})\n",
            list.client,
            list.file.display(),
            list.key,
            list.pins.says()
        ));
        for s in &list.servers {
            text.push_str(&format!("  {}  {}\n", s.name, s.entry));
        }
        let Some((change, written)) = changes.get(i) else {
            continue;
        };
        let file = change.file.display();
        if change.is_empty() {
            text.push_str(&format!("unchanged: {file} already holds this policy\n"));
            continue;
        }
        let verb = |done: &str, would: &str| match dry_run {
            true => would.to_string(),
            false => done.to_string(),
        };
        for e in &change.added {
            text.push_str(&format!("{} {e}\n", verb("added  ", "would add")));
        }
        for e in &change.removed {
            text.push_str(&format!("{} {e}\n", verb("removed", "would remove")));
        }
        if change.managed_only {
            text.push_str(&format!(
                "{} allowManagedMcpServersOnly: true (users' and projects' own allowedMcpServers \
                 no longer count)\n",
                verb("set    ", "would set")
            ));
        }
        if change.record {
            text.push_str(&format!(
                "{} the entries mcp-deploy made\n",
                verb("recorded", "would record")
            ));
        }
        if *written {
            text.push_str(&format!("wrote {file}\n"));
        } else if dry_run {
            text.push_str(&format!("would write {file}\n"));
        }
    }
    emit(style, &text);
}
