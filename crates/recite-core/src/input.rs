//! What recite finds in an input, as plain data: where ([`Locator`]), what was wrong
//! ([`Finding`] at a [`Level`]), the conversation ([`Turn`]) and the detected [`Format`].
//!
//! The readers (`transcript/`), the MOCA checks and the reports all depend on this module and
//! none of it depends on them, so reports import no reader. It builds without the `engine`
//! feature (the fuzz targets use it).

use serde::Serialize;

/// Where something was found in an input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Locator {
    /// The input file (`-` for standard input).
    pub file: String,
    /// 1-based line in the file, when the format is line-based (JSON lines, SSE), or where
    /// unreadable input was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column (in bytes) within `line`, for input that could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// The A2A task id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The A2A message id, or the AG-UI message id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The A2A artifact id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// Index of the Part within its message or artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_index: Option<usize>,
    /// Index of the event in an AG-UI log (0-based, after CHUNK expansion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_index: Option<usize>,
    /// JSON pointer to the citation (or the offending value) within the document or line.
    pub pointer: String,
}

impl std::fmt::Display for Locator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
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

impl Locator {
    /// A locator in `file` at JSON pointer `pointer`, everything else unknown.
    pub fn at(file: &str, pointer: impl Into<String>) -> Self {
        Locator { file: file.to_string(), pointer: pointer.into(), ..Locator::default() }
    }

    /// The same locator on 1-based `line` (`None` leaves it unknown).
    pub fn on_line(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }
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

impl Level {
    /// The level as the specifications write it: `MUST`, `SHOULD`, `NOTE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::Note => "NOTE",
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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

impl Finding {
    /// A finding; saves spelling out the struct at every call site.
    pub fn new(locator: Locator, rule: &str, level: Level, message: impl Into<String>) -> Self {
        Finding { locator, rule: rule.to_string(), level, message: message.into() }
    }
}

/// A turn of the conversation, kept so the HTML report can show the claims in place.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Turn {
    /// `user`, `agent`/`assistant`, `tool`.
    pub role: String,
    /// The turn's text (text Parts joined, or the assistant message's content).
    pub text: String,
    /// Indices into [`Document::items`](crate::transcript::Document::items) of the claims made
    /// in this turn.
    pub items: Vec<usize>,
    /// The message id, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// What became of the turn's text: the answer the user was shown (the default, not
    /// written), or text the run took back ([`Shown`]); only an answer is audited.
    #[serde(default, skip_serializing_if = "Shown::is_answer")]
    pub shown: Shown,
}

/// What became of an agent's text (docs/answers.md, "What the user finally saw").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Shown {
    /// Shown to the user as the answer.
    #[default]
    Answer,
    /// Rejected by the framework, which asked the model again (Pydantic AI's
    /// `pydantic_ai_model_response_rejected` after an output validator's `ModelRetry`).
    Retracted,
    /// Streamed in a run that stopped to wait for the user (`RUN_FINISHED` with an `interrupt`
    /// outcome): what follows the resumed run is the answer.
    Interrupted,
    /// Streamed in a run that ended in `RUN_ERROR`: the user got an error, not an answer.
    Errored,
}

impl Shown {
    /// True for the answer the user was shown.
    pub fn is_answer(&self) -> bool {
        *self == Shown::Answer
    }

    /// Why text of this kind is not audited, in words.
    pub fn why(&self) -> &'static str {
        match self {
            Shown::Answer => "the answer",
            Shown::Retracted => "retracted: the framework rejected this response and asked the model again",
            Shown::Interrupted => "interrupted: the run stopped to wait for the user before answering",
            Shown::Errored => "errored: the run ended in RUN_ERROR, so the user got no answer",
        }
    }
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

impl std::fmt::Display for Format {
    /// The format's name as the specifications spell it, for reports people read.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::A2aV03 => "A2A v0.3",
            Format::A2aV10 => "A2A v1.0",
            Format::Agui => "AG-UI",
            Format::Plain => "plain",
        })
    }
}
