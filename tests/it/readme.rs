//! The README's commands, run as a newcomer types them: every `cargo run -- …` line of its `sh`
//! blocks (the default features), in order, from a scratch folder beside the repository's
//! `examples/` and `tests/`, so files they write (`report.html`, `mydata/`) land there. Each
//! must exit 0 or 1 (1: something not reproduced, as documented), never a usage or I/O error;
//! a verdict its comment promises (`# … REPRODUCED`) must be in what it prints, with the exit
//! status that verdict gives; a file or folder it writes must exist afterwards. `recite serve`
//! does not exit and is left to `tests/it/workbench.rs`; lines with `--features` run in the
//! Delta and PostgreSQL tests.

use crate::support::{code, command, root, run, stderr, stdout};

/// A `cargo run -- ARGS  # COMMENT` line of README.md: its line number, arguments and comment.
struct Line {
    number: usize,
    args: Vec<String>,
    comment: String,
}

/// The README's `cargo run -- ` lines in `sh` blocks, in order.
fn readme_runs() -> Vec<Line> {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut in_sh = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            in_sh = !in_sh && line == "```sh";
            continue;
        }
        let Some(rest) = line.strip_prefix("cargo run -- ").filter(|_| in_sh) else { continue };
        let (command, comment) = rest.split_once(" #").unwrap_or((rest, ""));
        assert!(
            !command.contains(['"', '\'', '$', '|', '&', ';']),
            "README.md:{}: this test splits commands at spaces; quote or shell syntax needs a shell: {line}",
            i + 1
        );
        lines.push(Line {
            number: i + 1,
            args: command.split_whitespace().map(str::to_string).collect(),
            comment: comment.trim().to_string(),
        });
    }
    lines
}

#[test]
fn every_cargo_run_line_of_the_readme_does_what_its_comment_says() {
    let lines = readme_runs();
    assert!(lines.len() >= 8, "the README's commands were not found: {} lines", lines.len());
    assert_eq!(
        lines[0].args,
        ["verify", "examples/citations/versant-w6-considered.json"],
        "the README's first command (the main job on the bundled data)"
    );
    let scratch = tempfile::tempdir().unwrap();
    for shared in ["examples", "tests"] {
        std::os::unix::fs::symlink(root().join(shared), scratch.path().join(shared)).unwrap();
    }
    let mut ran = 0;
    for line in &lines {
        let at = format!("README.md:{}: recite {}", line.number, line.args.join(" "));
        if line.args[0] == "serve" {
            eprintln!("not run here (it serves until stopped; tests/it/workbench.rs opens it): {at}");
            continue;
        }
        let args: Vec<&str> = line.args.iter().map(String::as_str).collect();
        let mut c = command(&args);
        c.current_dir(scratch.path());
        let out = run(c, None);
        let (printed, status) = (stdout(&out), code(&out));
        assert!(status == 0 || status == 1, "{at}: exit {status}\n{printed}\n{}", stderr(&out));
        for (verdict, exit) in [("REPRODUCED", 0), ("DISCREPANT", 1)] {
            if line.comment.contains(verdict) {
                assert!(printed.contains(verdict), "{at}: its comment says {verdict}\n{printed}");
                assert_eq!(status, exit, "{at}: exit status of {verdict}\n{printed}");
            }
        }
        if line.comment.contains("passes") {
            assert_eq!(status, 0, "{at}: its comment says it passes\n{printed}{}", stderr(&out));
        }
        for (flag, path) in line.args.iter().zip(line.args.iter().skip(1)) {
            if flag == "-o" || flag == "--output" {
                assert!(scratch.path().join(path).exists(), "{at}: wrote no {path}");
            }
        }
        ran += 1;
    }
    assert!(ran >= 7, "{ran} of the README's commands ran");
}
