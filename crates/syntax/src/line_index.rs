//! Offsets to line/column positions, with columns in bytes, chars or UTF-16
//! code units (LSP clients negotiate which).

use crate::TextSize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnUnit {
    Utf8,
    Utf16,
    Char,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Offset of the start of each line.
    starts: Vec<TextSize>,
    text_len: TextSize,
}

/// A 0-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![TextSize::from(0)];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                starts.push(TextSize::from(i as u32 + 1));
            }
        }
        LineIndex {
            starts,
            text_len: TextSize::of(text),
        }
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The position of `offset` (clamped to the text) with columns in `unit`.
    pub fn line_col(&self, text: &str, offset: TextSize, unit: ColumnUnit) -> LineCol {
        let offset = offset.min(self.text_len);
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = usize::from(self.starts[line]);
        let mut end = usize::from(offset);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let segment = &text[start..end];
        let col = match unit {
            ColumnUnit::Utf8 => segment.len(),
            ColumnUnit::Char => segment.chars().count(),
            ColumnUnit::Utf16 => segment.encode_utf16().count(),
        };
        LineCol {
            line: line as u32,
            col: col as u32,
        }
    }

    /// The offset of a position (clamped to the line's end).
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
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            if units >= pos.col || c == '\n' {
                return start + TextSize::from(i as u32);
            }
            units += match unit {
                ColumnUnit::Utf8 => c.len_utf8() as u32,
                ColumnUnit::Char => 1,
                ColumnUnit::Utf16 => c.len_utf16() as u32,
            };
        }
        let trimmed = line.strip_suffix('\n').unwrap_or(line);
        start + TextSize::of(trimmed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
