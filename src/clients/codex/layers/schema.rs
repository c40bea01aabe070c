//! Whether codex accepts a config file at all: codex deserializes the merged config (every
//! layer, `codex-rs/config/src/config_toml.rs` `ConfigToml`) before it does anything, and a
//! key of the wrong type, a value outside an enum, or TOML it cannot parse makes it stop with
//! "failed to load configuration" — the agent then loads no server. Unknown keys it ignores.
//!
//! Codex's whole schema is hundreds of nested types; this replicates the top-level keys of
//! `ConfigToml` as codex 0.171.0 has them (the field list of that binary, the types from the
//! codex-rs source of that time; each scalar type and enum pinned by a test against the real
//! CLI), the MCP server tables and the project trust table in full. A key whose nested schema
//! is not replicated, or one mcp-deploy does not know, is returned as not compared: never
//! passed as accepted.

use toml::Value;

/// Why codex refuses a config: the dotted key and what is wrong with it (never its value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) path: Vec<String>,
    pub(crate) why: String,
}

impl Refusal {
    fn at(path: &[&str], why: impl Into<String>) -> Refusal {
        Refusal {
            path: path.iter().map(|s| s.to_string()).collect(),
            why: why.into(),
        }
    }

    pub(crate) fn key(&self) -> String {
        self.path.join(".")
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Str,
    Bool,
    /// i64.
    Int,
    /// usize / u64: a non-negative integer.
    UInt,
    U16,
    StrList,
    Enum(&'static [&'static str]),
    /// A string, or a list of strings (`forced_chatgpt_workspace_id`).
    StrOrList,
    /// A table of anything (`desktop`: opaque JSON).
    AnyTable,
    McpServers,
    Projects,
    Features,
    /// A key codex refuses whatever it holds.
    Refused(&'static str),
    /// A key codex knows whose (nested) types are not replicated here.
    Nested,
}

/// The top-level keys of codex 0.171.0's `ConfigToml`.
const KEYS: &[(&str, Kind)] = &[
    ("model", Kind::Str),
    ("review_model", Kind::Str),
    ("model_provider", Kind::Str),
    ("model_context_window", Kind::Int),
    ("model_auto_compact_token_limit", Kind::Int),
    (
        "approval_policy",
        Kind::Enum(&["untrusted", "on-failure", "on-request", "never"]),
    ),
    (
        "sandbox_mode",
        Kind::Enum(&["read-only", "workspace-write", "danger-full-access"]),
    ),
    ("allow_login_shell", Kind::Bool),
    ("default_permissions", Kind::Str),
    ("notify", Kind::StrList),
    ("instructions", Kind::Str),
    ("developer_instructions", Kind::Str),
    ("include_permissions_instructions", Kind::Bool),
    ("include_apps_instructions", Kind::Bool),
    ("include_collaboration_mode_instructions", Kind::Bool),
    ("include_environment_context", Kind::Bool),
    ("model_instructions_file", Kind::Str),
    ("compact_prompt", Kind::Str),
    ("forced_chatgpt_workspace_id", Kind::StrOrList),
    ("forced_login_method", Kind::Enum(&["chatgpt", "api"])),
    ("mcp_servers", Kind::McpServers),
    ("mcp_oauth_callback_port", Kind::U16),
    ("mcp_oauth_callback_url", Kind::Str),
    ("project_doc_max_bytes", Kind::UInt),
    ("project_doc_fallback_filenames", Kind::StrList),
    ("tool_output_token_limit", Kind::UInt),
    ("background_terminal_max_timeout", Kind::UInt),
    (
        "profile",
        Kind::Refused(
            "a legacy `profile` selector, which codex 0.171.0 no longer loads (it wants \
             `--profile NAME` with NAME.config.toml)",
        ),
    ),
    ("sqlite_home", Kind::Str),
    ("log_dir", Kind::Str),
    ("hide_agent_reasoning", Kind::Bool),
    ("show_raw_agent_reasoning", Kind::Bool),
    ("model_reasoning_effort", Kind::Str),
    ("plan_mode_reasoning_effort", Kind::Str),
    ("model_supports_reasoning_summaries", Kind::Bool),
    ("model_catalog_json", Kind::Str),
    ("service_tier", Kind::Str),
    ("chatgpt_base_url", Kind::Str),
    ("apps_mcp_product_sku", Kind::Str),
    ("openai_base_url", Kind::Str),
    ("experimental_realtime_ws_base_url", Kind::Str),
    ("experimental_realtime_webrtc_call_base_url", Kind::Str),
    ("experimental_realtime_ws_model", Kind::Str),
    ("experimental_realtime_ws_backend_prompt", Kind::Str),
    ("experimental_realtime_ws_startup_context", Kind::Str),
    ("experimental_realtime_start_instructions", Kind::Str),
    ("experimental_thread_config_endpoint", Kind::Str),
    ("experimental_thread_store_endpoint", Kind::Str),
    ("web_search", Kind::Enum(&["disabled", "cached", "live"])),
    ("projects", Kind::Projects),
    ("features", Kind::Features),
    ("suppress_unstable_features_warning", Kind::Bool),
    ("project_root_markers", Kind::StrList),
    ("check_for_update_on_startup", Kind::Bool),
    ("disable_paste_burst", Kind::Bool),
    ("desktop", Kind::AnyTable),
    ("experimental_compact_prompt_file", Kind::Str),
    ("experimental_use_unified_exec_tool", Kind::Bool),
    ("oss_provider", Kind::Str),
    // Known to codex 0.171.0, nested types not replicated.
    ("model_auto_compact_token_limit_scope", Kind::Nested),
    ("model_post_turn_compact_threshold_percent", Kind::Nested),
    ("approvals_reviewer", Kind::Nested),
    ("auto_review", Kind::Nested),
    ("browser_use", Kind::Nested),
    ("computer_use", Kind::Nested),
    ("shell_environment_policy", Kind::Nested),
    ("allow_symlinked_codex_home", Kind::Nested),
    ("sandbox_workspace_write", Kind::Nested),
    ("permissions", Kind::Nested),
    ("cli_auth_credentials_store", Kind::Nested),
    ("mcp_enterprise_managed_auth", Kind::Nested),
    ("mcp_oauth_credentials_store", Kind::Nested),
    ("mcp_optional_startup_grace_ms", Kind::Nested),
    ("model_providers", Kind::Nested),
    ("thread_unload_delay_secs", Kind::Nested),
    ("js_repl_node_path", Kind::Nested),
    ("js_repl_node_module_dirs", Kind::Nested),
    ("profiles", Kind::Nested),
    ("history", Kind::Nested),
    ("rollout_trace", Kind::Nested),
    ("sqlite", Kind::Nested),
    ("debug", Kind::Nested),
    ("file_opener", Kind::Nested),
    ("tui", Kind::Nested),
    ("model_reasoning_summary", Kind::Nested),
    ("model_verbosity", Kind::Nested),
    ("personality", Kind::Nested),
    ("responses", Kind::Nested),
    ("responses_api_metadata", Kind::Nested),
    ("orchestrator", Kind::Nested),
    ("cloud", Kind::Nested),
    ("audio", Kind::Nested),
    ("realtime", Kind::Nested),
    ("experimental_thread_store", Kind::Nested),
    ("tools", Kind::Nested),
    ("tool_suggest", Kind::Nested),
    ("code_mode", Kind::Nested),
    ("goals", Kind::Nested),
    ("agents", Kind::Nested),
    ("memories", Kind::Nested),
    ("skills", Kind::Nested),
    ("hooks", Kind::Nested),
    ("plugins", Kind::Nested),
    ("marketplaces", Kind::Nested),
    ("ghost_snapshot", Kind::Nested),
    ("analytics", Kind::Nested),
    ("feedback", Kind::Nested),
    ("apps", Kind::Nested),
    ("otel", Kind::Nested),
    ("windows", Kind::Nested),
    ("notice", Kind::Nested),
];

/// Whether codex 0.171.0 accepts `doc` (a merged config): `Err` names the first key it
/// refuses; `Ok` lists the keys present whose types are not compared (sorted).
pub(crate) fn check(doc: &toml::Table) -> Result<Vec<String>, Refusal> {
    let mut unchecked = Vec::new();
    for (key, value) in doc {
        let Some((_, kind)) = KEYS.iter().find(|(k, _)| k == key) else {
            unchecked.push(format!(
                "{key} (not a key mcp-deploy knows codex 0.171.0 to have)"
            ));
            continue;
        };
        check_kind(*kind, &[key], value, &mut unchecked)?;
    }
    unchecked.sort();
    Ok(unchecked)
}

fn check_kind(
    kind: Kind,
    path: &[&str],
    value: &Value,
    unchecked: &mut Vec<String>,
) -> Result<(), Refusal> {
    let wrong = |want: &str| {
        Err(Refusal::at(
            path,
            format!("{} where codex wants {want}", type_name(value)),
        ))
    };
    match kind {
        Kind::Str if value.is_str() => Ok(()),
        Kind::Str => wrong("a string"),
        Kind::Bool if value.is_bool() => Ok(()),
        Kind::Bool => wrong("a boolean"),
        Kind::Int if value.is_integer() => Ok(()),
        Kind::Int => wrong("an integer"),
        Kind::UInt => match value.as_integer() {
            Some(n) if n >= 0 => Ok(()),
            Some(_) => Err(Refusal::at(
                path,
                "a negative integer where codex wants usize",
            )),
            None => wrong("a non-negative integer"),
        },
        Kind::U16 => match value.as_integer() {
            Some(n) if (0..=i64::from(u16::MAX)).contains(&n) => Ok(()),
            Some(_) => Err(Refusal::at(
                path,
                "an integer out of range for a port (u16)",
            )),
            None => wrong("a port number"),
        },
        Kind::StrList => str_list(path, value),
        Kind::StrOrList if value.is_str() => Ok(()),
        Kind::StrOrList => str_list(path, value),
        Kind::Enum(allowed) => match value.as_str() {
            Some(s) if allowed.contains(&s) => Ok(()),
            Some(_) => Err(Refusal::at(
                path,
                format!("a value that is not one of {}", allowed.join(", ")),
            )),
            // Enums with table variants (`approval_policy = { granular = ... }`) are not
            // replicated.
            None if value.is_table() => {
                unchecked.push(format!("{} (a table: not compared)", path.join(".")));
                Ok(())
            }
            None => wrong("a string"),
        },
        Kind::AnyTable if value.is_table() => Ok(()),
        Kind::AnyTable => wrong("a table"),
        Kind::Refused(why) => Err(Refusal::at(path, why)),
        Kind::Nested => {
            unchecked.push(format!(
                "{} (its nested types are not replicated)",
                path.join(".")
            ));
            Ok(())
        }
        Kind::Projects => {
            let Some(t) = value.as_table() else {
                return wrong("a table of projects");
            };
            for (dir, project) in t {
                let p = [path[0], dir.as_str()];
                let Some(project) = project.as_table() else {
                    return Err(Refusal::at(&p, "not a table"));
                };
                if let Some(level) = project.get("trust_level") {
                    check_kind(
                        Kind::Enum(&["trusted", "untrusted"]),
                        &[path[0], dir, "trust_level"],
                        level,
                        unchecked,
                    )?;
                }
            }
            Ok(())
        }
        Kind::Features => {
            let Some(t) = value.as_table() else {
                return wrong("a table of features");
            };
            for (name, v) in t {
                // Most features are on/off; the few with settings tables are not replicated.
                if !v.is_bool() {
                    unchecked.push(format!("{}.{name} (not a boolean: not compared)", path[0]));
                }
            }
            Ok(())
        }
        Kind::McpServers => {
            let Some(t) = value.as_table() else {
                return wrong("a table of servers");
            };
            for (name, server) in t {
                check_server(&[path[0], name.as_str()], server, unchecked)?;
            }
            Ok(())
        }
    }
}

fn str_list(path: &[&str], value: &Value) -> Result<(), Refusal> {
    match value.as_array() {
        Some(a) if a.iter().all(Value::is_str) => Ok(()),
        Some(_) => Err(Refusal::at(path, "a list holding a non-string")),
        None => Err(Refusal::at(
            path,
            format!("{} where codex wants a list of strings", type_name(value)),
        )),
    }
}

/// The keys of a codex MCP server entry (`McpServerConfig`'s raw shape) and their types.
const SERVER_KEYS: &[(&str, Kind)] = &[
    ("command", Kind::Str),
    ("args", Kind::StrList),
    ("cwd", Kind::Str),
    ("url", Kind::Str),
    ("bearer_token_env_var", Kind::Str),
    ("enabled", Kind::Bool),
    ("required", Kind::Bool),
    ("startup_timeout_ms", Kind::UInt),
    ("enabled_tools", Kind::StrList),
    ("disabled_tools", Kind::StrList),
    ("scopes", Kind::StrList),
    ("oauth_resource", Kind::Str),
];

/// One `[mcp_servers.NAME]` table as codex deserializes it: types of the keys, and exactly
/// one transport (`command` for stdio, `url` for streamable HTTP).
pub(crate) fn check_server(
    path: &[&str],
    server: &Value,
    unchecked: &mut Vec<String>,
) -> Result<(), Refusal> {
    let Some(t) = server.as_table() else {
        return Err(Refusal::at(path, "not a table"));
    };
    let sub = |k: &'static str| [path[0], path[1], k];
    for (key, value) in t {
        let key = key.as_str();
        if let Some((k, kind)) = SERVER_KEYS.iter().find(|(k, _)| *k == key) {
            check_kind(*kind, &sub(k), value, unchecked)?;
            continue;
        }
        match key {
            "env" | "http_headers" | "env_http_headers" => {
                let p = [path[0], path[1], key];
                match value.as_table() {
                    Some(m) if m.values().all(Value::is_str) => {}
                    Some(_) => return Err(Refusal::at(&p, "a value that is not a string")),
                    None => return Err(Refusal::at(&p, "not a table of strings")),
                }
            }
            "startup_timeout_sec" | "tool_timeout_sec" => {
                let p = [path[0], path[1], key];
                if !(value.is_integer() || value.is_float()) {
                    return Err(Refusal::at(&p, "not a number of seconds"));
                }
            }
            "env_vars" => {
                let p = [path[0], path[1], key];
                let ok = value.as_array().is_some_and(|a| {
                    a.iter().all(|v| {
                        v.is_str()
                            || v.as_table()
                                .is_some_and(|t| t.get("name").is_some_and(Value::is_str))
                    })
                });
                if !ok {
                    return Err(Refusal::at(
                        &p,
                        "not a list of variable names (strings or { name = ... })",
                    ));
                }
            }
            _ => unchecked.push(format!(
                "{}.{}.{key} (its type is not compared)",
                path[0], path[1]
            )),
        }
    }
    match (t.contains_key("command"), t.contains_key("url")) {
        (true, true) => Err(Refusal::at(path, "both `command` and `url`")),
        // A layer may hold only part of an entry (the rest merged from another); the merged
        // entry is what must have a transport, and the caller checks that one.
        _ => Ok(()),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a datetime",
        Value::Array(_) => "a list",
        Value::Table(_) => "a table",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> toml::Table {
        toml::from_str(s).unwrap()
    }

    #[test]
    fn codex_refuses_wrong_types_and_enum_values_and_ignores_unknown_keys() {
        for (text, key) in [
            ("model = 3", "model"),
            ("approval_policy = \"bogus\"", "approval_policy"),
            ("project_doc_max_bytes = -1", "project_doc_max_bytes"),
            ("profile = \"p\"", "profile"),
            (
                "[projects.\"/x\"]\ntrust_level = \"bogus\"",
                "projects./x.trust_level",
            ),
            (
                "[mcp_servers.s]\ncommand = \"/x\"\nenabled = \"yes\"",
                "mcp_servers.s.enabled",
            ),
            (
                "[mcp_servers.s]\ncommand = \"/x\"\nenv_vars = [1]",
                "mcp_servers.s.env_vars",
            ),
        ] {
            let r = check(&doc(text)).unwrap_err();
            assert_eq!(r.key(), key, "{text}");
        }
        assert!(check(&doc(
            "model = \"o3\"\n[features]\nx = true\n[projects.\"/a\"]\ntrust_level = \"trusted\""
        ))
        .unwrap()
        .is_empty());
        let nc = check(&doc("foo = 1\n[tui]\nx = 1")).unwrap();
        assert_eq!(nc.len(), 2, "{nc:?}");
    }
}
