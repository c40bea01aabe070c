//! Integration tests: the real `mcp-deploy` binary in scratch worlds, driving the real
//! Claude Code CLI for behaviour and a fake one on PATH only for faults it cannot produce.

mod harness;

mod client_files;
mod clients;
mod completions;
mod deploy;
mod faults;
mod handshake;
mod identity;
mod install;
mod output;
mod races;
mod render;
mod secrets;
mod status;
mod transaction;
