//! The client whose config file mcp-deploy writes itself (OpenCode, Cursor), written once:
//! [`FileWritten`] over a [`Format`], which says only what differs — where the file is and
//! what a new one holds, how an entry maps between the client's shape and claude's, where a
//! same-name entry shadows, what way of running the client is refused at open, and how a
//! write is confirmed. The edit itself (comment-preserving, atomic, checked) is
//! [`super::file_backed`]'s; whether the client has a binary, which then confirms each write,
//! is its row's ([`super::Description::binary`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::file_backed::{self, JsoncFile};
use super::runner::Runner;
use super::{About, Client, ClientError, ClientOptions, Op};
use crate::entry::Entry;

/// What one file-written client does its own way.
pub(crate) trait Format: Sync + Sized + 'static {
    /// The client this is the format of: its name, its user config file and its shadows are
    /// the kind's ([`super::table::Kind`]), registered once.
    const KIND: &'static dyn super::table::Kind;
    /// The top-level key of its file holding the servers (`mcp`, `mcpServers`).
    const KEY: &'static str;
    /// What a missing file is created with, before the server is added.
    const NEW_FILE: &'static str;

    /// A server as its file holds it, in the claude shape.
    const TO_CLAUDE: fn(&Value) -> Value;
    /// `entry` (claude shape) as the client holds it, or why it cannot hold it exactly.
    const TO_CLIENT: fn(&str, &Entry) -> Result<Value, ClientError>;

    /// Refuse, before anything is read, a way of running the client that mcp-deploy does not
    /// support (an OpenCode server managed elsewhere).
    fn refuse_open() -> Result<(), ClientError> {
        Ok(())
    }
    /// Confirm with the client's binary ([`FileWritten::binary`]: its row has one and the
    /// command calls it) that it reads `written` as `name` from the file just written.
    /// Default: nothing to ask (a client without a binary).
    fn confirm(_: &FileWritten<Self>, _name: &str, _written: &Value) -> Result<(), ClientError> {
        Ok(())
    }
}

/// A file-written client: its file, the binary that confirms each write (when its row has
/// one and the command calls it), and its release.
pub(crate) struct FileWritten<F> {
    pub(crate) file: JsoncFile,
    /// The real binary and its deadline, to confirm each write (`None` for a client without
    /// one, and for the commands that only read).
    binary: Option<(PathBuf, Duration)>,
    version: Option<super::version::Version>,
    /// Where a confirming call is said as it ends (`-v`).
    pub(crate) said: Option<fn(crate::notice::Notice)>,
    format: std::marker::PhantomData<F>,
}

/// Open the file-written client `row` (whose format is `F`). With a binary in the row, a
/// command that calls it finds it (or fails saying how to install it) and refuses a release
/// outside the supported range; one that only reads learns its release from its package
/// files, if found, and runs nothing.
pub(crate) fn open<F: Format>(
    row: &'static About,
    options: &ClientOptions,
) -> Result<Box<dyn Client>, ClientError> {
    F::refuse_open()?;
    let (mut binary, mut version) = (None, None);
    if let Some(b) = &row.binary {
        if options.calls_binary {
            let runner = Runner::open(
                b.name,
                options.binary(row.name),
                true,
                options.timeout,
                Vec::new(),
                row.install_help(),
            )?
            .telling(options.said)
            .detect_version(row.name)?;
            version = runner.version;
            binary = Some((runner.binary, options.timeout));
        } else {
            version = options
                .binary(row.name)
                .map(Path::to_path_buf)
                .or_else(|| which::which(b.name).ok())
                .and_then(|p| super::version::detect(row.name, &p, None).ok().flatten());
        }
    }
    Ok(Box::new(FileWritten::<F> {
        file: JsoncFile {
            path: F::KIND.user_config(),
            key: F::KEY,
            new_file: F::NEW_FILE,
            new_mode: 0o600,
        },
        binary,
        version,
        said: options.said,
        format: std::marker::PhantomData,
    }))
}

/// The user entries of `F`'s file at `path`, in the claude shape.
pub(crate) fn read_user_entries<F: Format>(path: &Path) -> Result<Map<String, Value>, ClientError> {
    Ok(file_backed::read_servers(path, F::KEY)?
        .into_iter()
        .map(|(k, v)| {
            let shaped = (F::TO_CLAUDE)(&v);
            (k, shaped)
        })
        .collect())
}

impl<F> FileWritten<F> {
    /// The binary that confirms each write and its deadline, when there is one to call.
    pub(crate) fn binary(&self) -> Option<(&Path, Duration)> {
        self.binary.as_ref().map(|(b, t)| (b.as_path(), *t))
    }
}

impl<F: Format> Client for FileWritten<F> {
    fn name(&self) -> &'static str {
        F::KIND.about().name
    }

    fn version(&self) -> Option<super::version::Version> {
        self.version
    }

    fn binary(&self) -> Option<&Path> {
        self.binary.as_ref().map(|(b, _)| b.as_path())
    }

    fn config_path(&self) -> &Path {
        &self.file.path
    }

    fn shadows(&self, name: &str) -> Result<Vec<crate::clients::Shadow>, ClientError> {
        F::KIND.shadows_in(&self.file.path, name)
    }

    fn user_entries(&self) -> Result<Map<String, Value>, ClientError> {
        read_user_entries::<F>(&self.file.path)
    }

    fn add(&self, name: &str, entry: &Entry) -> Result<(), ClientError> {
        let value = (F::TO_CLIENT)(name, entry)?;
        self.file.add(F::KIND.about().name, name, &value)?;
        F::confirm(self, name, &value)
    }

    fn remove(&self, name: &str) -> Result<(), ClientError> {
        self.file.remove(name)
    }

    /// What the file holds: these clients have no command that prints one entry exactly.
    fn observe(&self, name: &str) -> Result<Option<Entry>, ClientError> {
        super::entry_in(&self.user_entries()?, name, &self.file.path)
    }

    fn show(&self, op: Op, name: &str) -> String {
        self.file.show(op, name)
    }
}
