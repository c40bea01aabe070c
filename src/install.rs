//! `install` and `uninstall`: make the client's user-scope registrations follow the deployed
//! releases, through the client's own CLI.
//!
//! The install algorithm:
//! 1. Validate everything first: the declaration, the selected servers and their registered
//!    names, `--expect-commit NAME=SHA`, the flat document (a malformed one is refused, never
//!    overwritten), and that each prefix holds a deployed server.
//! 2. Render each server's document and write `<prefix>/mcp/<name>.mcp.json` atomically.
//! 3. Read the client's current user-scope entries, read-only, from its config file.
//! 4. Plan each name: `unchanged` when the entry already equals the rendered one, `added` when
//!    there is none, `updated` otherwise.
//! 5. Apply the plan one mutating call at a time: `remove` (only when present), then
//!    `add-json`. If `add-json` fails after a `remove`, the previous entry is added back and
//!    the report says both what failed and that it was restored.
//! 6. Ask the client what it now has (`claude mcp get`, for all names side by side): each must
//!    be at user scope and agree with the config file, whose exact entry is what we record.
//! 7. Write the flat registration document (other names in it are kept).
//! 8. Verify identity for each server against what was recorded.
//! 9. Report a registration line and the identity checks per server; exit 0 only if all passed.
//!
//! A second install with nothing changed makes no mutating client call.

use crate::cli::{ClientArgs, InstallArgs, UninstallArgs};
use crate::client::{self, Client, ClientError, ClientOptions};
use crate::config::{self, Selected};
use crate::declaration::Declaration;
use crate::entry::Entry;
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::{self, Target};
use crate::registered;
use crate::render::{self, Rendered};
use crate::report::{emit, Report, ServerReport};

/// What step 4 decided for one name.
#[derive(Debug, Clone, PartialEq)]
enum Action {
    Unchanged,
    Add,
    Update { previous: Entry },
}

impl Action {
    fn word(&self) -> &'static str {
        match self {
            Action::Unchanged => "unchanged",
            Action::Add => "added",
            Action::Update { .. } => "updated",
        }
    }
}

fn client_options(args: &ClientArgs) -> ClientOptions {
    ClientOptions {
        binary: args.claude.clone(),
        timeout: std::time::Duration::from_secs(args.client_timeout.max(1)),
        mcp_timeout_ms: args.mcp_timeout,
    }
}

pub fn install(args: &InstallArgs) -> Result<Exit, Error> {
    // 1. Validate.
    let decl = Declaration::load(args.declaration.config.as_deref())?;
    let selected = config::many(
        &decl,
        args.prefix.as_deref(),
        &args.servers,
        &args.name_suffix,
    )?;
    let expected = config::expect_commits(&args.expect_commits, &selected)?;
    let registered_path = args
        .registered
        .clone()
        .unwrap_or_else(registered::default_path);
    let mut flat = registered::read_or_empty(&registered_path)?;
    let mut rendered = Vec::new();
    for s in &selected {
        render::check_deployed(&s.server, &s.prefix)?;
        rendered.push(render::render(&s.server, &s.prefix)?);
    }

    let client = client::open("claude", &client_options(&args.client))?;
    // 3. Read the current entries; 4. plan.
    let current = client.user_entries()?;
    let mut plan = Vec::new();
    for (s, r) in selected.iter().zip(&rendered) {
        let action = match current.get(&s.registered_name) {
            None => Action::Add,
            Some(raw) => match Entry::from_value(raw) {
                Ok(prev) if prev.same_registration(&r.entry) => Action::Unchanged,
                Ok(prev) => Action::Update { previous: prev },
                // An entry the client holds but we cannot parse is replaced; keep it raw so a
                // failed add can still put it back.
                Err(_) => Action::Update {
                    previous: Entry {
                        raw: raw.as_object().cloned().unwrap_or_default(),
                        transport: r.entry.transport.clone(),
                    },
                },
            },
        };
        plan.push(action);
    }

    if args.dry_run {
        print_plan(&selected, &rendered, &plan, &registered_path, args.json);
        return Ok(Exit::Success);
    }

    // 2. Write the rendered documents.
    for (s, r) in selected.iter().zip(&rendered) {
        render::write_rendered(r, &s.prefix)?;
    }

    // 5. Apply, one mutating call at a time.
    for ((s, r), action) in selected.iter().zip(&rendered).zip(&plan) {
        apply(client.as_ref(), &s.registered_name, &r.entry, action)?;
    }

    // 6. Observe, side by side.
    let names: Vec<&str> = selected
        .iter()
        .map(|s| s.registered_name.as_str())
        .collect();
    let observed = observe_all(client.as_ref(), &names)?;

    // 7. Record.
    for (name, entry) in &observed {
        flat.insert(name.clone(), entry.flat());
    }
    registered::write(&registered_path, &flat)?;

    // 8. Verify.
    let mut reports = Vec::new();
    for ((s, r), action) in selected.iter().zip(rendered).zip(&plan) {
        let target = Target {
            server: &s.server,
            prefix: s.prefix.clone(),
            registered_name: s.registered_name.clone(),
            declared: r.entry,
            expected: expected.get(&s.server.name).cloned(),
            require_content: args.content,
        };
        let mut report = identity::verify(&target, &flat);
        report.registration = Some(action.word().to_string());
        reports.push(report);
    }

    // 9. Report.
    let report = Report::new(reports, Some(registered_path.display().to_string()));
    report.print(args.json);
    Ok(Exit::from_checks(report.ok))
}

/// Step 5 for one name. On a failed add after a remove, the previous entry is put back.
fn apply(client: &dyn Client, name: &str, entry: &Entry, action: &Action) -> Result<(), Error> {
    match action {
        Action::Unchanged => Ok(()),
        Action::Add => Ok(client.add(name, entry)?),
        Action::Update { previous } => {
            client.remove(name)?;
            match client.add(name, entry) {
                Ok(()) => Ok(()),
                Err(failure) => {
                    let restored = client.add(name, previous);
                    Err(Error::Registration {
                        name: name.to_string(),
                        failure: Box::new(failure),
                        restored: match restored {
                            Ok(()) => "its previous entry was restored".into(),
                            Err(e) => format!(
                                "restoring its previous entry failed too ({e}); it was: {}",
                                previous.describe()
                            ),
                        },
                    })
                }
            }
        }
    }
}

/// Step 6: `get` every name side by side (they only read). Each must be registered.
fn observe_all(client: &dyn Client, names: &[&str]) -> Result<Vec<(String, Entry)>, ClientError> {
    let results: Vec<Result<Option<Entry>, ClientError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = names
            .iter()
            .map(|n| scope.spawn(move || client.observe(n)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("an observe thread does not panic"))
            .collect()
    });
    names
        .iter()
        .zip(results)
        .map(|(n, r)| match r? {
            Some(e) => Ok((n.to_string(), e)),
            None => Err(ClientError::Disagrees {
                name: n.to_string(),
                reason: format!("`claude mcp get {n}` does not find it after it was registered"),
            }),
        })
        .collect()
}

fn print_plan(
    selected: &[Selected],
    rendered: &[Rendered],
    plan: &[Action],
    registered_path: &std::path::Path,
    json: bool,
) {
    let mut steps = Vec::new();
    for ((s, r), action) in selected.iter().zip(rendered).zip(plan) {
        let file = render::rendered_path(&s.prefix, &s.server.name);
        let name = &s.registered_name;
        let mut calls = Vec::new();
        if let Action::Update { .. } = action {
            calls.push(format!("claude mcp remove {name} -s user"));
        }
        if *action != Action::Unchanged {
            calls.push(format!(
                "claude mcp add-json -s user {name} '{}'",
                r.entry.describe()
            ));
        }
        calls.push(format!("claude mcp get {name}"));
        steps.push(serde_json::json!({
            "name": s.server.name,
            "registered_name": name,
            "registration": action.word(),
            "entry": r.entry.describe(),
            "writes": [file.display().to_string()],
            "client_calls": calls,
        }));
    }
    if json {
        let doc = serde_json::json!({
            "dry_run": true,
            "servers": steps,
            "registered": registered_path.display().to_string(),
        });
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap()
        ));
        return;
    }
    let mut text = String::from("dry run: nothing is changed\n");
    for step in &steps {
        let field = |k: &str| step[k].as_str().unwrap_or_default().to_string();
        text.push_str(&format!(
            "{}: would be {} ({})\n",
            field("registered_name"),
            field("registration"),
            field("entry")
        ));
        for (key, verb) in [("writes", "write"), ("client_calls", "run  ")] {
            for item in step[key].as_array().into_iter().flatten() {
                text.push_str(&format!("  {verb} {}\n", item.as_str().unwrap_or_default()));
            }
        }
    }
    text.push_str(&format!("write {}\n", registered_path.display()));
    emit(&text);
}

/// `uninstall`: remove the names `install` with the same options registers, and their flat
/// document entries. A name that is not registered is not an error.
pub fn uninstall(args: &UninstallArgs) -> Result<Exit, Error> {
    let decl = Declaration::load(args.declaration.config.as_deref())?;
    let selected = config::many(
        &decl,
        args.prefix.as_deref(),
        &args.servers,
        &args.name_suffix,
    )?;
    let registered_path = args
        .registered
        .clone()
        .unwrap_or_else(registered::default_path);
    let flat = match registered::read(&registered_path) {
        Ok(m) => Some(m),
        Err(registered::RegisteredError::Missing { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let client = client::open("claude", &client_options(&args.client))?;
    let current = client.user_entries()?;
    let mut reports = Vec::new();
    for s in &selected {
        let name = &s.registered_name;
        let word = if current.contains_key(name) {
            client.remove(name)?;
            "removed"
        } else {
            "absent"
        };
        reports.push(ServerReport {
            name: s.server.name.clone(),
            registered_name: name.clone(),
            prefix: s.prefix.display().to_string(),
            registration: Some(word.into()),
            checks: Vec::new(),
        });
    }
    if let Some(mut flat) = flat {
        let before = flat.len();
        flat.retain(|k, _| !selected.iter().any(|s| &s.registered_name == k));
        if flat.len() != before {
            registered::write(&registered_path, &flat)?;
        }
    }
    let report = Report::new(reports, Some(registered_path.display().to_string()));
    report.print(args.json);
    Ok(Exit::Success)
}
