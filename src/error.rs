//! The error of a run that could not complete (exit 2). Each domain has its own error enum
//! whose variants carry the evidence (paths, expected and actual values); this enum gathers
//! them so that `run` can print one message and, where the user can act, a `help:` line.

use crate::client::ClientError;
use crate::declaration::DeclarationError;
use crate::fsio::IoError;
use crate::lock::LockError;
use crate::manifest::ManifestError;
use crate::registered::RegisteredError;
use crate::render::RenderError;
use crate::transaction::TransactionError;
use crate::vendor::VendorError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
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
    /// A line telling the user what to do about it, when there is one.
    pub fn help(&self) -> Option<String> {
        match self {
            Error::Io(e) => e.help(),
            Error::Declaration(DeclarationError::UnknownServer { .. }) => {
                Some("name a declared server, or pass --config FILE declaring it".into())
            }
            Error::Declaration(_) => None,
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

    pub fn usage(message: impl Into<String>, help: impl Into<String>) -> Self {
        Error::Usage {
            message: message.into(),
            help: help.into(),
        }
    }
}

impl From<TransactionError> for Error {
    fn from(e: TransactionError) -> Self {
        Error::Transaction(Box::new(e))
    }
}
