//! The output layer: how reports reach the user, as human text or as one JSON document.

pub(crate) mod report;
