//! An extractor declaration (`extractors/*.toml`) and its predicate language: never a panic;
//! what validates can be expanded over a column.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut registry = recite::extractor::Registry::default();
    let _ = registry.add("fuzz.toml", text);
    let _ = recite::extractor::parse_pred(text);
});
