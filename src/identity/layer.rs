//! What a client's config layer does to a registered name, as the identity checks judge it:
//! the vocabulary the per-client readers (`clients::layers`) speak. A finding that
//! changes what runs fails `mcp-registration`; one that could not be compared is named, and
//! fails with `--strict`.

/// What a layer does to the registered name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effect {
    /// The client does not load the server at all: a deny list names it, an allow list leaves
    /// it out, it is disabled, or the client refuses the whole file that holds it. The string
    /// says which key and why (never a value).
    Blocked(String),
    /// Another definition of the same name wins over ours (a managed server of that name).
    Replaced(String),
    /// Keys of the entry the client runs differ from the declared ones: `env.NODE_OPTIONS`
    /// (environment merged into every server, not set by the declaration), `command`, `args`,
    /// `cwd`... Names only, never values.
    Changed(Vec<String>),
    /// The source exists but mcp-deploy cannot compare it (unreadable, a format it does not
    /// read, settings delivered by a server or MDM): why. Reported, and a failure with
    /// `--strict`.
    NotCompared(String),
}

/// One layer's effect, and where it comes from (a file, and the key in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) source: String,
    pub(crate) effect: Effect,
}

impl Finding {
    pub(crate) fn new(source: impl std::fmt::Display, effect: Effect) -> Finding {
        Finding {
            source: source.to_string(),
            effect,
        }
    }

    /// Whether it makes the agent run something other than the declared entry, or nothing.
    pub(crate) fn fails(&self, strict: bool) -> bool {
        match self.effect {
            Effect::NotCompared(_) => strict,
            _ => true,
        }
    }

    /// The finding as a report says it.
    pub(crate) fn describe(&self, name: &str) -> String {
        let source = &self.source;
        match &self.effect {
            Effect::Blocked(why) => format!("the client does not load {name}: {why} ({source})"),
            Effect::Replaced(why) => {
                format!("the client runs another definition of {name}: {why} ({source})")
            }
            Effect::Changed(keys) => format!(
                "the client runs {name} with {} changed by {source}, which the declaration does \
                 not set",
                keys.join(", ")
            ),
            Effect::NotCompared(why) => format!("not compared: {source} ({why})"),
        }
    }
}
