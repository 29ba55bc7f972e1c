//! Fixture tests of every feature, with `$0` cursors and expect-test snapshots
//! (`UPDATE_EXPECT=1 cargo test -p ide` rewrites them).

use expect_test::{expect, Expect};
use syntax::{TextRange, TextSize};

use crate::fixture::Fixture;
use crate::{CompletionKind, TOKEN_KINDS, TOKEN_MODIFIERS};

mod completion;
mod display;
mod dumps;
mod hover;
mod navigation;

// ---------------------------------------------------------------------------
// Helpers.

fn check_hover(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actual = match f.analysis().hover(f.offset) {
        Some(h) => format!("{}\n---\n{}\n", &f.text[h.range], h.markdown),
        None => "no hover\n".into(),
    };
    expect.assert_eq(&actual);
}

fn check_inlays(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let hints = f.analysis().inlay_hints(None);
    let mut out = String::new();
    let mut last = 0;
    for h in hints {
        let o = usize::from(h.offset);
        out.push_str(&f.text[last..o]);
        out.push_str(&format!("⟨{}⟩", h.label));
        last = o;
    }
    out.push_str(&f.text[last..]);
    expect.assert_eq(&out);
}

fn check_goto(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actual = match f.analysis().goto_definition(f.offset) {
        Some(nav) => f.annotate(&[
            (nav.focus_range, "def".into()),
            (nav.full_range, "full".into()),
        ]),
        None => "no definition\n".into(),
    };
    expect.assert_eq(&actual);
}

fn check_refs(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let refs = f.analysis().references(f.offset, true);
    let ranges: Vec<(TextRange, String)> = refs.into_iter().map(|r| (r, String::new())).collect();
    expect.assert_eq(&f.annotate(&ranges));
}

fn check_highlight(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let hs = f.analysis().highlight(f.offset);
    let ranges: Vec<(TextRange, String)> = hs
        .into_iter()
        .map(|h| (h.range, if h.is_def { "w".into() } else { "r".into() }))
        .collect();
    expect.assert_eq(&f.annotate(&ranges));
}

fn check_rename(fixture: &str, new_name: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actual = match f.analysis().rename(f.offset, new_name) {
        Ok(mut edits) => {
            edits.sort_by_key(|e| std::cmp::Reverse(e.range.start()));
            let mut text = f.text.clone();
            for e in edits {
                text.replace_range(
                    usize::from(e.range.start())..usize::from(e.range.end()),
                    &e.new_text,
                );
            }
            text
        }
        Err(e) => format!("error: {e}\n"),
    };
    expect.assert_eq(&actual);
}

fn check_prepare_rename(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actual = match f.analysis().prepare_rename(f.offset) {
        Ok((r, text)) => format!("{:?} {text}\n", r),
        Err(e) => format!("error: {e}\n"),
    };
    expect.assert_eq(&actual);
}

/// Completions without the primitives (unless `prims`), one a line.
fn completion_list(fixture: &str, prims: bool) -> String {
    let f = Fixture::new(fixture);
    let items = f.analysis().completions(f.offset);
    let mut out = String::new();
    let mut prim_count = 0;
    let mut unsupported = false;
    for c in &items {
        let not_supported = c
            .detail
            .as_deref()
            .is_some_and(|d| d.starts_with("not supported yet"));
        if c.kind == CompletionKind::Primitive && not_supported {
            unsupported = true;
            continue;
        }
        if c.kind == CompletionKind::Primitive && !prims {
            prim_count += 1;
            continue;
        }
        out.push_str(&format!("{:?} {}", c.kind, c.label));
        if c.is_snippet {
            out.push_str(&format!(" => {}", c.insert_text.replace('\n', "⏎")));
        }
        if let Some(d) = &c.detail {
            out.push_str(&format!("  // {d}"));
        }
        out.push('\n');
    }
    if prim_count > 0 {
        out.push_str(&format!("... and {prim_count} primitives\n"));
    }
    if unsupported {
        out.push_str("... then MindSpore primitives mirdsl does not support yet\n");
    }
    if let Some(c) = items.first() {
        out.push_str(&format!("replace: {:?}\n", &f.text[c.replace]));
    }
    out
}

fn check_completions(fixture: &str, expect: Expect) {
    expect.assert_eq(&completion_list(fixture, false));
}

fn check_signature(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actual = match f.analysis().signature_help(f.offset) {
        Some(h) => {
            let mut label = h.label.clone();
            if let Some(r) = h
                .active_parameter
                .and_then(|i| h.parameters.get(i))
                .map(|p| p.0.clone())
            {
                label.insert(r.end, '>');
                label.insert(r.start, '<');
            }
            format!(
                "{label}\nactive: {:?}\ndoc: {}\n",
                h.active_parameter,
                h.documentation.as_ref().map_or("no", |d| if d.is_empty() {
                    "empty"
                } else {
                    "yes"
                })
            )
        }
        None => "no signature\n".into(),
    };
    expect.assert_eq(&actual);
}

fn check_tokens(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let range = (!f.range.is_empty()).then_some(f.range);
    let tokens = f.analysis().semantic_tokens(range);
    let mut out = String::new();
    for t in tokens {
        let mods: Vec<&str> = (0..TOKEN_MODIFIERS.len())
            .filter(|i| t.modifiers & (1 << i) != 0)
            .map(|i| TOKEN_MODIFIERS[i])
            .collect();
        out.push_str(&format!(
            "{:<14} {}{}\n",
            &f.text[t.range],
            TOKEN_KINDS[t.kind as usize],
            if mods.is_empty() {
                String::new()
            } else {
                format!(" +{}", mods.join(" +"))
            }
        ));
    }
    expect.assert_eq(&out);
}

fn check_diagnostics(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let ds = f.analysis().diagnostics();
    let mut out = String::new();
    for d in ds.iter() {
        out.push_str(&format!(
            "{} {:?} {:?}: {}\n",
            d.code.as_str(),
            d.range,
            &f.text[d.range],
            d.message
        ));
        if let Some(label) = &d.label {
            out.push_str(&format!("  label: {label}\n"));
        }
        for r in &d.related {
            out.push_str(&format!(
                "  related {:?}: {}\n",
                &f.text[r.range], r.message
            ));
        }
        for note in &d.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        for help in &d.help {
            out.push_str(&format!("  help: {help}\n"));
        }
        for fix in &d.fixes {
            out.push_str(&format!(
                "  fix {}: {:?} -> {:?}\n",
                fix.label,
                &f.text[fix.range],
                fix.new_text(&f.text)
            ));
        }
    }
    expect.assert_eq(&out);
}

fn check_actions(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actions = f.analysis().code_actions(f.range, &[]);
    let mut out = String::new();
    for a in actions {
        let mut text = f.text.clone();
        let mut edits = a.edits.clone();
        edits.sort_by_key(|e| std::cmp::Reverse(e.range.start()));
        for e in edits {
            text.replace_range(
                usize::from(e.range.start())..usize::from(e.range.end()),
                &e.new_text,
            );
        }
        out.push_str(&format!(
            "{:?} {}{}\n{text}",
            a.kind,
            a.title,
            if a.is_preferred { " (preferred)" } else { "" }
        ));
    }
    expect.assert_eq(&out);
}
