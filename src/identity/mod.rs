//! Proving that what a client would launch is what was deployed: the identity checks
//! (release commit, containment of the resolved command, every launch-spec field against every
//! witness), the MCP handshake that asks the running server who it is, and the one redaction
//! of secrets in everything these print; and the fleet's view, many hosts' reports merged.

pub(crate) mod checks;
pub(crate) mod compare;
pub(crate) mod containment;
pub(crate) mod content_signature;
pub(crate) mod drift;
pub(crate) mod expand;
pub(crate) mod fleet;
pub(crate) mod handshake;
pub(crate) mod layer;
pub(crate) mod mcp_registration;
pub(crate) mod report;
pub(crate) mod shadow;
pub(crate) mod surface;
pub(crate) mod url;
