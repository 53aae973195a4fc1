//! The words the audit reads sentences by: how a measure is mentioned ([`stem`]), what joins
//! the items of a list, compares two levels or ends a phrase, and where a phrase stands as
//! whole words. Plain text rules, no state.

/// The stem a sentence mentions a measure by: its name's first six letters, case-folded
/// (`consid` for Considered and consideration).
pub(super) fn stem(measure: &str) -> String {
    measure.to_lowercase().chars().filter(|c| c.is_alphanumeric()).take(6).collect()
}

/// Words that join the items of a list of numbers (`26.8% for Versant and 28.7% for Northwind`).
pub(super) const LIST_JOINS: &[&str] =
    &["and", "or", "vs", "versus", "against", "while", "compared", "with", "respectively"];

/// Words that open the subject phrase of one item of a list (`for Versant`, `among women`).
pub(super) const LIST_SUBJECTS: &[&str] = &["for", "among", "in", "at", "of", "the"];

/// What says a list's options pair with its levels in the order both are written (`Versant and
/// Corvana are at 44% and 31% respectively`, `…, in that order`).
pub(super) const IN_ORDER: &[&str] = &["respectively", "in that order", "in this order", "in the same order"];

/// Words that end what a measure is said to be of (`awareness of the campaign is 33%`).
pub(super) const OBJECT_STOPS: &[&str] = &[
    "is", "was", "are", "were", "stands", "stood", "sits", "rose", "fell", "reached", "at", "in", "among",
    "for", "has", "had", "remains", "stays",
];

/// What a measure may be said to be of that is the cited column's thing in general.
pub(super) const GENERIC_OBJECTS: &[&str] =
    &["brand", "brands", "product", "products", "company", "category", "label", "name", "range", "line"];

/// How a sentence names the net promoter score in words; [`NPS_STEMS`] are its measures' stems
/// (`NPS`, `Net promoter score`).
pub(super) const NET_PROMOTER: &str = "net promoter";

/// The stems of a measure named by [`NET_PROMOTER`].
pub(super) const NPS_STEMS: &[&str] = &["nps", "netpro"];

/// Whether the word `text` starts with describes people rather than names a measure: it is
/// followed by `adults`, `respondents`, `people` or `consumers` (`aware adults` are a base,
/// not the Aware measure; `loyal customers` still name loyalty).
pub(super) fn describes_people(text: &str) -> bool {
    let rest = text.trim_start_matches(char::is_alphanumeric);
    let next = rest.trim_start_matches(' ');
    if next.len() == rest.len() {
        return false;
    }
    let word: String =
        next.chars().take(24).take_while(|c| c.is_alphanumeric() || *c == '-').collect::<String>();
    matches!(word.as_str(), "adults" | "adult" | "respondents" | "people" | "consumers")
}

/// Words between two levels that compare them (`44.2%, compared with 46.7% in W5`): a period
/// nearer the second is not the first's.
pub(super) const COMPARISONS: &[&str] = &["compared", "against", "vs", "versus", "than", "from"];

/// Whether `before`, the text before a mention, ends in the word `since`: the mention is
/// where a change starts (`since W5`).
pub(super) fn after_since(before: &str) -> bool {
    let t = before.trim_end();
    t.len() < before.len() && t.strip_suffix("since").is_some_and(|r| !r.ends_with(char::is_alphanumeric))
}

/// Where `phrase` stands in `text` as whole words (no letter or digit touching either end).
pub(super) fn whole_words<'t>(text: &'t str, phrase: &'t str) -> impl Iterator<Item = usize> + 't {
    text.match_indices(phrase).map(|(p, _)| p).filter(move |&p| {
        let before = text[..p].chars().next_back();
        let after = text[p + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Words that may stand between two levels of a list pairing them with options (`Versant at
/// 26.8% and Northwind at 28.7%`, `in W6 44%, against 47% in W5`), besides joins, subject
/// openers, the options' names and a stated base (`(n = 4,654)`).
pub(super) const LIST_LINKS: &[&str] =
    &["to", "from", "is", "was", "are", "were", "s", "its", "their", "on", "by", "n"];

/// Whether `gap` (lower case), the text between two levels, leaves them items of one list
/// naming options whose words are `words` ([`super::context::Context`]'s pairing).
pub(super) fn listish(gap: &str, words: &[&str]) -> bool {
    if gap.len() > 80 || gap.contains(['\n', '.', '!', '?']) {
        return false;
    }
    gap.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).all(|w| {
        LIST_JOINS.contains(&w)
            || LIST_SUBJECTS.contains(&w)
            || LIST_LINKS.contains(&w)
            || words.contains(&w)
            || w.bytes().all(|b| b.is_ascii_digit())
    })
}

/// Whether `gap`, the text between two numbers, joins them as items of one list, with `after`
/// the text after the second: only joining words and each item's subject phrase between them
/// (`for Versant and`, `, `, `among women, and`), and the second followed by its own subject
/// phrase, a join or the end of a clause — not by a verb (`44% would consider it, and 58%
/// would recommend it` is two clauses).
pub(super) fn joins_list(gap: &str, after: &str) -> bool {
    if gap.len() > 60 || gap.contains(['\n', '.', ':', '(', ')', '=']) {
        return false;
    }
    let written: Vec<&str> = gap.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    if written.len() > 6 {
        return false;
    }
    let words: Vec<String> = written.iter().map(|w| w.to_lowercase()).collect();
    let joined = gap.contains([',', ';']) || words.iter().any(|w| LIST_JOINS.contains(&w.as_str()));
    // Every word is a join, opens a subject phrase, or stands in one; a name (a capitalised
    // word) opens one too: `Versant at 31% and Corvana at 44%`, `Versant 44%, Corvana 31%`.
    let mut in_subject = false;
    for (w, as_written) in words.iter().zip(&written) {
        if LIST_JOINS.contains(&w.as_str()) {
            in_subject = false;
        } else if LIST_SUBJECTS.contains(&w.as_str()) || as_written.starts_with(char::is_uppercase) {
            in_subject = true;
        } else if !in_subject {
            return false;
        }
    }
    let next = after
        .trim_start_matches(|c: char| c.is_whitespace())
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("")
        .to_lowercase();
    let follows = next.is_empty()
        || LIST_JOINS.contains(&next.as_str())
        || ["for", "among", "in", "at"].contains(&next.as_str());
    joined && follows
}
