//! The layers cursor applies to a user-scope entry ([`super`]). From Cursor's published MCP
//! documentation (no Cursor binary runs here, so nothing below is confirmed with a real
//! client): a project `.cursor/mcp.json` wins over the user file (read as a shadow by
//! `clients::cursor`), and an entry's `envFile` loads a `.env` file into the server (kept in
//! the entry when read, so it already fails the registration check). What else decides
//! whether Cursor runs a server — its on/off toggles in the settings UI (kept in Cursor's
//! application state database) and team policy (delivered by Cursor's backend) — cannot be
//! read on the host; docs/clients.md names each. So this reader has nothing more to add.

use crate::clients::layers::{Context, Finding};

pub(crate) fn read(_cx: &Context) -> Vec<Finding> {
    Vec::new()
}
