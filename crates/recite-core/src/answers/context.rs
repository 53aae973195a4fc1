//! One sentence of an answer, indexed once for tracing its numbers ([`Context`]): where each
//! number stands and what it owns, the measures, records, periods, populations and brands the
//! sentence names, and how a list pairs its levels with them.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::attribution;
use super::find::{Kind, Stated};
use super::source::Source;
use super::words::{
    COMPARISONS, GENERIC_OBJECTS, IN_ORDER, NET_PROMOTER, NPS_STEMS, OBJECT_STOPS, after_since,
    describes_people, joins_list, listish, stem, whole_words,
};

/// One sentence of an answer, indexed once for tracing its numbers: its lower-cased text, where
/// its numbers stand and the stretch of text each one owns, and (filled on first use) where each
/// measure stem and record reference is mentioned. Tracing a number then costs a binary search
/// per source, whatever the sentence's length: lower-casing and scanning the sentence per
/// number made the audit cubic in a long sentence (docs/answers.md, "Cost").
pub struct Context<'a> {
    /// The sentence's text.
    sentence: &'a str,
    /// Where the sentence starts in the answer text.
    offset: usize,
    /// The sentence lower-cased.
    lower: String,
    /// Whether lower-casing kept byte lengths; if not, a mention is found but not placed (as
    /// near as can be: distance 0, owned by every number).
    same_len: bool,
    /// Where the sentence's numbers start (answer offsets), in order.
    starts: Vec<usize>,
    /// For each of them, the stretch of the answer (inclusive) whose mentions it owns.
    owns: Vec<(usize, usize)>,
    /// The same by nearness alone (no list sharing): where a number's own period, population
    /// or brand words are (`26.8% for Versant and 28.7% for Northwind`).
    near: Vec<(usize, usize)>,
    /// Where each number ends (answer offsets), and whether it is a change.
    ends: Vec<(usize, bool)>,
    /// The counts the sentence states.
    pub(super) counts: Vec<f64>,
    /// For each number, the subject its table header or list lead-in gives it (lower case).
    subjects: Vec<Option<String>>,
    /// Word-start mentions of a measure stem in `lower` (answer offsets), by stem.
    stems: RefCell<HashMap<String, Rc<[usize]>>>,
    /// Mentions of a record's marker or reference in the sentence (answer offsets).
    refs: RefCell<HashMap<String, Rc<[usize]>>>,
    /// Whole-word mentions of an attribution phrase in `lower` (answer offsets).
    phrases: RefCell<HashMap<String, Rc<[usize]>>>,
    /// The sentence's levels (no counts, changes or second ends of a range): where each starts
    /// and ends (answer offsets), in order. A list pairs them with its brands, periods or
    /// populations ([`Pairing`]).
    levels: Vec<(usize, usize)>,
    /// The levels themselves, in the same order: a change may be derived from two of them.
    pub(super) stated_levels: Vec<Stated>,
    /// How the levels pair with each dimension's options, by the options' names.
    pairings: RefCell<HashMap<String, Rc<Pairing>>>,
    /// The population phrases the sentence states (`among women`, `of men aged 18-34`): where
    /// each starts (answer offset), as written (lower case), and its words.
    populations: Vec<(usize, String, Vec<String>)>,
}

/// How the levels of one sentence pair with the options of one dimension (brands, periods,
/// populations) the sentence names (docs/answers.md, "Swaps").
#[derive(Debug, Clone, PartialEq)]
enum Pairing {
    /// Fewer than two levels or two named options, or no list: the nearness rules apply.
    None,
    /// A list whose every level has its own option: the option's name, by the level's start.
    /// The second map: where the first level of each option starts.
    Unique(HashMap<usize, String>, HashMap<String, usize>),
    /// A list naming two options or more in an order recite cannot pair with its levels.
    Ambiguous(Vec<String>),
}

#[cfg(test)]
thread_local! {
    /// Work the audit does, in bytes scanned and cited values compared: counted in tests to
    /// assert that the audit stays linear in its input (a count, not a time: debug builds are
    /// slow).
    pub(super) static WORK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts `n` units of work (in tests only).
#[inline]
pub(super) fn work(n: usize) {
    #[cfg(test)]
    WORK.with(|w| w.set(w.get() + n));
    #[cfg(not(test))]
    let _ = n;
}

/// How [`Context::says_where`] looks for a phrase said of a number.
#[derive(Debug, Clone, Copy)]
struct Looking {
    /// Anywhere in the sentence, not only nearer to the number than to any other.
    anywhere: bool,
    /// Said of a level: a mention after `since` (where a change starts) does not count.
    of_level: bool,
}

impl<'a> Context<'a> {
    /// Indexes the sentence `span` of `text` holding `numbers` (in order of start), with the
    /// subject each number's table header or list lead-in gives it ([`super::find::subject_of`]).
    pub fn new(
        text: &'a str,
        span: (usize, usize),
        numbers: &[&Stated],
        subjects: Vec<Option<String>>,
    ) -> Self {
        let sentence = &text[span.0..span.1];
        work(sentence.len() + numbers.len());
        let lower = sentence.to_lowercase();
        let stated_levels: Vec<Stated> = numbers
            .iter()
            .enumerate()
            .filter(|(i, n)| {
                matches!(n.kind, Kind::Percent | Kind::Number)
                    && !(n.range.is_some() && *i > 0 && numbers[i - 1].range == n.range)
            })
            .map(|(_, n)| (*n).clone())
            .collect();
        let levels: Vec<(usize, usize)> = stated_levels.iter().map(|n| (n.start, n.end)).collect();
        let populations =
            if lower.len() == sentence.len() { population_phrases(&lower, span.0) } else { Vec::new() };
        let starts: Vec<usize> = numbers.iter().map(|n| n.start).collect();
        let mut owns: Vec<(usize, usize)> = Vec::with_capacity(starts.len());
        let mut near: Vec<(usize, usize)> = Vec::with_capacity(starts.len());
        for (i, &x) in starts.iter().enumerate() {
            // A mention belongs to the number nearest to it (ties to both).
            let mut lo = if i == 0 { 0 } else { (starts[i - 1] + x).div_ceil(2) };
            let hi = starts.get(i + 1).map_or(usize::MAX, |&r| (x + r) / 2);
            near.push((lo, hi));
            // An item of a list shares the measure word heading the list.
            if i > 0
                && joins_list(
                    &text[numbers[i - 1].end.min(x)..x],
                    &text[numbers[i].end..span.1.max(numbers[i].end)],
                )
            {
                lo = owns[i - 1].0;
            }
            owns.push((lo, hi));
        }
        Context {
            sentence,
            offset: span.0,
            same_len: lower.len() == sentence.len(),
            lower,
            starts,
            owns,
            near,
            ends: numbers.iter().map(|n| (n.end, matches!(n.kind, Kind::Points | Kind::Relative))).collect(),
            counts: numbers.iter().filter(|n| n.kind == Kind::Count).map(|n| n.value).collect(),
            subjects,
            stems: RefCell::default(),
            refs: RefCell::default(),
            phrases: RefCell::default(),
            levels,
            stated_levels,
            pairings: RefCell::default(),
            populations,
        }
    }

    /// Whole-word mentions of `phrase` (lower case) in the sentence.
    fn phrase_mentions(&self, phrase: &str) -> Rc<[usize]> {
        if let Some(m) = self.phrases.borrow().get(phrase) {
            return m.clone();
        }
        let lower = &self.lower;
        work(lower.len());
        let found: Rc<[usize]> = whole_words(lower, phrase).map(|p| self.offset + p).collect();
        self.phrases.borrow_mut().insert(phrase.to_string(), found.clone());
        found
    }

    /// Whether the sentence says `phrase` (lower case) of the number at `at`: nearer to it than
    /// to any other number (anywhere in the sentence, with `anywhere`), or in its table headers
    /// or list lead-in.
    fn says(&self, phrase: &str, at: usize, anywhere: bool) -> bool {
        self.says_where(phrase, at, Looking { anywhere, of_level: false })
    }

    /// [`Self::says`] of a level: a phrase after `since` is where a change starts (`fell 5%
    /// since W5, to 44.2%`), said of no level.
    fn says_of_level(&self, phrase: &str, at: usize, anywhere: bool) -> bool {
        self.says_where(phrase, at, Looking { anywhere, of_level: true })
    }

    /// [`Self::says`], leaving out the mentions after `since` with `level`.
    fn says_where(&self, phrase: &str, at: usize, looking: Looking) -> bool {
        let Looking { anywhere, of_level: level } = looking;
        let Ok(i) = self.starts.binary_search(&at) else { return false };
        let found = self.phrase_mentions(phrase);
        let (lo, hi) = if anywhere { (0, usize::MAX) } else { self.near[i] };
        let k = found.partition_point(|&p| p < lo);
        let in_sentence = !found.is_empty()
            && (!self.same_len
                || found[k..]
                    .iter()
                    .take_while(|&&p| p <= hi)
                    .any(|&p| !level || !after_since(&self.lower[..p - self.offset])));
        in_sentence
            || self.subjects.get(i).and_then(|s| s.as_deref()).is_some_and(|sub| {
                work(sub.len());
                whole_words(sub, phrase).any(|q| !level || !after_since(&sub[..q]))
            })
    }

    /// What the sentence says of the number at `at` that contradicts what `src`'s citation
    /// covers: another period, population or column label of the study, and nowhere the cited
    /// one's words (`in W5` beside a W6 figure). `None` when nothing contradicts it. A list
    /// that gives each level its own option is read as it pairs them (`28.7% for Versant and
    /// 26.8% for Northwind`: a swap); otherwise a sentence naming the cited option anywhere
    /// contradicts nothing.
    pub(super) fn contradiction(&self, src: &Source, at: usize) -> Option<String> {
        let covers = src.covers.as_ref()?;
        for d in &covers.dims {
            if let Pairing::Unique(map, first) = &*self.pairing(d)
                && let Some(name) = map.get(&at)
            {
                if *name == d.cited {
                    continue;
                }
                // The level the list gives the cited option, if any: the two were swapped.
                let swapped = first.get(&d.cited).and_then(|&s| {
                    let k = self.levels.binary_search_by_key(&s, |&(a, _)| a).ok()?;
                    self.sentence.get(s - self.offset..self.levels[k].1 - self.offset)
                });
                return Some(match swapped {
                    Some(t) => format!(
                        "the sentence says {name} ({}); the citation covers {}, to which the sentence gives {t}",
                        d.what, d.cited
                    ),
                    None => format!("the sentence says {name} ({}); the citation covers {}", d.what, d.cited),
                });
            }
            let said =
                |marks: &[String], anywhere: bool| marks.iter().any(|m| self.says_of_level(m, at, anywhere));
            if said(&d.marks, true) {
                continue;
            }
            // The only option of this dimension the sentence names is said of all its numbers
            // (`Versant's purchase went from 30% in W5 to 27% in W6`: both are Versant's), but
            // for a number with a population phrase of its own (`compared with 44.2% among
            // aware adults overall`): that phrase is whom it is about.
            let only = || {
                if d.what == "population" && self.own_population(at).is_some() {
                    return None;
                }
                let mut named = d.others.iter().filter(|(_, marks)| said(marks, true));
                let first = named.next();
                if named.next().is_some() {
                    return None;
                }
                first.filter(|(_, marks)| d.what != "period" || !self.period_of_another(marks, at))
            };
            if let Some((name, _)) = d.others.iter().find(|(_, marks)| said(marks, false)).or_else(only) {
                return Some(format!(
                    "the sentence says {name} ({}); the citation covers {}",
                    d.what, d.cited
                ));
            }
        }
        None
    }

    /// Why recite cannot tell whether the sentence gives the number at `at` what `src`'s
    /// citation covers, if it cannot: a list naming the cited option and others in an order
    /// it cannot pair with its levels, or a population phrase of the number's (`among men`)
    /// whose population words the cited base does not have.
    pub(super) fn unsure(&self, src: &Source, at: usize) -> Option<String> {
        let covers = src.covers.as_ref()?;
        for d in &covers.dims {
            if let Pairing::Ambiguous(names) = &*self.pairing(d)
                && names.contains(&d.cited)
                && self.levels.binary_search_by_key(&at, |&(s, _)| s).is_ok()
            {
                return Some(format!(
                    "the sentence names {} ({}) in an order recite cannot pair with its numbers; the citation covers {}",
                    names.join(", "),
                    d.what,
                    d.cited
                ));
            }
        }
        // The cited population and another said of one number (`Among women in the West`): a
        // part of the cited population, which the citation does not cover by itself.
        for d in covers.dims.iter().filter(|d| d.what == "population") {
            let said = |marks: &[String]| marks.iter().any(|m| self.says_of_level(m, at, false));
            if !said(&d.marks) || matches!(&*self.pairing(d), Pairing::Unique(..)) {
                continue;
            }
            if let Some((other, _)) = d.others.iter().find(|(_, marks)| said(marks)) {
                return Some(format!(
                    "the sentence says {} and {other} ({}) of this number; the citation covers {} alone",
                    d.cited, d.what, d.cited
                ));
            }
        }
        let base = covers.base.as_ref()?;
        let (lo, hi) = self.near[self.starts.binary_search(&at).ok()?];
        let from = self.populations.partition_point(|(p, _, _)| *p < lo);
        self.populations[from..].iter().take_while(|(p, _, _)| *p <= hi).find_map(|(_, phrase, words)| {
            words.iter().any(|w| !attribution::base_has(base, w)).then(|| {
                format!(
                    "the sentence says “{phrase}”, a population recite could not match to the citation's base {}",
                    base.name
                )
            })
        })
    }

    /// Whether every mention of a period (`marks`) in the sentence is another number's in a way
    /// that keeps it from the number at `at`: after and nearer a change, whose reference it is
    /// (`down 2.5 points on W5`), or after and nearer a level the sentence compares this one
    /// with (`44.2%, compared with 46.7% in W5`). Not when a table header or list lead-in names
    /// it.
    fn period_of_another(&self, marks: &[String], at: usize) -> bool {
        let Ok(i) = self.starts.binary_search(&at) else { return false };
        if self
            .subjects
            .get(i)
            .and_then(|s| s.as_deref())
            .is_some_and(|sub| marks.iter().any(|m| whole_words(sub, m).next().is_some()))
            || !self.same_len
        {
            return false;
        }
        let mut mentions = marks.iter().flat_map(|m| self.phrase_mentions(m).to_vec()).peekable();
        mentions.peek().is_some()
            && mentions.all(|p| {
                if after_since(&self.lower[..p - self.offset]) {
                    return true;
                }
                let j = self.near.partition_point(|&(lo, _)| lo <= p).saturating_sub(1);
                // Before its number, a period heads what follows (`in W7, 46.2% vs 40.3%`).
                if j == i || p < self.starts[j] {
                    return false;
                }
                let (a, b) =
                    if j < i { (self.ends[j].0, self.starts[i]) } else { (self.ends[i].0, self.starts[j]) };
                let gap = self.lower.get(a.min(b) - self.offset..b.max(a) - self.offset).unwrap_or("");
                self.ends[j].1 || gap.split(|c: char| !c.is_alphanumeric()).any(|w| COMPARISONS.contains(&w))
            })
    }

    /// How many words of the population phrases said of the number at `at` (`among adults
    /// aware of Versant`) `src`'s cited base has ([`attribution::base_says`]): what tells
    /// candidates on two bases apart when the sentence names one of them.
    pub(super) fn population_said(&self, src: &Source, at: usize) -> usize {
        let Some(base) = src.covers.as_ref().and_then(|c| c.base.as_ref()) else { return 0 };
        let Ok(i) = self.starts.binary_search(&at) else { return 0 };
        let (lo, hi) = self.near[i];
        let from = self.populations.partition_point(|(p, _, _)| *p < lo);
        self.populations[from..]
            .iter()
            .take_while(|(p, _, _)| *p <= hi)
            .flat_map(|(_, _, words)| words)
            .filter(|w| attribution::base_says(base, w))
            .count()
    }

    /// The population phrase nearest the number at `at` that is its own (`among aware adults`
    /// after it, nearer to it than to any other number), if any.
    fn own_population(&self, at: usize) -> Option<&str> {
        let (lo, hi) = self.near[self.starts.binary_search(&at).ok()?];
        let from = self.populations.partition_point(|(p, _, _)| *p < lo);
        self.populations[from..].iter().take_while(|(p, _, _)| *p <= hi).map(|(_, t, _)| t.as_str()).next()
    }

    /// Whether a change's two ends fit the periods, populations and brands the sentence names
    /// (docs/answers.md, "Changes"): both ends are among the options it names of a dimension
    /// (`between W5 and W6`, `Versant's … than Corvana's`, `Versant's … fell`), except that one
    /// period named (`since W5`) needs only one end; and the ends differ in one dimension, or in
    /// several only where the sentence names two options of each. A sentence naming none, or an end the catalog knows nothing
    /// of, constrains nothing.
    pub(super) fn fits_pair(&self, a: &Source, b: &Source, at: usize) -> bool {
        let (Some(ca), Some(cb)) = (&a.covers, &b.covers) else { return true };
        let named = |marks: &[String]| marks.iter().any(|m| self.says(m, at, true));
        // A change compares two results that differ in one respect (two waves, two brands),
        // or in several only where the sentence names both sides of each.
        let mut differ = 0;
        let mut both_named = true;
        let fits = ca.dims.iter().all(|d| {
            let Some(e) = cb.dims.iter().find(|e| e.what == d.what) else { return true };
            let count = usize::from(named(&d.marks)) + d.others.iter().filter(|(_, m)| named(m)).count();
            if d.cited != e.cited {
                differ += 1;
                both_named &= count >= 2;
            }
            let (x, y) = (named(&d.marks), named(&e.marks));
            match count {
                0 => true,
                // `since W5`: the other end is the wave the answer is about.
                1 if d.what == "period" => x || y,
                _ => x && y,
            }
        });
        fits && (differ <= 1 || both_named)
    }

    /// Whether the two ends of a pair differ in a dimension whose two options, one each end's,
    /// the sentence both names (`Versant's … Corvana's`).
    pub(super) fn contrasts(&self, a: &Source, b: &Source, at: usize) -> bool {
        let (Some(ca), Some(cb)) = (&a.covers, &b.covers) else { return false };
        let named = |marks: &[String]| marks.iter().any(|m| self.says(m, at, true));
        ca.dims.iter().any(|d| {
            cb.dims
                .iter()
                .any(|e| e.what == d.what && e.cited != d.cited && named(&d.marks) && named(&e.marks))
        })
    }

    /// How the sentence's levels pair with the options of `d` (computed once per sentence and
    /// set of options).
    fn pairing(&self, d: &attribution::Dim) -> Rc<Pairing> {
        let mut names: Vec<&str> =
            std::iter::once(d.cited.as_str()).chain(d.others.iter().map(|(n, _)| n.as_str())).collect();
        names.sort_unstable();
        let key = format!("{}\u{0}{}", d.what, names.join("\u{0}"));
        if let Some(p) = self.pairings.borrow().get(&key) {
            return p.clone();
        }
        let p = Rc::new(self.pair(d));
        self.pairings.borrow_mut().insert(key, p.clone());
        p
    }

    /// [`Self::pairing`], computed. A list of levels (only joining words, subject phrases,
    /// options' names and bases between them) pairs uniquely when the options it names stand
    /// one per gap with exactly one gap empty: `28.7% for Versant and 26.8% for Northwind`
    /// (each after its level), `Versant at 26.8% and Northwind at 28.7%` (each before),
    /// `in W6 44%, against 47% in W5`. All the options before the first level or after the
    /// last pair in order only with `respectively`, or for periods (`from 47% to 44% between
    /// W5 and W6`).
    fn pair(&self, d: &attribution::Dim) -> Pairing {
        let k = self.levels.len();
        if k < 2 || !self.same_len {
            return Pairing::None;
        }
        let options = std::iter::once((&d.cited, &d.marks)).chain(d.others.iter().map(|(n, m)| (n, m)));
        let mut mentions: Vec<(usize, usize, &str)> = Vec::new();
        let mut words: Vec<&str> = Vec::new();
        for (name, marks) in options {
            for m in marks {
                mentions.extend(self.phrase_mentions(m).iter().map(|&p| (p, m.len(), name.as_str())));
                words.extend(m.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()));
            }
        }
        mentions.sort_unstable();
        let mut named: Vec<&str> = mentions.iter().map(|(_, _, n)| *n).collect();
        named.sort_unstable();
        named.dedup();
        if named.len() < 2 {
            return Pairing::None;
        }
        for w in self.levels.windows(2) {
            let gap = self.lower.get(w[0].1 - self.offset..w[1].0 - self.offset);
            if !gap.is_some_and(|g| listish(g, &words)) {
                return Pairing::None;
            }
        }
        // A name in brackets right after a level is that level's own (`19.6% (Corvana)`); the
        // other levels pair with the names left, as below.
        let mut pinned: HashMap<usize, &str> = HashMap::new();
        let mut rest: Vec<(usize, &str)> = Vec::new();
        for &(p, len, name) in &mentions {
            let j = self.levels.partition_point(|&(_, e)| e <= p);
            let bracketed = j > 0
                && self
                    .lower
                    .get(self.levels[j - 1].1 - self.offset..p - self.offset)
                    .is_some_and(|b| b.trim() == "(")
                && self.lower.get(p + len - self.offset..).is_some_and(|a| a.trim_start().starts_with(')'));
            if bracketed && pinned.get(&(j - 1)).is_none_or(|n| *n == name) {
                pinned.insert(j - 1, name);
            } else {
                rest.push((p, name));
            }
        }
        // The levels no bracket names, and (slot j) the options named before the j-th of them
        // (and after the one before); slot `free.len()`: after the last.
        let free: Vec<usize> = (0..k).filter(|i| !pinned.contains_key(i)).collect();
        let kf = free.len();
        let mut slots: Vec<Vec<&str>> = vec![Vec::new(); kf + 1];
        for &(p, name) in &rest {
            let j = free.partition_point(|&i| self.levels[i].1 <= p);
            if !slots[j].contains(&name) {
                slots[j].push(name);
            }
        }
        let ambiguous = Pairing::Ambiguous(named.iter().map(|n| n.to_string()).collect());
        let pair = |f: &dyn Fn(usize) -> String| {
            let mut map: HashMap<usize, String> =
                free.iter().enumerate().map(|(j, &i)| (self.levels[i].0, f(j))).collect();
            map.extend(pinned.iter().map(|(&i, n)| (self.levels[i].0, n.to_string())));
            let mut first: HashMap<String, usize> = HashMap::new();
            for &(s, _) in &self.levels {
                first.entry(map[&s].clone()).or_insert(s);
            }
            Pairing::Unique(map, first)
        };
        if kf == 0 {
            return pair(&|_| String::new());
        }
        // All options at one end, one per level: in order, where the sentence says so.
        let in_order = d.what == "period" || IN_ORDER.iter().any(|w| self.lower.contains(w));
        for end in [0, kf] {
            if slots[end].len() == kf
                && in_order
                && slots.iter().enumerate().all(|(j, s)| j == end || s.is_empty())
            {
                return pair(&|j| slots[end][j].to_string());
            }
        }
        if slots.iter().any(|s| s.len() > 1) {
            return ambiguous;
        }
        let empty: Vec<usize> = (0..=kf).filter(|&j| slots[j].is_empty()).collect();
        let &[e] = empty.as_slice() else { return ambiguous };
        pair(&|j| slots[if j < e { j } else { j + 1 }][0].to_string())
    }

    /// The stretch of the answer whose mentions the number at `at` owns.
    fn owned(&self, at: usize) -> (usize, usize) {
        match self.starts.binary_search(&at) {
            Ok(i) => self.owns[i],
            Err(i) => (
                if i == 0 { 0 } else { (self.starts[i - 1] + at).div_ceil(2) },
                self.starts.get(i).map_or(usize::MAX, |&r| (at + r) / 2),
            ),
        }
    }

    /// Word-start mentions of `stem` (lower case) in the sentence.
    fn stem_mentions(&self, stem: &str) -> Rc<[usize]> {
        if let Some(m) = self.stems.borrow().get(stem) {
            return m.clone();
        }
        let lower = &self.lower;
        work(lower.len());
        let word_start = |p: usize| p == 0 || !lower[..p].ends_with(|c: char| c.is_alphanumeric());
        let nps = |p: usize| lower.get(p..).is_some_and(|r| r.starts_with(NET_PROMOTER)) && word_start(p);
        let mut found: Vec<usize> = lower
            .match_indices(stem)
            .map(|(p, _)| p)
            .filter(|&p| word_start(p))
            .filter(|&p| !describes_people(&lower[p..]))
            // `promoter` in `net promoter score` names the NPS, not the promoters' share.
            .filter(|&p| !(p >= 4 && nps(p - 4)))
            .collect();
        if NPS_STEMS.contains(&stem) {
            found.extend(lower.match_indices(NET_PROMOTER).map(|(p, _)| p).filter(|&p| word_start(p)));
            found.sort_unstable();
            found.dedup();
        }
        let found: Rc<[usize]> = found.into_iter().map(|p| self.offset + p).collect();
        self.stems.borrow_mut().insert(stem.to_string(), found.clone());
        found
    }

    /// Mentions of a record's marker or node reference in the sentence.
    fn ref_mentions(&self, needle: &str) -> Rc<[usize]> {
        if let Some(m) = self.refs.borrow().get(needle) {
            return m.clone();
        }
        work(self.sentence.len());
        let found: Rc<[usize]> = self.sentence.match_indices(needle).map(|(p, _)| self.offset + p).collect();
        self.refs.borrow_mut().insert(needle.to_string(), found.clone());
        found
    }

    /// Byte distance from `at` to the nearest of `found` (sorted); with `owned`, only among
    /// those the number at `at` owns.
    fn nearest(&self, found: &[usize], at: usize, owned: bool) -> Option<usize> {
        work(1);
        let (lo, hi) = if owned { self.owned(at) } else { (0, usize::MAX) };
        let k = found.partition_point(|&p| p < at);
        let left = k.checked_sub(1).map(|j| found[j]).filter(|&p| p >= lo).map(|p| at - p);
        let right = found.get(k).copied().filter(|&p| p <= hi).map(|p| p - at);
        match (left, right) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Byte distance from the number at `at` to the nearest mention of `measure`, if any; with
    /// `owned`, only the mentions that number owns: those nearer to it than to any other number
    /// of the sentence (`44% would consider it, and 58% would recommend it`: the 58% is not
    /// about consideration), or heading a list it is an item of.
    fn mention(&self, measure: &str, at: usize, owned: bool) -> Option<usize> {
        // A conversion (`Considered → Purchased`) is mentioned only when both its stages are:
        // `47% would consider it` is about Considered, not about the step from it to Purchased.
        if let Some((from, to)) = measure.split_once('→') {
            let a = self.mention(from.trim(), at, owned)?;
            let b = self.mention(to.trim(), at, owned)?;
            return Some(a.max(b));
        }
        let st = stem(measure);
        if st.len() < 2 {
            return None;
        }
        let found = self.stem_mentions(&st);
        if !self.same_len {
            // Lower-casing moved byte offsets: "mentioned somewhere" is all that is known.
            return (!found.is_empty()).then_some(0);
        }
        // Not named in the sentence: a table cell's headers or a bullet's lead-in may name it,
        // farther than anything in the sentence.
        self.nearest(&found, at, owned).or_else(|| {
            let sub = self.subjects.get(self.starts.binary_search(&at).ok()?)?.as_deref()?;
            work(sub.len());
            sub.match_indices(st.as_str())
                .any(|(p, _)| p == 0 || !sub[..p].ends_with(|c: char| c.is_alphanumeric()))
                .then_some(self.sentence.len() + 1)
        })
    }

    /// What the sentence's mention of `src`'s measure nearest the number at `at` is said to be
    /// of, when that is something the citation does not cover: `awareness of the new campaign`
    /// (a determiner, then words naming neither the cited column nor a sibling, nor a brand or
    /// product in general). Such a sentence is not about the cited measure: its number is not a
    /// misquote of it.
    pub(super) fn measure_of_another(&self, src: &Source, at: usize) -> Option<String> {
        if src.record.is_some() || !self.same_len || src.measure.contains('→') {
            return None;
        }
        let st = stem(&src.measure);
        if st.len() < 2 {
            return None;
        }
        let found = self.stem_mentions(&st);
        let p = found.iter().copied().min_by_key(|&p| p.abs_diff(at))?;
        let rest = self.lower.get(p - self.offset..)?;
        let rest = rest.trim_start_matches(|c: char| c.is_alphanumeric() || c == '-');
        let mut words = rest.split_whitespace();
        if words.next() != Some("of") {
            return None;
        }
        if !matches!(words.next(), Some("the" | "a" | "an" | "this" | "that" | "its" | "their" | "our")) {
            return None;
        }
        let object: Vec<&str> = words
            .take(3)
            .map(|w| w.trim_end_matches(|c: char| !c.is_alphanumeric()))
            .take_while(|w| !w.is_empty() && !OBJECT_STOPS.contains(w))
            .collect();
        let covered = |w: &str| {
            GENERIC_OBJECTS.contains(&w)
                || attribution::population_word(w)
                || src.covers.as_ref().is_some_and(|c| {
                    c.dims
                        .iter()
                        .filter(|d| d.what == "column label")
                        .any(|d| d.marks.iter().chain(d.others.iter().flat_map(|(_, m)| m)).any(|m| m == w))
                })
        };
        let named = object.iter().any(|w| w.chars().count() >= 4 && w.chars().all(char::is_alphabetic));
        (named && !object.iter().any(|w| covered(w))).then(|| object.join(" "))
    }

    /// Byte distance from the number at `at` to the nearest place the sentence names `src`: its
    /// measure, or for a MOCA-cited record its marker or node reference (as [`Self::mention`]).
    pub(super) fn names(&self, src: &Source, at: usize, owned: bool) -> Option<usize> {
        let Some(r) = &src.record else {
            return self.mention(&src.measure, at, owned);
        };
        r.refs
            .iter()
            .filter(|n| !n.is_empty())
            .filter_map(|needle| self.nearest(&self.ref_mentions(needle), at, owned))
            .min()
    }
}

/// Words that open a population phrase (`among women`, `of men aged 18-34`, `for non-users`).
const POPULATION_OPENERS: &[&str] = &["among", "amongst", "of", "for"];

/// Words that end a population phrase: verbs and the words opening another phrase.
const PHRASE_STOPS: &[&str] = &[
    "is", "are", "was", "were", "would", "will", "say", "says", "said", "have", "has", "had", "do", "does",
    "did", "who", "that", "which", "with", "in", "at", "on", "to", "than", "vs", "versus", "compared",
    "while", "against", "from", "by", "rose", "fell", "stands", "sits", "into", "as", "over", "per",
];

/// The population phrases of a sentence (lower case, `offset` its start in the answer): an
/// opener ([`POPULATION_OPENERS`]) and the words after it, up to six, to a punctuation mark,
/// a number or a verb ([`PHRASE_STOPS`]), kept when one of them is a population word or an
/// age band ([`attribution::population_word`]). Each as where it starts, its text and words.
fn population_phrases(lower: &str, offset: usize) -> Vec<(usize, String, Vec<String>)> {
    let mut out = Vec::new();
    for opener in POPULATION_OPENERS {
        for p in whole_words(lower, opener) {
            let rest = &lower[p + opener.len()..];
            // At most 120 bytes: a phrase costs the same whatever the sentence's length.
            let window = (0..=rest.len().min(120)).rev().find(|&i| rest.is_char_boundary(i)).unwrap_or(0);
            let rest = &rest[..window];
            let stop = rest
                .find(|c: char| {
                    matches!(c, ',' | ';' | ':' | '.' | '(' | ')' | '!' | '?' | '\n' | '"' | '%' | '|')
                })
                .unwrap_or(rest.len());
            let mut words: Vec<String> = Vec::new();
            for w in rest[..stop].split_whitespace() {
                let w = w.trim_matches(|c: char| matches!(c, '\'' | '’'));
                let w = w.strip_suffix("'s").or_else(|| w.strip_suffix("’s")).unwrap_or(w);
                let number = !w.is_empty() && w.chars().all(|c| c.is_ascii_digit() || c == '.' || c == ',');
                if words.len() == 6 || number || PHRASE_STOPS.contains(&w) {
                    break;
                }
                words.push(w.to_string());
            }
            if words.iter().any(|w| attribution::population_word(w)) {
                out.push((offset + p, format!("{opener} {}", words.join(" ")), words));
            }
        }
    }
    work(lower.len());
    out.sort();
    out
}
