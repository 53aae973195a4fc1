//! Readers: turn an input file into [`Item`]s, each a claimed result with the citation that
//! accompanies it and a [`Locator`] a person can follow.
//!
//! The format is detected from content ([`detect`]), never from the file name. Readers know
//! nothing of the catalog or the engine: they only find and pair things. One malformed part of a
//! file becomes a [`Finding`]; the rest of the file is still read.

use serde::Serialize;
use serde_json::Value;

pub mod a2a;
pub mod agui;
pub mod plain;

/// The media type of an Upperhand citation Part.
pub const CITATION_MEDIA_TYPE: &str = "application/vnd.upperhand.citations+json";

/// Where something was found in an input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Locator {
    /// The input file (`-` for standard input).
    pub file: String,
    /// 1-based line in the file, when the format is line-based (JSON lines, SSE).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The A2A task id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The A2A message id, or the AG-UI message id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The A2A artifact id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// Index of the Part within its message or artifact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part_index: Option<usize>,
    /// Index of the event in an AG-UI log (0-based, after CHUNK expansion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_index: Option<usize>,
    /// JSON pointer to the citation (or the offending value) within the document or line.
    pub pointer: String,
}

impl std::fmt::Display for Locator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(t) = &self.task_id {
            write!(f, " task {t}")?;
        }
        if let Some(m) = &self.message_id {
            write!(f, " message {m}")?;
        }
        if let Some(a) = &self.artifact_id {
            write!(f, " artifact {a}")?;
        }
        if let Some(p) = self.part_index {
            write!(f, " part {p}")?;
        }
        if let Some(e) = self.event_index {
            write!(f, " event {e}")?;
        }
        if !self.pointer.is_empty() {
            write!(f, " {}", self.pointer)?;
        }
        Ok(())
    }
}

/// One claim to settle: a citation and the result it accompanies.
#[derive(Debug, Clone, Default)]
pub struct Item {
    /// Where the citation was found.
    pub locator: Locator,
    /// The quantitative result the citation accompanies (its numeric leaves are the claim);
    /// `None` when the citation came alone.
    pub result: Option<Value>,
    /// The citation Part's data; `None` for a quantitative result without a citation.
    pub citation: Option<Value>,
    /// True when the citation was recognised by its shape, not by its media type.
    pub by_shape: bool,
}

/// How serious a finding is, in the words of the specifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// The input breaks a MUST of its specification, or cannot be read.
    Must,
    /// The input breaks a SHOULD.
    Should,
    /// Worth knowing; breaks nothing.
    Note,
}

/// Something wrong with an input that is not about one claim's numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// Where.
    pub locator: Locator,
    /// The rule broken, e.g. `upperhand/conformance`, `ag-ui/stream`, `moca/§3-placement`.
    pub rule: String,
    /// MUST, SHOULD or NOTE.
    pub level: Level,
    /// What was wrong, in words.
    pub message: String,
}

/// A turn of the conversation, kept so the HTML report can show the claims in place.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Turn {
    /// `user`, `agent`/`assistant`, `tool`.
    pub role: String,
    /// The turn's text (text Parts joined, or the assistant message's content).
    pub text: String,
    /// Indices into [`Document::items`] of the claims made in this turn.
    pub items: Vec<usize>,
    /// The message id, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}

/// The input formats recite reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// A2A v0.3 (Parts discriminated by `kind`).
    A2aV03,
    /// A2A v1.0 (ProtoJSON).
    A2aV10,
    /// An AG-UI event log.
    Agui,
    /// Plain JSON or JSON lines of `{result, citation}`, or a bare citation.
    Plain,
}

/// One input file, read.
#[derive(Debug, Clone)]
pub struct Document {
    /// The file name as given (`-` for standard input).
    pub file: String,
    /// The detected format.
    pub format: Format,
    /// The claims found, in document order.
    pub items: Vec<Item>,
    /// What was wrong with the input apart from the claims' numbers (conformance, malformed
    /// parts, stream rules, MOCA rules).
    pub findings: Vec<Finding>,
    /// The conversation, for the HTML report.
    pub turns: Vec<Turn>,
    /// The AG-UI events, when the input is an AG-UI log (for the MOCA checks and the report).
    pub events: Vec<agui::Event>,
}
