//! What the test modules share: running the `recite` binary the way a user would, reading the
//! report it writes, and the fixtures under `tests/fixtures/`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The crate root: the binary runs from here, so the bundled `datasets/` is its data layer.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `recite ARGS` from the crate root, colour off and `RECITE_DATA` and `RECITE_CACHE` unset,
/// not yet run.
pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_recite"));
    c.args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("RECITE_DATA")
        .env_remove("RECITE_CACHE");
    c
}

/// Runs `c` with `stdin` as its standard input (empty when `None`) and waits for it.
pub fn run(mut c: Command, stdin: Option<&[u8]>) -> Output {
    let mut child =
        c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run recite");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(bytes) = stdin {
        // A hostile input may be refused before it is all read: a broken pipe is fine.
        let _ = input.write_all(bytes);
    }
    drop(input);
    child.wait_with_output().expect("wait for recite")
}

/// `recite ARGS` with an empty standard input.
pub fn recite(args: &[&str]) -> Output {
    run(command(args), None)
}

/// `recite ARGS` (as [`command`]) with its data segment limited to `bytes` by `prlimit`
/// (util-linux): heap and private anonymous maps, so a run needing more fails to allocate and
/// aborts. For tests that memory stays bounded, without timing anything.
pub fn recite_within_memory(bytes: u64, args: &[&str]) -> Output {
    let base = command(args);
    let mut c = Command::new("prlimit");
    c.arg(format!("--data={bytes}")).arg("--").arg(base.get_program()).args(base.get_args());
    c.current_dir(root()).env("NO_COLOR", "1").env_remove("RECITE_DATA").env_remove("RECITE_CACHE");
    run(c, None)
}

/// `recite ARGS` reading `stdin`.
pub fn recite_stdin(args: &[&str], stdin: &[u8]) -> Output {
    run(command(args), Some(stdin))
}

/// The exit code of a run.
pub fn code(out: &Output) -> i32 {
    out.status.code().expect("exited with a code")
}

/// A run's standard output, which must be UTF-8.
pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// A run's standard error, lossily decoded.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The JSON report a run wrote to standard output; panics with its stderr when there is none.
pub fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not a JSON report ({e}): {}", stderr(out)))
}

/// The bytes of `tests/fixtures/PATH`.
pub fn fixture_bytes(path: &str) -> Vec<u8> {
    let full = root().join("tests/fixtures").join(path);
    std::fs::read(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The text of `tests/fixtures/PATH`.
pub fn fixture(path: &str) -> String {
    String::from_utf8(fixture_bytes(path)).unwrap_or_else(|e| panic!("tests/fixtures/{path}: {e}"))
}

/// Runs `c`, killing it and failing the test if it runs longer than `secs` (a hang).
pub fn run_bounded(mut c: Command, secs: u64) -> Output {
    let mut child = c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // Drain both pipes on threads so a large report cannot block the child.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut so, &mut b);
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut se, &mut b);
        b
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed().as_secs() >= secs {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{c:?} still running after {secs} s: it hangs");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output { status, stdout: out_t.join().unwrap(), stderr: err_t.join().unwrap() }
}

/// The measures named in `compared` (a manifest's list) that no claimed number of the JSON
/// report's `claim` was compared with: a result whose numbers were not read is settled on base n
/// alone, and may reach the expected verdict for a wrong reason.
pub fn not_compared<'a>(compared: &'a serde_json::Value, claim: &serde_json::Value) -> Vec<&'a str> {
    compared
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_str)
        .filter(|name| {
            let measure = claim["measures"].as_array().into_iter().flatten().find(|m| m["name"] == *name);
            measure.and_then(|m| m["claims"].as_array()).is_none_or(|c| c.is_empty())
        })
        .collect()
}

/// Says a check was skipped and why, straight to the process's standard error: the test
/// harness captures `eprintln!`, so a skip written that way says nothing under a plain `cargo
/// test` (the test shows `ok` having checked nothing).
pub fn say_skipped(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// How a report input's MUST findings differ from the rules a manifest expects (`[]` for a
/// correct run: a CI gate over it must pass), in words; empty when they agree.
pub fn must_finding_mismatches(expected: &[Value], input: &Value) -> Vec<String> {
    let mut want: Vec<&str> = expected.iter().filter_map(Value::as_str).collect();
    want.sort_unstable();
    let found: Vec<&Value> =
        input["findings"].as_array().into_iter().flatten().filter(|f| f["level"] == "MUST").collect();
    let mut got: Vec<&str> = found.iter().map(|f| f["rule"].as_str().unwrap_or("?")).collect();
    got.sort_unstable();
    if got == want {
        return Vec::new();
    }
    let said: Vec<String> =
        found.iter().map(|f| format!("{} at {}: {}", f["rule"], f["locator"], f["message"])).collect();
    vec![format!("MUST findings: expected {want:?}, got {} ({})", got.len(), said.join(" | "))]
}

/// A study of one table with one column `x` under `root/data/FOLDER` (`name` "Mapped" in folder
/// `mapped`), its file `file` left to the test to write, and a claim file `root/claim.json`
/// citing the mean of `x` over the table's 100 rows, claimed 50.5 (the mean of 1..=100). Returns
/// the study's folder and the claim's path; `--data root/data` reads it.
pub fn a_mean_of_x(root: &Path, name: &str, file: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let table = name.to_lowercase();
    let study = root.join("data").join(&table);
    std::fs::create_dir_all(&study).unwrap();
    std::fs::write(
        study.join("study.toml"),
        format!(
            "[study]\nname = \"{name}\"\n\n[[tables]]\nname = \"{table}\"\npath = \"{file}\"\n\n\
             [tables.columns.x]\nlabel = \"A value\"\n\n[[periods]]\nname = \"All\"\nfilter = \"TRUE\"\n\n\
             [[bases]]\nname = \"All rows\"\nfilter = \"TRUE\"\n"
        ),
    )
    .unwrap();
    let claim = root.join("claim.json");
    std::fs::write(
        &claim,
        format!(
            r#"{{"citation": {{"study": "{name}", "period": "All", "base": {{"name": "All rows", "n": 100}},
                "source": {{"table": "{table}", "column": "x", "function": "extractMean"}}}},
                "result": {{"mean": 50.5}}}}"#
        ),
    )
    .unwrap();
    (study, claim)
}
