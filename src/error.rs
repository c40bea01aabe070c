//! The error of a run that could not complete (exit 2). Each domain has its own error enum
//! whose variants carry the evidence (paths, expected and actual values); this enum gathers
//! them so that `run` can print one message and, where the user can act, a `help:` line.

use crate::clients::ClientError;
use crate::content::manifest::ManifestError;
use crate::deployment::declaration::DeclarationError;
use crate::deployment::render::RenderError;
use crate::fsio::IoError;
use crate::registration::lock::LockError;
use crate::registration::registered::RegisteredError;
use crate::registration::transaction::{Failure, TransactionError};
use crate::vendored_sdk::VendorError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Declaration(#[from] DeclarationError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Registered(#[from] RegisteredError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Transaction(#[from] Box<TransactionError>),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Vendor(#[from] VendorError),
    #[error("{message}")]
    Usage { message: String, help: String },
}

impl Error {
    /// A line telling the user what to do about it. Every error has one (every exit 2 carries
    /// a `help:` line): a domain's own advice where it has some, else what fits the kind.
    pub(crate) fn help(&self) -> Option<String> {
        self.specific_help().or_else(|| Some(self.general_help()))
    }

    fn general_help(&self) -> String {
        match self {
            Error::Io(e) => io_help(e),
            Error::Client(_) => "run the client's command shown above by hand to see what it \
                                 says; mcp-deploy changed nothing it did not roll back"
                .into(),
            Error::Transaction(_) => "the lines above say the state of each name; fix the \
                                      cause and run again"
                .into(),
            _ => "`mcp-deploy <command> --help` describes the inputs each command takes".into(),
        }
    }

    fn specific_help(&self) -> Option<String> {
        match self {
            Error::Io(e) => e.help(),
            Error::Declaration(DeclarationError::UnknownServer { .. }) => {
                Some("name a declared server, or pass --config FILE declaring it".into())
            }
            Error::Declaration(DeclarationError::Io(e)) => Some(io_help(e)),
            Error::Declaration(
                DeclarationError::Malformed { .. } | DeclarationError::BadTemplate { .. },
            ) => Some(
                "a declaration is {\"servers\": [{\"name\", \"prefix\", \"layout\": \
                 \"release\"|\"prefix\", \"template\": FILE or \"entry\": {...}}]}; see \
                 docs/formats.md"
                    .into(),
            ),
            Error::Render(e) => e.help(),
            Error::Client(e) => e.help(),
            Error::Lock(e) => e.help(),
            Error::Transaction(e) => e.help(),
            Error::Registered(e) => e.help(),
            Error::Manifest(e) => e.help(),
            Error::Vendor(e) => e.help(),
            Error::Usage { help, .. } => Some(help.clone()),
        }
    }

    pub(crate) fn usage(message: impl Into<String>, help: impl Into<String>) -> Self {
        Error::Usage {
            message: message.into(),
            help: help.into(),
        }
    }
}

fn io_help(e: &IoError) -> String {
    match e.source.kind() {
        std::io::ErrorKind::NotFound => format!("check the path {}", e.path.display()),
        std::io::ErrorKind::PermissionDenied => format!(
            "run as a user who may use {}, or fix its permissions",
            e.path.display()
        ),
        _ => format!("check {} and the filesystem it is on", e.path.display()),
    }
}

impl From<TransactionError> for Error {
    fn from(e: TransactionError) -> Self {
        Error::Transaction(Box::new(e))
    }
}

impl Failure for Error {
    fn help(&self) -> Option<String> {
        Error::help(self)
    }
}
