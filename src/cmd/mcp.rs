//! `recite mcp`: the MCP tool server over standard input and output (`recite_serve::mcp`).

const USAGE: &str = "\
Examples:
  recite mcp                          the bundled data layer
  recite mcp --data /srv/surveys      another one

  An MCP host's configuration (Claude Desktop, an IDE, an agent framework):
    { \"mcpServers\": { \"recite\": { \"command\": \"recite\", \"args\": [\"mcp\", \"--data\", \"/srv/surveys\"] } } }

Tools: verify_citation {citation, result?, claims?}, check_transcript {transcript | text, name?},
list_catalog, list_extractors. verify_citation and check_transcript answer with recite's JSON
report as structured output (schema: docs/report.schema.json), the same report `recite verify
--format json` and `recite check --format json` write. Resources: recite://catalog and
recite://extractors (the cases of the workbench's ledger are resources of `recite serve` only).
Standard output carries only the protocol; messages go to standard error. The same tools are
served over streamable HTTP at /mcp by `recite serve`. docs/service.md.";

use std::process::ExitCode;

use anyhow::Result;

use super::{DataArgs, SettleArgs};

/// Serve the MCP tools (verify a citation, check a transcript, list the catalog) over
/// standard input and output, for an MCP host.
#[derive(Debug, clap::Args)]
#[command(after_help = USAGE)]
pub struct Args {
    #[command(flatten)]
    limits: super::serve::Limits,
    #[command(flatten)]
    settle: SettleArgs,
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    cache: super::cache::CacheArgs,
    #[command(flatten)]
    engine: super::EngineArgs,
}

/// Runs `recite mcp`.
pub fn run(a: Args) -> Result<ExitCode> {
    let backend = super::serve::backend(&a.data, &a.settle, &a.cache, &a.engine)?;
    recite_serve::mcp_stdio(backend, a.limits.limits())?;
    Ok(ExitCode::SUCCESS)
}
