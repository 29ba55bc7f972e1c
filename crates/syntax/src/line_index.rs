//! Offsets to line/column positions, with columns in bytes, chars or UTF-16
//! code units (LSP clients negotiate which).
//!
//! A line ends at `\n`, at `\r\n`, or at a lone `\r`, as LSP 3.17 says (and as
//! the lexer does).

use crate::{TextEdit, TextSize};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnUnit {
    Utf8,
    Utf16,
    /// Unicode scalar values (LSP's `utf-32`).
    Char,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Offset of the start of each line.
    starts: Vec<TextSize>,
    text_len: TextSize,
}

/// See [`LineIndex::cursor`].
pub struct LineCursor<'a> {
    index: &'a LineIndex,
    text: &'a str,
    unit: ColumnUnit,
    line: usize,
}

impl LineCursor<'_> {
    /// What [`LineIndex::line_col`] gives.
    pub fn line_col(&mut self, offset: TextSize) -> LineCol {
        let starts = &self.index.starts;
        let offset = offset.min(self.index.text_len);
        // Behind, or more than a few lines ahead: search; else step.
        if starts[self.line] > offset || starts.get(self.line + 8).is_some_and(|&s| s <= offset) {
            self.line = starts.partition_point(|&s| s <= offset) - 1;
        }
        while starts.get(self.line + 1).is_some_and(|&s| s <= offset) {
            self.line += 1;
        }
        self.index.col_in(self.text, self.line, offset, self.unit)
    }
}

/// A 0-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// Whether a line starts at byte `p` of `text` (`p > 0`): the byte before it
/// ends a line break (`\n`, or a `\r` not followed by `\n`).
fn starts_line(text: &[u8], p: usize) -> bool {
    match text[p - 1] {
        b'\n' => true,
        b'\r' => text.get(p) != Some(&b'\n'),
        _ => false,
    }
}

/// The length of the line break at the end of `line` (0, 1 or 2 bytes).
fn break_len(line: &str) -> usize {
    if line.ends_with("\r\n") {
        2
    } else if line.ends_with('\n') || line.ends_with('\r') {
        1
    } else {
        0
    }
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = vec![TextSize::from(0)];
        for (i, &b) in bytes.iter().enumerate() {
            if (b == b'\n' || b == b'\r') && starts_line(bytes, i + 1) {
                starts.push(TextSize::from(i as u32 + 1));
            }
        }
        LineIndex {
            starts,
            text_len: TextSize::of(text),
        }
    }

    /// Updates the index for `edit`, given the text after it: only the lines
    /// around the edit are scanned again (later line starts are shifted).
    pub fn apply(&mut self, new_text: &str, edit: &TextEdit) {
        let bytes = new_text.as_bytes();
        let start = usize::from(edit.delete.start());
        let old_end = usize::from(edit.delete.end());
        let inserted = edit.insert.len();
        let new_end = start + inserted;
        // Line starts before the edit keep their place; so do those two bytes
        // or more after it (a break's bytes and the byte after the break are
        // unchanged), shifted. Those in between are found again.
        // (The first line starts at 0 whatever the edit.)
        let keep_before = self
            .starts
            .partition_point(|&s| usize::from(s) < start)
            .max(1);
        let keep_after = self
            .starts
            .partition_point(|&s| usize::from(s) < old_end + 2)
            .max(1);
        let window_end = (new_end + 2).min(bytes.len() + 1);
        let mut middle = Vec::new();
        for p in start.max(1)..window_end {
            if starts_line(bytes, p) {
                middle.push(TextSize::from(p as u32));
            }
        }
        let delta = inserted as i64 - (old_end - start) as i64;
        let shifted = self.starts[keep_after..]
            .iter()
            .map(|&s| TextSize::from((i64::from(u32::from(s)) + delta) as u32));
        let tail: Vec<TextSize> = middle.into_iter().chain(shifted).collect();
        self.starts.truncate(keep_before);
        self.starts.extend(tail);
        self.text_len = TextSize::of(new_text);
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The position of `offset` (clamped to the text) with columns in `unit`.
    pub fn line_col(&self, text: &str, offset: TextSize, unit: ColumnUnit) -> LineCol {
        let offset = offset.min(self.text_len);
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        self.col_in(text, line, offset, unit)
    }

    /// A cursor for the positions of offsets that mostly come in order (the
    /// tokens of a file): it steps from the last line instead of searching.
    pub fn cursor<'a>(&'a self, text: &'a str, unit: ColumnUnit) -> LineCursor<'a> {
        LineCursor {
            index: self,
            text,
            unit,
            line: 0,
        }
    }

    fn col_in(&self, text: &str, line: usize, offset: TextSize, unit: ColumnUnit) -> LineCol {
        let start = usize::from(self.starts[line]);
        let mut end = usize::from(offset);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let segment = &text[start..end];
        let col = match unit {
            ColumnUnit::Utf8 => segment.len(),
            // ASCII, as most lines are: bytes are units.
            _ if segment.is_ascii() => segment.len(),
            ColumnUnit::Char => segment.chars().count(),
            ColumnUnit::Utf16 => segment.encode_utf16().count(),
        };
        LineCol {
            line: line as u32,
            col: col as u32,
        }
    }

    /// The offset of a position (clamped to the line's end, before its break).
    pub fn offset(&self, text: &str, pos: LineCol, unit: ColumnUnit) -> TextSize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text_len;
        };
        let line_end = self
            .starts
            .get(pos.line as usize + 1)
            .copied()
            .unwrap_or(self.text_len);
        let line = &text[usize::from(start)..usize::from(line_end)];
        let line = &line[..line.len() - break_len(line)];
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            if units >= pos.col {
                return start + TextSize::from(i as u32);
            }
            units += match unit {
                ColumnUnit::Utf8 => c.len_utf8() as u32,
                ColumnUnit::Char => 1,
                ColumnUnit::Utf16 => c.len_utf16() as u32,
            };
        }
        start + TextSize::of(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TextRange;

    #[test]
    fn columns_in_each_unit() {
        let text = "a = 1\n# 日本 ✓ 😀 x\n";
        let index = LineIndex::new(text);
        let x = TextSize::from(text.find(" x").unwrap() as u32 + 1);
        assert_eq!(
            index.line_col(text, x, ColumnUnit::Char),
            LineCol { line: 1, col: 9 }
        );
        assert_eq!(
            index.line_col(text, x, ColumnUnit::Utf16),
            LineCol { line: 1, col: 10 }
        );
        assert_eq!(
            index.line_col(text, x, ColumnUnit::Utf8),
            LineCol { line: 1, col: 18 }
        );
        for unit in [ColumnUnit::Char, ColumnUnit::Utf16, ColumnUnit::Utf8] {
            let lc = index.line_col(text, x, unit);
            assert_eq!(index.offset(text, lc, unit), x);
        }
        assert_eq!(
            index.offset(text, LineCol { line: 0, col: 99 }, ColumnUnit::Char),
            TextSize::from(5)
        );
    }

    /// The cursor gives what `line_col` gives, for offsets in order, in any
    /// order, and far apart.
    #[test]
    fn the_cursor_agrees_with_line_col() {
        let mut text = String::new();
        for i in 0..40 {
            text.push_str(["a = 1\n", "# 日本 ✓ 😀 x\r\n", "\r", "b\rc\n", "\n"][i % 5]);
        }
        let index = LineIndex::new(&text);
        let offsets: Vec<TextSize> = (0..=text.len() as u32).map(TextSize::from).collect();
        let mut shuffled = offsets.clone();
        shuffled.reverse();
        shuffled.extend(offsets.iter().step_by(37));
        for unit in [ColumnUnit::Utf8, ColumnUnit::Utf16, ColumnUnit::Char] {
            for order in [&offsets, &shuffled] {
                let mut cursor = index.cursor(&text, unit);
                for &o in order.iter() {
                    assert_eq!(cursor.line_col(o), index.line_col(&text, o, unit), "{o:?}");
                }
            }
        }
    }

    /// Issue 14, finding 5: a lone CR ends a line, as LF and CRLF do.
    #[test]
    fn cr_lf_and_crlf_are_line_breaks() {
        let text = "a\rb\r\nc\nd\r";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 5);
        let at = |s: &str| TextSize::from(text.find(s).unwrap() as u32);
        for (s, line) in [("a", 0), ("b", 1), ("c", 2), ("d", 3)] {
            assert_eq!(
                index.line_col(text, at(s), ColumnUnit::Utf16),
                LineCol { line, col: 0 },
                "{s}"
            );
        }
        assert_eq!(
            index.line_col(text, TextSize::of(text), ColumnUnit::Utf16),
            LineCol { line: 4, col: 0 }
        );
        // A column past the end stops before the line break, whichever it is.
        for line in 0..4 {
            let o = index.offset(text, LineCol { line, col: 9 }, ColumnUnit::Utf8);
            assert_eq!(usize::from(o), [1, 3, 6, 8][line as usize]);
        }
    }

    /// The incremental update gives what indexing the new text gives, for
    /// every small edit of texts full of `\r`, `\n` and `\r\n`.
    #[test]
    fn incremental_updates_equal_a_fresh_index() {
        let texts = ["a\r\nb\rc\n\r\nd", "\r\r\n\n\r", "xy\r", "\n", ""];
        let inserts = ["", "\r", "\n", "\r\n", "q", "\n\r", "z\rz"];
        for text in texts {
            for a in 0..=text.len() {
                for b in a..=text.len().min(a + 3) {
                    for insert in inserts {
                        let mut new_text = text.to_string();
                        let edit = TextEdit {
                            delete: TextRange::new((a as u32).into(), (b as u32).into()),
                            insert: insert.to_string(),
                        };
                        edit.apply(&mut new_text);
                        let mut index = LineIndex::new(text);
                        index.apply(&new_text, &edit);
                        assert_eq!(
                            index,
                            LineIndex::new(&new_text),
                            "{text:?} with {a}..{b} → {insert:?}"
                        );
                    }
                }
            }
        }
    }
}
