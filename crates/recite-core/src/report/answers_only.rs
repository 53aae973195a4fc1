//! `check --answers-only`: the answer-text audit alone, as text or JSON, written input by input.

use std::io::{self, Write};

use serde_json::Value;

use super::ClaimReport;
use super::stream::{self, Closing, InputHead, InputTail, Spool};

/// The answer audit alone. As JSON (`{answer_numbers, inputs: [{file, answers}]}`) the inputs
/// are spooled, since the counts come first; as text each input is written when it ends.
pub struct Writer {
    out: Box<dyn Write>,
    json: bool,
    body: Spool,
    file: String,
    inputs: usize,
}

impl Writer {
    /// The answer audit to `out`, as JSON or as text.
    pub fn new(out: Box<dyn Write>, json: bool) -> Writer {
        Writer { out, json, body: Spool::new(), file: String::new(), inputs: 0 }
    }
}

impl stream::Writer for Writer {
    fn begin_input(&mut self, head: InputHead<'_>) -> io::Result<()> {
        self.file = head.file.to_string();
        Ok(())
    }

    fn claim(&mut self, _: &ClaimReport) -> io::Result<()> {
        Ok(())
    }

    fn end_input(&mut self, tail: InputTail<'_>) -> io::Result<()> {
        self.inputs += 1;
        if self.json {
            // One answer's value at a time (super::json::write_answers).
            let file =
                serde_json::to_string(&super::json::part_value(&self.file)).expect("a string serializes");
            let sep = if self.inputs > 1 { ",\n" } else { "" };
            write!(self.body, "{sep}    {{\n      \"file\": {file},\n      \"answers\": ")?;
            super::json::write_answers(&mut self.body, tail.answers, 6)?;
            self.body.write_all(b"\n    }")
        } else {
            let mut o = super::escape::for_terminal(&self.file);
            o.push('\n');
            if tail.answers.is_empty() {
                o.push_str("  no agent answer states a number\n");
            }
            super::answers::text(&mut o, tail.answers);
            self.out.write_all(o.as_bytes())
        }
    }

    fn finish(&mut self, c: Closing<'_>) -> io::Result<()> {
        if self.json {
            let counts = serde_json::to_value(&c.summary.answer_numbers).unwrap_or(Value::Null);
            let counts = serde_json::to_string_pretty(&counts).expect("a value always serializes");
            write!(self.out, "{{\n  \"answer_numbers\": {},\n  \"inputs\": ", counts.replace('\n', "\n  "))?;
            if self.inputs == 0 {
                self.out.write_all(b"[]\n}\n")?;
            } else {
                self.out.write_all(b"[\n")?;
                self.body.drain_to(&mut self.out)?;
                self.out.write_all(b"\n  ]\n}\n")?;
            }
        }
        self.out.flush()
    }
}
