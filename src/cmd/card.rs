//! `recite card`: check an A2A Agent Card's Upperhand Citations declarations.

const USAGE: &str = "\
Examples:
  recite card agent-card.json
  recite card agent-card.json --format json --output card-report.json
  curl -s https://agent.example/.well-known/agent-card.json | recite card -

Upperhand Citations v1 asks an agent to list application/vnd.upperhand.citations+json in
defaultOutputModes (SHOULD) and lets it declare the extension
https://standards.upperhandai.com/ext/citations/v1 in capabilities.extensions[] with
required: false (MAY). Both A2A v0.3 and v1.0 cards are read.
Exit status: 0 when no MUST or SHOULD finding, 1 otherwise, 2 on I/O errors.";

use std::process::ExitCode;

use anyhow::Result;

use recite::card;
use recite::input::Level;

use super::{OutputArgs, TextOrJson};

/// Check an A2A Agent Card's Upperhand Citations declarations.
#[derive(Debug, clap::Args)]
#[command(after_help = USAGE)]
pub struct Args {
    /// The Agent Card (JSON), or - for standard input.
    #[arg(value_name = "AGENT_CARD.json")]
    card: String,
    /// Report format.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    format: TextOrJson,
    /// The same as `--format json` (the flag's older spelling).
    #[arg(long, hide = true, conflicts_with = "format")]
    json: bool,
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `recite card`.
pub fn run(a: Args) -> Result<ExitCode> {
    let identities = super::files::identities([a.card.as_str()]);
    a.output.check(&identities)?;
    let bytes = super::read_input(&a.card)?;
    let v: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| anyhow::anyhow!("{}: not valid JSON: {e}", a.card))?;
    let r = card::card_report(&a.card, &v);
    let mut o = String::new();
    if a.json || a.format == TextOrJson::Json {
        o = serde_json::to_string_pretty(&r)?;
        o.push('\n');
    } else {
        say!(o, "{} (A2A {})", a.card, r.version);
        if r.media_type_declared.is_empty() {
            say!(o, "  citations media type: not declared");
        } else {
            say!(o, "  citations media type: declared at {}", r.media_type_declared.join(", "));
        }
        match &r.extension_declared {
            Some(p) => say!(o, "  citations extension: declared at {p}"),
            None => say!(o, "  citations extension: not declared (optional)"),
        }
        for f in &r.findings {
            say!(o, "  {} {}: {}", f.level, f.rule, f.message);
        }
    }
    a.output.write(&o, &identities)?;
    let failed = r.findings.iter().any(|f| matches!(f.level, Level::Must | Level::Should));
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
