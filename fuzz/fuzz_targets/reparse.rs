//! Incremental reparsing agrees with parsing from scratch.
//!
//! Input layout: `S0 S1 L  TEXT [\0 INSERT]`. The main edit deletes `L` bytes (a
//! byte, 0..=255) from `u16::from_le_bytes([S0, S1]) % (len + 1)` in TEXT (both
//! ends moved back to char boundaries) and inserts INSERT (empty if there is no
//! `\0`). Since fuzzed text mostly has errors, and an item with errors is always
//! reparsed in full, up to three more edits (the same insertion, deleting
//! `L % 4` bytes), and as many that double one character, fall inside top-level
//! items, where the incremental path is taken whenever the item stays clean.
//!
//! For each edit, `parse(TEXT).reparse(edit)` must give the same green tree and
//! the same errors as `parse(edited TEXT)`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use syntax::{TextEdit, TextRange, TextSize};

fuzz_target!(|data: &[u8]| {
    let [s0, s1, del, rest @ ..] = data else {
        return;
    };
    let (text, insert) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let (Ok(text), Ok(insert)) = (std::str::from_utf8(text), std::str::from_utf8(insert)) else {
        return;
    };
    let offset = usize::from(u16::from_le_bytes([*s0, *s1]));
    let old = syntax::parse(text);

    let start = floor_char_boundary(text, offset % (text.len() + 1));
    let end = floor_char_boundary(text, start + usize::from(*del)).max(start);
    check(&old, text, edit(start, end, insert));

    let items: Vec<TextRange> = old
        .syntax_node()
        .children()
        .map(|n| n.text_range())
        .collect();
    for k in 0..items.len().min(3) {
        let range = items[(usize::from(*del) + k) % items.len()];
        let (lo, len) = (usize::from(range.start()), usize::from(range.len()));
        if len < 2 {
            continue;
        }
        let start = floor_char_boundary(text, lo + 1 + offset % (len - 1));
        let end = floor_char_boundary(text, start + usize::from(*del % 4)).max(start);
        check(&old, text, edit(start, end, insert));
        // Doubling the character there (a letter of a name, a digit, a space)
        // mostly keeps the item valid: that exercises the splice itself.
        if let Some(c) = text[start..].chars().next() {
            check(&old, text, edit(start, start, c.encode_utf8(&mut [0; 4])));
        }
    }
});

fn edit(start: usize, end: usize, insert: &str) -> TextEdit {
    TextEdit {
        delete: TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32)),
        insert: insert.to_string(),
    }
}

fn check(old: &syntax::Parse, text: &str, edit: TextEdit) {
    let incremental = old.reparse(&edit);
    let mut edited = text.to_string();
    edit.apply(&mut edited);
    let full = syntax::parse(&edited);

    assert_eq!(
        incremental.syntax_node().to_string(),
        edited,
        "the reparsed tree's text is not the edited text"
    );
    assert_eq!(
        incremental.errors(),
        full.errors(),
        "reparse and parse disagree on the errors (edit {edit:?})"
    );
    assert!(
        incremental.green() == full.green(),
        "reparse and parse give different trees (edit {edit:?})\n--- incremental ---\n{}\n--- full ---\n{}",
        incremental.debug_dump(),
        full.debug_dump()
    );
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}
