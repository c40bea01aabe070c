//! A request the command line cannot carry out as given (exit 2), with the line telling the
//! user what to give instead. A leaf: the domain returns it for what the user asked wrongly,
//! and the run's error (`error.rs`, above the domain) wraps it.

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct UsageError {
    pub(crate) message: String,
    pub(crate) help: String,
}

impl UsageError {
    pub(crate) fn new(message: impl Into<String>, help: impl Into<String>) -> Self {
        UsageError {
            message: message.into(),
            help: help.into(),
        }
    }

    pub(crate) fn help(&self) -> Option<String> {
        Some(self.help.clone())
    }
}
