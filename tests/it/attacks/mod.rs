//! The project's own attack suite: states that are not what was deployed, each of which a
//! verifier must fail with the named check and its evidence. One file per surface.

mod registration;
