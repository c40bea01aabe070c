//! Integration tests, one binary: the real `mcp-deploy` in scratch worlds (see `harness`),
//! driving the real client CLIs for behaviour and fake ones on PATH only for faults they
//! cannot produce; real GNU `sha256sum` and npm as second opinions on manifests and the
//! vendored SDK.

mod harness;

mod attacks;

mod bounded;

mod ci_examples;
mod client_files;
mod client_list;
mod clients;
mod compat;
mod completions;
mod copilot;
mod deploy;
mod differential;
mod docs;
mod dry_run;
mod faults;
mod file_clients;
mod flags;
mod formats;
mod grok;
mod handshake;
mod human;
mod identity;
mod install;
mod launch;
mod managed_scope;
mod manifest;
mod only_deployed;
mod opencode_mcp_add;
mod output;
mod policy;
mod promote;
mod provenance;
mod python;
mod qwen;
mod races;
mod reconcile;
mod remote_handshake;
mod render;
mod report;
mod secrets;
mod signatures;
mod status;
mod tools_surface;
mod transaction;
mod vendor;
mod versions;
mod vocabulary;
mod vscode;
mod workspaces;
