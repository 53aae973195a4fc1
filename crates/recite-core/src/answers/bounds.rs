//! How much one answer and one input may trace ([`MAX_NUMBERS`], [`MAX_INPUT_NUMBERS`],
//! [`MAX_INPUT_COMPARISONS`]), and the findings that say what past them was not audited.

/// The most numbers one answer has traced (docs/answers.md, "Cost"): finding is linear in the
/// text, tracing costs a little per number and cited value; past this many, the rest of the
/// answer's numbers are counted and reported as not audited ([`NotAudited`]), never dropped
/// silently.
pub const MAX_NUMBERS: usize = 10_000;

/// The most numbers the answers of one input have traced together (docs/answers.md, "Cost"):
/// what an input's audit holds until its report is written grows with them, so past this many
/// the answer reaching it is cut there, and the later answers' numbers are found and counted
/// ([`Unaudited`]), not traced. Ten answers at [`MAX_NUMBERS`]; far more than any real
/// conversation states.
pub const MAX_INPUT_NUMBERS: usize = 100_000;

/// The most comparisons of a stated number with a cited value the answers of one input make
/// together: tracing a number costs one per cited value of its exchange, so an input of
/// thousands of answers in one exchange with thousands of citations (no user turn between
/// them) would otherwise cost their product. Past it, as past [`MAX_INPUT_NUMBERS`].
pub const MAX_INPUT_COMPARISONS: usize = 5_000_000;

/// Why an input's later numbers were not audited, in words.
fn input_bound() -> String {
    format!(
        "the input's answers reached the bound of one input's audit: {MAX_INPUT_NUMBERS} numbers, or \
         {MAX_INPUT_COMPARISONS} comparisons of a number with a cited value"
    )
}

/// The finding rule of an answer whose numbers past [`MAX_NUMBERS`] (or past the input's
/// [`MAX_INPUT_NUMBERS`]) were not audited.
pub const RULE_NOT_AUDITED: &str = "answers/not-audited";

/// An answer with more stated numbers than it was allowed to trace: those past it were not.
#[derive(Debug, Clone, PartialEq)]
pub struct NotAudited {
    /// Index of the turn in the conversation.
    pub turn: usize,
    /// The message id, when there is one.
    pub message_id: Option<String>,
    /// How many numbers the answer states.
    pub found: usize,
    /// How many of them (the first) were audited: [`MAX_NUMBERS`], or fewer where the input
    /// reached its bound ([`MAX_INPUT_NUMBERS`], [`MAX_INPUT_COMPARISONS`]).
    pub audited: usize,
    /// Byte offset in the answer text of the first number not traced.
    pub from: usize,
    /// Cut by the input's bound rather than the answer's.
    pub by_input: bool,
}

impl NotAudited {
    /// The finding that says so (a MUST: numbers nobody checked never pass quietly).
    pub fn finding(&self, file: &str) -> crate::input::Finding {
        let why = if self.by_input { format!(" ({})", input_bound()) } else { String::new() };
        let message = format!(
            "the answer in turn {}{} states {} numbers; only the first {} were audited{why}, the {} from byte {} on were not",
            self.turn + 1,
            self.message_id.as_ref().map(|m| format!(" (message {m})")).unwrap_or_default(),
            self.found,
            self.audited,
            self.found - self.audited,
            self.from
        );
        not_audited(file, message)
    }
}

/// The answers of an input after its audit reached [`MAX_INPUT_NUMBERS`]: their numbers were
/// found and counted, not traced.
#[derive(Debug, Clone, PartialEq)]
pub struct Unaudited {
    /// How many answers (that state numbers).
    pub answers: usize,
    /// How many numbers they state.
    pub numbers: usize,
    /// Index of the first one's turn.
    pub first_turn: usize,
    /// Index of the last one's turn.
    pub last_turn: usize,
}

impl Unaudited {
    /// The finding that says so (a MUST, as for [`NotAudited`]).
    pub fn finding(&self, file: &str) -> crate::input::Finding {
        let message = format!(
            "{} more answer(s), in turns {} to {}, state {} numbers that were not audited: {}",
            self.answers,
            self.first_turn + 1,
            self.last_turn + 1,
            self.numbers,
            input_bound()
        );
        not_audited(file, message)
    }
}

fn not_audited(file: &str, message: String) -> crate::input::Finding {
    crate::input::Finding::new(
        crate::input::Locator::at(file, ""),
        RULE_NOT_AUDITED,
        crate::input::Level::Must,
        message,
    )
}
