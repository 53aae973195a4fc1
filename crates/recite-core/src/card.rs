//! `recite card AGENT_CARD.json`: does an A2A Agent Card (v0.3 or v1.0) announce Upperhand
//! citations the way the specification's "Card declaration" section asks?
//!
//! - SHOULD list the citations media type in `defaultOutputModes` (rule
//!   `upperhand/card-output-modes`). A v1.0 card that lists it only in a skill's `outputModes`
//!   still tells callers citations come from that skill, so it passes with a NOTE saying where.
//! - MAY declare the extension in `capabilities.extensions[]`; when it does, the declaration is
//!   declarative-only, so `required: true` is a finding (rule `upperhand/card-extension`).
//!
//! Fields are looked up under their camelCase and snake_case spellings (ProtoJSON accepts both).

use serde::Serialize;
use serde_json::Value;

use crate::input::{Finding, Level, Locator};
use crate::json::{CITATION_MEDIA_TYPE, is_citation_media_type, pointer_push};

/// The URI of the Upperhand Citations v1 extension.
pub const EXTENSION_URI: &str = "https://standards.upperhandai.com/ext/citations/v1";
/// Rule of findings about the media type in the card's output modes.
pub const RULE_OUTPUT_MODES: &str = "upperhand/card-output-modes";
/// Rule of findings about the extension declaration.
pub const RULE_EXTENSION: &str = "upperhand/card-extension";

/// What a card declares, and what is wrong with it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CardReport {
    /// `0.3`, `1.0`, or `unknown`, from the card's shape (`protocolVersion` / `url` in v0.3,
    /// `supportedInterfaces` in v1.0).
    pub version: String,
    /// JSON pointers to the output-mode lists that name the citations media type
    /// (`/defaultOutputModes`, `/skills/2/outputModes`); empty when none does.
    pub media_type_declared: Vec<String>,
    /// Pointer to the extension declaration in `capabilities.extensions`, when there is one.
    pub extension_declared: Option<String>,
    /// The findings, as [`check_card`] returns them.
    pub findings: Vec<Finding>,
}

/// The findings of [`card_report`] alone.
pub fn check_card(file: &str, card: &Value) -> Vec<Finding> {
    card_report(file, card).findings
}

/// Checks an Agent Card's Upperhand declarations.
pub fn card_report(file: &str, card: &Value) -> CardReport {
    let mut report = CardReport {
        version: version(card).to_string(),
        media_type_declared: Vec::new(),
        extension_declared: None,
        findings: Vec::new(),
    };
    if !card.is_object() {
        let message = "an Agent Card must be a JSON object";
        report.findings.push(Finding::new(Locator::at(file, ""), "input/unrecognised", Level::Must, message));
        return report;
    }
    output_modes(file, card, &mut report);
    extension(file, card, &mut report);
    report
}

/// The first of `names` present in `v`, with the name found (for pointers).
fn field<'a>(v: &'a Value, names: &[&'static str]) -> Option<(&'static str, &'a Value)> {
    names.iter().find_map(|n| v.get(*n).map(|x| (*n, x)))
}

fn version(card: &Value) -> &'static str {
    if field(card, &["supportedInterfaces", "supported_interfaces"]).is_some() {
        "1.0"
    } else if ["protocolVersion", "url", "preferredTransport"].iter().any(|k| card.get(*k).is_some()) {
        "0.3"
    } else {
        "unknown"
    }
}

fn lists_media_type(modes: &Value) -> bool {
    modes.as_array().is_some_and(|a| a.iter().filter_map(Value::as_str).any(is_citation_media_type))
}

fn output_modes(file: &str, card: &Value, report: &mut CardReport) {
    let default = field(card, &["defaultOutputModes", "default_output_modes"]);
    let in_default = default.is_some_and(|(_, m)| lists_media_type(m));
    let default_ptr = default.map_or_else(String::new, |(name, _)| format!("/{name}"));
    if in_default {
        report.media_type_declared.push(default_ptr.clone());
    }
    let skills = field(card, &["skills"]).and_then(|(_, s)| s.as_array());
    for (i, skill) in skills.into_iter().flatten().enumerate() {
        if let Some((name, _)) =
            field(skill, &["outputModes", "output_modes"]).filter(|(_, m)| lists_media_type(m))
        {
            report.media_type_declared.push(pointer_push(&pointer_push("/skills", i), name));
        }
    }
    if in_default {
        return;
    }
    let at = Locator::at(file, default_ptr);
    if report.media_type_declared.is_empty() {
        let message = format!(
            "defaultOutputModes does not list {CITATION_MEDIA_TYPE}: callers cannot know citations come back"
        );
        report.findings.push(Finding::new(at, RULE_OUTPUT_MODES, Level::Should, message));
    } else {
        let message = format!(
            "{CITATION_MEDIA_TYPE} is listed only in skill output modes ({}), not in defaultOutputModes",
            report.media_type_declared.join(", ")
        );
        report.findings.push(Finding::new(at, RULE_OUTPUT_MODES, Level::Note, message));
    }
}

fn extension(file: &str, card: &Value, report: &mut CardReport) {
    let Some(caps) = card.get("capabilities") else { return };
    let Some((_, exts)) = field(caps, &["extensions"]) else { return };
    let ptr = "/capabilities/extensions";
    let Some(exts) = exts.as_array() else {
        let message = "capabilities.extensions must be an array";
        report.findings.push(Finding::new(Locator::at(file, ptr), RULE_EXTENSION, Level::Must, message));
        return;
    };
    for (i, ext) in exts.iter().enumerate() {
        let Some(uri) = ext.get("uri").and_then(Value::as_str) else { continue };
        let ext_ptr = pointer_push(ptr, i);
        if uri.trim_end_matches('/') != EXTENSION_URI {
            if uri.contains("upperhandai.com/ext/citations") {
                let message = format!("extension URI {uri} is not {EXTENSION_URI}");
                let at = Locator::at(file, pointer_push(&ext_ptr, "uri"));
                report.findings.push(Finding::new(at, RULE_EXTENSION, Level::Should, message));
            }
            continue;
        }
        report.extension_declared = Some(ext_ptr.clone());
        match ext.get("required") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => {}
            Some(other) => {
                let message = format!(
                    "the citations extension is declarative-only: required must be false or absent, found {other}"
                );
                let at = Locator::at(file, pointer_push(&ext_ptr, "required"));
                report.findings.push(Finding::new(at, RULE_EXTENSION, Level::Must, message));
            }
        }
    }
}
