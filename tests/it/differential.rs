//! The client as the oracle (issue 35, item 2): seeded variants of claude's user config
//! (`.claude.json`), each read by mcp-deploy's `verify-identity` and by the real claude
//! side by side; a variant where mcp-deploy passes the registration while claude runs
//! something else, or nothing, fails the test.
//!
//! One file holds many servers, so one `claude mcp list` (which starts every server for its
//! health check) judges them all: each server's release runs a recorder that writes the argv,
//! environment and directory it was started with. "claude runs ours" means exactly: a record
//! in that server's own prefix whose argv and directory are the declared ones and whose
//! environment is the one claude gives an unmodified entry (two control entries in the same
//! file). Each server's entry is a variant (duplicate keys, escapes, odd types, extra keys,
//! names given twice...), and each file a variant around them (a byte order mark, duplicate
//! top-level keys, a lone surrogate or deep nesting elsewhere, text JSON.parse refuses...).
//! The seed is fixed, so a disagreement is the same case on every run; each one found became
//! a named test elsewhere (see docs/security.md, "The client as the oracle"). The same variants
//! are judged for codex (`codex mcp list --json`), copilot (`copilot mcp list --json`), OpenCode
//! (`opencode debug config`) and, by the recorder, gemini, qwen and grok sessions
//! ([`session_harness`]).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::{json, Value};

use crate::harness::{compat_client, real_claude, write_exec, World};

/// The seed of every variant (changing it changes the cases, not what they must show).
const SEED: u64 = 0x35_d1ff;
/// Servers in one file: a few controls, the rest variants.
const PER_FILE: usize = 28;

/// A server that records how it was started into `<its prefix>/seen/<pid>.json`, then
/// answers MCP's initialize and tools/list.
const RECORDER: &str = concat!(
    r#"#!/usr/bin/python3
import os, sys, json
prefix = os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0])))
os.makedirs(os.path.join(prefix, "seen"), exist_ok=True)
seen = os.path.join(prefix, "seen", "%d.json" % os.getpid())
with open(seen + ".tmp", "w") as f:
    json.dump({"argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd()}, f)
os.replace(seen + ".tmp", seen)
"#,
    crate::attacks::support::mcp_answers!()
);

/// splitmix64: a fixed, dependency-free sequence.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// An entry as the text of its members, in order, duplicates allowed.
#[derive(Clone)]
struct Entry(Vec<(String, String)>);

impl Entry {
    fn declared(command: &str) -> Entry {
        Entry(vec![
            ("type".into(), json!("stdio").to_string()),
            ("command".into(), json!(command).to_string()),
            ("args".into(), json!(["serve"]).to_string()),
            ("env".into(), json!({}).to_string()),
        ])
    }
    fn text(&self, sep: &str) -> String {
        let members: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| format!("{}:{v}", json!(k)))
            .collect();
        format!("{{{}}}", members.join(sep))
    }
    fn set(&mut self, key: &str, value: String) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(m) => m.1 = value,
            None => self.0.push((key.into(), value)),
        }
    }
    fn remove(&mut self, key: &str) {
        self.0.retain(|(k, _)| k != key);
    }
}

/// A value that makes claude run something else than declared, for `key`.
fn evil(key: &str) -> String {
    match key {
        "command" => json!("/nonexistent/evil").to_string(),
        "args" => json!(["--evil"]).to_string(),
        "env" => json!({"NODE_OPTIONS": "--require /nonexistent/x"}).to_string(),
        _ => json!("sse").to_string(),
    }
}

/// `s` as a JSON string with some characters written as `\uXXXX` or `\/`.
fn escaped(s: &str, rng: &mut Rng) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match (c, rng.below(3)) {
            ('/', 0) => out.push_str("\\/"),
            (c, 1) if c.is_ascii_alphanumeric() || c == '/' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            ('"', _) => out.push_str("\\\""),
            ('\\', _) => out.push_str("\\\\"),
            (c, _) => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One variant of the declared entry: one or two operators, said in `what`.
fn variant(command: &str, rng: &mut Rng) -> (String, Entry, Option<Entry>) {
    let mut e = Entry::declared(command);
    let mut what = Vec::new();
    // A second entry under the same name (the name given twice), before or after.
    let mut twin = None;
    for _ in 0..1 + usize::from(rng.below(3) == 0) {
        match rng.below(12) {
            0 => {
                let n = e.0.len();
                for i in (1..n).rev() {
                    let j = rng.below(i + 1);
                    e.0.swap(i, j);
                }
                what.push("members reordered".to_string());
            }
            1 => {
                let text = escaped(command, rng);
                e.set("command", text);
                what.push("command escaped".into());
            }
            2 | 3 => {
                let key = *rng.pick(&["command", "args", "env", "type"]);
                let at = rng.below(2) * e.0.len();
                e.0.insert(at, (key.into(), evil(key)));
                let first = if at == 0 { "first" } else { "last" };
                what.push(format!("{key} given twice, another one {first}"));
            }
            4 => {
                let t = *rng.pick(&["null", "\"STDIO\"", "\"stdio \"", "\"local\"", "1", "\"\""]);
                match rng.below(4) {
                    0 => {
                        e.remove("type");
                        what.push("no type".into());
                    }
                    _ => {
                        e.set("type", t.into());
                        what.push(format!("type {t}"));
                    }
                }
            }
            5 => {
                let (k, v) = *rng.pick(&[
                    ("cwd", "\"/tmp\""),
                    ("url", "\"http://127.0.0.1:9/mcp\""),
                    ("headers", "{}"),
                    ("timeout", "5"),
                    ("disabled", "true"),
                    ("alwaysAllow", "[]"),
                    ("oauth", "{}"),
                ]);
                e.0.push((k.into(), v.into()));
                what.push(format!("extra {k}"));
            }
            op @ (6 | 7) => {
                let (key, choices): (&str, &[&str]) = match op {
                    6 => (
                        "args",
                        &[
                            "[1]",
                            "null",
                            "\"serve\"",
                            "[\"serve\", null]",
                            "[\"serve\", \"\"]",
                            "[\"serv\\u0065\"]",
                            "[\"${SERVE_ARG:-serve}\"]",
                        ],
                    ),
                    _ => (
                        "env",
                        &[
                            "{\"A\": 1}",
                            "null",
                            "[]",
                            "{\"A\": null}",
                            "{\"A\": \"\"}",
                            "{\"PATH\": \"/nonexistent\"}",
                        ],
                    ),
                };
                let v = *rng.pick(choices);
                e.set(key, v.into());
                what.push(format!("{key} {v}"));
            }
            8 => {
                let c = match rng.below(4) {
                    0 => json!(format!("{command} ")).to_string(),
                    1 => json!(format!(" {command}")).to_string(),
                    2 => json!([command]).to_string(),
                    _ => json!(format!("{command}\u{0}")).to_string(),
                };
                e.set("command", c.clone());
                what.push(format!("command {c}"));
            }
            9 => {
                let mut other = Entry::declared(command);
                other.set("command", evil("command"));
                let first = rng.below(2) == 0;
                what.push(format!(
                    "the name given twice, another entry {}",
                    if first { "first" } else { "last" }
                ));
                twin = Some((first, other));
            }
            10 => {
                e.set(
                    "command",
                    json!(format!("{}/../bin/orchestrata-mcp", parent(command))).to_string(),
                );
                what.push("command through ..".into());
            }
            _ => {
                e.set("args", json!(["serve", "--evil"]).to_string());
                what.push("one argument more".into());
            }
        }
    }
    match twin {
        Some((true, other)) => (what.join(", "), other, Some(e)),
        Some((false, other)) => (what.join(", "), e, Some(other)),
        None => (what.join(", "), e, None),
    }
}

fn parent(path: &str) -> String {
    Path::new(path).parent().unwrap().display().to_string()
}

/// The entry of the `i`-th server of a file, and what it is: the declared entry for the
/// first two (the controls), else a [`variant`] (only one claude's schema takes, when
/// `well_formed`), with the second entry of its name when it is given twice.
fn entry_of(
    i: usize,
    command: &str,
    rng: &mut Rng,
    well_formed: bool,
) -> (String, Entry, Option<Entry>) {
    if i < 2 {
        return ("control".to_string(), Entry::declared(command), None);
    }
    loop {
        let v = variant(command, rng);
        if !well_formed || (schema_ok(&v.1) && v.2.as_ref().is_none_or(schema_ok)) {
            return v;
        }
    }
}

/// Whether `e` is an entry claude's schema takes, as the text reads last-wins (JSON.parse):
/// an object whose type is absent, stdio, sse or http; a stdio one with a non-empty command,
/// args of strings and env of strings; a remote one with a non-empty url and headers of
/// strings.
fn schema_ok(e: &Entry) -> bool {
    let Ok(Value::Object(m)) = serde_json::from_str::<Value>(&e.text(",")) else {
        return false;
    };
    let strings = |k: &str| match m.get(k) {
        None => true,
        Some(Value::Object(o)) => o.values().all(Value::is_string),
        Some(_) => false,
    };
    let nonempty = |k: &str| {
        m.get(k)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    match m.get("type").map(|t| t.as_str()) {
        None | Some(Some("stdio")) => {
            let args = match m.get("args") {
                None => true,
                Some(Value::Array(a)) => a.iter().all(Value::is_string),
                Some(_) => false,
            };
            nonempty("command") && args && strings("env")
        }
        Some(Some("sse" | "http")) => nonempty("url") && strings("headers"),
        _ => false,
    }
}

type Wrap = fn(&str) -> String;

/// The file variants: each turns the `mcpServers` object's text into the whole file.
const FILES: &[(&str, Wrap)] = &[
    ("plain", |s| {
        format!("{{\"numStartups\": 3, \"mcpServers\": {s}}}")
    }),
    ("a byte order mark", |s| {
        format!("\u{feff}{{\"mcpServers\": {s}}}")
    }),
    ("a lone surrogate elsewhere", |s| {
        format!("{{\"tipsHistory\": {{\"a\": \"\\udc00x\"}}, \"mcpServers\": {s}}}")
    }),
    ("a lone surrogate in one entry", |s| {
        let other = "\"x\": {\"command\": \"/nonexistent/\\ud800\"}";
        format!("{{\"mcpServers\": {}, {other}}}}}", &s[..s.len() - 1])
    }),
    ("deep nesting elsewhere", |s| {
        let depth = 5_000;
        format!(
            "{{\"x\": {}{}, \"mcpServers\": {s}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        )
    }),
    ("mcpServers twice, empty last", |s| {
        format!("{{\"mcpServers\": {s}, \"mcpServers\": {{}}}}")
    }),
    ("mcpServers twice, empty first", |s| {
        format!("{{\"mcpServers\": {{}}, \"mcpServers\": {s}}}")
    }),
    ("unrelated keys of another type", |s| {
        format!("{{\"projects\": 5, \"numStartups\": \"x\", \"mcpServers\": {s}}}")
    }),
    ("a trailing comma", |s| format!("{{\"mcpServers\": {s},}}")),
    ("a comment", |s| {
        format!("// hand-edited\n{{\"mcpServers\": {s}}}")
    }),
    ("text after the document", |s| {
        format!("{{\"mcpServers\": {s}}} x")
    }),
];

/// What one server's records say the client started. Each is written whole, then renamed
/// into place: one still being written (`.tmp`) is not a record yet.
fn records(prefix: &Path) -> Vec<Value> {
    let Ok(dir) = fs::read_dir(prefix.join("seen")) else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| fs::read_to_string(e.path()).ok())
        .map(|text| serde_json::from_str(&text).unwrap())
        .collect()
}

struct Case {
    file: &'static str,
    name: String,
    what: String,
}

/// One test per supported release of compat/versions.txt (and the pinned one), so that a
/// disagreement names the release.
mod claude {
    use super::*;

    #[test]
    fn pinned() {
        differential(&real_claude(), "pinned");
    }
    /// One test per supported older release (compat/versions.txt).
    macro_rules! releases {
        ($($test:ident => $release:literal),* $(,)?) => {$(
            #[test]
            fn $test() {
                differential(&compat_client("claude", $release), $release);
            }
        )*};
    }
    releases!(
        release_2_0_0 => "2.0.0",
        release_2_1_100 => "2.1.100",
        release_2_1_284 => "2.1.284",
        release_2_1_285 => "2.1.285",
    );
}

/// Every variant of claude's user config, read by verify-identity and by `claude` (the
/// release `release`, at `binary`): no registration passes that claude does not run as
/// declared.
/// `count` servers (`v0`, `v1`...), each its own prefix-layout deployment whose server is the
/// [`RECORDER`], in a world whose `claude` is `binary`: the flat document records them all,
/// and `verify` is the verify-identity run over them.
struct Fleet {
    w: World,
    binary: std::path::PathBuf,
    root: std::path::PathBuf,
    names: Vec<String>,
    flat: serde_json::Map<String, Value>,
    verify: Vec<String>,
}

impl Fleet {
    fn new(binary: &Path, count: usize) -> Fleet {
        Fleet::of("claude", binary, count)
    }

    /// [`Fleet::new`] for `client` (its binary `binary`), whose flat document and
    /// verify-identity run name it.
    fn of(client: &str, binary: &Path, count: usize) -> Fleet {
        let w = World::new();
        std::os::unix::fs::symlink(binary, w.bin().join(client)).unwrap();
        let sample = w.root().join("sample");
        w.run(&["sample", sample.to_str().unwrap()]).code(0);
        let sha = fs::read_to_string(sample.join("orchestrata/VERSION")).unwrap();
        let root = w.root().join("deployments");
        fs::create_dir_all(&root).unwrap();
        let names: Vec<String> = (0..count).map(|i| format!("v{i}")).collect();
        let servers: Vec<Value> = names
            .iter()
            .map(|n| {
                json!({"name": n, "prefix": format!("/opt/{n}"), "layout": "prefix",
                       "entry": {"command": "{{prefix}}/bin/orchestrata-mcp", "args": ["serve"]}})
            })
            .collect();
        let config = w.root().join("servers.json");
        fs::write(&config, json!({ "servers": servers }).to_string()).unwrap();
        let mut flat = serde_json::Map::new();
        for n in &names {
            let prefix = root.join(n);
            copy_dir(&sample.join("orchestrata"), &prefix);
            write_exec(&prefix.join("bin/orchestrata-mcp"), RECORDER);
            let command = prefix.join("bin/orchestrata-mcp").display().to_string();
            flat.insert(n.clone(), json!({"command": command, "args": ["serve"]}));
        }
        let document = match client {
            "claude" => json!({ "mcpServers": flat }),
            other => json!({ "mcpServers": {}, "clients": { other: { "mcpServers": flat } } }),
        };
        fs::write(w.registered(), document.to_string()).unwrap();
        let mut verify = vec![
            "verify-identity".to_string(),
            "--root".into(),
            root.display().to_string(),
            "--config".into(),
            config.display().to_string(),
            "--json".into(),
            "--client".into(),
            client.into(),
        ];
        for n in &names {
            verify.push("--expect-commit".into());
            verify.push(format!("{n}={}", sha.trim()));
        }
        Fleet {
            w,
            binary: binary.to_path_buf(),
            root,
            names,
            flat,
            verify,
        }
    }

    /// One file of claude's entry variants (`well_formed`: only ones claude's schema takes),
    /// each server's entry given by `shape` (its name, claude's entry text), wrapped by
    /// `wrap`; and what each server's variant is.
    fn file_of(
        &self,
        wrap: Wrap,
        rng: &mut Rng,
        well_formed: bool,
        shape: fn(&str, &str) -> String,
    ) -> (String, BTreeMap<String, String>) {
        let mut members = Vec::new();
        let mut what = BTreeMap::new();
        for (i, n) in self.names.iter().enumerate() {
            let (said, first, second) = entry_of(i, &self.command(n), rng, well_formed);
            members.push(format!("{}:{}", json!(n), shape(n, &first.text(","))));
            if let Some(second) = second {
                members.push(format!("{}:{}", json!(n), shape(n, &second.text(","))));
            }
            what.insert(n.clone(), said);
        }
        (wrap(&format!("{{{}}}", members.join(","))), what)
    }

    /// The declared command of `name`.
    fn command(&self, name: &str) -> String {
        self.flat[name]["command"].as_str().unwrap().to_string()
    }

    /// verify-identity over every server, with `.claude.json` holding `text`.
    fn verify(&self, text: &str) -> crate::harness::Run {
        self.verify_with(&self.w.claude_json(), text)
    }

    /// verify-identity over every server, with the client's `config` holding `text`.
    fn verify_with(&self, config: &Path, text: &str) -> crate::harness::Run {
        fs::write(config, text).unwrap();
        let refs: Vec<&str> = self.verify.iter().map(String::as_str).collect();
        self.w.run(&refs)
    }

    /// verify-identity's `--json` report with `config` holding `text` (of the case `case`):
    /// one that could not read the file at all passes nothing (exit 2, the file named).
    fn report(&self, config: &Path, text: &str, case: &str) -> Value {
        let ours = self.verify_with(config, text);
        let report = ours.json();
        assert!(
            report["servers"].is_array() || report["exit"] == 2,
            "{case}: {ours}"
        );
        report
    }

    /// With `.claude.json` holding `text`, confirm that claude starts no `v0` (`setup`
    /// names the state otherwise), then that verify-identity fails: its failed checks' details.
    fn confirmed_out_and_failed(&self, text: &str, setup: &str) -> String {
        self.list(text);
        assert!(
            records(&self.root.join("v0")).is_empty(),
            "setup error: claude started v0 {setup}"
        );
        let run = self.verify(text);
        run.code(1);
        failed_detail(&run)
    }

    /// Whether the client started `name` as declared: a record in its own prefix whose argv
    /// and directory are the declared ones and whose environment is the one the client gives
    /// an unmodified entry (the controls `v0` and `v1`, which must have run).
    fn ran_as_declared(&self, name: &str) -> bool {
        let control = records(&self.root.join("v0"));
        let control2 = records(&self.root.join("v1"));
        let Some(base) = control.first() else {
            return false;
        };
        records(&self.root.join(name)).iter().any(|r| {
            r["argv"] == json!([self.command(name), "serve"])
                && r["cwd"] == base["cwd"]
                && same_env(&r["env"], &base["env"], control2.first())
        })
    }

    /// Remove the records of every earlier start.
    fn forget_starts(&self) {
        for n in &self.names {
            let _ = fs::remove_dir_all(self.root.join(n).join("seen"));
        }
    }

    /// `claude mcp list` (which starts every server it loads) with `.claude.json` holding
    /// `text`, the records of an earlier start removed first.
    fn list(&self, text: &str) -> crate::harness::Run {
        self.forget_starts();
        fs::write(self.w.claude_json(), text).unwrap();
        self.w
            .program(&self.binary)
            .args(["mcp", "list"])
            .env("MCP_TIMEOUT", "3000")
            .run()
    }
}

fn differential(binary: &Path, release: &str) {
    let fleet = Fleet::new(binary, PER_FILE);
    let (names, flat) = (&fleet.names, &fleet.flat);
    let mut rng = Rng(SEED);
    let (mut cases, mut false_passes, mut false_fails) = (0, Vec::new(), 0);
    let (mut both_run, mut neither) = (0, 0);
    let mut tally = BTreeMap::new();
    // Each file twice: with well-formed entries only (one malformed entry anywhere makes
    // claude before 2.1.284 load no user server, and verify-identity fail every name), then
    // with any.
    let rounds = FILES
        .iter()
        .flat_map(|f| [(f, true), (f, false)])
        .map(|((name, wrap), wf)| (*name, *wrap, wf));
    for (file, wrap, well_formed) in rounds {
        // Two controls (the declared entry as claude writes it), then the variants.
        let mut members = Vec::new();
        let mut what = BTreeMap::new();
        for (i, n) in names.iter().enumerate() {
            let command = flat[n]["command"].as_str().unwrap().to_string();
            let (said, first, second) = entry_of(i, &command, &mut rng, well_formed);
            let said = match well_formed {
                true => format!("{said}; all well-formed"),
                false => said,
            };
            let sep = if rng.below(4) == 0 { ",\n\t " } else { "," };
            members.push(format!("{}:{}", json!(n), first.text(sep)));
            if let Some(second) = second {
                members.push(format!("{}:{}", json!(n), second.text(sep)));
            }
            what.insert(n.clone(), said);
        }
        let text = wrap(&format!("{{{}}}", members.join(",")));
        let report = fleet.report(&fleet.w.claude_json(), &text, file);
        // mcp-deploy first: claude may rewrite its own file.
        let listed = fleet.list(&text);
        if std::env::var_os("DIFFERENTIAL_SHOW").is_some() {
            eprintln!("{file}: claude mcp list:\n{listed}");
        }
        let passed = |n: &str| passed(&report, n);
        let ran_ours = |n: &str| fleet.ran_as_declared(n);
        for n in names {
            cases += 1;
            let case = Case {
                file,
                name: n.clone(),
                what: what[n].clone(),
            };
            let (p, r) = (passed(n), ran_ours(n));
            *tally.entry((file, well_formed, p, r)).or_insert(0) += 1;
            if std::env::var_os("DIFFERENTIAL_SHOW").is_some() {
                let detail: Vec<&Value> = report["servers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|s| s["name"] == n.as_str())
                    .flat_map(|s| s["checks"].as_array().unwrap())
                    .filter(|c| c["ok"] == false)
                    .map(|c| &c["detail"])
                    .chain(report.get("error"))
                    .collect();
                eprintln!(
                    "{file}: {n} ({}): passed {p}, claude ran ours {r}: {detail:?}",
                    case.what
                );
            }
            match (p, r) {
                (true, false) => false_passes.push(case),
                (false, true) => false_fails += 1,
                (true, true) => both_run += 1,
                (false, false) => neither += 1,
            }
        }
    }
    eprintln!(
        "differential (claude {release} user config, seed {SEED:#x}): {cases} cases in {} files; \
         {both_run} passed and run as declared, {neither} failed and not run as declared, {} \
         false passes, {false_fails} false fails (mcp-deploy failed what claude runs as \
         declared: the checks fail closed on what they do not know)",
        FILES.len() * 2,
        false_passes.len()
    );
    for ((file, wf, p, r), n) in &tally {
        eprintln!("  {file} (well-formed only: {wf}): passed {p}, run as declared {r}: {n}");
    }
    let shown: Vec<String> = false_passes
        .iter()
        .map(|c| format!("{}: {} ({})", c.file, c.name, c.what))
        .collect();
    assert!(
        false_passes.is_empty(),
        "verify-identity passed a registration claude {release} does not run as declared:\n{}",
        shown.join("\n")
    );
    assert!(cases >= 250, "{cases} cases");
    // Both outcomes are seen on both sides, or the comparison proves nothing: the controls
    // pass and run, and variants claude runs otherwise are failed.
    assert!(
        both_run >= 20 && neither >= 100,
        "{both_run} run, {neither} not"
    );
}

/// The same environment, but for what differs between the two controls themselves.
fn same_env(env: &Value, base: &Value, other_control: Option<&Value>) -> bool {
    let (Some(env), Some(base)) = (env.as_object(), base.as_object()) else {
        return false;
    };
    let noise = |k: &str| {
        other_control
            .and_then(|c| c["env"].as_object())
            .is_some_and(|o| o.get(k) != base.get(k))
    };
    let keys: std::collections::BTreeSet<&String> = env.keys().chain(base.keys()).collect();
    keys.into_iter()
        .all(|k| noise(k) || env.get(k) == base.get(k))
}

fn copy_dir(from: &Path, to: &Path) {
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

/// `.claude.json` with the declared entry of `v0` and, beside it, `other` (a member of
/// `mcpServers`, text) and `elsewhere` (a top-level member, text).
fn config_of(fleet: &Fleet, other: &str, elsewhere: &str) -> String {
    let ours = Entry::declared(&fleet.command("v0")).text(",");
    format!("{{{elsewhere}\"mcpServers\": {{\"v0\": {ours}{other}}}}}")
}

/// Found by the differential: claude 2.0.0 and 2.1.100 load no user-scope server when one
/// entry under `mcpServers` is malformed (2.1.284 on skip only that entry). verify-identity
/// passed ours then; it fails now, naming the entry, for every release (the layers cannot
/// tell which release a command is given).
#[test]
fn a_malformed_entry_beside_ours_makes_claude_before_2_1_284_load_none_and_verify_fails() {
    let old = Fleet::new(&compat_client("claude", "2.1.100"), 1);
    let bad = ", \"hand-made\": {\"type\": null, \"command\": \"/x\"}";
    let text = config_of(&old, bad, "");
    let detail = old.confirmed_out_and_failed(&text, "beside a malformed entry");
    assert!(detail.contains("mcpServers \"hand-made\""), "{detail}");
    assert!(detail.contains("\"type\" is not a string"), "{detail}");
    assert!(detail.contains("claude before 2.1.284"), "{detail}");

    // The newest release runs it, and the verdict is still the failure (toward failing).
    let new = Fleet::new(&real_claude(), 1);
    let text = config_of(&new, bad, "");
    new.list(&text);
    assert!(
        !records(&new.root.join("v0")).is_empty(),
        "the pinned claude ran v0"
    );
    new.verify(&text).code(1);
    // Without the malformed entry, both pass.
    new.verify(&config_of(&new, "", "")).code(0);
    old.verify(&config_of(&old, "", "")).code(0);
}

/// Found by the differential: a `.claude.json` nested 4,500 deep in a key claude does not
/// use makes claude 2.0.0 and 2.1.100 overflow their stack (RangeError) and load no server;
/// verify-identity passed ours then. It fails now past 1,000 levels, naming the depth.
#[test]
fn a_config_nested_deep_elsewhere_makes_claude_before_2_1_284_load_none_and_verify_fails() {
    let old = Fleet::new(&compat_client("claude", "2.0.0"), 1);
    let deep = format!("\"x\": {}{}, ", "[".repeat(4_500), "]".repeat(4_500));
    let text = config_of(&old, "", &deep);
    let detail = old.confirmed_out_and_failed(&text, "from a config nested 4,500 deep");
    assert!(detail.contains("more than 1000 deep"), "{detail}");
    // The next instance: the user settings nested as deep stop them too (confirmed with
    // 2.0.0 and 2.1.100), beside a plain `.claude.json`.
    let plain = config_of(&old, "", "");
    let settings = old.w.config_dir().join("settings.json");
    let deep_settings = format!("{{\"x\": {}{}}}", "[".repeat(4_500), "]".repeat(4_500));
    fs::write(&settings, &deep_settings).unwrap();
    let detail = old.confirmed_out_and_failed(&plain, "beside settings nested 4,500 deep");
    assert!(detail.contains("settings.json"), "{detail}");
    assert!(detail.contains("more than 1000 deep"), "{detail}");
    fs::remove_file(&settings).unwrap();
    // 900 levels: claude 2.0.0 loads it, and verify-identity passes.
    let shallow = format!("\"x\": {}{}, ", "[".repeat(900), "]".repeat(900));
    let text = config_of(&old, "", &shallow);
    old.list(&text);
    assert!(
        !records(&old.root.join("v0")).is_empty(),
        "claude 2.0.0 ran v0"
    );
    old.verify(&text).code(0);
}

/// The details of the failed checks of a verify-identity run (`--json`), one per line.
fn failed_detail(run: &crate::harness::Run) -> String {
    let report = run.json();
    let details: Vec<String> = report["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["checks"].as_array().unwrap())
        .filter(|c| c["ok"] == false)
        .map(|c| {
            format!(
                "{}: {}",
                c["check"],
                c["detail"].as_str().unwrap_or_default()
            )
        })
        .collect();
    details.join("\n")
}

/// Codex's side: variants of `~/.codex/config.toml` (each server's table in another TOML
/// form, its strings in another syntax, keys codex obeys or refuses, whole-file states codex
/// refuses), judged by verify-identity and by `codex mcp list --json`, codex's own reading
/// of every server (enabled or not, and the command, args, environment and directory it
/// starts). A pass where codex does not run the declared command and args, enabled, with no
/// environment or directory of its own, fails the test.
mod codex {
    use super::*;

    /// One server's definition in `config.toml`: lines before any table header (dotted or
    /// inline forms), or a section of its own; and what it is.
    struct Toml {
        prelude: Vec<String>,
        section: Vec<String>,
        what: Vec<String>,
    }

    fn toml_string(s: &str, rng: &mut Rng) -> (String, &'static str) {
        match rng.below(5) {
            0 => (format!("'{s}'"), "a literal string"),
            1 => (
                format!("\"{}\"", s.replace('/', "\\u002F")),
                "an escaped string",
            ),
            2 => (format!("\"\"\"\n{s}\"\"\""), "a multi-line string"),
            _ => (json!(s).to_string(), "a basic string"),
        }
    }

    /// `typed`: nothing codex refuses (one refuses the whole file, every server).
    fn variant(name: &str, command: &str, rng: &mut Rng, control: bool, typed: bool) -> Toml {
        let mut what = Vec::new();
        let (cmd, how) = if control {
            (json!(command).to_string(), "a basic string")
        } else {
            toml_string(command, rng)
        };
        if how != "a basic string" {
            what.push(format!("command as {how}"));
        }
        let mut keys = vec![
            ("command".to_string(), cmd),
            ("args".to_string(), "[\"serve\"]".to_string()),
        ];
        if !control {
            for _ in 0..rng.below(3) {
                let (k, v) = *rng.pick(&[
                    ("enabled", "false"),
                    ("enabled", "true"),
                    ("env", "{ A = \"1\" }"),
                    ("env", "{}"),
                    ("env_vars", "[\"HOME\"]"),
                    ("env_vars", "[]"),
                    ("cwd", "\"/tmp\""),
                    ("startup_timeout_sec", "5"),
                    ("tool_timeout_sec", "5.5"),
                    ("enabled_tools", "[\"hello\"]"),
                    ("disabled_tools", "[\"hello\"]"),
                    ("foo", "1"),
                    ("url", "\"http://127.0.0.1:9/mcp\""),
                    ("bearer_token_env_var", "\"TOKEN\""),
                    ("args", "[\"serve\", \"--evil\"]"),
                    ("args", "[]"),
                    ("args", "\"serve\""),
                    ("args", "['serve']"),
                    ("args", "[\"ser\\u0076e\"]"),
                    ("command", "\"orchestrata-mcp\""),
                    ("enabled", "\"false\""),
                ]);
                // codex refuses the whole file for these: a value of another type, a remote
                // key on a stdio server.
                let refused = v == "\"serve\""
                    || v == "\"false\""
                    || k == "url"
                    || k == "bearer_token_env_var";
                if typed && refused {
                    continue;
                }
                let at = keys.iter().position(|(key, _)| key == k);
                match at {
                    Some(i) => {
                        keys[i].1 = v.into();
                        what.push(format!("{k} = {v}"));
                    }
                    None => {
                        keys.push((k.into(), v.into()));
                        what.push(format!("{k} = {v}"));
                    }
                }
            }
        }
        let form = if control { 0 } else { rng.below(5) };
        let (prelude, section) = match form {
            0 | 1 => {
                let head = match form {
                    0 => format!("[mcp_servers.{name}]"),
                    _ => format!("[ mcp_servers . \"{name}\" ]"),
                };
                let mut section = vec![head];
                section.extend(keys.iter().map(|(k, v)| format!("{k} = {v}")));
                (Vec::new(), section)
            }
            2 => {
                let members: Vec<String> = keys.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                what.push("an inline table".into());
                (
                    vec![format!(
                        "mcp_servers.{name} = {{ {} }}",
                        members.join(", ").replace('\n', "\\n")
                    )],
                    Vec::new(),
                )
            }
            _ => {
                what.push("dotted keys".into());
                (
                    keys.iter()
                        .map(|(k, v)| format!("mcp_servers.{name}.{k} = {v}"))
                        .collect(),
                    Vec::new(),
                )
            }
        };
        Toml {
            prelude,
            section,
            what,
        }
    }

    /// What a whole file adds around the servers: top-level lines, and a section.
    const FILES: &[(&str, &str, &str)] = &[
        ("plain", "", ""),
        ("a model of another type", "model = 5\n", ""),
        ("an unknown top-level key", "mcp_deploy_test = true\n", ""),
        (
            "a profile",
            "profile = \"p\"\n",
            "[profiles.p]\nmodel = \"o3\"\n",
        ),
        ("a byte order mark", "\u{feff}", ""),
        (
            "a project trusted",
            "",
            "[projects.\"/tmp\"]\ntrust_level = \"trusted\"\n",
        ),
        // A key given twice is a TOML error: codex refuses the whole file.
        (
            "a key given twice elsewhere",
            "",
            "[mcp_servers.x]\ncommand = \"/x\"\ncommand = \"/y\"\n",
        ),
    ];

    #[test]
    fn codex_runs_what_verify_identity_passes_in_every_variant_of_its_config() {
        harness(&crate::harness::real_client("codex"), "pinned");
    }

    /// The harness at the oldest supported release and one in the middle (issue 35, item 9:
    /// a rule that differs between releases follows the release found on the host).
    #[test]
    fn release_0_45_0() {
        harness(&compat_client("codex", "0.45.0"), "0.45.0");
    }
    #[test]
    fn release_0_100_0() {
        harness(&compat_client("codex", "0.100.0"), "0.100.0");
    }

    fn harness(codex: &Path, release: &str) {
        let fleet = Fleet::of("codex", codex, PER_FILE);
        let config = fleet.w.root().join("home/.codex/config.toml");
        fs::create_dir_all(config.parent().unwrap()).unwrap();
        let mut rng = Rng(SEED);
        let mut tally = Tally::default();
        for (file, top, tail) in FILES {
            for round in 0..3 {
                let mut prelude = vec![top.to_string()];
                let mut sections = Vec::new();
                let mut what = BTreeMap::new();
                for (i, n) in fleet.names.iter().enumerate() {
                    let t = variant(n, &fleet.command(n), &mut rng, i < 2, round < 2);
                    prelude.extend(t.prelude);
                    sections.extend(t.section);
                    sections.push(String::new());
                    what.insert(n.clone(), t.what.join(", "));
                }
                let text = format!(
                    "{}\n{}\n{tail}",
                    prelude.concat_lines(),
                    sections.join("\n")
                );
                let report = fleet.report(&config, &text, file);
                let listed = fleet.w.program(codex).args(["mcp", "list", "--json"]).run();
                let seen: Vec<Value> = serde_json::from_str(&listed.stdout).unwrap_or_default();
                if std::env::var_os("DIFFERENTIAL_SHOW").is_some() {
                    eprintln!("{file} #{round}:\n{text}\n{listed}\n{report}");
                }
                for n in &fleet.names {
                    let passed = passed(&report, n);
                    let runs = seen.iter().any(|s| {
                        let t = &s["transport"];
                        // 0.45.0 lists no `enabled`, `env_vars` or `cwd` (it knows none
                        // of them, and runs every server it lists).
                        s["name"] == n.as_str()
                            && s["enabled"] != false
                            && t["type"] == "stdio"
                            && t["command"] == fleet.command(n).as_str()
                            && t["args"] == json!(["serve"])
                            && (t["env"].is_null() || t["env"] == json!({}))
                            && (t["env_vars"].is_null() || t["env_vars"] == json!([]))
                            && t["cwd"].is_null()
                    });
                    tally.add(format!("{file} #{round}: {n} ({})", what[n]), passed, runs);
                }
            }
        }
        tally.finish(&format!("codex {release}"), "config.toml");
    }

    trait ConcatLines {
        fn concat_lines(&self) -> String;
    }
    impl ConcatLines for Vec<String> {
        fn concat_lines(&self) -> String {
            self.iter()
                .filter(|l| !l.is_empty())
                .map(|l| format!("{}\n", l.trim_end_matches('\n')))
                .collect()
        }
    }
}

/// Copilot's side: the entry and file variants of claude's harness (the same `mcpServers`
/// JSON), in `~/.copilot/mcp-config.json`, with `copilot mcp list --json` — copilot's own
/// reading of every server, its source and whether it is enabled — as the oracle. A pass
/// where copilot does not list the declared command and args from the user config, enabled,
/// with no environment or directory of its own, fails the test.
#[test]
fn copilot_runs_what_verify_identity_passes_in_every_variant_of_its_config() {
    copilot_harness(&crate::harness::real_client("copilot"), "pinned");
}

/// Copilot's harness at its oldest supported release (issue 35, item 9).
#[test]
fn copilot_1_0_22_runs_what_verify_identity_passes_in_every_variant_of_its_config() {
    copilot_harness(&compat_client("copilot", "1.0.22"), "1.0.22");
}

fn copilot_harness(copilot: &Path, release: &str) {
    let fleet = Fleet::of("copilot", copilot, PER_FILE);
    let config = fleet.w.root().join("home/.copilot/mcp-config.json");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    let mut rng = Rng(SEED);
    let mut tally = Tally::default();
    let rounds = FILES.iter().flat_map(|f| [(f, true), (f, false)]);
    for ((file, wrap), well_formed) in rounds {
        let (text, what) = fleet.file_of(*wrap, &mut rng, well_formed, |_, e| e.to_string());
        let report = fleet.report(&config, &text, file);
        fs::write(&config, &text).unwrap();
        let listed = fleet
            .w
            .program(copilot)
            .args(["mcp", "list", "--json"])
            .run();
        let seen: Value = serde_json::from_str(&listed.stdout).unwrap_or(Value::Null);
        if std::env::var_os("DIFFERENTIAL_SHOW").is_some() {
            eprintln!("{file}:\n{listed}\n{report}");
        }
        for n in &fleet.names {
            let passed = passed(&report, n);
            let e = &seen["mcpServers"][n];
            let runs = e["source"] == "user"
                && e["enabled"] != false
                && matches!(e["type"].as_str(), None | Some("local" | "stdio"))
                && e["command"] == fleet.command(n).as_str()
                && e["args"] == json!(["serve"])
                && (e["env"].is_null() || e["env"] == json!({}))
                && e["cwd"].is_null();
            tally.add(format!("{file}: {n} ({})", what[n]), passed, runs);
        }
    }
    tally.finish(&format!("copilot {release}"), "mcp-config.json");
}

/// Whether verify-identity's `--json` report passed the registration of `name`.
fn passed(report: &Value, name: &str) -> bool {
    report["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["name"] == name)
        .flat_map(|s| s["checks"].as_array().unwrap())
        .any(|c| c["check"] == "mcp-registration" && c["ok"] == true)
}

/// The two verdicts on every case of a harness: passed by verify-identity, run as declared by
/// the client.
#[derive(Default)]
struct Tally {
    cases: usize,
    both: usize,
    neither: usize,
    false_fails: usize,
    false_passes: Vec<String>,
}

impl Tally {
    fn add(&mut self, case: String, passed: bool, runs: bool) {
        if std::env::var_os("DIFFERENTIAL_SHOW").is_some() {
            eprintln!("{case}: passed {passed}, the client runs it as declared {runs}");
        }
        self.cases += 1;
        match (passed, runs) {
            (true, false) => self.false_passes.push(case),
            (false, true) => self.false_fails += 1,
            (true, true) => self.both += 1,
            (false, false) => self.neither += 1,
        }
    }

    /// Say the figures; fail on a false pass, or when both outcomes were not seen often
    /// enough for the comparison to prove anything.
    fn finish(&self, client: &str, file: &str) {
        let Tally {
            cases,
            both,
            neither,
            false_fails,
            false_passes,
        } = self;
        eprintln!(
            "differential ({client} {file}, seed {SEED:#x}): {cases} cases; {both} passed and \
             run as declared, {neither} failed and not run, {} false passes, {false_fails} \
             false fails",
            false_passes.len()
        );
        assert!(
            false_passes.is_empty(),
            "verify-identity passed a registration {client} does not run as declared:\n{}",
            false_passes.join("\n")
        );
        assert!(
            *cases >= 250 && *both >= 20 && *neither >= 50,
            "{cases} {both} {neither}"
        );
    }
}

/// OpenCode's side (issue 35, item 2): each server as an OpenCode `mcp` entry in
/// `~/.config/opencode/opencode.jsonc`, in seeded variants (keys of another type, given twice,
/// escaped, `{env:...}` substituted, comments and trailing commas, toggles, environments), in
/// file variants around them (a byte order mark, `mcp` twice, a key OpenCode refuses or
/// drops, a key whose schema mcp-deploy does not carry — the doubt put to OpenCode —, text
/// after the document). `opencode debug config` — the config OpenCode resolves, or its refusal
/// of the whole config — is the oracle: a pass where it does not resolve the declared command
/// line, enabled, with no environment or directory of its own, fails the test.
mod opencode {
    use super::*;

    /// What a round's entries may hold: what any OpenCode refuses the whole config over (one
    /// such entry and no server runs), or what only a release before 1.14.34 refuses (an
    /// entry key its schema does not have), or neither.
    #[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
    enum Round {
        AcceptedByEvery,
        AcceptedByNewer,
        Anything,
    }

    /// One server's entry text and what it is, for a round of `round`.
    fn variant(command: &str, rng: &mut Rng, control: bool, round: Round) -> (String, String) {
        let cmd = json!(command).to_string();
        let mut keys: Vec<(String, String)> = vec![
            ("type".into(), "\"local\"".into()),
            ("command".into(), format!("[{cmd}, \"serve\"]")),
        ];
        let mut what = Vec::new();
        if !control {
            for _ in 0..1 + rng.below(2) {
                use Round::*;
                let (k, v, needs) = match rng.below(18) {
                    0 => ("enabled", "true".to_string(), AcceptedByEvery),
                    1 => ("enabled", "false".into(), AcceptedByEvery),
                    2 => ("enabled", "\"no\"".into(), Anything),
                    3 => ("environment", "{}".into(), AcceptedByEvery),
                    4 => ("environment", "{\"A\": \"1\"}".into(), AcceptedByEvery),
                    5 => ("environment", "{\"A\": 5}".into(), Anything),
                    6 => ("timeout", "5000".into(), AcceptedByEvery),
                    7 => ("timeout", "-1".into(), Anything),
                    8 => (
                        "command",
                        format!("[{cmd}, \"serve\", \"--evil\"]"),
                        AcceptedByEvery,
                    ),
                    9 => ("command", format!("\"{command} serve\""), Anything),
                    10 => ("command", format!("[{cmd}]"), AcceptedByEvery),
                    11 => ("type", "\"remote\"".into(), Anything),
                    12 => ("foo", "1".into(), AcceptedByNewer),
                    13 => (
                        "command",
                        format!("[{}, \"ser\\u0076e\"]", escaped(command, rng)),
                        AcceptedByEvery,
                    ),
                    14 => (
                        "command",
                        "[\"{env:HOME}/x\", \"serve\"]".into(),
                        AcceptedByEvery,
                    ),
                    15 => ("cwd", "\"/tmp\"".into(), AcceptedByNewer),
                    16 => ("url", "\"http://127.0.0.1:9/mcp\"".into(), AcceptedByNewer),
                    _ => ("type", "\"LOCAL\"".into(), Anything),
                };
                if needs > round {
                    continue;
                }
                what.push(format!("{k}: {v}"));
                match keys.iter().position(|(key, _)| key == k) {
                    Some(i) => keys[i].1 = v,
                    None => keys.push((k.into(), v)),
                }
            }
        }
        let mut members: Vec<String> = keys.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
        if !control {
            match rng.below(6) {
                0 => {
                    members.reverse();
                    what.push("members reversed".into());
                }
                1 => {
                    // Another command first: JSON with comments keeps the last.
                    members.insert(0, "\"command\": [\"/nonexistent/evil\"]".into());
                    what.push("command given twice, ours last".into());
                }
                2 => {
                    members.push("\"command\": [\"/nonexistent/evil\"]".into());
                    what.push("command given twice, ours first".into());
                }
                3 => {
                    members.push("/* a comment */ \"enabled\": true,".into());
                    what.push("a comment and a trailing comma".into());
                }
                _ => {}
            }
        }
        (format!("{{{}}}", members.join(", ")), what.join(", "))
    }

    /// The file variants: each turns the `mcp` object's text into the whole file.
    const FILES: &[(&str, Wrap)] = &[
        ("plain", |s| {
            format!("{{\"$schema\": \"https://opencode.ai/config.json\", \"mcp\": {s}}}")
        }),
        ("a byte order mark", |s| format!("\u{feff}{{\"mcp\": {s}}}")),
        ("comments and a trailing comma", |s| {
            format!("// hand-edited\n{{\n  /* servers */ \"mcp\": {s},\n}}\n")
        }),
        ("mcp twice, empty last", |s| {
            format!("{{\"mcp\": {s}, \"mcp\": {{}}}}")
        }),
        ("mcp twice, empty first", |s| {
            format!("{{\"mcp\": {{}}, \"mcp\": {s}}}")
        }),
        ("a model of another type", |s| {
            format!("{{\"model\": 5, \"mcp\": {s}}}")
        }),
        ("an unknown top-level key", |s| {
            format!("{{\"mcp_deploy_test\": {{\"a\": [1, 2]}}, \"mcp\": {s}}}")
        }),
        ("a provider OpenCode takes", |s| {
            format!("{{\"provider\": {{\"x\": {{\"options\": {{}}}}}}, \"mcp\": {s}}}")
        }),
        ("a provider OpenCode refuses", |s| {
            format!("{{\"provider\": {{\"x\": {{\"options\": 5}}}}, \"mcp\": {s}}}")
        }),
        ("text after the document", |s| format!("{{\"mcp\": {s}}} x")),
    ];

    #[test]
    fn opencode_runs_what_verify_identity_passes_in_every_variant_of_its_config() {
        harness(&crate::harness::real_client("opencode"), "pinned");
    }

    /// The harness at the oldest supported release and one in the middle (issue 35, item 9).
    #[test]
    fn release_1_0_61() {
        harness(&compat_client("opencode", "1.0.61"), "1.0.61");
    }
    #[test]
    fn release_1_3_2() {
        harness(&compat_client("opencode", "1.3.2"), "1.3.2");
    }

    fn harness(opencode: &Path, release: &str) {
        let fleet = Fleet::of("opencode", opencode, PER_FILE);
        let config = fleet.w.opencode_config();
        fs::create_dir_all(config.parent().unwrap()).unwrap();
        let mut rng = Rng(SEED);
        let mut tally = Tally::default();
        for (file, wrap) in FILES {
            for round in [
                Round::AcceptedByEvery,
                Round::AcceptedByNewer,
                Round::Anything,
            ] {
                let mut members = Vec::new();
                let mut what = BTreeMap::new();
                for (i, n) in fleet.names.iter().enumerate() {
                    let (entry, said) = variant(&fleet.command(n), &mut rng, i < 2, round);
                    members.push(format!("{}: {entry}", json!(n)));
                    what.insert(n.clone(), said);
                }
                let text = wrap(&format!("{{{}}}", members.join(", ")));
                let report = fleet.report(&config, &text, file);
                // It may write into the file (a `$schema`): what it resolves is of these bytes.
                fs::write(&config, &text).unwrap();
                let listed = fleet
                    .w
                    .program(opencode)
                    .args(["debug", "config"])
                    .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                    .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                    .run();
                let seen: Value = match listed.code {
                    0 => {
                        serde_json::from_str(&listed.stdout[listed.stdout.find('{').unwrap_or(0)..])
                            .unwrap_or(Value::Null)
                    }
                    _ => Value::Null,
                };
                if std::env::var_os("DIFFERENTIAL_SHOW").is_some() {
                    eprintln!("{file} #{round:?}:\n{text}\n{listed}\n{report}");
                }
                for n in &fleet.names {
                    let passed = passed(&report, n);
                    let e = &seen["mcp"][n];
                    let runs = e["type"] == "local"
                        && e["enabled"] != false
                        && e["command"] == json!([fleet.command(n), "serve"])
                        && (e["environment"].is_null() || e["environment"] == json!({}))
                        && e["cwd"].is_null();
                    tally.add(
                        format!("{file} #{round:?}: {n} ({})", what[n]),
                        passed,
                        runs,
                    );
                }
            }
        }
        tally.finish(&format!("opencode {release}"), "opencode.jsonc");
    }
}

/// Gemini's side (issue 35, item 2): claude's entry and file variants (the same `mcpServers`
/// shape) in `~/.gemini/settings.json`, with a real gemini session in a trusted folder as the
/// oracle (`gemini -p`, an API key that reaches nothing: it starts every server it loads at
/// once, before its first request), judged by the recorder as claude's side is: a pass where
/// gemini does not start the declared command line, with the environment and directory it
/// gives an unmodified entry, fails the test. Not `gemini mcp list`: one server whose `args`
/// is a string makes the listing crash ("server.args?.join is not a function") before it
/// starts the servers after it, where a session starts them all (0.61.0; the first run of this
/// harness took the listing's word and saw 4 false passes that were the listing's).
#[test]
fn gemini_runs_what_verify_identity_passes_in_every_variant_of_its_config() {
    gemini_harness("pinned");
}

/// Gemini's harness at the oldest supported release and one in the middle (issue 35, item 9;
/// 0.35.3 gave the same figures as both, and is left to the compatibility run's core flow).
#[test]
fn gemini_0_10_0_runs_what_verify_identity_passes_in_every_variant_of_its_config() {
    gemini_harness("0.10.0");
}
#[test]
fn gemini_0_24_5_runs_what_verify_identity_passes_in_every_variant_of_its_config() {
    gemini_harness("0.24.5");
}

fn gemini_harness(release: &'static str) {
    session_harness(Session {
        client: "gemini",
        release,
        config: "home/.gemini/settings.json",
        env: &[
            ("GEMINI_API_KEY", "mcp-deploy-test-not-a-key"),
            ("GEMINI_CLI_NO_RELAUNCH", "true"),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        ],
        cwd: "work",
        shape: |_, entry| entry.to_string(),
    });
}

/// Qwen Code's side: gemini's harness on qwen's `~/.qwen/settings.json`, a `qwen -p` session
/// (an OpenAI-compatible endpoint on a closed port) as the oracle.
#[test]
fn qwen_runs_what_verify_identity_passes_in_every_variant_of_its_config() {
    qwen_harness("pinned");
}

/// Qwen Code's harness at the oldest supported release (issue 35, item 9; 0.23.4 gave the
/// same figures, and is left to the compatibility run's core flow).
#[test]
fn qwen_0_21_2_runs_what_verify_identity_passes_in_every_variant_of_its_config() {
    qwen_harness("0.21.2");
}

fn qwen_harness(release: &'static str) {
    session_harness(Session {
        client: "qwen",
        release,
        config: "home/.qwen/settings.json",
        env: &[
            ("OPENAI_API_KEY", "mcp-deploy-test-not-a-key"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("OPENAI_MODEL", "mcp-deploy-test"),
            ("GEMINI_CLI_NO_RELAUNCH", "true"),
            ("QWEN_CODE_NO_RELAUNCH", "true"),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
            ("QWEN_CODE_TRUST_WORKSPACE", "true"),
        ],
        cwd: "work",
        shape: |_, entry| entry.to_string(),
    });
}

/// Grok's side: the harness on `~/.grok/settings.json`, a `grok -p` session started in the
/// home directory (where mcp-deploy's registrations are the project's too, docs/clients.md)
/// with an API on a closed port as the oracle: it starts its servers, then fails its request
/// and exits.
#[test]
fn grok_runs_what_verify_identity_passes_in_every_variant_of_its_config() {
    session_harness(Session {
        client: "grok",
        release: "pinned",
        config: "home/.grok/settings.json",
        env: &[
            ("GROK_API_KEY", "mcp-deploy-test-not-a-key"),
            ("GROK_BASE_URL", "http://127.0.0.1:9/v1"),
        ],
        cwd: "home",
        // grok's own shape around claude's entry: `{"type": "stdio", ...entry}` as the
        // transport (a `type` the entry sets itself comes later, and wins).
        shape: |name, entry| {
            format!(
                "{{\"name\": {}, \"transport\": {{\"type\": \"stdio\", {}}}",
                json!(name),
                entry.trim().trim_start_matches('{')
            )
        },
    });
}

/// A client judged by a session of its own ([`session`]).
struct Session {
    client: &'static str,
    /// `pinned` (node_modules) or a release of the compatibility cache.
    release: &'static str,
    /// Its settings file, under the world's root.
    config: &'static str,
    /// The variables its session runs with.
    env: &'static [(&'static str, &'static str)],
    /// The directory its session runs in, under the world's root.
    cwd: &'static str,
    /// One server's entry in the file, from claude's entry text: the same (gemini, qwen),
    /// or inside grok's `{"name", "transport"}`.
    shape: fn(&str, &str) -> String,
}

/// claude's entry and file variants in the client's settings file, shaped its way, judged
/// against a session of the real client ([`session`]).
fn session_harness(s: Session) {
    let Session {
        client,
        release,
        config,
        env,
        cwd,
        shape,
    } = s;
    let binary = match release {
        "pinned" => crate::harness::real_client(client),
        older => compat_client(client, older),
    };
    let fleet = Fleet::of(client, &binary, PER_FILE);
    let config = fleet.w.root().join(config);
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    let mut rng = Rng(SEED);
    let mut tally = Tally::default();
    let rounds = FILES.iter().flat_map(|f| [(f, true), (f, false)]);
    for ((file, wrap), well_formed) in rounds {
        let (text, what) = fleet.file_of(*wrap, &mut rng, well_formed, shape);
        let report = fleet.report(&config, &text, file);
        fleet.forget_starts();
        fs::write(&config, &text).unwrap();
        let passed_here: Vec<&str> = fleet
            .names
            .iter()
            .map(String::as_str)
            .filter(|n| passed(&report, n))
            .collect();
        let said = session(&fleet, &binary, env, cwd, &passed_here);
        if std::env::var_os("DIFFERENTIAL_SHOW").is_some() {
            eprintln!("{file}:\n{said}\n{report}");
        }
        for n in &fleet.names {
            tally.add(
                format!(
                    "{file} (well-formed only: {well_formed}): {n} ({})",
                    what[n]
                ),
                passed(&report, n),
                fleet.ran_as_declared(n),
            );
        }
    }
    tally.finish(
        &format!("{client} {release}"),
        config.file_name().unwrap().to_str().unwrap(),
    );
}

/// A session of `binary` (`-p hi`, with `env`) in the fleet's world, stopped once it has
/// started the two controls and every server of `passed` (what verify-identity passed: only
/// those can be false passes, so a slow start on a loaded machine is waited for, not counted)
/// and half a second more has passed (gemini and qwen start the servers they load together),
/// or after 20 s (a file it does not load): what it printed.
fn session(
    fleet: &Fleet,
    binary: &Path,
    env: &[(&str, &str)],
    cwd: &str,
    passed: &[&str],
) -> String {
    let mut child = fleet
        .w
        .program(binary)
        .args(["-p", "hi"])
        .envs(env)
        .current_dir(fleet.w.root().join(cwd))
        .spawn();
    let started = |n: &str| !records(&fleet.root.join(n)).is_empty();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline
        && !(started("v0") && started("v1") && passed.iter().all(|n| started(n)))
        && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}
