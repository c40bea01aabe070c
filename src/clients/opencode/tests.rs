use super::confirm::{absolute_file_refs, masked_eq, substitute};
use super::shadows::could_become;
use super::*;
use crate::clients::tests::{assert_refused, entry};
use serde_json::json;

#[test]
fn claude_shape_maps_both_ways() {
    for (claude, oc) in [
        (
            json!({"command":"/x","args":["a b","${T}"],"env":{"K":"Bearer ${TOKEN}"}}),
            json!({"type":"local","command":["/x","a b","{env:T}"],
                   "environment":{"K":"Bearer {env:TOKEN}"},"enabled":true}),
        ),
        (
            json!({"command":"/x","args":[]}),
            json!({"type":"local","command":["/x"],"enabled":true}),
        ),
        (
            json!({"type":"http","url":"https://h/${P}","headers":{"A":"${K}"}}),
            json!({"type":"remote","url":"https://h/{env:P}","headers":{"A":"{env:K}"},
                   "enabled":true}),
        ),
    ] {
        assert_eq!(to_opencode("n", &entry(claude.clone())).unwrap(), oc);
        assert_eq!(to_claude(&oc), claude);
    }
    // What a check must see is kept.
    assert_eq!(
        to_claude(&json!({"type":"local","command":["/x"],"enabled":false,"timeout":5})),
        json!({"command":"/x","args":[],"enabled":false,"timeout":5})
    );
    // A restore puts back OpenCode's own keys.
    assert_eq!(
        to_opencode("n", &entry(json!({"command":"/x","enabled":false}))).unwrap(),
        json!({"type":"local","command":["/x"],"enabled":false})
    );
    // Not mappable exactly: OpenCode's shape, which no check accepts.
    for raw in [
        json!({"type":"local","command":["/x","${T}"]}),
        json!({"type":"local","command":["/x"],"environment":{"A":"{file:/s}"}}),
        json!({"type":"local","command":"/x"}),
        json!({"type":"local","command":["/x"],"args":["a"]}),
    ] {
        assert_eq!(to_claude(&raw), raw);
    }
}

#[test]
fn file_references_of_the_copy_point_at_the_original_files() {
    let (d, h) = (Path::new("/c/oc"), Path::new("/h"));
    assert_eq!(
        absolute_file_refs(
            r#"{"a": "{file:./k}", "b": "{file:~/k}", "c": "{file:/abs}", "d": "{file:k}x"}"#,
            d,
            h
        ),
        r#"{"a": "{file:/c/oc/./k}", "b": "{file:/h/k}", "c": "{file:/abs}", "d": "{file:/c/oc/k}x"}"#
    );
    assert_eq!(absolute_file_refs("{file:x", d, h), "{file:x");
    assert_eq!(
        absolute_file_refs("{file:./k}", Path::new("/a\"b"), h),
        "{file:./k}"
    );
}

#[test]
fn a_key_opencode_substitutes_may_become_the_name() {
    for (key, target, want) in [
        ("codetools{env:X}", "codetools", true),
        ("code{env:X}tools", "codetools", true),
        ("{file:/n}", "codetools", true),
        ("{env:A}to{env:B}", "codetools", true),
        ("x{env:A}", "codetools", false),
        ("{env:A}x", "codetools", false),
        ("mc{env:A}p", "mcp", true),
        ("codetools", "codetools", false),
        ("{env:unclosed", "codetools", false),
    ] {
        assert_eq!(could_become(key, target), want, "{key} -> {target}");
    }
}

#[test]
fn project_files_are_looked_for_up_to_the_git_root_else_to_the_root() {
    // As the real OpenCode 1.18.33 does: a project opencode.json above the git root is not
    // read; outside a repository every directory up to `/` is.
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("repo/a/b");
    std::fs::create_dir_all(&sub).unwrap();
    for d in ["objects", "refs"] {
        std::fs::create_dir_all(dir.path().join("repo/.git").join(d)).unwrap();
    }
    std::fs::write(dir.path().join("repo/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    // Without a commit, 1.0.61 takes no root: up to `/`.
    assert_eq!(project_dirs(&sub).last().unwrap(), Path::new("/"));
    std::fs::create_dir_all(dir.path().join("repo/.git/refs/heads")).unwrap();
    std::fs::write(dir.path().join("repo/.git/refs/heads/main"), "0".repeat(40)).unwrap();
    let found = project_dirs(&sub);
    assert_eq!(found.last().unwrap(), &dir.path().join("repo"));
    assert_eq!(found.len(), 3);
    let free = dir.path().join("free");
    std::fs::create_dir(&free).unwrap();
    assert_eq!(project_dirs(&free).last().unwrap(), Path::new("/"));
}

#[test]
fn the_resolved_entry_is_compared_as_opencode_prints_it() {
    let env = vec![("HOME".to_string(), "/h".to_string())];
    assert_eq!(
        substitute(
            &json!({"c": ["{env:HOME}/x", "{env:UNSET}y", "{env:"]}),
            &env
        ),
        json!({"c": ["/h/x", "y", "{env:"]})
    );
    let written = json!({"url": "u", "headers": {"Authorization": "Bearer t"}});
    assert!(masked_eq(
        &json!({"url": "u", "headers": {"Authorization": "***"}}),
        &written
    ));
    assert!(!masked_eq(
        &json!({"url": "u", "headers": {"Authorization": "***", "X": "***"}}),
        &written
    ));
    assert!(!masked_eq(&json!({"url": "***x"}), &json!({"url": "u"})));
}

#[test]
fn what_opencode_cannot_hold_is_refused_without_values() {
    assert_refused(
        |e| to_opencode("n", e),
        [
            (
                json!({"command":"/x","env":{"T":"${T:-hunter2}"}}),
                "NAME:-default",
            ),
            (json!({"command":"/x","args":["{env:HOME}"]}), "argument 1"),
            (
                json!({"command":"/x","env":{"T":"{file:/etc/hunter2}"}}),
                "env \"T\"",
            ),
            (json!({"type":"sse","url":"https://h"}), "cannot be pinned"),
            (
                json!({"command":"/x","description":"d"}),
                "no key \"description\"",
            ),
        ],
    );
    let err = to_opencode("__proto__", &entry(json!({"command":"/x"}))).unwrap_err();
    assert!(err.to_string().contains("would not run it"), "{err}");
    to_opencode("constructor", &entry(json!({"command":"/x"}))).unwrap();
}
