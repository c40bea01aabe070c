//! What is deployed and what should be registered for it: the server declaration (embedded
//! default or `--config`), the release layout on disk (`current`, `releases/<sha>`, `VERSION`),
//! the rendered `<prefix>/mcp/<name>.mcp.json`, the sample layout, and the selection of which
//! servers a command acts on. Nothing here talks to a client.

pub(crate) mod declaration;
pub(crate) mod layout;
pub(crate) mod processes;
pub(crate) mod python_commit;
pub(crate) mod release;
pub(crate) mod render;
pub(crate) mod sample;
pub(crate) mod selection;
pub(crate) mod stable_link;
