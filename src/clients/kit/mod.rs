//! The machinery the clients share, beside their folders: running a client's CLI
//! ([`runner`]) and learning its release ([`version`]); the CLI-driven writer ([`cli_driven`],
//! its add/remove/observe [`flow`]); the file writer of a client without a CLI that registers
//! ([`file_written`] over [`file_backed`], JSON with comments edited in place); `.env` files
//! ([`dotenv`]); the top of a git work tree as git finds it ([`git_root`]); JSON as Node reads
//! it ([`node_json`]); the files a client finds from a directory up to `/` ([`upward`]); the
//! generic part of layers (their context, findings, glob), of scopes (what a registration found
//! in some scope is) and of policy writers ([`policy`]); and what a client is ([`table`]: the
//! `Kind` trait, its metadata). No code here decides by a client's name; each client's folder
//! names what it uses from here.

// The kit sees what `clients` holds (the `Client` trait, `ClientError`, the list), as its
// modules did when they sat beside the clients.
use super::*;

pub(crate) mod cli_driven;
pub(crate) mod dotenv;
pub(crate) mod file_backed;
pub(crate) mod file_written;
pub(crate) mod flow;
pub(crate) mod git_root;
pub(crate) mod layers;
pub(crate) mod node_json;
pub(crate) mod oracle;
pub(crate) mod policy;
pub(crate) mod runner;
pub(crate) mod scopes;
pub(crate) mod shadows;
pub(crate) mod table;
pub(crate) mod upward;
pub(crate) mod version;
