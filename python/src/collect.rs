//! A report writer that keeps the whole report: what `recite.check` hands to Python, then
//! renders as JSON, text, HTML or JUnit through recite's own writers ([`stream::write_whole`]).
//!
//! [`stream::write_whole`]: recite_core::report::stream::write_whole

use std::io;

use recite_core::report::stream::{Closing, InputHead, InputTail, Writer};
use recite_core::report::{ClaimReport, Coverage, DataLayer, Input, Report, Summary};
use recite_core::scan::ScanStats;

/// Every input, claim and total a run wrote.
#[derive(Default)]
pub struct Collect {
    inputs: Vec<Input>,
    current: Option<Input>,
    closing: Option<(Summary, ScanStats, Option<DataLayer>)>,
}

impl Collect {
    /// The report as the run wrote it: its inputs, and the totals it closed with.
    pub fn report(self) -> Report {
        let (summary, stats, data_layer) = self.closing.unwrap_or_default();
        let mut report = Report::new(self.inputs, stats);
        report.summary = summary;
        report.data_layer = data_layer;
        report
    }
}

impl Writer for Collect {
    fn begin_input(&mut self, head: InputHead<'_>) -> io::Result<()> {
        self.current = Some(Input {
            file: head.file.to_string(),
            format: head.format,
            claims: Vec::new(),
            findings: Vec::new(),
            moca: Vec::new(),
            answers: Vec::new(),
            coverage: Coverage::default(),
            turns: head.turns.to_vec(),
        });
        Ok(())
    }

    fn claim(&mut self, c: &ClaimReport) -> io::Result<()> {
        if let Some(input) = &mut self.current {
            input.claims.push(c.clone());
        }
        Ok(())
    }

    fn claims(&mut self, cs: &[ClaimReport]) -> io::Result<()> {
        if let Some(input) = &mut self.current {
            input.claims.extend_from_slice(cs);
        }
        Ok(())
    }

    // The run's own claims, kept without a copy.
    fn owned_claims(&mut self, cs: Vec<ClaimReport>) -> io::Result<()> {
        if let Some(input) = &mut self.current {
            input.claims.extend(cs);
        }
        Ok(())
    }

    fn end_input(&mut self, tail: InputTail<'_>) -> io::Result<()> {
        if let Some(mut input) = self.current.take() {
            input.findings = tail.findings.to_vec();
            input.moca = tail.moca.to_vec();
            input.answers = tail.answers.to_vec();
            input.coverage = tail.coverage;
            self.inputs.push(input);
        }
        Ok(())
    }

    fn finish(&mut self, c: Closing<'_>) -> io::Result<()> {
        self.closing = Some((c.summary.clone(), c.stats.clone(), c.data_layer.cloned()));
        Ok(())
    }
}
