//! `completions SHELL` and `man`: generated from the clap definition, checked by the shells
//! and roff conventions that will read them.

use std::fs;

use crate::harness::*;

#[test]
fn bash_completion_names_commands_and_options_and_parses() {
    let w = World::new();
    let r = w.run(&["completions", "bash"]);
    r.code(0)
        .stdout_has("verify-identity")
        .stdout_has("--expect-commit")
        .stdout_has("--handshake");
    let script = w.root().join("mcp-deploy.bash");
    fs::write(&script, &r.stdout).unwrap();
    w.run_program(
        std::path::Path::new("/bin/bash"),
        &["-n", script.to_str().unwrap()],
        &[],
    )
    .code(0);
}

#[test]
fn bash_completion_completes_a_subcommands_options() {
    // Pins the workaround for clap-rs/clap#6421: with a hyphenated bin name, clap_complete's
    // bash script completed nothing after a subcommand.
    let w = World::new();
    let r = w.run(&["completions", "bash"]);
    let script = w.root().join("mcp-deploy.bash");
    fs::write(&script, &r.stdout).unwrap();
    let complete = |words: &str, cur: &str, prev: &str| {
        let probe = format!(
            "source '{}'\n\
             f=$(complete -p mcp-deploy | sed -E 's/.*-F ([^ ]+).*/\\1/')\n\
             COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n\
             \"$f\" mcp-deploy '{cur}' '{prev}'\n\
             echo \"${{COMPREPLY[*]}}\"\n",
            script.display()
        );
        let r = w.run_program(std::path::Path::new("/bin/bash"), &["-c", &probe], &[]);
        r.code(0);
        r.stdout.trim().to_string()
    };
    assert_eq!(
        complete("mcp-deploy ver", "ver", "mcp-deploy"),
        "verify-identity verify-vendor"
    );
    assert_eq!(
        complete(
            "mcp-deploy verify-identity --expect-c",
            "--expect-c",
            "verify-identity"
        ),
        "--expect-commit"
    );
    assert_eq!(
        complete("mcp-deploy manifest verify --js", "--js", "verify"),
        "--json"
    );
}

#[test]
fn every_supported_shell_gets_a_script_and_others_are_refused() {
    let w = World::new();
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let r = w.run(&["completions", shell]);
        r.code(0)
            .stdout_has("verify-identity")
            .stdout_has("expect-commit");
    }
    w.run(&["completions", "tcsh"])
        .code(2)
        .stderr_has("possible values: bash, elvish, fish, powershell, zsh");
}

/// The first roff request after clap_mangen's preamble (`.ie`/`.el`, which define the `\*(Aq`
/// quote string) must be the title.
fn title_line(page: &str) -> &str {
    page.lines()
        .find(|l| !l.starts_with(".ie ") && !l.starts_with(".el "))
        .unwrap_or_default()
}

#[test]
fn man_page_is_titled_and_lists_the_commands() {
    let w = World::new();
    let r = w.run(&["man"]);
    r.code(0)
        .stdout_has("install")
        .stdout_has("verify\\-identity");
    assert!(r.stdout.starts_with('.'), "{}", r.shown);
    assert!(
        title_line(&r.stdout).starts_with(".TH mcp-deploy 1 "),
        "{}",
        r.shown
    );
    // Every page the top-level one refers to, e.g. mcp-deploy-install(1), can be had.
    let install = w.run(&["man", "install"]);
    install.code(0).stdout_has("\\-\\-expect\\-commit");
    assert!(
        title_line(&install.stdout).starts_with(".TH mcp-deploy-install 1 "),
        "{}",
        install.shown
    );
    let nested = w.run(&["man", "manifest", "verify"]);
    assert!(
        title_line(&nested.stdout).starts_with(".TH mcp-deploy-manifest-verify 1 "),
        "{}",
        nested.shown
    );
    w.run(&["man", "nope"])
        .code(2)
        .stderr_has("no command \"nope\" has a man page");
}

/// Issue 36.10: bash completion of `--server` offered the working directory's file names
/// (clap_complete's default for a value without a hint), and install's `--format` offered
/// prometheus, which install refuses.
#[test]
fn bash_completion_offers_no_file_names_for_a_server_and_only_the_formats_a_command_takes() {
    let w = World::new();
    let r = w.run(&["completions", "bash"]);
    let script = w.root().join("mcp-deploy.bash");
    fs::write(&script, &r.stdout).unwrap();
    let dir = w.root().join("cwd");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("codefile.txt"), "").unwrap();
    let complete = |words: &str, cur: &str, prev: &str| {
        let probe = format!(
            "cd '{}'\nsource '{}'\n\
             f=$(complete -p mcp-deploy | sed -E 's/.*-F ([^ ]+).*/\\1/')\n\
             COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n\
             \"$f\" mcp-deploy '{cur}' '{prev}' 2>/dev/null\n\
             echo \"${{COMPREPLY[*]}}\"\n",
            dir.display(),
            script.display()
        );
        let r = w.run_program(std::path::Path::new("/bin/bash"), &["-c", &probe], &[]);
        r.code(0);
        r.stdout.trim().to_string()
    };
    for (words, prev) in [
        ("mcp-deploy install --server co", "--server"),
        ("mcp-deploy promote --release co", "--release"),
        ("mcp-deploy install --name-suffix co", "--name-suffix"),
    ] {
        let got = complete(words, "co", prev);
        assert!(!got.contains("codefile.txt"), "{words}: {got}");
    }
    // A path still completes to files.
    assert_eq!(
        complete("mcp-deploy install --config co", "co", "--config"),
        "codefile.txt"
    );
    assert_eq!(
        complete("mcp-deploy install --format ''", "", "--format"),
        "human json junit github"
    );
    assert_eq!(
        complete("mcp-deploy status --format ''", "", "--format"),
        "human json junit github prometheus"
    );
}
