//! One server's registration entry, as the clients store it: a stdio entry
//! (`command`, `args`, `env`) or a remote one (`type: http|sse`, `url`, `headers`).
//!
//! The raw JSON object is kept as rendered so that what is registered is byte for byte what
//! the template says; the typed view is for checks and comparisons.
//!
//! A leaf of the domain: what every folder shares (deployment renders an entry, clients
//! register it, identity checks it, registration journals it), so it imports none of them.
//! [`secrets`] lives here because an entry's flat and shown forms are its redaction.

pub(crate) mod secrets;

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Transport {
    Stdio { command: String, args: Vec<String> },
    Remote { kind: String, url: String },
}

/// Why a JSON value is no entry a client accepts: the field at fault, and what it should be.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum EntryError {
    #[error("the entry is not a JSON object")]
    NotAnObject,
    #[error("\"type\" is not a string")]
    TypeNotAString,
    #[error("\"{key}\" is not an object of strings")]
    NotStringMap { key: String },
    #[error("a stdio entry needs a non-empty \"command\" string")]
    NoCommand,
    #[error("\"args\" holds something that is not a string")]
    ArgNotAString,
    #[error("\"args\" is not an array of strings")]
    ArgsNotAnArray,
    #[error("a {kind} entry needs a non-empty \"url\" string")]
    NoUrl { kind: String },
    #[error("unknown transport type {kind:?}")]
    UnknownType { kind: String },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) raw: Map<String, Value>,
    pub(crate) transport: Transport,
}

impl Entry {
    /// Parse an entry, refusing shapes no client accepts. The reason names the field.
    pub(crate) fn from_value(v: &Value) -> Result<Entry, EntryError> {
        let raw = v.as_object().ok_or(EntryError::NotAnObject)?.clone();
        let kind = match raw.get("type") {
            None => "stdio",
            Some(Value::String(t)) => t.as_str(),
            Some(_) => return Err(EntryError::TypeNotAString),
        };
        let string_map_ok = |key: &str| match raw.get(key) {
            None => Ok(()),
            Some(Value::Object(m)) if m.values().all(Value::is_string) => Ok(()),
            Some(_) => Err(EntryError::NotStringMap { key: key.into() }),
        };
        let transport = match kind {
            "stdio" => {
                let command = match raw.get("command") {
                    Some(Value::String(c)) if !c.is_empty() => c.clone(),
                    _ => return Err(EntryError::NoCommand),
                };
                let args = match raw.get("args") {
                    None => Vec::new(),
                    Some(Value::Array(a)) => a
                        .iter()
                        .map(|x| x.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                        .ok_or(EntryError::ArgNotAString)?,
                    Some(_) => return Err(EntryError::ArgsNotAnArray),
                };
                string_map_ok("env")?;
                Transport::Stdio { command, args }
            }
            "http" | "sse" => {
                let url = match raw.get("url") {
                    Some(Value::String(u)) if !u.is_empty() => u.clone(),
                    _ => return Err(EntryError::NoUrl { kind: kind.into() }),
                };
                string_map_ok("headers")?;
                Transport::Remote {
                    kind: kind.to_string(),
                    url,
                }
            }
            other => return Err(EntryError::UnknownType { kind: other.into() }),
        };
        Ok(Entry { raw, transport })
    }

    /// Whether two entries register the same thing. Clients may drop what is a default
    /// (`"type":"stdio"`, empty `args`, empty `env`), so those are ignored; everything else,
    /// env and header values included, must be equal.
    pub(crate) fn same_registration(&self, other: &Entry) -> bool {
        normalized(&self.raw) == normalized(&other.raw)
    }

    /// The entry as the flat registration document records it: command and args, or type and
    /// url; then `env` and `headers` when it has any, each value a `${VAR}` reference as it is
    /// or the digest of a literal ([`crate::entry::secrets::recorded_value`]), never the value; then
    /// every other key the client holds (`headersHelper`, `oauth`, or one mcp-deploy does not
    /// know), its strings recorded the same way except for the known ones, so that a check of
    /// the document sees them too. An entry with nothing but command and args keeps the exact
    /// `{"command","args"}` shape.
    pub(crate) fn flat(&self) -> Value {
        use crate::entry::secrets::recorded_value;
        let mut out = match &self.transport {
            Transport::Stdio { command, args } => {
                serde_json::json!({ "command": command, "args": args })
            }
            Transport::Remote { kind, url } => serde_json::json!({ "type": kind, "url": url }),
        };
        let map = out.as_object_mut().expect("built as an object");
        let stdio = matches!(self.transport, Transport::Stdio { .. });
        for (k, v) in &self.raw {
            let recorded = match (k.as_str(), v) {
                // Written above.
                ("command" | "args", _) if stdio => continue,
                ("type" | "url", _) if !stdio => continue,
                ("type", Value::String(t)) if t == "stdio" => continue,
                // A key of the other transport: recorded as it is, so that it is seen.
                ("type" | "url" | "command", v) => v.clone(),
                ("env" | "headers", Value::Object(m)) if m.is_empty() => continue,
                ("env" | "headers", Value::Object(m)) => Value::Object(
                    m.iter()
                        .map(|(name, v)| {
                            let v = v.as_str().map_or_else(
                                || Value::String(recorded_value(&v.to_string())),
                                |s| Value::String(recorded_value(s)),
                            );
                            (name.clone(), v)
                        })
                        .collect(),
                ),
                // A program the client runs and OAuth client settings: not secrets, and what
                // they say is the point.
                ("headersHelper" | "oauth", v) => v.clone(),
                (_, v) => recorded_leaves(v),
            };
            map.insert(k.clone(), recorded);
        }
        out
    }

    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(&self.raw).expect("a Map serializes")
    }

    /// A one-line description that holds no secret: `stdio /x/bin/y ["a","b"]` or `http URL`
    /// (an argument holding a literal secret shown as `<redacted>`).
    pub(crate) fn describe(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args } if args.is_empty() => format!("stdio {command}"),
            Transport::Stdio { command, args } => format!(
                "stdio {command} {}",
                serde_json::to_string(&crate::entry::secrets::shown_args(args)).unwrap()
            ),
            Transport::Remote { kind, url } => {
                format!("{kind} {}", crate::entry::secrets::shown_url(url))
            }
        }
    }
}

/// `v` with every string recorded as [`crate::entry::secrets::recorded_value`] does.
fn recorded_leaves(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(crate::entry::secrets::recorded_value(s)),
        Value::Array(a) => Value::Array(a.iter().map(recorded_leaves).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), recorded_leaves(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `raw` without what a client may add or drop on its own: `"type":"stdio"`, empty `args`,
/// empty `env` or `headers`. Both the identity comparison and [`Entry`]'s own use it.
pub(crate) fn normalized(raw: &Map<String, Value>) -> Map<String, Value> {
    let mut m = raw.clone();
    let is_default = |k: &str, v: &Value| match (k, v) {
        ("type", Value::String(t)) => t == "stdio",
        ("args", Value::Array(a)) => a.is_empty(),
        ("env" | "headers", Value::Object(o)) => o.is_empty(),
        _ => false,
    };
    m.retain(|k, v| !is_default(k, v));
    m
}

/// A string-to-string object of the entry (`env`, `headers`), in order; absent is empty.
/// (`Entry::from_value` has checked that its values are strings.)
pub(crate) fn string_map(raw: &Map<String, Value>, key: &str) -> Vec<(String, String)> {
    raw.get(key)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn e(v: Value) -> Entry {
        Entry::from_value(&v).unwrap()
    }

    #[test]
    fn defaults_do_not_make_a_difference_but_values_do() {
        let a = e(json!({"command":"/x","args":[]}));
        assert!(a.same_registration(&e(json!({"type":"stdio","command":"/x","env":{}}))));
        assert!(!a.same_registration(&e(json!({"command":"/x","args":["a"]}))));
        assert!(!a.same_registration(&e(json!({"command":"/x","env":{"K":"v"}}))));
        assert!(!a.same_registration(&e(json!({"command":"/y"}))));
        let args = e(json!({"command":"/x","args":["a b"]}));
        assert!(!args.same_registration(&e(json!({"command":"/x","args":["a","b"]}))));
    }

    #[test]
    fn flat_form_records_env_and_headers_but_no_value() {
        let plain = e(json!({"command":"/x","args":["1"],"env":{}}));
        assert_eq!(plain.flat(), json!({"command":"/x","args":["1"]}));
        let s = e(json!({"command":"/x","args":["1"],"env":{"TOKEN":"hunter2","R":"${R}"}}));
        let flat = s.flat();
        assert_eq!(flat["env"]["R"], "${R}");
        let recorded = flat["env"]["TOKEN"].as_str().unwrap();
        assert!(recorded.starts_with("<sha256:"), "{flat}");
        assert!(!flat.to_string().contains("hunter2"), "{flat}");
        let h = e(
            json!({"type":"http","url":"http://h/mcp","headersHelper":"/bin/h",
            "headers":{"Authorization":"Bearer s3cr3t"},"timeout":5,"odd":"v4lue"}),
        );
        let flat = h.flat();
        assert_eq!(flat["headersHelper"], "/bin/h");
        assert_eq!(flat["timeout"], 5);
        assert!(!flat.to_string().contains("s3cr3t") && !flat.to_string().contains("v4lue"));
        assert!(!h.describe().contains("Bearer"));
        // What was recorded records the same again.
        assert_eq!(e(flat.clone()).flat(), flat);
        // A key of the other transport is recorded as it is, so that a check sees it.
        let odd = e(json!({"type":"stdio","command":"/x","url":"http://e/"})).flat();
        assert_eq!(odd, json!({"command":"/x","args":[],"url":"http://e/"}));
    }

    #[test]
    fn describe_redacts_secret_args() {
        let s = e(json!({"command":"/x","args":["--token","hunter2-value"]}));
        assert_eq!(s.describe(), r#"stdio /x ["--token","<redacted>"]"#);
    }

    #[test]
    fn malformed_entries_name_the_field() {
        for (v, want) in [
            (json!([]), "not a JSON object"),
            (json!({"args":[]}), "\"command\""),
            (json!({"command":"/x","args":[1]}), "\"args\""),
            (json!({"command":"/x","env":{"A":1}}), "\"env\""),
            (json!({"type":"http"}), "\"url\""),
            (json!({"type":"ws","url":"x"}), "unknown transport"),
        ] {
            let err = Entry::from_value(&v).unwrap_err().to_string();
            assert!(err.contains(want), "{v}: {err}");
        }
    }
}
