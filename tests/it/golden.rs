//! Golden reports: `recite check` over every example and a representative fixture set, in all
//! six formats, compared byte for byte with the files under `tests/golden/`. They were written
//! by the code, so they prove no number right; they prove a refactor changed no report. A change
//! to them is reviewed like code. After an intended change, bless them:
//!
//! ```sh
//! RECITE_BLESS=1 cargo test --test it golden
//! ```
//!
//! `tests/golden/exit-codes.txt` holds each run's exit status, blessed with the reports.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::{code, recite, root, stderr};

/// The inputs, one report per case and format: (case name, inputs). Every example folder, and
/// one folder of fixtures per reader, the answer audit and MOCA.
const CASES: &[(&str, &[&str])] = &[
    ("examples-citations", &["examples/citations/"]),
    ("examples-moca", &["examples/moca/"]),
    ("examples-spss", &["examples/spss/"]),
    ("examples-transcripts", &["examples/transcripts/"]),
    ("fixtures-a2a", &["tests/fixtures/a2a/"]),
    ("fixtures-agui", &["tests/fixtures/agui/"]),
    ("fixtures-answers", &["tests/fixtures/answers/"]),
    ("fixtures-html", &["tests/fixtures/html/"]),
    ("fixtures-moca", &["tests/fixtures/moca/"]),
    ("fixtures-plain", &["tests/fixtures/plain/"]),
];

/// `--format` values and the extension of their golden files.
const FORMATS: &[(&str, &str)] = &[
    ("text", "txt"),
    ("json", "json"),
    ("jsonl", "jsonl"),
    ("markdown", "md"),
    ("html", "html"),
    ("junit", "xml"),
];

/// Where the golden files live.
fn golden_dir() -> PathBuf {
    root().join("tests/golden")
}

/// A data layer of the bundled studies and the SPSS test file as a third study (what the SPSS
/// example cites), in `dir`.
fn data_layer(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for study in ["versant", "nhanes2"] {
        std::os::unix::fs::symlink(root().join("datasets").join(study), data.join(study)).unwrap();
    }
    let spss = data.join("spss");
    let made =
        recite(&["catalog", "init", "tests/sav/labelled-bytecode.sav", "--out", spss.to_str().unwrap()]);
    assert_eq!(code(&made), 0, "catalog init: {}", stderr(&made));
    // `catalog init` names the file relative to the study where the two share a folder (a
    // checkout under /tmp, as CI's is), and reports name it as the study does: the absolute
    // path, written `$ROOT/…`, reads the same wherever the checkout and the temporary folder are.
    let toml = spss.join("study.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let sav = root().join("tests/sav/labelled-bytecode.sav");
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("path = ") {
                format!("path = {:?}\n", sav.display().to_string())
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&toml, text).unwrap();
    data
}

/// A report with the run's temporary folder and the checkout's path written as fixed words, so
/// it reads the same on every machine.
fn normalised(bytes: Vec<u8>, tmp: &Path) -> String {
    let text = String::from_utf8(bytes).expect("UTF-8 report");
    let canonical = tmp.canonicalize().unwrap();
    let root = root().display().to_string();
    text.replace(&canonical.display().to_string(), "$TMP")
        .replace(&tmp.display().to_string(), "$TMP")
        .replace(&root, "$ROOT")
}

#[test]
fn golden_reports_are_byte_identical_to_the_blessed_files() {
    let bless = std::env::var_os("RECITE_BLESS").is_some_and(|v| !v.is_empty());
    let tmp = tempfile::tempdir().unwrap();
    let data = data_layer(tmp.path());
    let data = data.to_str().unwrap();
    // Every run, four at a time (each is a short process; 60 at once would crowd the machine).
    let jobs: Vec<(&str, &[&str], &str, &str)> = CASES
        .iter()
        .flat_map(|&(case, inputs)| FORMATS.iter().map(move |&(format, ext)| (case, inputs, format, ext)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut runs: Vec<(usize, String, String, i32)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&(case, inputs, format, ext)) = jobs.get(i) else { return done };
                        let mut args = vec!["check"];
                        args.extend_from_slice(inputs);
                        args.extend_from_slice(&["--format", format, "--color", "never", "--allow-empty"]);
                        args.extend_from_slice(&["--data", data]);
                        let out = recite(&args);
                        done.push((
                            i,
                            format!("{case}.{ext}"),
                            normalised(out.stdout.clone(), tmp.path()),
                            code(&out),
                        ));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    runs.sort_by_key(|r| r.0);
    let runs: Vec<(String, String, i32)> = runs.into_iter().map(|(_, n, t, c)| (n, t, c)).collect();
    let codes: String = runs.iter().map(|(name, _, c)| format!("{name} {c}\n")).collect();
    let mut expected: Vec<(String, String)> = runs.into_iter().map(|(n, text, _)| (n, text)).collect();
    expected.push(("exit-codes.txt".into(), codes));
    let dir = golden_dir();
    if bless {
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            std::fs::remove_file(entry.unwrap().path()).unwrap();
        }
        for (name, text) in &expected {
            std::fs::write(dir.join(name), text).unwrap();
        }
        return;
    }
    let mut differ = Vec::new();
    for (name, text) in &expected {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(golden) if golden == *text => {}
            Ok(golden) => {
                let line = golden.lines().zip(text.lines()).position(|(a, b)| a != b);
                let line = line.unwrap_or_else(|| golden.lines().count().min(text.lines().count()));
                differ.push(format!("{name}: differs from line {}", line + 1));
            }
            Err(e) => differ.push(format!("{name}: {e}")),
        }
    }
    // A golden file no case writes any more is stale: bless removes it.
    let made: BTreeSet<&str> = expected.iter().map(|(n, _)| n.as_str()).collect();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !made.contains(name.as_str()) {
            differ.push(format!("{name}: no case writes it"));
        }
    }
    assert!(
        differ.is_empty(),
        "reports differ from tests/golden/ (after an intended change: RECITE_BLESS=1 cargo test --test it golden, \
         then review the diff):\n{}",
        differ.join("\n")
    );
}
