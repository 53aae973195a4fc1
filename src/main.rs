//! The `recite` command line. Each subcommand lives in `src/cmd/`, its usage at the top.

mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cmd::Cli::parse();
    match cmd::run(cli) {
        Ok(code) => code,
        Err(e) => {
            cmd::warn(&recite::objstore::redact(&format!("recite: {e:#}")));
            ExitCode::from(2)
        }
    }
}
