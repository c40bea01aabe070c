//! The attack suite (issue 10): each row is a named attack — what an attacker with write
//! access to a release, a client config or the inputs would do — the command run on it, the
//! exit code and the evidence a correct mcp-deploy gives. Every row failed (passed the
//! attack, hung, or ate memory) before the fix it pins. One file per surface.

pub mod support;

mod inputs;
mod layers_claude;
mod layers_codex;
mod layers_gemini;
mod layers_grok;
mod layers_opencode;
mod registration;
mod vendor;
