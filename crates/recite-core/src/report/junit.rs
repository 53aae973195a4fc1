//! The JUnit XML report: one testcase per claim (and one per finding), so CI systems show
//! failures natively. Every piece of text is XML-escaped.

use std::fmt::Write as _;
use std::io::{self, Write as _};

use rayon::prelude::*;

use super::escape::xml;
use super::stream::{self, Closing, InputHead, InputTail, Spool};
use super::{ClaimReport, DataLayer, Report};
use crate::input::Level;
use crate::settle::Verdict;

/// The report as JUnit XML.
pub fn render(report: &Report) -> String {
    let layer = report.data_layer.clone();
    stream::render_whole(report, |out| Writer::new(out, layer))
}

/// The JUnit report, written as it goes: the totals open the document and each input's counts
/// open its testsuite, so the testsuites and each input's claim testcases are spooled.
pub struct Writer {
    out: Box<dyn io::Write>,
    data_layer: Option<DataLayer>,
    body: Spool,
    cases: Spool,
    file: String,
    claims: usize,
    claim_failures: usize,
    tests: usize,
    failures: usize,
}

impl Writer {
    /// A JUnit report to `out`; every testsuite names the data layer.
    pub fn new(out: Box<dyn io::Write>, data_layer: Option<DataLayer>) -> Writer {
        Writer {
            out,
            data_layer,
            body: Spool::new(),
            cases: Spool::new(),
            file: String::new(),
            claims: 0,
            claim_failures: 0,
            tests: 0,
            failures: 0,
        }
    }
}

impl Writer {
    /// Counts one claim and writes its testcase, rendered by [`claim_case`].
    fn rendered(&mut self, c: &ClaimReport, case: &str) -> io::Result<()> {
        self.claims += 1;
        if c.settlement.verdict != Verdict::Reproduced {
            self.claim_failures += 1;
        }
        self.cases.write_all(case.as_bytes())
    }
}

/// One claim's testcase in the testsuite of `file`.
fn claim_case(file: &str, c: &ClaimReport) -> String {
    let mut o = String::new();
    let s = &c.settlement;
    let name = match &s.rerun {
        Some(r) => format!("{} @ {}", r.label(), c.locator),
        None => c.locator.to_string(),
    };
    let _ = write!(o, "    <testcase classname=\"{}\" name=\"{}\"", xml(file), xml(&name));
    if s.verdict == Verdict::Reproduced {
        let _ = writeln!(o, "/>");
    } else {
        let _ = writeln!(
            o,
            ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>",
            s.verdict.as_str(),
            xml(&format!("{}: {}", s.verdict.as_str(), s.reasons.first().cloned().unwrap_or_default())),
            xml(&s.reasons.join("\n"))
        );
    }
    o
}

impl stream::Writer for Writer {
    fn begin_input(&mut self, head: InputHead<'_>) -> io::Result<()> {
        self.file = head.file.to_string();
        self.claims = 0;
        self.claim_failures = 0;
        Ok(())
    }

    fn claim(&mut self, c: &ClaimReport) -> io::Result<()> {
        let case = claim_case(&self.file, c);
        self.rendered(c, &case)
    }

    fn claims(&mut self, cs: &[ClaimReport]) -> io::Result<()> {
        let file = &self.file;
        let cases: Vec<String> = cs.par_iter().map(|c| claim_case(file, c)).collect();
        cs.iter().zip(&cases).try_for_each(|(c, case)| self.rendered(c, case))
    }

    fn end_input(&mut self, tail: InputTail<'_>) -> io::Result<()> {
        let stated: usize = tail.answers.iter().map(|a| a.numbers.len()).sum();
        let tests = self.claims + tail.findings.len() + stated;
        let fails = self.claim_failures
            + tail.findings.iter().filter(|f| f.level != Level::Note).count()
            + super::answers::junit_failures(tail.answers);
        self.tests += tests;
        self.failures += fails;
        let mut o = String::new();
        let _ =
            writeln!(o, "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{fails}\">", xml(&self.file));
        let _ = writeln!(o, "    <properties>");
        let _ = writeln!(o, "      <property name=\"coverage\" value=\"{}\"/>", xml(&tail.coverage.line()));
        if let Some(d) = &self.data_layer {
            let _ = writeln!(o, "      <property name=\"data layer\" value=\"{}\"/>", xml(&d.line()));
            if let Some(w) = &d.warning {
                let _ = writeln!(o, "      <property name=\"data layer warning\" value=\"{}\"/>", xml(w));
            }
        }
        let _ = writeln!(o, "    </properties>");
        self.body.write_all(o.as_bytes())?;
        self.cases.drain_to(&mut self.body)?;
        let mut o = String::new();
        for f in tail.findings {
            let _ = write!(
                o,
                "    <testcase classname=\"{}\" name=\"{}\"",
                xml(&self.file),
                xml(&format!("{} @ {}", f.rule, f.locator))
            );
            if f.level == Level::Note {
                let _ = writeln!(o, "/>");
            } else {
                let _ = writeln!(
                    o,
                    ">\n      <failure type=\"{}\" message=\"{}\"/>\n    </testcase>",
                    f.level,
                    xml(&f.message)
                );
            }
        }
        super::answers::junit(&mut o, &self.file, tail.answers);
        let _ = writeln!(o, "  </testsuite>");
        self.body.write_all(o.as_bytes())
    }

    fn finish(&mut self, _: Closing<'_>) -> io::Result<()> {
        let head = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"recite\" tests=\"{}\" failures=\"{}\">\n",
            self.tests, self.failures
        );
        self.out.write_all(head.as_bytes())?;
        self.body.drain_to(&mut self.out)?;
        self.out.write_all(b"</testsuites>\n")?;
        self.out.flush()
    }
}
