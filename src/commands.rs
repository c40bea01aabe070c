//! The commands that are a few lines of glue over the domain modules: `render-mcp`,
//! `verify-identity`, `sample`, and `completions`/`man`, which are generated from the clap
//! definition in [`crate::cli`] so that they can never disagree with it.

use std::time::Duration;

use crate::cli::{Cli, CompletionsArgs, ManArgs, RenderArgs, SampleArgs, VerifyArgs};
use crate::deployment::declaration::Declaration;
use crate::deployment::render;
use crate::deployment::sample;
use crate::deployment::selection;
use crate::error::Error;
use crate::exit::Exit;
use crate::identity::checks::{self, Target};
use crate::output::report::{emit, Report};
use crate::registration::registered;

pub fn render_mcp(args: &RenderArgs) -> Result<Exit, Error> {
    let decl = Declaration::load(args.declaration.config.as_deref())?;
    let (server, prefix) = selection::single(&decl, &args.prefix, args.server.as_deref())?;
    render::check_deployed(server, &prefix)?;
    let rendered = render::render(server, &prefix)?;
    // A release layout whose `current` dangles or points outside releases/ is not a
    // deployment to write a registration document for: refuse it as install's gate does.
    if server.layout == crate::deployment::declaration::Layout::Release {
        if let Err(detail) = crate::deployment::layout::check_release(&prefix) {
            let report = Report::new(
                vec![crate::output::report::ServerReport {
                    name: server.name.clone(),
                    // No client is involved; "claude" keeps the human line free of " in …".
                    client: "claude".into(),
                    registered_name: server.name.clone(),
                    prefix: prefix.display().to_string(),
                    registration: Some("not rendered".into()),
                    witnesses: None,
                    checks: vec![crate::output::report::Check {
                        check: "release",
                        ok: false,
                        detail,
                    }],
                }],
                None,
            );
            report.print(args.json);
            let line = "nothing was written: render-mcp renders only for a deployed release";
            if args.json {
                eprintln!("{line}");
            } else {
                emit(&format!("{line}\n"));
            }
            return Ok(Exit::CheckFailed);
        }
    }
    let path = render::write_rendered(&rendered, &prefix)?;
    if args.json {
        let doc = serde_json::json!({
            "ok": true,
            "server": server.name,
            "path": path.display().to_string(),
            "document": rendered.document,
        });
        emit(&format!("{doc}\n"));
    } else {
        emit(&format!("{}\n", path.display()));
    }
    Ok(Exit::Success)
}

pub fn verify_identity(args: &VerifyArgs) -> Result<Exit, Error> {
    let decl = Declaration::load(args.declaration.config.as_deref())?;
    let (server, prefix) = selection::single(&decl, &args.prefix, args.server.as_deref())?;
    let expected = selection::expect_commit_for(&args.expect_commit, &server.name)?;
    let registered_name = args.name.clone().unwrap_or_else(|| server.name.clone());
    let mcp_json = args
        .mcp_json
        .clone()
        .unwrap_or_else(registered::default_path);
    let flat = registered::Flat::read(&mcp_json)?;
    let declared = render::render(server, &prefix)?.entry;
    let mut reports = Vec::new();
    let mut clients: Vec<&str> = Vec::new();
    for c in &args.clients {
        if !clients.contains(&c.as_str()) {
            clients.push(c);
        }
    }
    for client in clients {
        let live = match crate::clients::read_live(client)? {
            Some(mut live) => {
                live.shadows = crate::clients::live_shadows(client, &live, &registered_name)?;
                Some(live)
            }
            None => None,
        };
        let target = Target {
            server,
            client,
            prefix: prefix.clone(),
            registered_name: registered_name.clone(),
            declared: declared.clone(),
            expected: Some(expected.clone()),
            require_content: args.content,
            handshake: args
                .handshake
                .then(|| Duration::from_secs(args.handshake_timeout.max(1))),
            live,
        };
        reports.push(checks::verify(&target, &flat.servers(client)));
    }
    let report = Report::new(reports, None);
    report.print(args.json);
    Ok(Exit::from_checks(report.ok))
}

pub fn sample(args: &SampleArgs) -> Result<Exit, Error> {
    let root = selection::absolute_prefix(&args.root)?;
    let laid_out = sample::lay_out(&root)?;
    if args.json {
        let servers: Vec<_> = laid_out
            .iter()
            .map(|(name, prefix, commit)| {
                serde_json::json!({"name": name, "prefix": prefix.display().to_string(), "commit": commit})
            })
            .collect();
        emit(&format!(
            "{}\n",
            serde_json::json!({"ok": true, "servers": servers})
        ));
    } else {
        for (name, prefix, commit) in &laid_out {
            emit(&format!("{name}: {} (commit {commit})\n", prefix.display()));
        }
    }
    Ok(Exit::Success)
}

pub fn completions(args: &CompletionsArgs) -> Result<Exit, Error> {
    use clap::CommandFactory;
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "mcp-deploy", &mut buf);
    let mut script = String::from_utf8_lossy(&buf).into_owned();
    if args.shell == clap_complete::Shell::Bash {
        // clap_complete 4.6's bash script never completes a subcommand's options when the bin
        // name holds a hyphen: the loop spells the state `mcp__deploy__subcmd__install`, the
        // case arms `mcp__subcmd__deploy__subcmd__install` (clap-rs/clap#6421, #6529, open).
        // Spell the arms the way the loop does; a no-op once clap fixes it. Pinned by the
        // test bash_completion_completes_a_subcommands_options.
        script = script.replace("mcp__subcmd__deploy", "mcp__deploy");
    }
    emit(&script);
    Ok(Exit::Success)
}

/// The top-level page, or a subcommand's (`mcp-deploy-install(1)`, which the top-level page
/// refers to), so that every page it names can be had.
pub fn man(args: &ManArgs) -> Result<Exit, Error> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    // Building fills in the subcommands' display names (mcp-deploy-install) and bin names.
    cmd.build();
    for name in &args.command {
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        cmd = cmd.find_subcommand(name).cloned().ok_or_else(|| {
            Error::usage(
                format!("no command {name:?} has a man page"),
                format!("name one of: {}", names.join(", ")),
            )
        })?;
    }
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .source(format!("mcp-deploy {}", env!("CARGO_PKG_VERSION")))
        .render(&mut buf)
        .expect("rendering into a Vec cannot fail");
    emit(&String::from_utf8_lossy(&buf));
    Ok(Exit::Success)
}
