//! Changing what a client has registered, safely: the registration entry (the launch spec as
//! the client holds it), the install transaction that rolls back unless committed, its
//! journal and the per-client lock in the state directory, the ledger of what was done, and
//! the flat registration document written from what the client itself reports.

pub(crate) mod flat_document;
pub(crate) mod gate;
pub(crate) mod install;
pub(crate) mod ledger;
pub(crate) mod lock;
pub(crate) mod plan;
pub(crate) mod reconcile;
pub(crate) mod session;
#[cfg(test)]
mod tests;
pub(crate) mod transaction;
pub(crate) mod uninstall;
pub(crate) mod verify;
pub(crate) mod verify_identity;
