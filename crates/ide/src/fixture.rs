//! Test fixtures in the manner of rust-analyzer: a file text with a `$0`
//! cursor marker (or two, for a range).

use db::{File, RootDb};
use syntax::{TextRange, TextSize};

use crate::Analysis;

pub struct Fixture {
    pub db: RootDb,
    pub file: File,
    pub text: String,
    /// The cursor (`$0`), or the start of the `$0...$0` range.
    pub offset: TextSize,
    pub range: TextRange,
}

impl Fixture {
    pub fn new(fixture: &str) -> Fixture {
        let fixture = trim_indent(fixture);
        let first = fixture.find("$0");
        let (text, range) = match first {
            Some(a) => {
                let rest = fixture[..a].to_string() + &fixture[a + 2..];
                match rest.find("$0") {
                    Some(b) => (
                        rest[..b].to_string() + &rest[b + 2..],
                        TextRange::new((a as u32).into(), (b as u32).into()),
                    ),
                    None => (rest, TextRange::empty((a as u32).into())),
                }
            }
            None => (fixture.clone(), TextRange::empty(0.into())),
        };
        let mut db = RootDb::new();
        let file = db.new_file(&text);
        Fixture {
            db,
            file,
            text,
            offset: range.start(),
            range,
        }
    }

    pub fn analysis(&self) -> Analysis<'_> {
        Analysis::new(&self.db, self.file)
    }

    /// The text with `[`...`]` around each range (for snapshots).
    pub fn annotate(&self, ranges: &[(TextRange, String)]) -> String {
        let mut marks: Vec<(usize, bool, String)> = Vec::new();
        for (r, label) in ranges {
            marks.push((usize::from(r.start()), true, String::new()));
            marks.push((usize::from(r.end()), false, label.clone()));
        }
        marks.sort_by_key(|(o, open, _)| (*o, *open));
        let mut out = String::new();
        let mut last = 0;
        for (o, open, label) in marks {
            out.push_str(&self.text[last..o]);
            if open {
                out.push('[');
            } else {
                out.push(']');
                out.push_str(&label);
            }
            last = o;
        }
        out.push_str(&self.text[last..]);
        out
    }
}

/// Removes the common indentation of a raw string literal's lines.
pub fn trim_indent(text: &str) -> String {
    let text = text.strip_prefix('\n').unwrap_or(text);
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: String = text
        .trim_end()
        .lines()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    out.push('\n');
    out
}
