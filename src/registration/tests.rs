//! The install transaction over the codex, gemini, grok and copilot client modules, against the real pinned
//! CLIs, in the scratch homes of the clients' own tests (`crate::clients::tests`).

use crate::clients::tests::{assert_round_trip, entry, Scratch};
use crate::clients::ClientError;
use crate::registration::transaction::{self, Change, Transaction};
use serde_json::{json, Value};

/// The installer's transaction over either module: an update followed by an add the client
/// cannot hold is rolled back, and the updated name is back at its previous entry.
fn transaction_rolls_back(client_name: &str) {
    let s = Scratch::new();
    let c = s.open(client_name);
    let old = json!({"command": "/old", "args": ["x y"], "env": {"T": "${T}"}});
    c.add("a", &entry(old.clone())).unwrap();
    let refused = match client_name {
        "codex" => json!({"type": "sse", "url": "http://h/sse"}),
        "grok" => json!({"type": "http", "url": "http://h/mcp"}),
        // Copilot trims white space around an env value: it would store another one.
        "copilot" => json!({"command": "/b", "env": {"K": " v"}}),
        _ => json!({"command": "/b", "env": {"K": "v=w"}}),
    };
    let obj = |v: &Value| v.as_object().unwrap().clone();
    let changes = vec![
        Change {
            name: "a".into(),
            previous: Some(obj(&old)),
            target: Some(obj(&json!({"command": "/new"}))),
        },
        Change {
            name: "b".into(),
            previous: None,
            target: Some(obj(&refused)),
        },
    ];
    let ledger = s.dir.path().join("ledger.ndjson");
    let mut tx = Transaction::begin(c.as_ref(), changes, &ledger, &|_| ()).unwrap();
    let journal = transaction::journal_path(c.as_ref()).unwrap();
    assert!(journal.exists());
    let err = tx.apply().unwrap_err();
    assert!(
        matches!(err, ClientError::Unrepresentable { .. }),
        "{err:?}"
    );
    let report = tx.roll_back(err).to_string();
    assert!(
        report.contains("a: restored to its previous entry"),
        "{report}"
    );
    assert_round_trip(c.as_ref(), "a", &old);
    assert!(c.observe("b").unwrap().is_none());
    assert!(
        !journal.exists(),
        "every name is restored, so the journal goes"
    );
}

#[test]
fn codex_transaction_rolls_back() {
    transaction_rolls_back("codex");
}

#[test]
fn gemini_transaction_rolls_back() {
    transaction_rolls_back("gemini");
}

#[test]
fn grok_transaction_rolls_back() {
    transaction_rolls_back("grok");
}

#[test]
fn copilot_transaction_rolls_back() {
    transaction_rolls_back("copilot");
}

/// The failure a rollback carries in these tests: the client's own error.
impl transaction::Failure for ClientError {
    fn help(&self) -> Option<String> {
        ClientError::help(self)
    }
}
