//! `completions`: the shell completion script, generated from the clap definition.

use crate::cli::{manual, CompletionsArgs};
use crate::error::Error;
use crate::exit::Exit;
use crate::output::{emit, Style};

pub(crate) fn run(args: &CompletionsArgs, style: &Style) -> Result<Exit, Error> {
    let mut buf = Vec::new();
    // The command as parsing and --help have it (manual::command: each --format's values,
    // and which values complete to no file names).
    clap_complete::generate(args.shell, &mut manual::command(), "mcp-deploy", &mut buf);
    let mut script = String::from_utf8_lossy(&buf).into_owned();
    if args.shell == clap_complete::Shell::Bash {
        // clap_complete 4.6's bash script never completes a subcommand's options when the bin
        // name holds a hyphen: the loop spells the state `mcp__deploy__subcmd__install`, the
        // case arms `mcp__subcmd__deploy__subcmd__install` (clap-rs/clap#6421, #6529, open).
        // Spell the arms the way the loop does; a no-op once clap fixes it. Pinned by the
        // test bash_completion_completes_a_subcommands_options.
        script = script.replace("mcp__subcmd__deploy", "mcp__deploy");
    }
    emit(style, &script);
    Ok(Exit::Success)
}
