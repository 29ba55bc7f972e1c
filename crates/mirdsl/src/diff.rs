//! Unified diffs of two texts, line by line (`mirdsl fmt --check`).
//!
//! Lines are compared by Myers' algorithm (the shortest edit script) after
//! the common head and tail are set aside. Past [`MAX_EDITS`] differing
//! lines the middle is shown as removed and added whole: still a correct
//! diff, only not the shortest, and never quadratic in memory.

use std::fmt::Write;

/// The most edits the shortest script is searched for.
const MAX_EDITS: usize = 2_000;

/// Lines of context around each change.
const CONTEXT: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Removed,
    Added,
}

/// `text` split into lines, each with its line break (the last may have none).
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The edit script turning `a` into `b`: each step is an operation and the
/// index of its line in `a` (`Same`, `Removed`) or `b` (`Added`).
fn script(a: &[&str], b: &[&str]) -> Vec<(Op, usize)> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut out: Vec<(Op, usize)> = (0..head).map(|i| (Op::Same, i)).collect();
    match myers(ma, mb) {
        Some(middle) => out.extend(middle.into_iter().map(|(op, i)| (op, i + head))),
        None => {
            out.extend((0..ma.len()).map(|i| (Op::Removed, i + head)));
            out.extend((0..mb.len()).map(|i| (Op::Added, i + head)));
        }
    }
    out.extend((a.len() - tail..a.len()).map(|i| (Op::Same, i)));
    out
}

/// Myers' greedy shortest edit script, or `None` past [`MAX_EDITS`].
fn myers(a: &[&str], b: &[&str]) -> Option<Vec<(Op, usize)>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (a.len() + b.len()).min(MAX_EDITS) as isize;
    let offset = max + 1;
    let mut v = vec![0isize; 2 * offset as usize + 1];
    // The frontier after each number of edits, for the way back.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'search: for d in 0..=max {
        // The frontier before this step, `k` in `-d - 1..=d + 1`.
        trace.push(v[(offset - d - 1) as usize..=(offset + d + 1) as usize].to_vec());
        for k in (-d..=d).step_by(2) {
            let at = |k: isize| (k + offset) as usize;
            let mut x = if k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]) {
                v[at(k + 1)]
            } else {
                v[at(k - 1)] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[at(k)] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'search;
            }
        }
    }
    let found = found?;
    // Walk back from (n, m) through the saved frontiers.
    let mut steps = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..=found).rev() {
        let v = &trace[d as usize];
        let at = |k: isize| (k + d + 1) as usize;
        let k = x - y;
        let prev_k = if k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = v[at(prev_k)];
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            x -= 1;
            y -= 1;
            steps.push((Op::Same, x as usize));
        }
        if x == prev_x {
            y -= 1;
            steps.push((Op::Added, y as usize));
        } else {
            x -= 1;
            steps.push((Op::Removed, x as usize));
        }
    }
    while x > 0 && y > 0 {
        x -= 1;
        y -= 1;
        steps.push((Op::Same, x as usize));
    }
    steps.reverse();
    Some(steps)
}

/// A line of a hunk: its mark, its text, and a note when it ends the file
/// without a line break.
fn push_line(out: &mut String, mark: char, line: &str) {
    out.push(mark);
    match line.strip_suffix('\n') {
        Some(l) => {
            out.push_str(l);
            out.push('\n');
        }
        None => {
            out.push_str(line);
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

/// The unified diff from `old` to `new` with `---`/`+++` headers naming
/// `old_name` and `new_name`; empty when the texts are equal.
pub fn unified(old_name: &str, new_name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let (a, b) = (lines(old), lines(new));
    let steps = script(&a, &b);
    // Where each step stands in each text (lines before it).
    let mut pos = Vec::with_capacity(steps.len() + 1);
    let (mut i, mut j) = (0, 0);
    for &(op, _) in &steps {
        pos.push((i, j));
        match op {
            Op::Same => {
                i += 1;
                j += 1;
            }
            Op::Removed => i += 1,
            Op::Added => j += 1,
        }
    }
    pos.push((i, j));
    let changed: Vec<usize> = (0..steps.len())
        .filter(|&s| steps[s].0 != Op::Same)
        .collect();
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    let mut c = 0;
    while c < changed.len() {
        // A hunk: changes closer than twice the context share one.
        let start = changed[c].saturating_sub(CONTEXT);
        let mut last = changed[c];
        while c + 1 < changed.len() && changed[c + 1] <= last + 2 * CONTEXT + 1 {
            c += 1;
            last = changed[c];
        }
        c += 1;
        let end = (last + CONTEXT + 1).min(steps.len());
        let (a0, b0) = pos[start];
        let (a1, b1) = pos[end];
        let range = |from: usize, to: usize| {
            let count = to - from;
            // An empty range names the line before it.
            let first = if count == 0 { from } else { from + 1 };
            if count == 1 {
                format!("{first}")
            } else {
                format!("{first},{count}")
            }
        };
        let _ = writeln!(out, "@@ -{} +{} @@", range(a0, a1), range(b0, b1));
        for &(op, k) in &steps[start..end] {
            match op {
                Op::Same => push_line(&mut out, ' ', a[k]),
                Op::Removed => push_line(&mut out, '-', a[k]),
                Op::Added => push_line(&mut out, '+', b[k]),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies a unified diff made by [`unified`] to `old`.
    fn apply(old: &str, diff: &str) -> String {
        let a = lines(old);
        let mut out = String::new();
        let mut next = 0;
        let mut it = diff.lines().skip(2).peekable();
        while let Some(header) = it.next() {
            let from = header
                .strip_prefix("@@ -")
                .unwrap()
                .split([',', ' '])
                .next()
                .unwrap()
                .parse::<usize>()
                .unwrap();
            // The hunk's first line (1-based); 0 or the line before when empty.
            let mut at = from.saturating_sub(1);
            if header.starts_with(&format!("@@ -{from},0 ")) {
                at = from;
            }
            out.extend(a[next..at].iter().copied());
            next = at;
            while let Some(l) = it.peek() {
                if l.starts_with("@@") {
                    break;
                }
                let l = it.next().unwrap();
                let eol = if it.peek() == Some(&"\\ No newline at end of file") {
                    it.next();
                    ""
                } else {
                    "\n"
                };
                match l.chars().next() {
                    Some(' ') => {
                        out.push_str(&l[1..]);
                        out.push_str(eol);
                        next += 1;
                    }
                    Some('-') => next += 1,
                    Some('+') => {
                        out.push_str(&l[1..]);
                        out.push_str(eol);
                    }
                    _ => panic!("bad line {l:?}"),
                }
            }
        }
        out.extend(a[next..].iter().copied());
        out
    }

    #[test]
    fn diffs_have_headers_hunks_and_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\nl\n";
        let d = unified("a/x", "b/x", old, new);
        assert_eq!(
            d,
            "--- a/x\n+++ b/x\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n@@ -9,3 +9,4 @@\n i\n j\n k\n+l\n"
        );
        assert_eq!(apply(old, &d), new);
        // Six unchanged lines between changes: one hunk.
        let near = "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nK\n";
        let d = unified("a/x", "b/x", old, near);
        assert!(d.contains("@@ -1,11 +1,11 @@"), "{d}");
        assert_eq!(d.matches("@@ -").count(), 1, "{d}");
        assert_eq!(apply(old, &d), near);
        assert_eq!(unified("a", "b", old, old), "");
    }

    #[test]
    fn diffs_apply_back() {
        let cases = [
            ("", "x\n"),
            ("x\n", ""),
            ("x", "x\n"),
            ("a\nb\nc\n", "c\nb\na\n"),
            (
                "graph f(x) {\n  return x\n}\n",
                "graph f(x) {\n  y = x\n  return y\n}\n",
            ),
            ("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "0\n1\n2\n4\n5\n6\n7\n9\n10"),
        ];
        for (old, new) in cases {
            let d = unified("a", "b", old, new);
            assert_eq!(apply(old, &d), new, "{old:?} -> {new:?}:\n{d}");
        }
        // Past the edit limit: whole middles, still correct.
        let old: String = (0..3000).map(|i| format!("{i}\n")).collect();
        let new: String = (0..3000).map(|i| format!("{}\n", i * 7)).collect();
        let d = unified("a", "b", &old, &new);
        assert_eq!(apply(&old, &d), new);
    }
}
