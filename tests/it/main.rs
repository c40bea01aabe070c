//! Integration tests: the real `mcp-deploy` binary in scratch worlds, driving the real
//! Claude Code CLI for behaviour and a fake one on PATH only for faults it cannot produce.

mod harness;

mod attacks;

mod client_files;
mod clients;
mod completions;
mod deploy;
mod docs;
mod faults;
mod flags;
mod handshake;
mod identity;
mod install;
mod output;
mod python;
mod races;
mod render;
mod secrets;
mod status;
mod transaction;
