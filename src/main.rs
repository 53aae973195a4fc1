//! The `recite` command line. Each subcommand lives in `src/cmd/`, its usage at the top.

mod cmd;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc, not glibc's malloc: a run's claims are small blocks allocated on one thread and
/// freed on another, where glibc's arenas consolidated and unlinked chunks for a quarter of the
/// CPU (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
