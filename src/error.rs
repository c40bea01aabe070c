//! The error of a run that could not complete (exit 2). Each domain has its own error enum
//! whose variants carry the evidence (paths, expected and actual values); this enum gathers
//! them so that `run` can print one message and, where the user can act, a `help:` line.
//!
//! It sits above the domain: only `cmd/`, `output/` and `lib.rs` use it. A domain step that can
//! meet several kinds of error returns its own enum of them (`SelectionError`, `SampleError`,
//! `PlanError`, `SessionError`), which converts here into the variant of each kind, so that
//! the message and the help line are the same whichever step met it.

use crate::clients::ClientError;
use crate::content::manifest::ManifestError;
use crate::deployment::declaration::DeclarationError;
use crate::deployment::render::RenderError;
use crate::deployment::sample::SampleError;
use crate::deployment::selection::{DirectoryKindError, SelectionError};
use crate::fsio::IoError;
use crate::promotion::prune::PruneError;
use crate::promotion::status::StatusError;
use crate::promotion::transition::TransitionError;
use crate::promotion::PromotionError;
use crate::registration::flat_document::FlatDocumentError;
use crate::registration::install::InstallError;
use crate::registration::lock::LockError;
use crate::registration::plan::PlanError;
use crate::registration::session::SessionError;
use crate::registration::transaction::{Failure, TransactionError};
use crate::registration::verify_identity::VerifyIdentityError;
use crate::trust::TrustLoadError;
use crate::usage::UsageError;
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
    FlatDocument(#[from] FlatDocumentError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Transaction(#[from] Box<TransactionError>),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Vendor(#[from] VendorError),
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error(transparent)]
    Trust(#[from] TrustLoadError),
    #[error(transparent)]
    Promotion(#[from] PromotionError),
    #[error(transparent)]
    DirectoryKind(#[from] DirectoryKindError),
    /// A promote or rollback that failed after it switched `current`, and was undone: what
    /// failed, then what was put back.
    #[error("{failure}\n{undone}")]
    Undone { failure: Box<Error>, undone: String },
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
            Error::Client(_) => CLIENT_HELP.into(),
            Error::Transaction(_) => TRANSACTION_HELP.into(),
            _ => INPUT_HELP.into(),
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
                 /usr/share/doc/mcp-deploy/formats.md"
                    .into(),
            ),
            Error::Render(e) => e.help(),
            Error::Client(e) => e.help(),
            Error::Lock(e) => e.help(),
            Error::Transaction(e) => e.help(),
            Error::FlatDocument(e) => e.help(),
            Error::Manifest(e) => e.help(),
            Error::Vendor(e) => e.help(),
            Error::Usage(e) => e.help(),
            Error::Trust(e) => e.help(),
            Error::Promotion(e) => e.help(),
            Error::DirectoryKind(e) => e.help(),
            Error::Undone { failure, .. } => failure.help(),
        }
    }

    pub(crate) fn usage(message: impl Into<String>, help: impl Into<String>) -> Self {
        Error::Usage(UsageError::new(message, help))
    }
}

const CLIENT_HELP: &str = "run the client's command shown above by hand to see what it says; \
                           mcp-deploy changed nothing it did not roll back";
const TRANSACTION_HELP: &str =
    "the lines above say the state of each name; fix the cause and run again";
const INPUT_HELP: &str = "`mcp-deploy <command> --help` describes the inputs each command takes";

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

impl From<SelectionError> for Error {
    fn from(e: SelectionError) -> Self {
        match e {
            SelectionError::Declaration(e) => e.into(),
            SelectionError::Usage(e) => e.into(),
            SelectionError::DirectoryKind(e) => Error::DirectoryKind(e),
        }
    }
}

impl From<crate::policy::PolicyError> for Error {
    fn from(e: crate::policy::PolicyError) -> Self {
        match e {
            crate::policy::PolicyError::Usage(e) => e.into(),
            crate::policy::PolicyError::Lock(e) => e.into(),
            crate::policy::PolicyError::Render(e) => e.into(),
        }
    }
}

impl From<SampleError> for Error {
    fn from(e: SampleError) -> Self {
        match e {
            SampleError::Usage(e) => e.into(),
            SampleError::Io(e) => e.into(),
        }
    }
}

impl From<PlanError> for Error {
    fn from(e: PlanError) -> Self {
        match e {
            PlanError::Client(e) => e.into(),
            PlanError::Usage(e) => e.into(),
        }
    }
}

impl From<SessionError> for Error {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Io(e) => e.into(),
            SessionError::Lock(e) => e.into(),
            SessionError::Transaction(e) => e.into(),
            SessionError::Client(e) => e.into(),
            SessionError::FlatDocument(e) => e.into(),
            SessionError::Plan(e) => e.into(),
        }
    }
}

impl From<PruneError> for Error {
    fn from(e: PruneError) -> Self {
        match e {
            PruneError::Io(e) => e.into(),
            PruneError::Declaration(e) => e.into(),
            PruneError::DirectoryKind(e) => e.into(),
            PruneError::FlatDocument(e) => e.into(),
            PruneError::Promotion(e) => e.into(),
        }
    }
}

impl From<InstallError> for Error {
    fn from(e: InstallError) -> Self {
        match e {
            InstallError::Io(e) => e.into(),
            InstallError::Render(e) => e.into(),
            InstallError::FlatDocument(e) => e.into(),
            InstallError::Trust(e) => e.into(),
            InstallError::Client(e) => e.into(),
            InstallError::Session(e) => (*e).into(),
        }
    }
}

impl From<StatusError> for Error {
    fn from(e: StatusError) -> Self {
        match e {
            StatusError::FlatDocument(e) => e.into(),
            StatusError::Render(e) => e.into(),
            StatusError::Client(e) => e.into(),
        }
    }
}

impl From<VerifyIdentityError> for Error {
    fn from(e: VerifyIdentityError) -> Self {
        match e {
            VerifyIdentityError::FlatDocument(e) => e.into(),
            VerifyIdentityError::Render(e) => e.into(),
            VerifyIdentityError::Trust(e) => e.into(),
            VerifyIdentityError::Client(e) => e.into(),
        }
    }
}

impl From<TransitionError> for Error {
    fn from(e: TransitionError) -> Self {
        match e {
            TransitionError::Io(e) => e.into(),
            TransitionError::Declaration(e) => e.into(),
            TransitionError::Selection(e) => e.into(),
            TransitionError::Usage(e) => e.into(),
            TransitionError::FlatDocument(e) => e.into(),
            TransitionError::Render(e) => e.into(),
            TransitionError::Trust(e) => e.into(),
            TransitionError::Client(e) => e.into(),
            TransitionError::Promotion(e) => e.into(),
            TransitionError::Session(e) => (*e).into(),
            TransitionError::Transaction(e) => Error::Transaction(e),
            TransitionError::Undone { failure, undone } => Error::Undone {
                failure: Box::new((*failure).into()),
                undone,
            },
        }
    }
}

/// The help of a session step that failed and was rolled back: the same line as the
/// [`Error`] it converts into.
impl Failure for SessionError {
    fn help(&self) -> Option<String> {
        let or = |h: Option<String>, general: &str| Some(h.unwrap_or_else(|| general.into()));
        match self {
            SessionError::Io(e) => Some(e.help().unwrap_or_else(|| io_help(e))),
            SessionError::Lock(e) => or(e.help(), INPUT_HELP),
            SessionError::Transaction(e) => or(e.help(), TRANSACTION_HELP),
            SessionError::Client(e) | SessionError::Plan(PlanError::Client(e)) => {
                or(e.help(), CLIENT_HELP)
            }
            SessionError::FlatDocument(e) => or(e.help(), INPUT_HELP),
            SessionError::Plan(PlanError::Usage(e)) => or(e.help(), INPUT_HELP),
        }
    }
}

impl Failure for Error {
    fn help(&self) -> Option<String> {
        Error::help(self)
    }
}
