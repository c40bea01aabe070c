//! Every registration claude reads, in every scope, for prune ([`crate::clients::scopes`]):
//! `mcpServers` of its config (user scope) and `projects.<dir>.mcpServers` (local scope,
//! every project); `.mcp.json` (project scope) of every known project directory, of the
//! working directory, and of every directory above them (claude looks up to `/`);
//! `managed-mcp.json` in `/etc/claude-code` (managed scope) and the `managedMcpServers` of the
//! managed settings.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::clients::scopes::{read_json_key, read_json_servers, servers, Found, Unreadable};
use crate::clients::ClientError;

pub(crate) fn scopes(found: &mut Found, cwd: Option<&Path>) {
    let n = "claude";
    let config = super::config_path();
    let mut projects: Vec<PathBuf> = Vec::new();
    match crate::clients::read_config_text(&config) {
        Ok(None) => {}
        Err(e) => found.add(n, &config, "user and local scopes", Err(e)),
        Ok(Some(text)) => match super::parse_lenient::<Value>(&text) {
            Err(e) => found.add(
                n,
                &config,
                "user and local scopes",
                Err(ClientError::Config {
                    path: config.clone(),
                    reason: format!("not valid JSON: {e}"),
                }),
            ),
            Ok((doc, _)) => {
                found.add(n, &config, "user scope", servers(&doc, &config));
                let each = doc.get("projects").and_then(Value::as_object);
                for (dir, project) in each.into_iter().flatten() {
                    projects.push(PathBuf::from(dir));
                    // Claude shadows nothing from a project that is not an object; its
                    // servers, when they are one, are read.
                    if project.get("mcpServers").is_some() {
                        found.add(
                            n,
                            &config,
                            &format!("local scope of project {dir}"),
                            servers(project, &config),
                        );
                    }
                }
            }
        },
    }
    // Each directory once, walked linearly (a project key may be 100 000 components long).
    let starts = cwd.into_iter().chain(projects.iter().map(PathBuf::as_path));
    for f in crate::clients::upward::files_above(starts, ".mcp.json") {
        found.add(n, &f, "project scope", read_json_servers(&f));
    }
    let managed = PathBuf::from("/etc/claude-code/managed-mcp.json");
    if std::fs::symlink_metadata(&managed).is_ok() {
        found.add(n, &managed, "managed scope", read_json_servers(&managed));
    }
    // `managedMcpServers` of the managed settings: servers the organization delivers to
    // every user (claude 2.1.332's settings schema), read from each managed file, the
    // drop-ins in claude's order.
    let dir = Path::new("/etc/claude-code");
    let mut listing = Vec::new();
    let files = std::iter::once(dir.join("managed-settings.json")).chain(super::layers::drop_ins(
        &dir.join("managed-settings.d"),
        &mut listing,
    ));
    for f in files {
        if std::fs::symlink_metadata(&f).is_ok() {
            let read = read_json_key(&f, "managedMcpServers");
            found.add(n, &f, "managed settings managedMcpServers", read);
        }
    }
    for l in listing {
        found.unreadable.push(Unreadable {
            client: n,
            file: PathBuf::from(&l.source),
            scope: "managed settings".into(),
            why: match l.effect {
                crate::clients::layers::Effect::NotCompared(doubt) => doubt.why,
                other => format!("{other:?}"),
            },
        });
    }
}
