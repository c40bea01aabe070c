//! What a client's config layer does to a registered name, as the identity checks judge it:
//! the vocabulary the per-client readers (`clients::layers`) speak. A finding that changes
//! what runs fails `mcp-registration`; so does one that could not be compared: **doubt never
//! passes**. A doubt the client itself can settle ([`Ask`]) is put to it once per run
//! (`clients::Layers`), and only its answer passes ([`Effect::Answered`]).

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
    /// The source exists but mcp-deploy does not know what the client makes of it
    /// (unreadable, a format or a key type it does not replicate, settings delivered by a
    /// server or MDM): a failure, naming the source and why.
    NotCompared(Doubt),
    /// A doubt settled, named so that the pass shows it: the client's own CLI answered on this
    /// host that it loads its whole configuration (how it was asked, and what was in doubt),
    /// or the source is one the client certainly ignores (a policy file Node's `JSON.parse`
    /// refuses). A pass, with this as its evidence.
    Answered(String),
}

/// What a reader does not know about a source, and why; `ask` says when the client itself
/// can answer it. A doubt is a value, never an absence: it fails until answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Doubt {
    pub(crate) why: String,
    pub(crate) ask: Option<Ask>,
}

/// A question the client's own CLI answers on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ask {
    /// Whether it accepts its whole configuration: a key whose type mcp-deploy does not
    /// replicate could make it refuse to start, and then it loads no server.
    LoadsConfig,
}

impl Doubt {
    /// A doubt the client settles by loading its configuration ([`Ask::LoadsConfig`]).
    pub(crate) fn loads_config(why: impl Into<String>) -> Doubt {
        Doubt {
            why: why.into(),
            ask: Some(Ask::LoadsConfig),
        }
    }
}

impl From<String> for Doubt {
    fn from(why: String) -> Doubt {
        Doubt { why, ask: None }
    }
}

impl From<&str> for Doubt {
    fn from(why: &str) -> Doubt {
        why.to_string().into()
    }
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

    /// Whether it fails the check: it makes the agent run something other than the declared
    /// entry, or nothing, or what it does is not known. Only the client's answer passes.
    pub(crate) fn fails(&self) -> bool {
        !matches!(self.effect, Effect::Answered(_))
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
            Effect::NotCompared(doubt) => format!("not compared: {source} ({})", doubt.why),
            Effect::Answered(how) => format!("{how} ({source})"),
        }
    }
}

impl Effect {
    /// A doubt: what is not known, and why ([`Effect::NotCompared`]).
    pub(crate) fn not_compared(doubt: impl Into<Doubt>) -> Effect {
        Effect::NotCompared(doubt.into())
    }
}
