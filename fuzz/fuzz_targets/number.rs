//! Claimed numbers: a text read as a number (by each decimal-mark convention, and as prose that
//! shows none), or the values of a JSON result. Never a panic; whatever is read has a finite
//! value and a finite, positive tolerance, and a count is read the same as its value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recite::claim::{self, DecimalMark, NotANumber};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match claim::read_number(text, None, String::new()) {
        Ok(c) => {
            assert!(c.value.is_finite());
            let h = c.half_unit();
            assert!(h.is_finite() && h > 0.0, "{text:?}: tolerance {h}");
        }
        Err(NotANumber::Unreadable(why)) => assert!(!why.is_empty()),
        Err(NotANumber::Syntax) => {}
    }
    for mark in [None, Some(DecimalMark::Dot), Some(DecimalMark::Comma)] {
        if let Ok(c) = claim::read_written(text, mark) {
            assert!(c.value.is_finite() && c.half_unit() > 0.0, "{text:?} ({mark:?})");
            if let Some(n) = c.as_count() {
                assert_eq!(n as f64, c.value, "{text:?} ({mark:?}): count {n}, value {}", c.value);
            }
        }
    }
    if let Some(n) = claim::exact_count(text) {
        assert!(n <= 1 << 53);
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        for c in claim::claimed(&v, DecimalMark::Comma) {
            assert!(c.value.is_finite());
            assert!(c.unreadable.is_some() || c.half_unit().is_finite());
        }
    }
});
