//! What the identity checks know of a shadow: a same-name entry of another scope that wins
//! over the user-scope entry, as each client's reader finds it (`clients`, above this module,
//! finds them; the checks, here and above, judge them).

/// A same-name entry of another scope that wins over a user-scope entry: where it is, and
/// where it wins. One verdict for every command (`registration::plan::shadow_check`):
/// one that wins [`Reach::Here`] fails, one that wins only [`Reach::Elsewhere`] is a warning
/// (a failure with `--strict`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shadow {
    /// Which scope and file, said for a person ("project scope in /srv/app/.mcp.json").
    pub(crate) place: String,
    pub(crate) reach: Reach,
}

/// Where a shadow wins over the user-scope entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// From the directory the run is in: the client started here runs the other entry instead
    /// of ours; and in doubt (a file that cannot be read, an approval that cannot be told), it
    /// counts as winning here.
    Here,
    /// Only from another directory (another project's local scope or `.mcp.json`): an agent
    /// started there runs the other entry.
    Elsewhere,
}

impl From<String> for Shadow {
    /// A shadow found by a reader of the working directory's files: it wins here.
    fn from(place: String) -> Shadow {
        Shadow {
            place,
            reach: Reach::Here,
        }
    }
}

impl std::fmt::Display for Shadow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.place)
    }
}
